"""McpAgentServer seen from the ``mcp`` SDK's own client, over stdio and streamable HTTP:
serverInfo, output schema and structured result, progress notifications."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

import helikon
from helikon.mcp.server import OUTPUT_SCHEMA
from tests.mcp._support import SERVER, bounded, server_env, stdio_handle, tool_ctx
from tests.mcp.agent_server import build

STEPS = ["turn 1", "calling tool lookup", "tool lookup done", "turn 2"]


@asynccontextmanager
async def _stdio_session(kind: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=[SERVER, f"agent:{kind}"], env=server_env()
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        yield session


@asynccontextmanager
async def _http_session(kind: str) -> AsyncIterator[ClientSession]:
    server = build(kind)
    task = asyncio.create_task(server.serve_streamable_http("127.0.0.1", 0))
    try:
        for _ in range(500):
            if server.port is not None:
                break
            await asyncio.sleep(0.01)
        url = f"http://127.0.0.1:{server.port}/mcp"
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            yield session
    finally:
        server.shutdown()
        await bounded(task, 10)


SESSIONS = {"stdio": _stdio_session, "http": _http_session}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_server_info_schema_structured_result_and_progress(transport: str) -> None:
    async with SESSIONS[transport]("tools") as session:
        init = await bounded(session.initialize())
        assert init.server_info.name == "finder"
        assert init.server_info.version == helikon.__version__
        listed = await bounded(session.list_tools())
        assert [t.name for t in listed.tools] == ["finder"]
        assert listed.tools[0].output_schema == OUTPUT_SCHEMA
        seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        result: Any = await bounded(
            session.call_tool("finder", {"input": "find k"}, progress_callback=on_progress)
        )
    assert isinstance(result, types.CallToolResult)
    assert not result.is_error
    assert [c.text for c in result.content] == ["found it"]  # type: ignore[union-attr]
    assert result.structured_content == {
        "final_output": "found it",
        "usage": {
            "input_tokens": 30,
            "output_tokens": 8,
            "cached_input_tokens": 0,
            "reasoning_tokens": 0,
            "total_tokens": 38,
            "cache_write_input_tokens": 0,
        },
    }
    assert seen == [(float(i + 1), None, m) for i, m in enumerate(STEPS)]


async def test_no_progress_token_no_notifications_and_explicit_version_kept() -> None:
    server = build("plain")
    sent: list[str] = []

    async def record(done: float, message: str) -> None:
        sent.append(message)

    assert server.server.version == "1.2.3"
    plain = await bounded(server.call("hi"))
    assert plain.structured_content is not None
    assert plain.structured_content["final_output"] == "pong from the served agent"
    with_progress = await bounded(server.call("hi", progress=record))
    assert not with_progress.is_error
    assert sent == ["turn 1"]


async def test_the_helikon_client_forwards_the_served_agents_progress() -> None:
    seen: list[tuple[str, float, float | None, str | None]] = []

    async def on_progress(
        tool: str, progress: float, total: float | None, message: str | None
    ) -> None:
        seen.append((tool, progress, total, message))

    async with stdio_handle("agent:tools", tool_prefix="remote_", on_progress=on_progress) as h:
        out = await bounded(h.tools()[0].invoke(tool_ctx(), {"input": "find k"}))
    assert out.content[0].text == "found it"  # type: ignore[union-attr]
    assert out.value["usage"]["total_tokens"] == 38
    assert seen == [("remote_finder", float(i + 1), None, m) for i, m in enumerate(STEPS)]
