"""Lazy mode's search_tools, and the shared naming vectors (handoff_slug.json)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from helikon.core.tool import ToolEffect
from helikon.errors import InvalidArgs
from helikon.mcp import PLACEHOLDER_SCHEMA, display_name, server_tool_name
from tests.conftest import load_shared_json
from tests.mcp._support import bounded, by_name, stdio_handle, tool_ctx

_CASES: list[dict[str, Any]] = load_shared_json("conformance/handoff_slug.json")["cases"]


@pytest.mark.parametrize(
    "case", [c for c in _CASES if c["kind"] == "mcp_server_tool"], ids=lambda c: repr(c["name"])
)
def test_vector_mcp_server_tool_name(case: dict[str, Any]) -> None:
    assert server_tool_name(case["name"]) == case["expect"]


def test_empty_agent_name_serves_as_agent() -> None:
    assert server_tool_name("") == "agent"  # unreachable from McpAgentServer: names are non-empty


def test_a_name_without_allowed_characters_becomes_underscores() -> None:
    assert server_tool_name("日本") == "__"
    assert server_tool_name("🙂 bot") == "__bot"


@pytest.mark.parametrize(
    "case",
    [c for c in _CASES if c["kind"] == "mcp_client_prefix"],
    ids=lambda c: f"{c['prefix']}+{c['wire_name']}",
)
def test_vector_mcp_client_prefix(case: dict[str, Any]) -> None:
    assert display_name(case["prefix"], case["wire_name"]) == case["expect"]


async def test_vector_prefix_applies_to_live_tools_and_the_meta_tool() -> None:
    async with stdio_handle("tools", tool_prefix="fs_", lazy=True) as h:
        names = [t.name for t in h.tools()]
    assert names[0] == "fs_echo"
    assert names[-1] == "fs_search_tools"
    async with stdio_handle("tools", lazy=True) as h:
        assert h.tools()[-1].name == "search_tools"


async def _search(h: Any, query: str) -> dict[str, Any]:
    out = await bounded(h.tools()[-1].invoke(tool_ctx(), {"query": query}))
    assert json.loads(out.content[0].text) == out.value
    result: dict[str, Any] = out.value
    return result


async def test_lazy_mode_placeholder_schemas_and_search() -> None:
    async with stdio_handle("many", lazy=True, tool_prefix="m_") as h:
        tools = h.tools()
        assert len(tools) == 31  # 30 remote (5 pages) + search_tools
        assert all(t.parameters == PLACEHOLDER_SCHEMA for t in tools[:-1])
        meta = tools[-1]
        assert meta.effect is ToolEffect.READ_ONLY
        assert meta.parameters["required"] == ["query"]

        # case-insensitive, over descriptions: tools 3, 13, 23 say "(Special)"
        hits = await _search(h, "sPeCiAl")
        assert [t["name"] for t in hits["tools"]] == ["m_tool_03", "m_tool_13", "m_tool_23"]
        assert hits["total_matches"] == 3
        assert "truncated" not in hits
        first = hits["tools"][0]
        assert first["description"] == "Numbered tool 3 (Special)"
        assert first["input_schema"] == {
            "type": "object",
            "properties": {"text": {"type": "string"}},
        }

        # over names; capped at 20 with the pre-cap count and the truncated flag
        everything = await _search(h, "TOOL_")
        assert len(everything["tools"]) == 20
        assert everything["total_matches"] == 30
        assert everything["truncated"] is True

        exactly = await _search(h, "tool_0")  # tool_00 .. tool_09
        assert exactly["total_matches"] == 10
        assert "truncated" not in exactly
        assert (await _search(h, "nothing like it"))["tools"] == []

        # a lazy tool still calls through with the real arguments
        echo = by_name(h)["m_tool_05"]
        with pytest.raises(Exception, match="unknown tool tool_05"):
            await bounded(echo.invoke(tool_ctx(), {}))
        with pytest.raises(InvalidArgs):
            await bounded(meta.invoke(tool_ctx(), {"q": "x"}))


async def test_search_keeps_the_server_order() -> None:
    async with stdio_handle("many", lazy=True) as h:
        # the first 20 matches, in the order the server listed them
        hits = await _search(h, "tool_")
        assert hits["total_matches"] == 30
        names = [t.name for t in h.tools()[:20]]
        assert [t["name"] for t in hits["tools"]] == names
