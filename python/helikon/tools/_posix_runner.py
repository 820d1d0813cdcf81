"""A portable POSIX command runner, for platforms without the native Linux launcher.

The native launcher (``helikon-sandbox``: clone, subreaper sweep, Landlock, seccomp) exists on
Linux only. Elsewhere (macOS, the BSDs) :class:`~helikon.tools.HostBackend` and the Seatbelt
backend run commands with this module, which keeps the same process hygiene where POSIX allows:

* ``<prefix...> <shell> -c command`` with the working directory pinned to the root, stdin from
  ``/dev/null``, the environment scrubbed to an allowlist, and ``HOME``/``TMPDIR``/``TMP``/
  ``TEMP`` pointing at a private per-call temp directory (removed afterwards);
* rlimits in the child before exec (CPU seconds, file size, address space, open files, no core
  files);
* each stream captured with its head and tail kept over the cap and the cut stated (the same
  marker text as the native capture);
* the command leads its own process group; on timeout the group gets SIGTERM, then SIGKILL
  after the grace period; on cancellation SIGKILL at once; after every call, a normal exit too,
  the group gets SIGKILL so a background job left behind does not outlive the call.

Weaker than the native launcher, and stated in the guarantees' notes: a process that leaves
the group (``setsid``) is not swept (no subreaper outside Linux), and ``RLIMIT_NPROC`` is not
applied (it counts every process of the uid, which this runner cannot measure portably).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from helikon.core.cancel import CancellationToken
from helikon.errors import ConfigError
from helikon.redaction import CUT_GUARD, process_redactor
from helikon.tools._shell import resolve_shell
from helikon.tools.backend import ExecResult, ResourceLimits

__all__ = ["DEFAULT_ENV_ALLOWLIST", "PORTABLE_NOTES", "HeadTail", "PosixSpec", "run_posix"]

#: Host variables passed through when no allowlist is given (the native default too).
DEFAULT_ENV_ALLOWLIST = ("PATH", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ")
#: ``PATH`` when the host has none (or it is not allowlisted).
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: What the guarantees say about this runner.
PORTABLE_NOTES = (
    "portable runner: the process group is killed after each call, but a process that "
    "leaves the group (setsid) is not swept",
    "portable runner: RLIMIT_NPROC is not applied",
    "portable runner: the memory ceiling (ResourceLimits.memory_bytes) is not enforced",
)
#: How long the pipes are read after the process group is gone.
DRAIN_S = 0.25
_CHUNK = 65536


class HeadTail:
    """Bounded capture of one stream: the first ``cap // 2`` bytes and the last rest shown.

    A cut made before redaction leaks the secret at the cut (a key in the dropped middle
    frees its value in the tail; a token straddling the cut keeps a piece too short to
    match). So each side keeps :data:`helikon.redaction.CUT_GUARD` more bytes beyond its
    cut, and a stream over the cap is redacted with that context (every pattern and this
    process's secret-named environment values) before it is cut, at a line boundary where
    one is near. A stream under the cap is returned as it is; the agent loop redacts it.

    Args:
        cap: bytes shown at most (>= 1).
        guard: context bytes kept on the dropped side of each cut (default ``CUT_GUARD``).
    """

    def __init__(self, cap: int, guard: int = CUT_GUARD) -> None:
        self._keep_head = cap // 2
        self._keep_tail = cap - cap // 2
        self._head_cap = self._keep_head + guard
        self._tail_cap = self._keep_tail + guard
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        """Append bytes read from the stream."""
        self.total += len(data)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > self._tail_cap:
                del self._tail[: len(self._tail) - self._tail_cap]

    @property
    def truncated(self) -> bool:
        """Whether the shown text is cut (more bytes than the cap were seen)."""
        return self.total > self._keep_head + self._keep_tail

    def render(self) -> str:
        """The kept text (invalid UTF-8 replaced); a cut stream is redacted, then cut, and
        the cut is stated between head and tail."""
        if not self.truncated:
            return (self._head + self._tail).decode(errors="replace")
        head_raw, tail_raw = bytes(self._head), bytes(self._tail)
        if len(head_raw) + len(tail_raw) == self.total:  # nothing dropped: one text
            whole = head_raw + tail_raw
            head_raw, tail_raw = whole[: self._head_cap], whole[-self._tail_cap :]
        # The limits in characters of the bytes shown (the scanner counts characters).
        keep_head = len(head_raw[: self._keep_head].decode(errors="replace"))
        keep_tail = len(tail_raw[-self._keep_tail :].decode(errors="replace"))
        redactor = process_redactor()
        head = redactor.redact_head(head_raw.decode(errors="replace"), keep_head)
        tail = redactor.redact_tail(tail_raw.decode(errors="replace"), keep_tail)
        shown = len(head.encode()) + len(tail.encode())
        return (
            f"{head}\n[... output truncated: {max(0, self.total - shown)} of {self.total} bytes "
            f"omitted; kept the first {len(head.encode())} and the last {len(tail.encode())} "
            f"bytes ...]\n{tail}"
        )


@dataclass(frozen=True)
class PosixSpec:
    """How :func:`run_posix` runs a command (the backend's fixed settings).

    Attributes:
        root: the working directory (the sandbox root).
        shell: run as ``<shell> -c command`` (default: bash, see :mod:`helikon.tools._shell`).
        prefix: argv placed before the shell (``sandbox-exec -p PROFILE`` for Seatbelt).
        env_allowlist: host variables passed through (exact names, or a prefix ending in ``*``).
        env: variables set explicitly (they win over everything).
        limits: the rlimits.
        output_cap_bytes: bytes kept per stream.
        kill_grace_ms: between SIGTERM and SIGKILL on timeout.
        tmp_parent: where the per-call temp directory is created (``None``: the system's).
    """

    root: str
    shell: str = field(default_factory=lambda: resolve_shell("PosixSpec", None).path)
    prefix: tuple[str, ...] = ()
    env_allowlist: tuple[str, ...] = DEFAULT_ENV_ALLOWLIST
    env: Mapping[str, str] = field(default_factory=dict)
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    output_cap_bytes: int = 65536
    kill_grace_ms: int = 200
    tmp_parent: str | None = None


def _allowed(name: str, allowlist: Sequence[str]) -> bool:
    return any(name.startswith(pat[:-1]) if pat.endswith("*") else name == pat for pat in allowlist)


def build_env(spec: PosixSpec, tmp: str, host: Mapping[str, str]) -> dict[str, str]:
    """The child's environment: allowlisted host variables, then the fixed ones, then ``env``."""
    env = {k: v for k, v in host.items() if _allowed(k, spec.env_allowlist)}
    env.setdefault("PATH", DEFAULT_PATH)
    for key in ("HOME", "TMPDIR", "TMP", "TEMP"):
        env[key] = tmp
    env["PWD"] = spec.root
    env.update(spec.env)
    return env


def _limits_setter(limits: ResourceLimits, timeout: float) -> Callable[[], None]:
    cpu = limits.cpu_seconds or int(timeout) + 1 + 5
    wanted: list[tuple[int, int]] = [(resource.RLIMIT_CPU, cpu), (resource.RLIMIT_CORE, 0)]
    if limits.file_size_bytes is not None:
        wanted.append((resource.RLIMIT_FSIZE, limits.file_size_bytes))
    if limits.address_space_bytes is not None:
        wanted.append((resource.RLIMIT_AS, limits.address_space_bytes))
    if limits.open_files is not None:
        wanted.append((resource.RLIMIT_NOFILE, limits.open_files))

    def apply() -> None:  # runs in the child between fork and exec
        for res, value in wanted:
            _soft, hard = resource.getrlimit(res)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(res, (value, value if hard == resource.RLIM_INFINITY else hard))

    return apply


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _exit_status(proc: asyncio.subprocess.Process) -> int:
    """The shell's exit status (negative: the signal that ended it), as soon as it exits.

    ``Process.wait()`` also waits for the pipes to close (Python 3.11), and a background job
    that inherited stdout holds them open until it ends: ``sleep 60 & echo hi`` would block
    the call for a minute before the sweep could kill the job. ``waitid(WNOWAIT)`` sees the
    exit itself and leaves reaping to asyncio's child watcher; when the watcher has reaped
    first (``ChildProcessError``), the status it recorded is read instead.
    """
    try:
        info = await asyncio.to_thread(os.waitid, os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    except ChildProcessError:
        info = None
    if info is not None:
        return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
    while proc.returncode is None:
        await asyncio.sleep(0.005)
    return proc.returncode


async def _pump(stream: asyncio.StreamReader | None, sink: HeadTail) -> None:
    if stream is None:
        return
    while chunk := await stream.read(_CHUNK):
        sink.feed(chunk)


async def run_posix(
    spec: PosixSpec,
    command: str,
    timeout: float,
    cancel: CancellationToken | None = None,
) -> ExecResult:
    """Run ``command`` per ``spec``; see the module docstring for what is enforced.

    Args:
        spec: the backend's settings.
        command: the shell command.
        timeout: seconds before the process group gets SIGTERM (then SIGKILL).
        cancel: when it fires, the group gets SIGKILL and the result says ``cancelled``.

    Returns:
        The :class:`ExecResult` (``signal`` set when the shell was killed).

    Raises:
        ConfigError: a NUL byte in the command.
        OSError: the shell could not be started (a missing shell, an unreadable root).
    """
    if "\0" in command:
        raise ConfigError("the command contains a NUL byte")
    start = time.monotonic()
    if cancel is not None and cancel.cancelled:
        return ExecResult(
            exit_code=None,
            signal=None,
            stdout="",
            stderr="",
            cancelled=True,
            notes=("cancelled before the command started",),
        )
    tmp = tempfile.mkdtemp(prefix="helikon-run-", dir=spec.tmp_parent)
    out, err = HeadTail(spec.output_cap_bytes), HeadTail(spec.output_cap_bytes)
    proc: asyncio.subprocess.Process | None = None
    try:
        proc = await asyncio.create_subprocess_exec(
            *spec.prefix,
            spec.shell,
            "-c",
            command,
            cwd=spec.root,
            env=build_env(spec, tmp, os.environ),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_limits_setter(spec.limits, timeout),
        )
        pumps = asyncio.gather(_pump(proc.stdout, out), _pump(proc.stderr, err))
        exited = asyncio.ensure_future(_exit_status(proc))
        waits: set[asyncio.Future[Any]] = {exited}
        cancelled_f = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
        if cancelled_f is not None:
            waits.add(cancelled_f)
        done, _ = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if cancelled_f is not None:
            cancelled_f.cancel()
        cancelled = cancelled_f is not None and cancelled_f in done and exited not in done
        timed_out = exited not in done and not cancelled
        if timed_out:
            _kill_group(proc.pid, signal.SIGTERM)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(exited), spec.kill_grace_ms / 1000)
        _kill_group(proc.pid, signal.SIGKILL)  # the sweep: also after a normal exit
        code = await exited
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(pumps), DRAIN_S)
        pumps.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pumps
        # reap without waiting on pipes a process outside the group (setsid) may still hold
        reaped = asyncio.ensure_future(proc.wait())
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(reaped), DRAIN_S)
        reaped.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reaped
    except asyncio.CancelledError:
        if proc is not None:
            _kill_group(proc.pid, signal.SIGKILL)
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return ExecResult(
        exit_code=code if code >= 0 else None,
        signal=-code if code < 0 else None,
        stdout=out.render(),
        stderr=err.render(),
        truncated=out.truncated or err.truncated,
        timed_out=timed_out,
        cancelled=cancelled,
        duration_ms=int((time.monotonic() - start) * 1000),
    )
