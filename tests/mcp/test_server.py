"""McpAgentServer: one agent as one MCP tool, round trips over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from helikon import Agent
from helikon.agents import SequentialAgent
from helikon.core.cancel import CancellationToken
from helikon.core.context import RunContext
from helikon.core.events import ToolOutputItem
from helikon.errors import ConfigError, McpBindError, ToolOther
from helikon.mcp import McpServerHandle
from helikon.mcp.server import McpAgentServer
from helikon.testing import Call, MockModel, Text
from tests.mcp._support import bounded, stdio_handle, timed, tool_ctx
from tests.mcp.agent_server import REPLY, build


async def _client_agent_round_trip(handle: McpServerHandle) -> None:
    tools = handle.tools()
    assert [t.name for t in tools] == ["remote_triage_helper"]
    assert tools[0].description == "Triages things."
    assert tools[0].parameters["properties"] == {
        "input": {"type": "string", "description": "The agent's input."}
    }
    client = Agent(
        name="client",
        model=MockModel([[Call("c1", "remote_triage_helper", {"input": "hello"})], [Text("done")]]),
        tools=[*tools],
    )
    result = await bounded(client.run("go"), 15)
    assert result.final_output == "done"
    outputs = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
    assert not outputs[0].is_error
    assert outputs[0].content[0].text == REPLY


async def test_stdio_round_trip_agent_to_served_agent() -> None:
    async with stdio_handle("agent", tool_prefix="remote_") as h:
        await _client_agent_round_trip(h)


@asynccontextmanager
async def _http_server(server: McpAgentServer) -> AsyncIterator[str]:
    task = asyncio.create_task(server.serve_streamable_http("127.0.0.1", 0))
    for _ in range(500):
        if server.port is not None:
            break
        await asyncio.sleep(0.01)
    assert server.port is not None
    try:
        yield f"http://127.0.0.1:{server.port}/mcp"
    finally:
        server.shutdown()
        await bounded(task, 10)


async def test_streamable_http_round_trip_agent_to_served_agent() -> None:
    async with (
        _http_server(build()) as url,
        McpServerHandle.streamable_http(url, tool_prefix="remote_") as h,
    ):
        await _client_agent_round_trip(h)


async def test_run_config_timeout_is_an_mcp_error_result() -> None:
    async with stdio_handle("agent:timeout") as h:
        out, took = await timed(lambda: h.tools()[0].invoke(tool_ctx(), {"input": "x"}))
    assert isinstance(out, ToolOther)
    assert "timed out after 0.5s" in str(out)
    assert took < 5


async def test_client_cancellation_cancels_the_served_run() -> None:
    server = build("slow")
    seen: list[CancellationToken] = []
    server._ctx_factory = lambda: _remember(seen)
    async with (
        _http_server(server) as url,
        McpServerHandle.streamable_http(url) as h,
    ):
        assert h.tools()[0].name == "slow_agent"
        cancel = CancellationToken()
        asyncio.get_running_loop().call_later(0.3, cancel.cancel, "stop")
        out, took = await timed(lambda: h.tools()[0].invoke(tool_ctx(cancel), {"input": "x"}))
        assert isinstance(out, ToolOther)
        assert took < 3
        for _ in range(300):  # notifications/cancelled reaches the server
            if seen and seen[0].cancelled:
                break
            await asyncio.sleep(0.01)
        assert seen[0].cancelled


def _remember(seen: list[CancellationToken]) -> RunContext[None]:
    ctx: RunContext[None] = RunContext.ephemeral(None)
    seen.append(ctx.cancel)
    return ctx


async def test_in_process_call_and_argument_errors() -> None:
    server = build()
    ok = await bounded(server.call("hi"))
    assert not ok.is_error
    assert ok.content[0].text == REPLY  # type: ignore[union-attr]
    bad = await server._call_tool(None, _params(server.tool_name, {"input": 3}))
    assert bad.is_error
    unknown = await server._call_tool(None, _params("other", {"input": "x"}))
    assert unknown.is_error


def _params(name: str, args: dict[str, object]) -> object:
    import mcp_types as types

    return types.CallToolRequestParams(name=name, arguments=args)


def test_ctx_factory_value_becomes_user_ctx() -> None:
    server = McpAgentServer(
        Agent(name="a", model=MockModel([[Text("x")]])), ctx_factory=lambda: {"u": 1}
    )
    assert server._new_ctx().user_ctx == {"u": 1}
    with pytest.raises(ConfigError, match=r"McpAgentServer\(agent=...\): 'x' is not an agent"):
        McpAgentServer("x")  # type: ignore[arg-type]


async def test_bind_failure_is_mcp_bind_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(McpBindError, match=str(port)):
            await bounded(build().serve_streamable_http("127.0.0.1", port))


def test_asgi_app_serves_mcp_path() -> None:
    app = build().streamable_http_app(path="/agent")
    assert [getattr(r, "path", None) for r in app.routes] == ["/agent"]


async def _start(server: McpAgentServer) -> asyncio.Task[None]:
    task = asyncio.create_task(server.serve_streamable_http("127.0.0.1", 0))
    for _ in range(500):
        if server.port is not None:
            return task
        await asyncio.sleep(0.01)
    raise AssertionError("the server never listened")


async def test_cancelled_serve_stops_cleanly_and_the_loop_serves_again() -> None:
    first = build()
    task = await _start(first)
    port = first.port
    async with McpServerHandle.streamable_http(f"http://127.0.0.1:{port}/mcp") as h:
        assert [t.name for t in h.tools()] == ["triage_helper"]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await bounded(task, 15)
    with pytest.raises(ConnectionRefusedError):  # the listener is really closed
        await bounded(asyncio.open_connection("127.0.0.1", port), 5)
    for _ in range(2):  # serve -> cancel -> serve again, twice over on the same loop
        again = build()
        async with _http_server(again) as url:
            handle = McpServerHandle.streamable_http(url, connect_timeout=5)
            async with handle as h:
                await _client_agent_round_trip_prefixless(h)
        task = await _start(build())
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await bounded(task, 15)


async def _client_agent_round_trip_prefixless(handle: McpServerHandle) -> None:
    tool = handle.tools()[0]
    out = await bounded(tool.invoke(tool_ctx(), {"input": "hi"}), 10)
    assert out.content[0].text == REPLY  # type: ignore[union-attr]


async def test_a_multi_agent_pattern_is_served_over_http() -> None:
    first = Agent(name="draft", model=MockModel([[Text("a draft")]]))
    second = Agent(name="polish", model=MockModel([[Text("the polished answer")]]))
    pipe = SequentialAgent("write pipeline", "Drafts, then polishes.", steps=[first, second])
    server = McpAgentServer(pipe)
    assert server.tool_name == "write_pipeline"
    async with (
        _http_server(server) as url,
        McpServerHandle.streamable_http(url, connect_timeout=5) as h,
    ):
        (tool,) = h.tools()
        assert (tool.name, tool.description) == ("write_pipeline", "Drafts, then polishes.")
        out = await bounded(tool.invoke(tool_ctx(), {"input": "write"}), 10)
        assert out.content[0].text == "the polished answer"  # type: ignore[union-attr]
        # the one-turn mock models ran out: each step ran exactly once per call
        with pytest.raises(ToolOther, match=r"agent 'write pipeline' failed.*exhausted"):
            await bounded(tool.invoke(tool_ctx(), {"input": "write"}), 10)
