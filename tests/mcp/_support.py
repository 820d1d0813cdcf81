"""Helpers for the MCP tests: the test server's command line, a tool context, time bounds."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from helikon.core.cancel import CancellationToken
from helikon.core.context import ToolContext
from helikon.mcp import McpServerHandle

T = TypeVar("T")

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SERVER = str(HERE / "mcp_test_server.py")
BOUND = 30.0  # no test may hang CI longer than this


def server_env() -> dict[str, str]:
    """The environment the test servers need: the repo on PYTHONPATH (for ``agent`` mode)."""
    return {"PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def stdio_handle(mode: str, **kw: Any) -> McpServerHandle:
    env = {**server_env(), **kw.pop("env", {})}
    return McpServerHandle.stdio(sys.executable, args=[SERVER, mode], env=env, **kw)


def tool_ctx(cancel: CancellationToken | None = None) -> ToolContext[None]:
    return ToolContext(
        user_ctx=None, state={}, cancel=cancel or CancellationToken(), call_id="c1", agent_name="t"
    )


async def bounded(aw: Awaitable[T], seconds: float = BOUND) -> T:
    """``aw`` within ``seconds`` (a hang fails the test instead of the CI job)."""
    return await asyncio.wait_for(aw, seconds)


def by_name(handle: McpServerHandle) -> dict[str, Any]:
    return {t.name: t for t in handle.tools()}


async def timed(fn: Callable[[], Awaitable[T]]) -> tuple[T | BaseException, float]:
    """``(result or raised exception, seconds taken)``."""
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    try:
        out: T | BaseException = await fn()
    except Exception as exc:
        out = exc
    return out, loop.time() - t0


def process_gone(pid: int) -> bool:
    """True when ``pid`` no longer exists, not even as a zombie."""
    return not Path(f"/proc/{pid}").exists()
