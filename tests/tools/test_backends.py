"""HostBackend and OsSandboxBackend: guarantees, fail-closed build, limits, timeout, cancel."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import secrets
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helikon.core.cancel import CancellationToken
from helikon.errors import ConfigError, SandboxUnavailable
from helikon.tools import (
    ExecutionBackend,
    HostBackend,
    Isolation,
    OsSandboxBackend,
    ResourceLimits,
    Sandbox,
    _policy_backend,
    best_available_backend,
)
from helikon.tools._policy_backend import PolicyBackend

from .conftest import IS_ROOT, needs_os_sandbox, needs_root, run_as

Factory = Callable[..., PolicyBackend]


def _host(root: Path, **kw: object) -> PolicyBackend:
    return HostBackend(Sandbox.open(root), **kw)  # type: ignore[arg-type]


def _portable(root: Path, **kw: object) -> PolicyBackend:
    """HostBackend on the portable POSIX runner, as on macOS (forced here on Linux)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_policy_backend, "NATIVE_LAUNCHER", False)
        return HostBackend(Sandbox.open(root), **kw)  # type: ignore[arg-type]


def _os(root: Path, **kw: object) -> PolicyBackend:
    return OsSandboxBackend(Sandbox.open(root), run_as=run_as(), **kw)  # type: ignore[arg-type]


BACKENDS = [
    pytest.param(_host, id="host"),
    pytest.param(_portable, id="portable"),
    pytest.param(_os, id="os", marks=needs_os_sandbox),
]


def _alive(marker: str) -> list[int]:
    """Pids whose command line contains ``marker`` (``/proc``, or ``ps`` where it is absent)."""
    if not os.path.isdir("/proc"):
        listing = subprocess.run(
            ["ps", "-axo", "pid=,command="], capture_output=True, text=True, check=True
        ).stdout
        return [
            int(pid)
            for pid, _, cmd in (line.strip().partition(" ") for line in listing.splitlines())
            if marker in cmd and int(pid) != os.getpid()
        ]
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd and int(entry) != os.getpid():
            pids.append(int(entry))
    return pids


def _marker(seconds: int) -> str:
    """A ``sleep`` argument unique to this call, so concurrent test runs never see each other's."""
    return f"{seconds}.{secrets.randbelow(10**9):09d}"


async def _gone(marker: str, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _alive(marker):
            return True
        await asyncio.sleep(0.05)
    return False


# ------------------------------------------------------------------ guarantees and build


def test_host_guarantees(ws: dict[str, Path]) -> None:
    b = HostBackend(Sandbox.open(ws["root"]))
    assert isinstance(b, ExecutionBackend)
    g = b.guarantees()
    assert (g.filesystem, g.network, g.syscalls) == (Isolation.NONE,) * 3
    assert g.label == "host (no containment)"
    assert g.contained is False
    assert g.landlock_abi is None
    assert g.summary() == ("host (no containment): filesystem=none, network=none, syscalls=none")


@needs_os_sandbox
def test_os_guarantees(ws: dict[str, Path]) -> None:
    b = OsSandboxBackend(Sandbox.open(ws["root"]), run_as=run_as())
    assert isinstance(b, ExecutionBackend)
    g = b.guarantees()
    assert (g.filesystem, g.network, g.syscalls) == (Isolation.OS_KERNEL,) * 3
    assert g.label == "os-sandbox (landlock+seccomp)"
    assert g.contained is True
    assert g.landlock_abi is not None and g.landlock_abi >= 6
    assert g.waived == ()
    assert b.kernel_features()["seccomp"] is True
    net = OsSandboxBackend(Sandbox.open(ws["root"]), run_as=run_as(), allow_network=True)
    assert net.guarantees().network is Isolation.NONE
    assert net.guarantees().filesystem is Isolation.OS_KERNEL


@needs_os_sandbox
@needs_root
def test_root_without_run_as_is_refused(ws: dict[str, Path]) -> None:
    with pytest.raises(SandboxUnavailable) as exc:
        OsSandboxBackend(Sandbox.open(ws["root"]))
    assert "running as root requires run_as=(uid, gid)" in str(exc.value)


def test_config_errors(ws: dict[str, Path]) -> None:
    sb = Sandbox.open(ws["root"])
    with pytest.raises(ConfigError, match=r"HostBackend\.timeout must be > 0 seconds, got 0"):
        HostBackend(sb, timeout=0)
    with pytest.raises(ConfigError, match="must be a list of names, not a string"):
        HostBackend(sb, env_allowlist="PATH")
    with pytest.raises(ConfigError, match=r"run_as must be \(uid, gid\)"):
        OsSandboxBackend(sb, run_as=(65534,))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"ResourceLimits\.open_files must be a positive int"):
        ResourceLimits(open_files=0)


@needs_os_sandbox
def test_os_config_errors(ws: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match="invalid sandbox configuration"):
        OsSandboxBackend(Sandbox.open(ws["root"]), run_as=run_as(), read_paths=["relative/path"])


async def test_run_rejects_bad_timeout(ws: dict[str, Path]) -> None:
    b = HostBackend(Sandbox.open(ws["root"]))
    with pytest.raises(ConfigError, match=r"timeout must be > 0 seconds, got -1"):
        await b.run("true", timeout=-1)


# ------------------------------------------------------------------ running


@pytest.mark.parametrize("make", BACKENDS)
async def test_cwd_env_and_exit_code(make: Factory, ws: dict[str, Path]) -> None:
    os.environ["HELIKON_TEST_LEAK"] = "leaked"
    try:
        b = make(ws["root"], env={"GREETING": "hi"})
        r = await b.run('pwd; echo "[$HELIKON_TEST_LEAK]" "$GREETING"; echo oops >&2; exit 7')
    finally:
        del os.environ["HELIKON_TEST_LEAK"]
    assert r.exit_code == 7
    assert r.signal is None
    assert r.stdout == f"{ws['root'].resolve()}\n[] hi\n"
    assert r.stderr == "oops\n"
    assert not r.ok and not r.timed_out and not r.cancelled and not r.truncated
    home = await b.run('echo "$HOME"; test "$HOME" != "$(getent passwd root | cut -d: -f6)"')
    assert home.exit_code == 0
    assert home.stdout.strip() != os.environ.get("HOME")


@pytest.mark.parametrize("make", BACKENDS)
async def test_timeout_kills_the_process_group(make: Factory, ws: dict[str, Path]) -> None:
    b = make(ws["root"])
    marker = _marker(41)
    t0 = time.monotonic()
    r = await b.run(f"sleep {marker} & sleep {marker}; echo never", timeout=0.5)
    assert time.monotonic() - t0 < 8
    assert r.timed_out is True
    assert r.exit_code is None and r.signal in (9, 15)
    assert "never" not in r.stdout
    assert not _alive(marker)


@pytest.mark.parametrize("make", BACKENDS)
async def test_output_cap_keeps_head_and_tail(make: Factory, ws: dict[str, Path]) -> None:
    b = make(ws["root"], output_cap_bytes=1000)
    r = await b.run("i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done")
    assert r.truncated is True
    # Each kept part ends or starts at a line boundary within its 500 bytes.
    full = "".join(f"line{i}\n" for i in range(2000))
    head = full[: full.rindex("\n", 0, 500) + 1]
    tail = full[full.index("\n", len(full) - 501) + 1 :]
    assert r.stdout == (
        f"{head}\n[... output truncated: {len(full) - len(head) - len(tail)} of {len(full)} "
        f"bytes omitted; kept the first {len(head)} and the last {len(tail)} bytes ...]\n{tail}"
    )


@pytest.mark.parametrize("make", BACKENDS)
async def test_rlimits_apply(make: Factory, ws: dict[str, Path]) -> None:
    b = make(ws["root"], limits=ResourceLimits(file_size_bytes=4096, open_files=64))
    r = await b.run("ulimit -n; head -c 10000 /dev/zero > big.bin; echo rc=$?; wc -c < big.bin")
    lines = r.stdout.split()
    assert lines[0] == "64"
    assert lines[1] != "rc=0"
    assert lines[2] == "4096"


# ------------------------------------------------------------------ cancellation


@pytest.mark.parametrize("make", BACKENDS)
async def test_cancel_token_returns_promptly_and_kills_the_tree(
    make: Factory, ws: dict[str, Path]
) -> None:
    b = make(ws["root"])
    marker = _marker(42)
    tok = CancellationToken()
    asyncio.get_running_loop().call_later(0.4, tok.cancel)
    t0 = time.monotonic()
    r = await b.run(
        f"echo started; (sleep {marker} &) ; sleep {marker} & sleep {marker}",
        timeout=30,
        cancel=tok,
    )
    elapsed = time.monotonic() - t0
    assert elapsed < 5.0, elapsed
    assert r.cancelled is True
    assert r.timed_out is False
    assert r.stdout == "started\n"
    assert r.signal == 9
    assert r.notes == ()
    assert await _gone(marker, within=1.0), _alive(marker)


@pytest.mark.parametrize("make", BACKENDS)
async def test_cancelling_the_task_kills_the_tree(make: Factory, ws: dict[str, Path]) -> None:
    b = make(ws["root"])
    marker = _marker(43)
    task = asyncio.ensure_future(b.run(f"sleep {marker} & sleep {marker}", timeout=30))
    await asyncio.sleep(0.4)
    assert _alive(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _gone(marker, within=2.0), _alive(marker)


@pytest.mark.parametrize("make", [_host, _portable], ids=["host", "portable"])
async def test_cancel_before_start_runs_nothing(make: Factory, ws: dict[str, Path]) -> None:
    b = make(ws["root"])
    tok = CancellationToken()
    tok.cancel()
    r = await b.run("touch ran.txt", cancel=tok)
    assert r.cancelled is True
    assert r.exit_code is None
    assert r.notes == ("cancelled before the command started",)
    assert not (ws["root"] / "ran.txt").exists()


@pytest.mark.parametrize("make", BACKENDS)
async def test_cancel_touches_only_its_own_call(make: Factory, ws: dict[str, Path]) -> None:
    b = make(ws["root"])
    tok = CancellationToken()
    asyncio.get_running_loop().call_later(0.3, tok.cancel)
    other, mine = await asyncio.gather(
        b.run("sleep 0.8; echo survived", timeout=10),
        b.run("sleep 44.11", timeout=10, cancel=tok),
    )
    assert mine.cancelled is True
    assert other.exit_code == 0 and other.stdout == "survived\n"


class _NoThreads(concurrent.futures.ThreadPoolExecutor):
    """A default executor that refuses work: a call that needs a worker thread fails."""

    def submit(self, fn: Callable[..., object], /, *args: object, **kw: object) -> Any:
        raise AssertionError(f"a worker thread was asked to run {fn!r}")


@pytest.mark.parametrize(
    "make", [pytest.param(_host, id="host"), pytest.param(_os, id="os", marks=needs_os_sandbox)]
)
async def test_a_native_call_waits_on_the_loop_without_a_worker_thread(
    make: Factory, ws: dict[str, Path]
) -> None:
    # The event loop watches the supervisor's pidfd; the native call never blocks a thread.
    asyncio.get_running_loop().set_default_executor(_NoThreads())
    b = make(ws["root"])
    r, s = await asyncio.gather(b.run("sleep 0.2; echo one"), b.run("echo two; exit 4"))
    assert (r.exit_code, r.stdout, s.exit_code, s.stdout) == (0, "one\n", 4, "two\n")
    tok = CancellationToken()
    asyncio.get_running_loop().call_later(0.2, tok.cancel)
    c = await b.run("echo started; sleep 30", timeout=60, cancel=tok)
    assert (c.cancelled, c.stdout, c.signal) == (True, "started\n", 9)


@pytest.mark.parametrize("make", BACKENDS)
async def test_background_jobs_are_killed_after_a_normal_exit(
    make: Factory, ws: dict[str, Path]
) -> None:
    b = make(ws["root"])
    marker = _marker(45)
    r = await b.run(f"sleep {marker} & echo left-behind")
    assert r.exit_code == 0 and r.stdout == "left-behind\n"
    # the call ends with the shell, not when the job that holds its stdout would end (45 s)
    assert r.duration_ms < 30_000, r.duration_ms
    assert await _gone(marker, within=1.0), _alive(marker)


# ------------------------------------------------------------------ the portable runner


def test_portable_guarantees_state_what_is_weaker(ws: dict[str, Path]) -> None:
    b = _portable(ws["root"])
    g = b.guarantees()
    assert (g.filesystem, g.network, g.syscalls) == (Isolation.NONE,) * 3
    assert g.label == "host (no containment)"
    assert g.notes == (
        "portable runner: the process group is killed after each call, but a process that "
        "leaves the group (setsid) is not swept",
        "portable runner: RLIMIT_NPROC is not applied",
        "portable runner: the memory ceiling (ResourceLimits.memory_bytes) is not enforced",
    )
    with pytest.raises(ConfigError, match=r"portable POSIX runner on .*there is no native policy"):
        _ = b.policy


async def test_portable_rejects_a_nul_byte(ws: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match="the command contains a NUL byte"):
        await _portable(ws["root"]).run("echo a\0b")


async def test_portable_temp_dir_is_private_and_removed(ws: dict[str, Path]) -> None:
    r = await _portable(ws["root"]).run(
        'echo "$TMPDIR"; touch "$TMPDIR/x"; test "$HOME" = "$TMPDIR"'
    )
    tmp = r.stdout.strip()
    assert r.exit_code == 0
    assert Path(tmp).name.startswith("helikon-run-")
    assert not Path(tmp).exists()


# ------------------------------------------------------------------ choosing


@needs_os_sandbox
def test_best_available_backend_prefers_the_os_sandbox(ws: dict[str, Path]) -> None:
    backend, reason = best_available_backend(Sandbox.open(ws["root"]), run_as=run_as())
    assert isinstance(backend, OsSandboxBackend)
    abi = backend.guarantees().landlock_abi
    assert reason == (
        "os-sandbox (landlock+seccomp): filesystem=os_kernel, network=os_kernel, "
        f"syscalls=os_kernel: the kernel probe and self-test passed (Landlock ABI {abi})"
    )


@pytest.mark.skipif(not IS_ROOT, reason="needs a refusal: root without run_as")
def test_best_available_backend_states_the_fallback(
    ws: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="helikon.tools"):
        choice = best_available_backend(Sandbox.open(ws["root"]), timeout=5)
    assert caplog.messages == [f"best_available_backend fell back to {choice.reason}"]
    assert isinstance(choice.backend, HostBackend)
    assert choice.backend.timeout == 5
    assert choice.reason.startswith(
        "host (no containment): the OS sandbox is unavailable: unsupported: running as root "
        "requires run_as=(uid, gid)"
    )
