"""McpServerHandle over stdio: discovery, naming, effects, result mapping, errors, lifetime."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from helikon.core.cancel import CancellationToken
from helikon.core.tool import ToolEffect
from helikon.errors import (
    ConfigError,
    InvalidArgs,
    McpConnectError,
    McpOther,
    McpSpawnError,
    ToolError,
    ToolOther,
)
from helikon.mcp import McpServerHandle
from tests.mcp._support import (
    REPO,
    bounded,
    by_name,
    process_gone,
    stdio_handle,
    timed,
    tool_ctx,
)


async def test_connect_lists_every_page_with_prefix_description_and_schema() -> None:
    async with stdio_handle("tools", tool_prefix="t_") as h:
        tools = h.tools()
        # the server pages 3 tools at a time: 8 tools need three tools/list calls
        assert [t.name for t in tools] == [
            "t_echo", "t_multi", "t_structured", "t_image", "t_fail", "t_peek", "t_boom", "t_slow",
        ]  # fmt: skip
        echo = tools[0]
        assert echo.description == "Echo the text back."
        assert echo.parameters == {"type": "object", "properties": {"text": {"type": "string"}}}


async def test_effect_is_read_only_only_for_read_only_hint_true() -> None:
    async with stdio_handle("tools") as h:
        t = by_name(h)
        assert t["echo"].effect is ToolEffect.READ_ONLY  # readOnlyHint: true
        assert t["multi"].effect is ToolEffect.SIDE_EFFECT  # readOnlyHint: false
        assert t["structured"].effect is ToolEffect.SIDE_EFFECT  # no annotations
        assert all(x.effect is not ToolEffect.WRITE for x in h.tools())


async def test_result_mapping() -> None:
    async with stdio_handle("tools") as h:
        t, ctx = by_name(h), tool_ctx()
        single = await bounded(t["echo"].invoke(ctx, {"text": "héllo"}))
        assert single.value == "héllo"
        assert single.content[0].text == "héllo"
        many = await bounded(t["multi"].invoke(ctx, {}))
        assert many.value == [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]
        assert many.content[0].text == '[{"type":"text","text":"one"},{"type":"text","text":"two"}]'
        structured = await bounded(t["structured"].invoke(ctx, '{"a": 1}'))
        assert structured.value == {"n": 1, "echo": {"a": 1}}
        image = await bounded(t["image"].invoke(ctx, None))
        assert image.value == [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]


async def test_is_error_result_is_a_tool_error_with_the_server_text() -> None:
    async with stdio_handle("tools") as h:
        with pytest.raises(ToolOther, match="the disk is on fire") as info:
            await bounded(by_name(h)["fail"].invoke(tool_ctx(), {}))
        assert isinstance(info.value, ToolError)
        # the connection stays usable
        assert (await bounded(by_name(h)["echo"].invoke(tool_ctx(), {"text": "x"}))).value == "x"


async def test_arguments_must_be_an_object() -> None:
    async with stdio_handle("tools") as h:
        with pytest.raises(InvalidArgs):
            await bounded(by_name(h)["echo"].invoke(tool_ctx(), [1, 2]))


async def test_env_and_cwd_reach_the_server(tmp_path: os.PathLike[str]) -> None:
    h = stdio_handle("tools", env={"HELIKON_MCP_PEEK": "seen"}, cwd=tmp_path)
    async with h:
        out = await bounded(by_name(h)["peek"].invoke(tool_ctx(), {}))
    assert out.value == f"seen|{os.path.realpath(tmp_path)}"


async def test_call_races_the_run_cancellation() -> None:
    async with stdio_handle("tools") as h:
        cancel = CancellationToken()
        asyncio.get_running_loop().call_later(0.2, cancel.cancel, "user stop")
        out, took = await timed(lambda: by_name(h)["slow"].invoke(tool_ctx(cancel), {}))
        assert isinstance(out, ToolOther)
        assert "cancelled: user stop" in str(out)
        assert took < 3
        # a cancelled call does not poison the handle
        assert (await bounded(by_name(h)["echo"].invoke(tool_ctx(), {"text": "y"}))).value == "y"


async def test_server_exit_mid_call_names_the_exit_code_and_later_calls_fail_fast() -> None:
    async with stdio_handle("tools", max_reconnects=0) as h:
        t = by_name(h)
        out, took = await timed(lambda: t["boom"].invoke(tool_ctx(), {}))
        assert isinstance(out, ToolOther)
        assert "exited with code 3" in str(out)
        assert took < 5
        later, took = await timed(lambda: t["echo"].invoke(tool_ctx(), {"text": "x"}))
        assert isinstance(later, ToolOther)
        assert "exited with code 3" in str(later)
        assert took < 0.5


async def test_calls_after_close_fail_fast() -> None:
    h = await bounded(stdio_handle("tools").connect())
    echo = by_name(h)["echo"]
    await bounded(h.close())
    await bounded(h.close())  # idempotent
    with pytest.raises(ToolOther, match="closed"):
        await bounded(echo.invoke(tool_ctx(), {"text": "x"}), 1)


async def test_spawn_failure_is_mcp_spawn_error() -> None:
    with pytest.raises(McpSpawnError, match="cannot start"):
        await bounded(McpServerHandle.stdio("/nonexistent/helikon-mcp-server").connect())


async def test_tools_before_connect_and_double_connect() -> None:
    h = stdio_handle("tools")
    with pytest.raises(McpOther, match="connect"):
        h.tools()
    async with h:
        with pytest.raises(McpOther, match="already connected"):
            await h.connect()
    with pytest.raises(McpOther, match=r"handle is closed.*create a new one"):
        await bounded(h.connect(), 2)
    async with stdio_handle("tools") as fresh:  # a new handle is how to reconnect
        assert "echo" in by_name(fresh)


_NEVER_ANSWERS = "import time; time.sleep(1000)"
_IGNORES_SIGTERM = (
    "import signal, subprocess, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(1000)'])\n"
    "open(sys.argv[1], 'w').write(str(child.pid))\n"
    "time.sleep(1000)\n"
)


async def test_connect_timeout_bounds_a_server_that_never_answers_and_kills_it() -> None:
    h = McpServerHandle.stdio(sys.executable, args=["-c", _NEVER_ANSWERS], connect_timeout=2)
    out, took = await timed(lambda: bounded(h.connect(), 15))
    assert isinstance(out, McpConnectError), out
    assert "within connect_timeout=2s" in str(out)
    assert 1.9 < took < 5
    assert h.pid is not None and process_gone(h.pid)  # killed and reaped, no zombie
    with pytest.raises(McpOther, match="handle is closed"):
        await bounded(h.connect(), 2)


async def test_connect_timeout_kills_the_whole_group_even_if_sigterm_is_ignored(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    h = McpServerHandle.stdio(
        sys.executable, args=["-c", _IGNORES_SIGTERM, str(pid_file)], connect_timeout=2
    )
    out, took = await timed(lambda: bounded(h.connect(), 15))
    assert isinstance(out, McpConnectError), out
    assert took < 6  # 2 s, SIGTERM ignored for 1 s, then SIGKILL
    assert h.pid is not None and process_gone(h.pid)
    grandchild = int(pid_file.read_text())
    assert _dead(grandchild)


def _dead(pid: int) -> bool:
    """Gone, or a zombie waiting for its new parent (it was in the killed group)."""
    stat = Path(f"/proc/{pid}/stat")
    for _ in range(100):
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.02)
    return False


def test_bad_arguments_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="args"):
        McpServerHandle.stdio(sys.executable, args="server.py")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="url"):
        McpServerHandle.streamable_http("localhost:8000/mcp")
    with pytest.raises(ConfigError, match="connect_timeout"):
        McpServerHandle.stdio(sys.executable, connect_timeout=0)
    assert REPO.exists()
