"""The import rules import-linter cannot see (it reads ``.py`` files only, so the native
extension module is invisible to it); the layers themselves are pyproject's
``[tool.importlinter]`` contracts, run by ``lint-imports`` in scripts/test."""

from __future__ import annotations

import ast
from pathlib import Path

import helikon

PACKAGE = Path(helikon.__file__).resolve().parent

#: one binding module per native piece: the only modules that import ``helikon._native``
BINDINGS = {
    "core/loop_native.py": "the loop machine (helikon-loop)",
    "schema.py": "the schema normalizers (helikon-schema)",
    "shell.py": "Bash analysis, command policy, path rules (helikon-shell)",
    "redaction.py": "the redaction scanner (helikon-redact)",
    "tools/sandbox_native.py": "the OS sandbox (helikon-sandbox)",
    "sessions/tokens.py": "the token counter",
    "cli/script_tool.py": "the Rhai script tools (helikon-script)",
    "_version.py": "the version, from the native module in an uninstalled source tree",
    "cli/doctor.py": "helikon doctor reports the native module's build",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def _library_modules() -> dict[str, set[str]]:
    return {
        p.relative_to(PACKAGE).as_posix(): _imports(p)
        for p in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def test_only_the_binding_modules_import_the_native_module() -> None:
    importers = {
        name for name, imports in _library_modules().items() if "helikon._native" in imports
    }
    assert importers == set(BINDINGS)


def test_library_code_never_imports_the_testing_package() -> None:
    importers = {
        name
        for name, imports in _library_modules().items()
        if not name.startswith("testing/")
        and any(i == "helikon.testing" or i.startswith("helikon.testing.") for i in imports)
    }
    assert importers == set()
