"""Every ``helikon`` name the docs and docstrings point a reader at exists.

A guide or docstring that says ``helikon.Runner`` or ``from helikon.sessions import X`` sends
the reader to an import; when the name is not there the reader's first line fails. Checked:

* in the public docstrings (module, class and function docstrings under ``python/helikon``):
  Sphinx cross-references (``:class:`~helikon.x.Y```, ``:func:``, ``:meth:``, ...) and every
  ``helikon.Name`` whose first segment is capitalized (a class or constant at the top level);
* in ``docs/``, ``README.md`` and ``examples/``: every ``from helikon... import a, b`` and
  ``import helikon.x`` line, and every ``helikon.Name...`` (capitalized first segment).

Lower-case dotted strings in prose are left alone: they are often not Python names (Temporal
activity names such as ``helikon.call_model``, span names such as ``helikon.turn``, loggers).
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

_ROLE = re.compile(r":(?:class|func|meth|attr|exc|data|obj|mod):`~?(helikon(?:\.\w+)+)`")
_TOP = re.compile(r"(?<![\w/\"'-])(helikon\.[A-Z]\w*(?:\.[A-Za-z_]\w*)*)")
_FROM = re.compile(r"^\s*(?:>>>\s*)?from (helikon(?:\.\w+)*) import \(?([\w, \t]+)\)?\s*$", re.M)
_FROM_PAREN = re.compile(r"from (helikon(?:\.\w+)*) import \(([^)]*)\)")
_IMPORT = re.compile(r"^\s*(?:>>>\s*)?import (helikon(?:\.\w+)*)\s*$", re.M)


def resolves(dotted: str) -> bool:
    """``helikon.a.B.c``: import the longest module prefix, then walk the attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _docstrings(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield doc


def names_in_docstring(text: str) -> set[str]:
    return set(_ROLE.findall(text)) | set(_TOP.findall(text)) | _imported(text)


def names_in_page(text: str) -> set[str]:
    return set(_TOP.findall(text)) | _imported(text)


def _imported(text: str) -> set[str]:
    names = set(_IMPORT.findall(text))
    for module, listed in [*_FROM.findall(text), *_FROM_PAREN.findall(text)]:
        for line in listed.splitlines():
            for name in line.split("#")[0].split(","):
                name = name.strip().split(" as ")[0].strip()
                if name and name.isidentifier():
                    names.add(f"{module}.{name}")
    return names


def _references() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted((REPO / "python" / "helikon").rglob("*.py")):
        for doc in _docstrings(path):
            for name in names_in_docstring(doc):
                found.setdefault(name, set()).add(str(path.relative_to(REPO)))
    pages = [*sorted((REPO / "docs").rglob("*.md")), REPO / "README.md"]
    pages += sorted(p for p in (REPO / "examples").rglob("*") if p.suffix in {".md", ".py"})
    for page in pages:
        for name in names_in_page(page.read_text(encoding="utf-8")):
            found.setdefault(name, set()).add(str(page.relative_to(REPO)))
    return found


def test_the_scanner_finds_each_spelling() -> None:
    doc = (
        "Runs under a :class:`~helikon.Runner` (see :meth:`helikon.runtimes.Runner.run`);\n"
        "helikon.RunResult carries it. Not a name: the activity helikon.call_model.\n"
        "    >>> from helikon.sessions import MemorySession, SqliteSession as S\n"
        "from helikon.testing import (\n    Call,  # a tool call\n    Text,\n)\n"
        '    WORKFLOW = "helikon.AgentLoop"\n'
    )
    assert names_in_docstring(doc) == {
        "helikon.Runner",
        "helikon.runtimes.Runner.run",
        "helikon.RunResult",
        "helikon.sessions.MemorySession",
        "helikon.sessions.SqliteSession",
        "helikon.testing.Call",
        "helikon.testing.Text",
    }
    assert resolves("helikon.runtimes.Runner.run")
    assert not resolves("helikon.NoSuchThing")
    assert not resolves("helikon.sessions.NoSuchSession")


REFERENCES = _references()


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_named_in_the_docs_and_resolves(name: str) -> None:
    assert resolves(name), f"{name} (named in {sorted(REFERENCES[name])}) does not exist"
