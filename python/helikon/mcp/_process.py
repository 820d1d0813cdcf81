"""The stdio server's child process: named when it exits, killed at interpreter exit.

:mod:`helikon.mcp._stdio` spawns the server and stops it when its handle closes (close
stdin, wait, SIGTERM to its process group, SIGKILL, reap). Two things remain here: the
wording of an exit status (field case BR-22 names the exit code), and killing a server whose
handle was never closed when the interpreter exits without unwinding the event loop (BR-25).
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import time
import weakref
from contextlib import suppress
from typing import Any

__all__ = ["SpawnedProcess", "exit_description", "track", "untrack"]

SpawnedProcess = Any
"""The server's process object (``anyio.abc.Process``): ``pid``, ``returncode``."""


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
