"""Every ``Example:`` in the public docstrings runs (doctest) against the installed package."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import helikon

_SKIP = {"helikon.cli.main"}  # needs the optional cli extra at import; covered by tests/cli


def _modules() -> list[str]:
    names = ["helikon"]
    for info in pkgutil.walk_packages(helikon.__path__, "helikon."):
        if info.name not in _SKIP and not info.name.startswith("helikon._native"):
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # an optional extra that is not installed
        pytest.skip(f"{name}: {exc}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=True, verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
