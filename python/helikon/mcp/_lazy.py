"""Lazy mode's ``search_tools`` meta-tool: real schemas on demand, not in every prompt."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from helikon.core.context import ToolContext
from helikon.core.tool import ToolEffect, ToolOutput
from helikon.errors import InvalidArgs
from helikon.mcp._tool import McpTool

__all__ = ["MAX_MATCHES", "SearchTools", "search"]

MAX_MATCHES = 20
"""At most this many tools per ``search_tools`` answer (``total_matches`` counts them all)."""


def search(tools: Sequence[McpTool], query: str) -> dict[str, Any]:
    """The ``search_tools`` envelope for ``query``.

    A tool matches when ``query`` occurs, case-insensitively, in its server name, its
    display name or its description. The answer lists at most :data:`MAX_MATCHES` tools
    (name, description, full input schema) in server order, reports ``total_matches``
    before the cap and adds ``"truncated": true`` only when the cap cut the list.
    """
    needle = query.casefold()
    hits = [
        t
        for t in tools
        if needle in t.wire_name.casefold()
        or needle in t.name.casefold()
        or needle in t.description.casefold()
    ]
    envelope: dict[str, Any] = {
        "tools": [
            {"name": t.name, "description": t.description, "input_schema": t.full_parameters}
            for t in hits[:MAX_MATCHES]
        ],
        "total_matches": len(hits),
    }
    if len(hits) > MAX_MATCHES:
        envelope["truncated"] = True
    return envelope


class SearchTools:
    """The meta-tool: ``{"query": string}`` -> matching tools with their real schemas."""

    effect = ToolEffect.READ_ONLY

    def __init__(self, name: str, tools: Sequence[McpTool]) -> None:
        self.name = name
        self._tools = list(tools)
        self.tool_source: Any = None
        """The handle whose tools it searches (it follows the handle's tool list)."""
        self.listed_in = 0
        self.description = (
            "Search this MCP server's tools by name or description (case-insensitive "
            "substring). Returns up to 20 matches with their full input schemas; call a "
            "tool by the returned name with arguments matching its input_schema."
        )
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Text to look for."},
            },
            "required": ["query"],
            "additionalProperties": False,
        }

    def relist(self, tools: Sequence[McpTool]) -> None:
        """Search ``tools`` from now on (the handle's new listing)."""
        self._tools = list(tools)

    def __repr__(self) -> str:
        return f"<mcp tool {self.name}>"

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        """Search the cached tool list (no server round trip).

        Raises:
            InvalidArgs: ``args`` is not ``{"query": string}``.
        """
        query = args.get("query") if isinstance(args, dict) else None
        if not isinstance(query, str):
            raise InvalidArgs(["query: a string is required"])
        return ToolOutput.from_value(search(self._tools, query))
