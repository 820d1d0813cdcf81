"""``helikon.errors`` holds the whole exception tree, and its docstring draws all of it."""

from __future__ import annotations

import inspect
import re

import helikon.errors as errors


def _classes() -> dict[str, type[BaseException]]:
    return {
        name: obj
        for name, obj in vars(errors).items()
        if inspect.isclass(obj)
        and issubclass(obj, BaseException)
        and obj.__module__ == errors.__name__
    }


def test_every_class_derives_from_helikon_error_and_is_exported() -> None:
    classes = _classes()
    assert set(classes) == set(errors.__all__)
    for name, cls in classes.items():
        assert issubclass(cls, errors.HelikonError), name


def test_the_docstring_tree_names_every_class_under_its_parent() -> None:
    doc = errors.__doc__ or ""
    drawn = set(re.findall(r"[├└]── (\w+)", doc)) | {"HelikonError"}
    assert drawn == set(_classes())
    for line in doc.splitlines():
        m = re.search(r"[├└]── (\w+)(\(([\w, ]+)\))?", line)
        if m is None:
            continue
        cls = _classes()[m.group(1)]
        if m.group(3):  # the bases written out, e.g. ConfigError(HelikonError, ValueError)
            assert [b.__name__ for b in cls.__bases__] == m.group(3).split(", "), line


def test_hook_error_is_a_helikon_error_with_the_hook_and_event_named() -> None:
    class Audit:
        pass

    class OnRunStart:
        pass

    err = errors.HookError(Audit(), OnRunStart(), KeyError("x"))
    assert isinstance(err, errors.HelikonError)
    assert str(err) == "hook Audit raised KeyError: 'x' (on OnRunStart)"
    assert (err.hook_name, err.event_name) == ("Audit", "OnRunStart")


def test_the_package_re_exports_every_area_module_and_nothing_else() -> None:
    import importlib
    import pkgutil

    areas = [
        importlib.import_module(f"helikon.errors.{m.name}")
        for m in pkgutil.iter_modules(errors.__path__)
    ]
    assert {a.__name__.rsplit(".", 1)[1] for a in areas} == {
        "agent",
        "base",
        "evals",
        "mcp",
        "model",
        "run",
        "sandbox",
        "server",
        "session",
        "tool",
    }
    defined = [name for area in areas for name in area.__all__]
    assert sorted(defined) == sorted(errors.__all__)  # each class in exactly one area
    for area in areas:
        for name in area.__all__:
            assert getattr(area, name) is getattr(errors, name)
            assert getattr(errors, name).__module__ == "helikon.errors"  # the public path
