"""The tool list follows ``notifications/tools/list_changed``; a dead server is reconnected
with backoff and a bounded number of tries."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from helikon import Agent
from helikon.core.events import ToolOutputItem
from helikon.errors import ConfigError, ToolOther
from helikon.mcp import McpServerHandle
from helikon.mcp.server import McpAgentServer
from helikon.testing import Call, MockModel, Text
from tests.mcp._support import HERE, bounded, by_name, process_gone, stdio_handle, timed, tool_ctx
from tests.mcp.agent_server import REPLY, build


async def _until(predicate: object, seconds: float = 5.0) -> None:
    async def wait() -> None:
        while not predicate():  # type: ignore[operator]
            await asyncio.sleep(0.01)

    await bounded(wait(), seconds)


async def test_list_changed_refreshes_the_tools_keeping_tool_objects() -> None:
    async with stdio_handle("dynamic", tool_prefix="d_") as h:
        echo = by_name(h)["d_echo"]
        assert [t.name for t in h.tools()] == ["d_echo", "d_grow"]
        out = await bounded(by_name(h)["d_grow"].invoke(tool_ctx(), {}))
        assert out.value == "added extra_1"
        await _until(lambda: len(h.tools()) == 3)
        assert [t.name for t in h.tools()] == ["d_echo", "d_grow", "d_extra_1"]
        assert by_name(h)["d_echo"] is echo  # the object an agent holds stays valid
        assert echo.description == "Echo, version 1."
        ran = await bounded(by_name(h)["d_extra_1"].invoke(tool_ctx(), {}))
        assert ran.value == "extra_1 ran"
        assert [t.name for t in h.remote_tools] == ["echo", "grow", "extra_1"]


async def test_refresh_on_demand_returns_the_new_list() -> None:
    async with stdio_handle("dynamic") as h:
        await bounded(by_name(h)["grow"].invoke(tool_ctx(), {}))
        tools = await bounded(h.refresh())
        assert [t.name for t in tools] == ["echo", "grow", "extra_1"]


async def test_a_new_run_sees_tools_added_during_an_earlier_one() -> None:
    async with stdio_handle("dynamic") as h:
        first = Agent(
            name="a",
            model=MockModel([[Call("c1", "grow", {})], [Text("grown")]]),
            tools=h.tools(),
        )
        assert (await bounded(first.run("go"))).final_output == "grown"
        await _until(lambda: len(h.tools()) == 3)
        second = Agent(
            name="a",
            model=MockModel([[Call("c1", "extra_1", {})], [Text("done")]]),
            tools=h.tools(),
        )
        result = await bounded(second.run("go"))
        outputs = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
        assert result.final_output == "done"
        assert outputs[0].content[0].text == "extra_1 ran"  # type: ignore[union-attr]


async def test_a_dead_server_is_restarted_at_the_next_call() -> None:
    h = stdio_handle("tools", reconnect_delay=0.05)
    async with h:
        first = h.pid
        boom, _ = await timed(lambda: by_name(h)["boom"].invoke(tool_ctx(), {}))
        assert isinstance(boom, ToolOther)
        assert str(boom) == (
            f"MCP tool 'boom' failed: MCP server {h._connection.label} exited with code 3"
        )
        out = await bounded(by_name(h)["echo"].invoke(tool_ctx(), {"text": "back"}))
        assert out.value == "back"
        assert h.reconnects == 1
        assert first is not None and process_gone(first)
        second = h.pid
    assert second is not None and second != first and process_gone(second)


async def test_reconnect_gives_up_after_max_reconnects_fails_fast_then_tries_again(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "started"
    h = McpServerHandle.stdio(
        sys.executable,
        args=["bad_server.py", "dies"],
        cwd=HERE,
        env={"HELIKON_ONCE": str(marker)},
        max_reconnects=2,
        reconnect_delay=0.05,
    )
    async with h:
        echo = h.tools()[0]
        assert (await bounded(echo.invoke(tool_ctx(), {"text": "one"}))).value == "one"
        died, _ = await timed(lambda: echo.invoke(tool_ctx(), {"text": "two"}))
        assert str(died) == (
            "MCP tool 'echo' failed: MCP server 'python bad_server.py dies' exited with code 7 "
            "(stderr: fatal: out of cheese)"
        )
        gave_up, took = await timed(lambda: bounded(echo.invoke(tool_ctx(), {"text": "3"})))
        assert isinstance(gave_up, ToolOther)
        assert str(gave_up) == (
            "MCP tool 'echo' unavailable: MCP server 'python bad_server.py dies' exited with "
            "code 7 (stderr: fatal: out of cheese); reconnecting failed 2 times (last: MCP "
            "server 'python bad_server.py dies' exited with code 9 (stderr: refusing to start "
            "again) before answering initialize)"
        )
        assert took < 10
        again, took = await timed(lambda: echo.invoke(tool_ctx(), {"text": "4"}))
        assert str(again) == str(gave_up)
        assert took < 0.5
        assert h.reconnects == 0
        # after retry_after, a call starts a new round: the server can start again now
        h.retry_after = 0.2
        marker.unlink()
        await asyncio.sleep(0.3)
        back = await bounded(echo.invoke(tool_ctx(), {"text": "5"}))
        assert back.value == "5"
        assert h.reconnects == 1


async def test_no_reconnect_after_close() -> None:
    h = await bounded(stdio_handle("tools").connect())
    echo = by_name(h)["echo"]
    await bounded(h.close())
    out, took = await timed(lambda: echo.invoke(tool_ctx(), {"text": "x"}))
    assert str(out) == "MCP tool 'echo' unavailable: the connection is closed"
    assert took < 0.5
    assert h.reconnects == 0


def test_reconnect_arguments_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"max_reconnects=...\) must be an int >= 0, got -1"):
        McpServerHandle.stdio(sys.executable, max_reconnects=-1)
    with pytest.raises(ConfigError, match=r"reconnect_delay=...\) must be >= 0 seconds"):
        McpServerHandle.streamable_http("http://x/mcp", reconnect_delay="1")  # type: ignore[arg-type]


async def _serve_http(port: int = 0) -> tuple[McpAgentServer, asyncio.Task[None]]:
    server = build("plain")
    task = asyncio.create_task(server.serve_streamable_http("127.0.0.1", port))
    await _until(lambda: server.port is not None)
    return server, task


async def test_a_dropped_http_server_is_named_and_reconnected_when_it_is_back() -> None:
    server, task = await _serve_http()
    port = server.port
    assert port is not None
    url = f"http://127.0.0.1:{port}/mcp"
    h = McpServerHandle.streamable_http(url, reconnect_delay=0.05, call_timeout=10)
    async with h:
        tool = h.tools()[0]
        assert (await bounded(tool.invoke(tool_ctx(), {"input": "a"}))).content[0].text == REPLY  # type: ignore[union-attr]
        server.shutdown()
        await bounded(task, 15)
        down, _ = await timed(lambda: bounded(tool.invoke(tool_ctx(), {"input": "b"})))
        assert str(down) == (
            f"MCP tool 'triage_helper' failed: MCP server {url!r} dropped the connection "
            "(ConnectError: All connection attempts failed)"
        )
        server, task = await _serve_http(port)
        back = await bounded(tool.invoke(tool_ctx(), {"input": "c"}))
        assert back.content[0].text == REPLY  # type: ignore[union-attr]
        assert h.reconnects == 1
    server.shutdown()
    await bounded(task, 15)


async def test_an_http_server_that_restarted_gets_a_new_session_and_the_call_succeeds() -> None:
    server, task = await _serve_http()
    port = server.port
    assert port is not None
    h = McpServerHandle.streamable_http(f"http://127.0.0.1:{port}/mcp", reconnect_delay=0.05)
    async with h:
        tool = h.tools()[0]
        server.shutdown()
        await bounded(task, 15)
        server, task = await _serve_http(port)  # a new server: the old session id is unknown
        # its 404 means the call was not processed: a new session, and the call once more
        out = await bounded(tool.invoke(tool_ctx(), {"input": "again"}))
        assert out.content[0].text == REPLY  # type: ignore[union-attr]
        assert h.reconnects == 1
    h2 = McpServerHandle.streamable_http(f"http://127.0.0.1:{port}/mcp", max_reconnects=0)
    async with h2:
        tool = h2.tools()[0]
        server.shutdown()
        await bounded(task, 15)
        server, task = await _serve_http(port)
        failed, _ = await timed(lambda: bounded(tool.invoke(tool_ctx(), {"input": "x"})))
        assert str(failed).startswith("MCP tool 'triage_helper' failed: HTTP 404 Not Found: ")
        assert str(failed).endswith(
            "(the server no longer knows this session; it was not processed)"
        )
    server.shutdown()
    await bounded(task, 15)


async def test_a_running_run_offers_and_calls_a_tool_the_server_added_at_its_next_turn() -> None:
    async with stdio_handle("dynamic", tool_prefix="d_") as h:
        model = MockModel(
            [[Call("c1", "d_grow", {})], [Call("c2", "d_extra_1", {})], [Text("done")]]
        )
        agent = Agent(name="a", model=model, tools=h.tools())
        result = await bounded(agent.run("go"))
        outputs = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
        assert [o.content[0].text for o in outputs] == ["added extra_1", "extra_1 ran"]  # type: ignore[union-attr]
        assert result.final_output == "done"
        offered = [[(t.name, t.description) for t in r.tools] for r in model.requests]
        assert offered[0] == [("d_echo", "Echo the text back."), ("d_grow", "Adds a tool.")]
        assert offered[1] == [
            ("d_echo", "Echo, version 1."),
            ("d_grow", "Adds a tool."),
            ("d_extra_1", "Extra tool 1."),
        ]
        assert offered[2] == offered[1]
        assert [t.name for t in agent.tools] == ["d_echo", "d_grow"]  # the agent is unchanged


async def test_a_tool_left_out_of_the_agent_stays_out_and_a_removed_one_is_no_longer_offered() -> (
    None
):
    async with stdio_handle("dynamic") as h:
        grow = by_name(h)["grow"]
        model = MockModel(
            [[Call("c1", "grow", {})], [Call("c2", "echo", {"text": "x"})], [Text("ok")]]
        )
        agent = Agent(name="a", model=model, tools=[grow])  # echo was listed: left out
        result = await bounded(agent.run("go"))
        outputs = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
        assert outputs[1].content[0].text == "unknown tool: echo"  # type: ignore[union-attr]
        assert [t.name for t in model.requests[1].tools] == ["grow", "extra_1"]
        h._apply([t for t in h.remote_tools if t.name != "grow"])  # the server dropped grow
        later = MockModel([[Text("bye")]])
        again = Agent(name="b", model=later, tools=[grow])
        assert (await bounded(again.run("go"))).final_output == "bye"
        assert [t.name for t in later.requests[0].tools] == ["extra_1"]


async def test_in_lazy_mode_a_running_run_finds_and_calls_a_tool_the_server_added() -> None:
    async with stdio_handle("dynamic", lazy=True) as h:
        model = MockModel(
            [
                [Call("c1", "grow", {})],
                [Call("c2", "search_tools", {"query": "extra"})],
                [Call("c3", "extra_1", {})],
                [Text("done")],
            ]
        )
        agent = Agent(name="a", model=model, tools=h.tools())
        result = await bounded(agent.run("go"))
        outputs = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
        found = outputs[1].content[0].text  # type: ignore[union-attr]
        assert '"extra_1"' in found and '"Extra tool 1."' in found
        assert outputs[2].content[0].text == "extra_1 ran"  # type: ignore[union-attr]
        assert [t.name for t in model.requests[1].tools] == [
            "echo",
            "grow",
            "search_tools",
            "extra_1",
        ]
