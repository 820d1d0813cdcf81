"""Tools that follow their source between model turns (an MCP server's changing tool list).

A tool may name the object it came from as ``tool.tool_source``: something with
``async live_tools() -> Sequence[Tool]`` (the source's current tools, once any change it is
applying has settled) and ``listed_in`` on each tool (the listing that first had it, an
int that grows). :class:`LiveTools` is the run's view of an agent's tool list: before each
model turn it asks each source of the agent's tools for its current list and

* drops the agent's tools the source no longer lists,
* adds the tools the source listed after the newest one the agent holds (the tools it
  gained since the agent took its list), after the agent's own tools, in the source's
  order.

A tool the source listed before that (one the agent was built without: a filtered list)
stays out. An agent with no sourced tools costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from helikon.core.tool import Tool

__all__ = ["LiveTools"]


class LiveTools:
    """The current tools of one agent's run (see the module docstring)."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self._tools = list(tools)
        self._baseline: dict[int, int] = {}
        self._sources: list[Any] = []
        for t in self._tools:
            source = getattr(t, "tool_source", None)
            if source is None:
                continue
            key = id(source)
            if key not in self._baseline:
                self._sources.append(source)
                self._baseline[key] = 0
            self._baseline[key] = max(self._baseline[key], _listed_in(t))
        self._signature: list[tuple[Tool, str, object]] = [_sig(t) for t in self._tools]

    def __bool__(self) -> bool:
        """Some tool has a source (else there is nothing to follow)."""
        return bool(self._sources)

    async def refresh(self, into: dict[str, Tool]) -> bool:
        """Put the current tools into ``into`` (name -> tool, replaced in place); True when
        they differ from the last time (a tool added, dropped, or its description or
        schema changed)."""
        current: dict[int, dict[str, Tool]] = {}
        for source in self._sources:
            current[id(source)] = {t.name: t for t in await source.live_tools()}
        tools: list[Tool] = []
        for t in self._tools:
            source = getattr(t, "tool_source", None)
            if source is None or current[id(source)].get(t.name) is t:
                tools.append(t)
        held = {t.name for t in tools}
        for source in self._sources:
            newer = self._baseline[id(source)]
            for name, t in current[id(source)].items():
                if name not in held and _listed_in(t) > newer:
                    tools.append(t)
                    held.add(name)
        signature = [_sig(t) for t in tools]
        if len(signature) == len(self._signature) and all(
            a[0] is b[0] and a[1] == b[1] and a[2] is b[2]
            for a, b in zip(signature, self._signature, strict=True)
        ):
            return False
        self._signature = signature
        into.clear()
        into.update((t.name, t) for t in tools)
        return True


def _listed_in(tool: Any) -> int:
    n = getattr(tool, "listed_in", 0)
    return n if isinstance(n, int) else 0


def _sig(tool: Tool) -> tuple[Tool, str, object]:
    return (tool, tool.description, tool.parameters)
