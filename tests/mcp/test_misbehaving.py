"""Servers that break the protocol (``bad_server.py``, ``http_stub.py``): each ends in a clear
error within its timeout, leaves no process behind, and the agent's run goes on."""

from __future__ import annotations

import logging
import sys

import pytest

from helikon import Agent
from helikon.core.events import ToolOutputItem
from helikon.core.items import ToolResult
from helikon.errors import McpConnectError
from helikon.mcp import McpServerHandle
from helikon.testing import Call, MockModel, Text
from tests.mcp._support import HERE, bounded, process_gone, timed, tool_ctx
from tests.mcp.http_stub import serve_html


def bad(mode: str, **kw: object) -> McpServerHandle:
    """``python bad_server.py MODE`` (run in the tests' folder: its label is that line)."""
    return McpServerHandle.stdio(
        sys.executable,
        args=["bad_server.py", mode],
        cwd=HERE,
        **kw,  # type: ignore[arg-type]
    )


def _text(result: ToolResult) -> str:
    return "".join(getattr(p, "text", "") for p in result.content)


async def _run(
    handle: McpServerHandle, *calls: dict[str, str], tool: str = "echo"
) -> tuple[str, list[ToolResult]]:
    """An agent calling ``tool`` once per ``calls`` item (one per turn), then answering ok."""
    steps = [[Call(f"c{i}", tool, args)] for i, args in enumerate(calls)]
    agent = Agent(name="a", model=MockModel([*steps, [Text("ok")]]), tools=handle.tools())
    result = await bounded(agent.run("go"), 20)
    done = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
    return result.final_output, done


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "helikon.mcp"]


async def test_lines_that_are_not_utf8_or_not_json_are_logged_and_replies_still_arrive(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "helikon.mcp")
    h = bad("badline", connect_timeout=10)
    async with h:
        final, done = await _run(h, {"text": "first"}, {"text": "second"})
        pid = h.pid
    assert final == "ok"
    assert [_text(r) for r in done] == ["first", "second"]
    assert not any(r.is_error for r in done)
    label = "'python bad_server.py badline'"
    # initialize, tools/list and two calls: each answer came after one bad line of each kind
    assert _warnings(caplog)[:2] == [
        f"MCP server {label}: skipped a stdout line that is not UTF-8: "
        "'\ufffd\ufffd\ufffd not utf-8 \ufffd('",
        f"MCP server {label}: skipped a stdout line that is not a JSON-RPC message: "
        "'this is not json {'",
    ]
    assert len(_warnings(caplog)) == 8
    assert pid is not None and process_gone(pid)


async def test_a_server_that_never_answers_initialize_fails_connect_and_is_stopped() -> None:
    h = bad("noinit", connect_timeout=1.5)
    out, took = await timed(lambda: bounded(h.connect(), 15))
    assert isinstance(out, McpConnectError)
    assert str(out) == (
        "MCP server 'python bad_server.py noinit': no answer to initialize/tools/list within "
        "connect_timeout=1.5s; the server was stopped"
    )
    assert took < 5
    assert h.pid is not None and process_gone(h.pid)


async def test_an_answer_with_the_wrong_id_ends_in_the_call_timeout_and_the_run_goes_on() -> None:
    h = bad("wrongid", call_timeout=1)
    async with h:
        final, done = await _run(h, {"text": "x"})
        pid = h.pid
    assert final == "ok"
    assert done[0].is_error
    assert _text(done[0]) == (
        "MCP tool 'echo' failed: no answer within call_timeout=1s (MCP error -32001)"
    )
    assert pid is not None and process_gone(pid)


async def test_a_server_flooding_stdout_and_stderr_is_bounded(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.WARNING, "helikon.mcp")
    h = bad("flood")
    async with h:
        out = await bounded(h.tools()[0].invoke(tool_ctx(), {"text": "after the flood"}))
        assert out.value == "after the flood"
        again = await bounded(h.tools()[0].invoke(tool_ctx(), {"text": "still fine"}))
        assert again.value == "still fine"
        pid = h.pid
    logged = _warnings(caplog)
    # 2 x 65536 junk lines: ten logged, the tenth saying the rest are not
    assert len(logged) == 10
    assert logged[-1].endswith("(further bad lines not logged)")
    assert "xxxxxxxx" not in capfd.readouterr().err  # the server's stderr is not copied
    assert pid is not None and process_gone(pid)


async def test_a_message_over_max_message_bytes_closes_the_connection_with_an_error() -> None:
    h = bad("bigline", max_message_bytes=1_000_000, max_reconnects=0)
    async with h:
        final, done = await _run(h, {"text": "x"}, {"text": "y"})
        pid = h.pid
        assert pid is not None
        expected = (
            "MCP server 'python bad_server.py bigline' sent a message over the 1000000-byte "
            "limit (max_message_bytes); the connection was closed"
        )
        assert final == "ok"
        assert _text(done[0]) == f"MCP tool 'echo' failed: {expected}"
        assert _text(done[1]) == f"MCP tool 'echo' unavailable: {expected}"
    assert process_gone(pid)


async def test_a_10mb_result_is_truncated_with_a_note() -> None:
    async with bad("big") as h:
        out = await bounded(h.tools()[0].invoke(tool_ctx(), {"text": "x"}))
        note = (
            "\n[truncated: the MCP server returned 10000000 characters; the first 100000 are shown]"
        )
        assert out.value == "z" * 100_000 + note
        assert out.content[0].text == out.value  # type: ignore[union-attr]
    async with bad("big", max_result_chars=5) as h:
        out = await bounded(h.tools()[0].invoke(tool_ctx(), {"text": "x"}))
        assert out.value == (
            "zzzzz\n[truncated: the MCP server returned 10000000 characters; the first 5 are shown]"
        )


async def test_a_server_dying_between_two_calls_names_its_exit_code_and_stderr() -> None:
    h = bad("dies", max_reconnects=0)
    async with h:
        final, done = await _run(h, {"text": "one"}, {"text": "two"}, {"text": "three"})
        pid = h.pid
    assert final == "ok"
    assert _text(done[0]) == "one"
    died = (
        "MCP server 'python bad_server.py dies' exited with code 7 (stderr: fatal: out of cheese)"
    )
    assert _text(done[1]) == f"MCP tool 'echo' failed: {died}"
    assert _text(done[2]) == f"MCP tool 'echo' unavailable: {died}"
    assert pid is not None and process_gone(pid)


async def test_an_http_endpoint_answering_html_is_a_tool_error_quoting_it() -> None:
    with serve_html() as (url, methods):
        async with McpServerHandle.streamable_http(url) as h:
            final, done = await _run(h, {}, tool="flaky")
        assert "tools/call" in methods
    assert final == "ok"
    assert _text(done[0]) == (
        "MCP tool 'flaky' failed: HTTP 200 OK with Content-Type text/html (not an MCP answer): "
        "<html><body>Please sign in</body></html>"
    )
