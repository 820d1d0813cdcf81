"""Field cases BR-22 (server dies mid-request), BR-24 (HTTP 503), BR-25 (bounded shutdown)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap

import pytest

from helikon import Agent
from helikon.core.events import ToolOutputItem
from helikon.core.items import ToolResult
from helikon.errors import ToolOther
from helikon.mcp import McpServerHandle
from helikon.testing import Call, MockModel, Text
from tests.mcp._support import (
    SERVER,
    bounded,
    process_gone,
    server_env,
    stdio_handle,
    timed,
    tool_ctx,
)
from tests.mcp.http_stub import serve_503


def _text(result: ToolResult) -> str:
    return "".join(getattr(p, "text", "") for p in result.content)


async def _run_agent(handle: McpServerHandle, tool: str) -> tuple[str, list[ToolResult]]:
    agent = Agent(
        name="caller",
        model=MockModel([[Call("c1", tool, {})], [Text("ok")]]),
        tools=[*handle.tools()],
    )
    result = await bounded(agent.run("go"), 10)
    done = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
    return result.final_output, done


async def test_br22_server_exit_mid_request_is_a_tool_error_and_the_run_continues() -> None:
    async with stdio_handle("tools") as h:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        final, done = await _run_agent(h, "boom")
        assert loop.time() - t0 < 5
        assert final == "ok"
        assert len(done) == 1
        assert done[0].is_error
        assert "exited with code 3" in _text(done[0])
        # a later call on the same handle reconnects (a new server process) and works
        first_pid = h.pid
        later, took = await timed(lambda: h.tools()[0].invoke(tool_ctx(), {"text": "x"}))
        assert not isinstance(later, BaseException), later
        assert later.value == "x"
        assert h.reconnects == 1
        assert h.pid != first_pid
        assert first_pid is not None and process_gone(first_pid)
    # without reconnects, a later call fails fast, never hangs
    async with stdio_handle("tools", max_reconnects=0) as h:
        await _run_agent(h, "boom")
        later, took = await timed(lambda: h.tools()[0].invoke(tool_ctx(), {"text": "x"}))
        assert isinstance(later, ToolOther)
        assert "exited with code 3" in str(later)
        assert took < 0.5


async def test_br24_http_503_is_a_tool_error_naming_the_status() -> None:
    with serve_503() as (url, methods):
        async with McpServerHandle.streamable_http(url) as h:
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            final, done = await _run_agent(h, "flaky")
            assert loop.time() - t0 < 5
            assert final == "ok"
            assert done[0].is_error
            assert "HTTP 503" in _text(done[0])
            assert "upstream overloaded" in _text(done[0])
        assert methods[:3] == ["initialize", "notifications/initialized", "tools/list"]
        assert "tools/call" in methods
    # no task left behind by the transport
    current = asyncio.current_task()
    left = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
    assert left == []


async def test_br25_close_is_bounded_against_a_server_ignoring_eof_and_sigterm() -> None:
    h = await bounded(stdio_handle("stubborn").connect())
    pid = h.pid
    assert pid is not None
    assert not process_gone(pid)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await bounded(h.close(), 15)
    assert loop.time() - t0 < 10
    assert process_gone(pid)  # killed and reaped: not even a zombie
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


_EXIT_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from helikon.mcp import McpServerHandle

    async def main():
        h = McpServerHandle.stdio(sys.executable, args=[{server!r}, "stubborn"], env={env!r})
        await h.connect()
        print(h.pid, flush=True)
        return h

    {how}
    """
)


@pytest.mark.parametrize(
    "how",
    [
        # the loop is shut down: asyncio.run cancels the handle's task, the SDK stops the server
        "handle = asyncio.run(main())",
        # the loop is never closed: only the interpreter-exit hook can stop the server
        "loop = asyncio.new_event_loop()\nhandle = loop.run_until_complete(main())",
    ],
    ids=["asyncio_run", "loop_left_open"],
)
def test_br25_interpreter_exit_stops_and_reaps_an_unclosed_server(how: str) -> None:
    script = _EXIT_SCRIPT.format(server=SERVER, env=server_env(), how=how)
    proc = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", script],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    pid = int(proc.stdout.split()[0])
    assert process_gone(pid)
