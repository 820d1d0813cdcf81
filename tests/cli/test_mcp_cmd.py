"""``helikon mcp serve``: a sidecar agent over stdio and streamable HTTP, in real processes."""

from __future__ import annotations

import asyncio
import queue
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.cli.clihelp import EXAMPLE, env, exe, helikon

pytest.importorskip("mcp")

from helikon import Agent
from helikon.cli.mcp_cmd import parse_address
from helikon.core.events import ToolOutputItem
from helikon.core.items import text_of
from helikon.mcp import McpServerHandle
from helikon.testing import Call, MockModel, Text

DINING = "You're over budget on dining this month: you've spent $312.40"


async def _call_remote(handle: McpServerHandle) -> tuple[list[str], str]:
    """The tools the server lists and what its agent answered to one call."""
    async with handle as remote:
        names = [t.name for t in remote.tools()]
        caller = Agent(
            name="caller",
            model=MockModel(
                [[Call("c1", "budget_assistant", {"input": "dining?"})], [Text("done")]]
            ),
            tools=[*remote.tools()],
        )
        answers = [
            text_of(ev.item.content)
            async for ev in caller.stream("ask the budget agent")
            if isinstance(ev, ToolOutputItem)
        ]
    return names, answers[0]


def _lines(stream: object) -> queue.Queue[str]:
    q: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:  # type: ignore[attr-defined]
            q.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return q


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_serves_the_agent_over_streamable_http() -> None:
    proc = subprocess.Popen(
        [exe(), "mcp", "serve", "--agent", "budget_assistant", "--http", "127.0.0.1:0"],
        cwd=EXAMPLE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )
    try:
        err = _lines(proc.stderr)
        first = err.get(timeout=30)
        prefix = "serving MCP tool 'budget_assistant' at http://127.0.0.1:"
        assert first.startswith(prefix), first
        url = first.strip().split(" at ", 1)[1]
        assert url.endswith("/mcp")
        handle = McpServerHandle.streamable_http(url, connect_timeout=20, call_timeout=20)
        names, answer = asyncio.run(asyncio.wait_for(_call_remote(handle), 40))
        assert names == ["budget_assistant"]
        assert answer.startswith(DINING)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
        assert proc.returncode == 130
        assert out == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_serves_the_agent_over_stdio() -> None:
    handle = McpServerHandle.stdio(
        exe(),
        args=["mcp", "serve", "--agent", "budget_assistant"],
        cwd=EXAMPLE,
        connect_timeout=30,
        call_timeout=20,
    )
    names, answer = asyncio.run(asyncio.wait_for(_call_remote(handle), 60))
    assert names == ["budget_assistant"]
    assert answer.startswith(DINING)


def test_without_the_mcp_extra_it_says_what_to_install(tmp_path: Path) -> None:
    fake = tmp_path / "mcp"
    fake.mkdir()
    (fake / "__init__.py").write_text('raise ImportError("no mcp here", name="mcp")\n')
    proc = helikon(
        "mcp", "serve", "--agent", "budget_assistant", cwd=EXAMPLE, PYTHONPATH=str(tmp_path)
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "error: helikon mcp serve needs the 'mcp' extra (mcp is not installed). "
        "Fix: pip install 'helikon[mcp]'\n"
    )


def test_a_busy_address_exits_1() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = helikon(
            "mcp",
            "serve",
            "--agent",
            "budget_assistant",
            "--http",
            f"127.0.0.1:{port}",
            cwd=EXAMPLE,
        )
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"error: cannot bind 127.0.0.1:{port}: ")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--agent", "budget_assistant", "--http", "localhost"],
            "error: --http 'localhost': expected HOST:PORT. "
            "Fix: e.g. --http 127.0.0.1:8000 (port 0 picks a free port)\n",
        ),
        (
            ["--agent", "nobody"],
            "error: agents.toml: no agent 'nobody'. Fix: use one of ['budget_assistant']\n",
        ),
    ],
)
def test_bad_arguments_exit_2(args: list[str], expected: str) -> None:
    proc = helikon("mcp", "serve", *args, cwd=EXAMPLE)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:8000", ("127.0.0.1", 8000)),
        (":0", ("127.0.0.1", 0)),
        ("0.0.0.0:9", ("0.0.0.0", 9)),
        ("[::1]:8000", ("::1", 8000)),
        ("::1:8000", None),
        ("host", None),
        ("host:http", None),
        ("host:70000", None),
    ],
)
def test_parse_address(text: str, expected: tuple[str, int] | None) -> None:
    assert parse_address(text) == expected
