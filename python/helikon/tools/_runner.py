"""Running a native :class:`~helikon._native.SandboxPolicy` from asyncio, with cancellation.

The native ``start()`` starts the command's supervisor and returns at once; the event loop
watches the supervisor's pidfd (``loop.add_reader``), which turns readable when the command
and every process it started are gone, and ``finish()`` then returns the outcome without
blocking. No worker thread is involved. Cancelling kills the supervisor's children (the
shell, and descendants already re-parented to it) with their process groups; the supervisor
then sweeps what is left and exits, which the pidfd reports.

Without a pidfd (kernels before 5.3) or with a native module that has no ``start()``, the
blocking ``run()`` runs in a worker thread (the loop's default executor) and a cancel works
from the outside:

* the native call forks a *supervisor* from the worker thread; the supervisor forks the
  shell, which leads its own process group;
* on cancel, the children of that exact worker thread (``/proc/<pid>/task/<tid>/children``,
  so parallel calls never touch each other's processes) are the supervisor; each of the
  supervisor's children (the shell, and descendants already re-parented to it) and its
  process group get ``SIGKILL``;
* the supervisor then sees the shell end, kills what is left of the group, sweeps every
  descendant (it is a subreaper) and reports, so the native call returns within a fraction
  of a second and the process tree is gone.

A kill pass is repeated until the native call returns (a cancel can land before the fork).
Where ``/proc/<pid>/task/<tid>/children`` does not exist (a kernel without
``CONFIG_PROC_CHILDREN``), a cancel cannot reach the process: the call still returns at
once with a note saying so, and the command's timeout ends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from helikon.core.cancel import CancellationToken
from helikon.tools.backend import ExecResult
from helikon.tools.sandbox_native import SandboxPolicy

__all__ = ["run_policy"]

#: How long a cancelled call waits for the native call to confirm the tree is gone.
CANCEL_CONFIRM_S = 3.0
#: Between two kill passes.
KILL_PASS_INTERVAL_S = 0.02

_background: set[asyncio.Task[None]] = set()


@dataclass
class _Call:
    lock: threading.Lock = field(default_factory=threading.Lock)
    tid: int | None = None
    abandoned: bool = False
    unreachable: bool = False


def _children(pid: int, tid: int) -> list[int] | None:
    try:
        with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return []


def _kill_pass(call: _Call) -> None:
    """SIGKILL the shell(s) under this call's supervisor, with their process groups."""
    with call.lock:
        call.abandoned = True
        tid = call.tid
        if tid is None:
            return
        supervisors = _children(os.getpid(), tid)
        if supervisors is None:
            call.unreachable = True
            return
        for sup in supervisors:
            for child in _children(sup, sup) or []:
                with contextlib.suppress(OSError):
                    os.killpg(child, signal.SIGKILL)
                with contextlib.suppress(OSError):
                    os.kill(child, signal.SIGKILL)


def _work(
    policy: SandboxPolicy,
    command: str,
    timeout: float,
    call: _Call,
    env: dict[str, str] | None = None,
    egress_tag: int = 0,
) -> str | None:
    with call.lock:
        if call.abandoned:
            return None
        call.tid = threading.get_native_id()
    try:
        if env is None and not egress_tag:
            return policy.run(command, timeout)
        return policy.run(command, timeout, env, egress_tag)
    finally:
        with call.lock:
            call.tid = None


async def _kill_until_done(call: _Call, fut: asyncio.Future[str | None], bound: float) -> None:
    deadline = time.monotonic() + bound
    while not fut.done() and time.monotonic() < deadline:
        _kill_pass(call)
        if call.unreachable:
            return
        await asyncio.wait({fut}, timeout=KILL_PASS_INTERVAL_S)


def _consume(fut: asyncio.Future[str | None]) -> None:
    """Mark an error of an abandoned native call as seen (it was reported or is moot)."""
    if not fut.cancelled():
        fut.exception()


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _cancelled_result(started: float, note: str | None) -> ExecResult:
    return ExecResult(
        exit_code=None,
        signal=None,
        stdout="",
        stderr="",
        cancelled=True,
        duration_ms=int((time.monotonic() - started) * 1000),
        notes=(note,) if note else (),
    )


def _in_background(coro: Coroutine[Any, Any, None]) -> None:
    """Run ``coro`` as a task this module keeps a reference to until it ends."""
    task = asyncio.get_running_loop().create_task(coro)
    _background.add(task)
    task.add_done_callback(_background.discard)


async def _wait_or_cancel(
    main: asyncio.Future[Any],
    cancel: CancellationToken | None,
    task_cancelled: Callable[[], None],
) -> None:
    """Wait until ``main`` is done or ``cancel`` fires (a plain future the token resolves
    through a callback: no Task per call). If the calling task itself is cancelled,
    ``task_cancelled`` runs before the ``CancelledError`` propagates."""
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[None] | None = None
    on_cancel = None
    if cancel is not None:
        waiter = loop.create_future()

        def on_cancel(_reason: str, waiter: asyncio.Future[None] = waiter) -> None:
            loop.call_soon_threadsafe(_resolve, waiter)

        cancel.on_cancel(on_cancel)
    waited: set[asyncio.Future[Any]] = {main} if waiter is None else {main, waiter}
    try:
        await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task_cancelled()
        raise
    finally:
        if cancel is not None and on_cancel is not None:
            cancel.off_cancel(on_cancel)
        if waiter is not None:
            waiter.cancel()


def _kill_supervised(supervisor: int) -> None:
    """SIGKILL the children of one supervisor (the shell and re-parented descendants), with
    their process groups."""
    for child in _children(supervisor, supervisor) or []:
        with contextlib.suppress(OSError):
            os.killpg(child, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(child, signal.SIGKILL)


async def _finish_later(handle: Any, done: asyncio.Future[None], pidfd: int) -> None:
    """Reap a cancelled command's supervisor once it has exited (keeps killing meanwhile)."""
    loop = asyncio.get_running_loop()
    try:
        while not done.done():
            if handle.supervisor_pid is not None:
                _kill_supervised(handle.supervisor_pid)
            await asyncio.wait({done}, timeout=KILL_PASS_INTERVAL_S * 10)
    finally:
        loop.remove_reader(pidfd)
        with contextlib.suppress(Exception):
            handle.finish()


async def _run_started(
    policy: SandboxPolicy,
    command: str,
    timeout: float,
    cancel: CancellationToken | None,
    env: dict[str, str] | None,
    egress_tag: int,
    started: float,
) -> ExecResult | None:
    """The pidfd path; ``None`` when it is not available here (then the caller uses the
    worker thread)."""
    start = getattr(policy, "start", None)
    if start is None:
        return None
    handle = start(command, timeout, env, egress_tag)
    pidfd = handle.pidfd
    if pidfd is None:
        loop = asyncio.get_running_loop()
        text = await loop.run_in_executor(None, handle.finish)
        return ExecResult.from_native(text)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    loop.add_reader(pidfd, _resolve, done)

    def task_cancelled() -> None:  # kill now, reap in the background
        if handle.supervisor_pid is not None:
            _kill_supervised(handle.supervisor_pid)
        _in_background(_finish_later(handle, done, pidfd))

    await _wait_or_cancel(done, cancel, task_cancelled)
    if done.done():
        loop.remove_reader(pidfd)
        return ExecResult.from_native(handle.finish())
    # Cancelled through the token: kill until the supervisor has swept and exited.
    deadline = time.monotonic() + CANCEL_CONFIRM_S
    while not done.done() and time.monotonic() < deadline:
        if handle.supervisor_pid is not None:
            _kill_supervised(handle.supervisor_pid)
        await asyncio.wait({done}, timeout=KILL_PASS_INTERVAL_S)
    if done.done():
        loop.remove_reader(pidfd)
        return dataclasses.replace(ExecResult.from_native(handle.finish()), cancelled=True)
    _in_background(_finish_later(handle, done, pidfd))
    return _cancelled_result(
        started,
        f"the command's processes were signalled but had not all ended after "
        f"{CANCEL_CONFIRM_S:g}s; the supervisor keeps sweeping until its timeout",
    )


async def run_policy(
    policy: SandboxPolicy,
    command: str,
    timeout: float,
    cancel: CancellationToken | None,
    *,
    env: dict[str, str] | None = None,
    egress_tag: int = 0,
) -> ExecResult:
    """Run ``command`` under ``policy`` in a worker thread; see the module doc for cancel.
    ``env`` sets variables for this command only; ``egress_tag`` goes with its bridged
    connections (see :class:`~helikon.tools.egress.runtime.EgressRuntime`)."""
    started = time.monotonic()
    if cancel is not None and cancel.cancelled:
        return _cancelled_result(started, "cancelled before the command started")
    result = await _run_started(policy, command, timeout, cancel, env, egress_tag, started)
    if result is not None:
        return result
    call = _Call()
    loop = asyncio.get_running_loop()
    # The executor future directly (no coroutine, no Task, no context copy) and a plain
    # future the token resolves: a call costs no Task creation on the event loop.
    fut: asyncio.Future[str | None] = loop.run_in_executor(
        None, _work, policy, command, timeout, call, env, egress_tag
    )
    fut.add_done_callback(_consume)

    def task_cancelled() -> None:
        # Kill now and keep killing in the background until the native call has returned
        # (a cancel can land just before the fork).
        _kill_pass(call)
        _in_background(_kill_until_done(call, fut, CANCEL_CONFIRM_S * 10))

    await _wait_or_cancel(fut, cancel, task_cancelled)
    if fut.done():
        text = fut.result()
        if text is not None:
            return ExecResult.from_native(text)
        return _cancelled_result(started, "cancelled before the command started")
    await _kill_until_done(call, fut, CANCEL_CONFIRM_S)
    if call.unreachable:
        return _cancelled_result(
            started,
            "this kernel does not list a thread's children in /proc, so the cancelled "
            "command could not be killed; it ends at its timeout",
        )
    if not fut.done():
        return _cancelled_result(
            started,
            f"the command's processes were signalled but had not all ended after "
            f"{CANCEL_CONFIRM_S:g}s; the supervisor keeps sweeping until its timeout",
        )
    text = fut.result()
    if text is None:
        return _cancelled_result(started, "cancelled before the command started")
    return dataclasses.replace(ExecResult.from_native(text), cancelled=True)
