"""The stdio server's child process: seen at spawn, killed at interpreter exit.

The ``mcp`` package's ``stdio_client`` spawns the server and stops it on exit (close stdin,
wait, SIGTERM to its process group, SIGKILL), but it does not hand the process out. helikon
needs it for two things the package does not do: naming the exit code when the server dies
mid-call (field case BR-22), and killing a server whose handle was never closed when the
interpreter exits without unwinding the event loop (BR-25). :func:`capture_spawns` sees the
process through the package's spawn function, within the calling task only (a context
variable), so concurrent connects never mix their processes up. If a future ``mcp`` release
renames that function, capture degrades to "no process": calls still fail on the closed
connection, without the exit code.
"""

from __future__ import annotations

import atexit
import contextvars
import os
import signal
import sys
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import mcp.client.stdio as _stdio

__all__ = ["SpawnedProcess", "capture_spawns", "exit_description", "track"]

SpawnedProcess = Any
"""``mcp``'s process object (``anyio.abc.Process`` on POSIX): ``pid``, ``returncode``."""

_sink: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "helikon_mcp_spawn_sink", default=None
)
_SPAWN_ATTR = "_create_platform_compatible_process"
_original: Callable[..., Awaitable[Any]] | None = getattr(_stdio, _SPAWN_ATTR, None)


async def _capturing_spawn(*args: Any, **kwargs: Any) -> Any:
    assert _original is not None
    process = await _original(*args, **kwargs)
    sink = _sink.get()
    if sink is not None:
        sink.append(process)
    return process


if _original is not None and not getattr(_original, "_helikon_capture", False):
    _capturing_spawn._helikon_capture = True  # type: ignore[attr-defined]
    setattr(_stdio, _SPAWN_ATTR, _capturing_spawn)


@contextmanager
def capture_spawns() -> Iterator[list[SpawnedProcess]]:
    """Collect the processes ``stdio_client`` spawns in this task while the block runs."""
    sink: list[Any] = []
    token = _sink.set(sink)
    try:
        yield sink
    finally:
        _sink.reset(token)


def exit_description(returncode: int) -> str:
    """``"exited with code 3"`` or ``"was killed by signal 9 (SIGKILL)"``."""
    if returncode < 0:
        try:
            sig = signal.Signals(-returncode).name
        except ValueError:
            sig = "?"
        return f"was killed by signal {-returncode} ({sig})"
    return f"exited with code {returncode}"


# ---------------------------------------------------------------- interpreter exit

_live: weakref.WeakSet[Any] = weakref.WeakSet()
_EXIT_GRACE = 1.0


def track(process: SpawnedProcess) -> None:
    """Kill ``process`` (and its group) at interpreter exit if it is still running then."""
    _live.add(process)


def untrack(process: SpawnedProcess) -> None:
    """Forget ``process`` (it was stopped by ``stdio_client``'s own shutdown)."""
    _live.discard(process)


def _reap(pid: int, deadline: float) -> bool:
    """``waitpid`` ``pid`` until ``deadline``; True once it is reaped or not our child."""
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return True
        if done:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def _kill_leftovers() -> None:
    """SIGTERM, then SIGKILL, every tracked server still running, and reap it."""
    if sys.platform == "win32":  # pragma: no cover - Job Objects close with the process
        return
    for process in list(_live):
        if getattr(process, "returncode", 0) is not None:
            continue
        pid = int(process.pid)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, sig)
            if _reap(pid, time.monotonic() + _EXIT_GRACE):
                break


atexit.register(_kill_leftovers)
