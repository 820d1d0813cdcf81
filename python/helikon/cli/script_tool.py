"""Rhai script tools: the binding of the native ``ScriptTool`` (crate ``helikon-script``).

A sidecar's ``[tools.NAME]`` table with ``script = "path.rhai"`` or ``inline = '''...'''``
becomes a :class:`ScriptTool`: the script, compiled once, must define ``fn run(args)``;
``args`` is the model's arguments as a Rhai object map and ``run``'s return value is the
tool's result (a string as-is, anything else as JSON). Example::

    fn run(args) {
        let ledger = #{ dining: 312.40, groceries: 540.10 };
        let total = ledger[args.category];
        if total == () { throw `no data for ${args.category}`; }
        #{ category: args.category, total: total }
    }

The sandbox: no file, network or process access (only Rhai's standard packages; ``import``
resolves nothing, ``eval`` is disabled, ``print`` goes nowhere), and each call runs under an
operation cap (default 1,000,000), a call-depth cap (32), string and array caps (1 MiB, 100,000
items), a 1 MiB cap on the result and a wall-clock budget (5 s), all checked as the script
runs, with the GIL released. A script that hits a limit, throws or calls a function the
sandbox lacks fails its call with a :class:`~helikon.errors.ToolError` whose text the model
reads (``the script was stopped after 1000000 operations (a runaway loop?)``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from helikon._native import ScriptTool as _NativeScript
from helikon.core.context import ToolContext
from helikon.core.tool import ToolEffect, ToolOutput
from helikon.errors import ConfigError, ToolError

__all__ = ["ScriptLimits", "ScriptTool"]

ScriptLimits = dict[str, int]
"""Limit overrides: ``max_operations``, ``max_call_depth``, ``max_string_bytes``,
``max_array_items``, ``timeout_ms`` (each a whole number >= 1)."""

LIMIT_KEYS = (
    "max_operations",
    "max_call_depth",
    "max_string_bytes",
    "max_array_items",
    "timeout_ms",
)


class ScriptTool:
    """A :class:`~helikon.Tool` running a sandboxed Rhai script's ``fn run(args)``.

    Args:
        name: the tool name the model calls.
        description: what the model reads.
        parameters: the JSON Schema (an object schema) of the arguments.
        source: the Rhai source; it must define ``fn run(args)``.
        effect: the tool's effect for the permission pipeline (``READ_ONLY`` by default: a
            script cannot touch anything outside itself).
        limits: overrides of the limits (see :data:`ScriptLimits`).

    Raises:
        ConfigError: the source does not compile or has no ``fn run(args)``; a bad limit.

    Example:
        >>> t = ScriptTool("double", "Double n.", {"type": "object"}, "fn run(a) { a.n * 2 }")
        >>> t.call_sync({"n": 21})
        42
    """

    def __init__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        source: str,
        *,
        effect: ToolEffect = ToolEffect.READ_ONLY,
        limits: ScriptLimits | None = None,
    ) -> None:
        limits = dict(limits or {})
        for key, value in limits.items():
            if key not in LIMIT_KEYS:
                raise ConfigError(f"unknown script limit {key!r}; use {list(LIMIT_KEYS)}")
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"script limit {key} must be a whole number >= 1, got {value!r}")
        self.name = name
        self.description = description
        self.parameters = parameters
        self.effect = effect
        self._script = _NativeScript(source, **limits)

    def call_sync(self, args: Any) -> Any:
        """Run ``run(args)`` in this thread and return its value (decoded from JSON).

        Raises:
            ToolError: the script failed or hit a limit.
        """
        return json.loads(self._script.call(json.dumps(args, ensure_ascii=False)))

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        """Run the script in a worker thread (it releases the GIL; its budget bounds it).

        Raises:
            ToolError: the script failed or hit a limit; the text says which.
        """
        try:
            value = await asyncio.to_thread(self.call_sync, args)
        except ToolError as exc:
            raise ToolError(f"script tool {self.name!r}: {exc}") from None
        return ToolOutput.from_value(value)

    def __repr__(self) -> str:
        return f"ScriptTool(name={self.name!r})"
