"""A sidecar's tools: ``[tools.NAME]`` tables (Python or Rhai) and the sandboxed toolset.

Forms (paths are relative to the sidecar's directory)::

    [tools.lookup_spending]                      # a Python function or @tool
    python = "tools:lookup_spending"

    [tools.lookup_spending]                      # a sandboxed Rhai script (the spec's form)
    description = "Look up spending for a month"
    params      = { type = "object", properties = { month = { type = "string" } },
                    required = ["month"] }
    script      = "tools/lookup_spending.rhai"   # or inline = '''fn run(args) { ... }'''
    limits      = { max_operations = 100000, timeout_ms = 2000 }   # optional

    [sandbox]                                    # the workspace of Read, Write, Edit, Bash
    root    = "workspace"
    backend = "os"                               # "os" (default, fail closed) | "host" | "best"

    [sandbox.network]                            # Bash's egress by domain (sidecar_network)
    allow_domains = ["pypi.org", "*.pythonhosted.org"]

An agent lists the built-in ``Read``, ``Write``, ``Edit`` and ``Bash`` tools by name; they work
in ``[sandbox] root``, and ``Bash`` runs through the chosen backend: ``os`` is
:class:`~helikon.tools.OsSandboxBackend` (Landlock + seccomp; when the kernel cannot enforce
it, loading fails naming what is missing), ``host`` is :class:`~helikon.tools.HostBackend` (no
containment, explicit opt-in) and ``best`` takes the OS backend when it works, else the host.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helikon.cli.sidecar_file import SidecarFile, unknown_keys
from helikon.core.tool import FunctionTool, Tool, tool
from helikon.errors import ConfigError, SandboxUnavailable

__all__ = [
    "BUILTIN_TOOLS",
    "SANDBOX_KEYS",
    "Toolbox",
    "check_sandbox_table",
    "import_ref",
    "script_paths",
]

BUILTIN_TOOLS = ("Read", "Write", "Edit", "Bash")
_PY_KEYS = {"python"}
_SCRIPT_KEYS = {"description", "params", "script", "inline", "limits"}
SANDBOX_KEYS = (
    "root",
    "backend",
    "allow_network",
    "run_as",
    "timeout",
    "read_paths",
    "allow_commands",
    "deny_commands",
    "network",
)
_SANDBOX_FIX = '[sandbox] root = "workspace" (a folder next to the sidecar)'


@dataclass
class Toolbox:
    """Builds (once each) the tools a sidecar names; errors name the key and the fix."""

    sc: SidecarFile
    tables: dict[str, Any]
    sandbox_table: dict[str, Any] | None
    _built: dict[str, Tool] = field(default_factory=dict)
    _sandbox: Any = None
    _backend: Any = None

    def get(self, key: str, name: str) -> Tool:
        """The tool ``name`` listed at ``key`` (an agent's ``tools``).

        Raises:
            SidecarError: unknown tool, bad table, import or compile failure.
        """
        if name not in self._built:
            self._built[name] = self._make(key, name)
        return self._built[name]

    def _make(self, key: str, name: str) -> Tool:
        spec = self.tables.get(name)
        if spec is None and name in BUILTIN_TOOLS:
            return self._builtin(key, name)
        if spec is None:
            close = difflib.get_close_matches(name, [*self.tables, *BUILTIN_TOOLS], n=1)
            hint = f"did you mean {close[0]!r}? or " if close else ""
            raise self.sc.err(
                key,
                f"unknown tool {name!r}",
                f'{hint}add [tools.{name}] with python = "module:function"',
            )
        tkey = f"tools.{name}"
        if not isinstance(spec, dict):
            raise self.sc.err(tkey, "must be a table", f'[tools.{name}] python = "module:{name}"')
        unknown_keys(self.sc, tkey, spec, _PY_KEYS | _SCRIPT_KEYS)
        if not spec:
            raise self.sc.err(
                tkey,
                "empty: a tool is a Python function or a Rhai script",
                f'python = "module:{name}", or description, params and '
                f'script = "tools/{name}.rhai"',
            )
        if "python" in spec:
            also = sorted(set(spec) & _SCRIPT_KEYS)
            if also:
                raise self.sc.err(
                    tkey,
                    f"python cannot be combined with {also}",
                    "a tool is either python = ... or a Rhai script",
                )
            return self._python(tkey, name, spec["python"])
        return self._script(tkey, name, spec)

    # ------------------------------------------------------------------ Rhai scripts

    def _script(self, tkey: str, name: str, spec: dict[str, Any]) -> Tool:
        has_script, has_inline = "script" in spec, "inline" in spec
        if has_script == has_inline:
            raise self.sc.err(
                tkey,
                "needs exactly one of script or inline"
                + (" (both given)" if has_script else " (or python)"),
                f"script = \"tools/{name}.rhai\" or inline = '''fn run(args) {{ ... }}'''",
            )
        description = spec.get("description")
        if not isinstance(description, str) or not description.strip():
            raise self.sc.err(
                f"{tkey}.description",
                "missing or empty",
                'description = "what the tool does" (the model reads it)',
            )
        params = spec.get("params", {"type": "object", "properties": {}})
        if not isinstance(params, dict) or params.get("type") != "object":
            raise self.sc.err(
                f"{tkey}.params",
                "must be a JSON Schema object schema",
                'params = { type = "object", properties = { month = { type = "string" } } }',
            )
        limits = spec.get("limits", {})
        if not isinstance(limits, dict):
            raise self.sc.err(f"{tkey}.limits", "must be a table", "limits = { timeout_ms = 2000 }")
        if has_script:
            path = spec["script"]
            if not isinstance(path, str) or not path:
                raise self.sc.err(f"{tkey}.script", "must be a path", f'script = "{name}.rhai"')
            source = self.sc.text_or_file(f"{tkey}.script", {"file": path})
        else:
            source = spec["inline"]
            if not isinstance(source, str):
                raise self.sc.err(
                    f"{tkey}.inline", "must be a string", "inline = '''fn run(args) { ... }'''"
                )
        from helikon.cli.script_tool import ScriptTool

        try:
            return ScriptTool(name, description, params, source or "", limits=limits)
        except ConfigError as exc:
            where = (
                f"{tkey}.limits"
                if "limit" in str(exc)
                else f"{tkey}.{'script' if has_script else 'inline'}"
            )
            raise self.sc.err(
                where, str(exc), "fix the script (it must define fn run(args))"
            ) from None

    # ------------------------------------------------------------------ Python functions

    def _python(self, tkey: str, name: str, ref: Any) -> Tool:
        if not isinstance(ref, str) or ":" not in ref:
            raise self.sc.err(
                f"{tkey}.python",
                "missing or not module:function",
                f'python = "module:{name}" (a module next to the sidecar, a function in it)',
            )
        obj = import_ref(self.sc, f"{tkey}.python", ref)
        if isinstance(obj, FunctionTool) or hasattr(obj, "invoke"):
            built: Tool = obj
        elif inspect.isfunction(obj) or inspect.iscoroutinefunction(obj):
            built = tool(obj)
        else:
            raise self.sc.err(
                f"{tkey}.python",
                f"{ref} is a {type(obj).__name__}, not a function or a tool",
                "point at a function (decorated with @tool or plain)",
            )
        if built.name != name:
            raise self.sc.err(
                tkey, f"the tool is named {built.name!r}", f"name the table [tools.{built.name}]"
            )
        return built

    # ------------------------------------------------------------------ Read/Write/Edit/Bash

    def _builtin(self, key: str, name: str) -> Tool:
        from helikon.tools import BashTool, EditTool, ReadTool, WriteTool

        sandbox = self._open_sandbox(key, name)
        if name == "Read":
            return ReadTool(sandbox)
        if name == "Write":
            return WriteTool(sandbox)
        if name == "Edit":
            return EditTool(sandbox)
        table = self.sandbox_table or {}
        options: dict[str, Any] = {}
        for k in ("allow_commands", "deny_commands"):
            if k in table:
                options[k] = _str_list(self.sc, f"sandbox.{k}", table[k])
        backend = self._make_backend(sandbox)
        try:
            return BashTool(backend, **options)
        except ConfigError as exc:
            raise self.sc.err("sandbox", str(exc), "check the [sandbox] values") from None

    def _open_sandbox(self, key: str, name: str) -> Any:
        if self._sandbox is not None:
            return self._sandbox
        table = self.sandbox_table
        if table is None:
            raise self.sc.err(
                key, f"the built-in {name!r} tool needs a [sandbox] table", _SANDBOX_FIX
            )
        root = table.get("root")
        if not isinstance(root, str) or not root:
            raise self.sc.err("sandbox.root", "missing or not a path", _SANDBOX_FIX)
        path = (self.sc.folder / root).resolve()
        if not path.is_dir():
            raise self.sc.err(
                "sandbox.root", f"{path} is not an existing directory", f"create {path}"
            )
        from helikon.tools import Sandbox

        self._sandbox = Sandbox.open(path)
        return self._sandbox

    def _make_backend(self, sandbox: Any) -> Any:
        if self._backend is not None:
            return self._backend
        from helikon.tools import HostBackend, OsSandboxBackend, best_available_backend

        table = self.sandbox_table or {}
        kind = table.get("backend", "os")
        if kind not in ("os", "host", "best"):
            raise self.sc.err(
                "sandbox.backend", f"unknown backend {kind!r}", 'backend = "os", "host" or "best"'
            )
        timeout = table.get("timeout", 120)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise self.sc.err(
                "sandbox.timeout", f"must be seconds > 0, got {timeout!r}", "timeout = 120"
            )
        os_options: dict[str, Any] = {}
        if "allow_network" in table:
            if not isinstance(table["allow_network"], bool):
                raise self.sc.err(
                    "sandbox.allow_network", "must be true or false", "allow_network = false"
                )
            os_options["allow_network"] = table["allow_network"]
        if "read_paths" in table:
            os_options["read_paths"] = _str_list(self.sc, "sandbox.read_paths", table["read_paths"])
        run_as = table.get("run_as")
        if run_as is not None:
            if (
                not isinstance(run_as, list)
                or len(run_as) != 2
                or not all(
                    isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in run_as
                )
            ):
                raise self.sc.err(
                    "sandbox.run_as",
                    f"must be [uid, gid], got {run_as!r}",
                    "run_as = [65534, 65534]",
                )
            os_options["run_as"] = (run_as[0], run_as[1])
        from helikon.cli.sidecar_network import network_options

        os_options.update(network_options(self.sc, table, kind))
        try:
            if kind == "host":
                self._backend = HostBackend(sandbox, timeout=float(timeout))
            elif kind == "best":
                self._backend = best_available_backend(
                    sandbox, timeout=float(timeout), **os_options
                ).backend
            else:
                self._backend = OsSandboxBackend(sandbox, timeout=float(timeout), **os_options)
        except SandboxUnavailable as exc:
            raise self.sc.err(
                "sandbox.backend",
                f"the OS sandbox is unavailable here: {exc}",
                'fix what it names, or opt out of containment with backend = "host" (or "best")',
            ) from None
        except ConfigError as exc:
            raise self.sc.err("sandbox", str(exc), "check the [sandbox] values") from None
        return self._backend


def check_sandbox_table(sc: SidecarFile, raw: Any) -> dict[str, Any] | None:
    """The ``[sandbox]`` table's shape (its values are checked when a tool needs it).

    Raises:
        SidecarError: not a table, or an unknown key.
    """
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise sc.err("sandbox", "must be a table", _SANDBOX_FIX)
    unknown_keys(sc, "sandbox", raw, SANDBOX_KEYS)
    return raw


def _str_list(sc: SidecarFile, key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise sc.err(key, "must be a list of strings", f'{key.rsplit(".", 1)[-1]} = ["..."]')
    return list(value)


def import_ref(sc: SidecarFile, key: str, ref: str) -> Any:
    """Import ``module:attr`` with the sidecar's folder on ``sys.path``.

    Raises:
        SidecarError: the module is missing or fails to import, or has no ``attr``.
    """
    module_name, _, attr = ref.partition(":")
    folder = str(sc.folder.resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name not in (module_name, module_name.split(".")[0]):
            raise sc.err(
                key,
                f"importing {module_name!r} failed: it imports {exc.name!r}, which is missing",
                f"install {exc.name!r} in this environment",
            ) from None
        raise sc.err(
            key,
            f"cannot import {module_name!r} ({exc})",
            f"put {module_name}.py next to the sidecar",
        ) from None
    except Exception as exc:  # the module itself failed while importing
        raise sc.err(
            key,
            f"importing {module_name!r} failed: {type(exc).__name__}: {exc}",
            f"fix the error in {module_name}.py",
        ) from None
    obj = getattr(module, attr, None)
    if obj is None:
        raise sc.err(key, f"{module_name} has no {attr!r}", _name_fix(module, attr))
    return obj


def _name_fix(module: Any, attr: str) -> str:
    """The fix for a missing name: the closest one, or the functions the module has."""
    names = sorted(
        n
        for n, v in vars(module).items()
        if not n.startswith("_")
        and (
            isinstance(v, FunctionTool)
            or (inspect.isfunction(v) and v.__module__ == module.__name__)
            or (isinstance(v, type) and v.__module__ == module.__name__)
        )
    )
    close = difflib.get_close_matches(attr, names, n=1)
    if close:
        return f"did you mean {close[0]!r}?"
    if names:
        return f"use one of {names}"
    return f"define {attr}() in {module.__name__}"


def script_paths(tables: dict[str, Any], folder: Path) -> set[Path]:
    """The ``.rhai`` files the tool tables reference (for hot reload)."""
    return {
        (folder / spec["script"]).resolve()
        for spec in tables.values()
        if isinstance(spec, dict) and isinstance(spec.get("script"), str)
    }
