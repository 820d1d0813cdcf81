"""Cost of containment: one command through each runner, side by side in one run.

Run ``python benches/bench_sandbox.py`` (``--iterations N``, default 200; ``--profile`` adds
a cProfile of the Host path and the tool layer). Two commands, each through:

* **plain asyncio**: ``asyncio.create_subprocess_exec("/bin/sh", "-c", cmd)`` with both
  pipes read and the exit awaited — the baseline;
* **host**: ``await HostBackend.run(cmd)`` (cwd pin, env scrub, rlimits, the memory
  watchdog, the supervisor and its process-tree sweep; no containment);
* **os**: ``await OsSandboxBackend.run(cmd)`` (Landlock + seccomp + the uid drop as root);
  the event loop waits on the supervisor's pidfd;
* **os (worker thread)**: the same native policy's blocking ``run()`` in the loop's default
  executor, the way every call went before the pidfd waiter;
* **os + private_mounts**: the same in a private mount namespace (root only);
* **os + network**: the same with a ``NetworkPolicy`` (egress through the proxy: a private
  network namespace per command where user namespaces or root allow it);
* **bash tool (os)**: ``await BashTool(os).invoke(...)``, the tool layer on top;
* **bwrap**: ``bwrap`` (Debian package ``bubblewrap``) with an equivalent policy: system
  directories read-only, the workspace read-write, a fresh ``/tmp``, no network namespace
  sharing, new pid/ipc/uts namespaces, as nobody; skipped when not installed.

Commands: ``/bin/sh -c true`` and ``git status`` in a small repository (20 files). Rounds are
interleaved so background load hits every variant alike. It prints the median and p90 per
call and each variant's ratio to the plain spawn of the same command. Target: the OS
backend at most 1.30x plain. Never a timed test (``--check`` exits 1 when the target is
missed).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from helikon.core.cancel import CancellationToken
from helikon.core.context import ToolContext
from helikon.errors import SandboxUnavailable
from helikon.tools import BashTool, HostBackend, OsSandboxBackend, Sandbox
from helikon.tools.egress import NetworkPolicy

TARGET_RATIO = 1.30
NOBODY = (65534, 65534)
COMMANDS = {"true": "true", "git status": "git -c 'safe.directory=*' status --short"}
PLAIN = "plain asyncio"

Runner = Callable[[str], Awaitable[None]]


async def _plain(cmd: str, cwd: Path, env: dict[str, str]) -> None:
    proc = await asyncio.create_subprocess_exec(
        "/bin/sh",
        "-c",
        cmd,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"plain {cmd!r} failed")


def _backend(b: HostBackend | OsSandboxBackend) -> Runner:
    async def run(cmd: str) -> None:
        r = await b.run(cmd, timeout=30)
        if r.exit_code != 0:
            raise RuntimeError(f"{cmd!r} failed: {r}")

    return run


def _threaded(b: OsSandboxBackend) -> Runner:
    async def run(cmd: str) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, b.policy.run, cmd, 30.0)

    return run


def _tool(t: BashTool) -> Runner:
    ctx: ToolContext[None] = ToolContext(
        user_ctx=None, state={}, cancel=CancellationToken(), call_id="b", agent_name="bench"
    )

    async def run(cmd: str) -> None:
        await t.invoke(ctx, {"command": cmd})

    return run


def _bwrap(root: Path) -> Runner | None:
    exe = shutil.which("bwrap")
    if exe is None:
        return None
    args = [exe, "--unshare-all", "--die-with-parent", "--new-session"]
    for d in ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc"):
        if os.path.exists(d):
            args += ["--ro-bind", d, d]
    args += ["--dev", "/dev", "--tmpfs", "/tmp", "--bind", str(root), str(root)]
    args += ["--chdir", str(root)]
    if os.geteuid() == 0:
        args += ["--uid", str(NOBODY[0]), "--gid", str(NOBODY[1])]

    async def run(cmd: str) -> None:
        proc = await asyncio.create_subprocess_exec(
            *args,
            "/bin/sh",
            "-c",
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        _, err = await proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"bwrap {cmd!r} failed: {err.decode(errors='replace')}")

    return run


def _repo(root: Path) -> None:
    for i in range(20):
        (root / f"f{i}.txt").write_text(f"file {i}\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@e"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=root, check=True)
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", "65534:65534", str(root)], check=True)


def _pct(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))]


def _variants(root: Path) -> dict[str, Runner]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(root)}
    out: dict[str, Runner] = {PLAIN: lambda cmd: _plain(cmd, root, env)}
    out["host"] = _backend(HostBackend(Sandbox.open(root)))
    run_as = NOBODY if os.geteuid() == 0 else None
    try:
        os_b = OsSandboxBackend(Sandbox.open(root), run_as=run_as)
        out["os"] = _backend(os_b)
        out["os (worker thread)"] = _threaded(os_b)
        if run_as is not None:
            out["os + private_mounts"] = _backend(
                OsSandboxBackend(Sandbox.open(root), run_as=run_as, private_mounts=True)
            )
        net = OsSandboxBackend(
            Sandbox.open(root),
            run_as=run_as,
            network=NetworkPolicy(allow_domains=["example.invalid"]),
        )
        mechanism = net.egress.mechanism if net.egress is not None else "?"
        out[f"os + network ({mechanism})"] = _backend(net)
        out["bash tool (os)"] = _tool(BashTool(os_b))
    except SandboxUnavailable as exc:
        print(f"os backend skipped: {exc}")
    bw = _bwrap(root)
    if bw is None:
        print("bwrap column skipped: not installed (apt-get install bubblewrap)")
    else:
        out["bwrap"] = bw
    return out


async def _measure(
    variants: dict[str, Runner], iterations: int, warmup: int
) -> dict[tuple[str, str], list[float]]:
    times: dict[tuple[str, str], list[float]] = {}
    for label, cmd in COMMANDS.items():
        for _ in range(warmup):
            for fn in variants.values():
                await fn(cmd)
        for _ in range(iterations):
            for name, fn in variants.items():
                t0 = time.perf_counter()
                await fn(cmd)
                times.setdefault((label, name), []).append(time.perf_counter() - t0)
    return times


def _profile(variants: dict[str, Runner]) -> None:
    for name in ("host", "bash tool (os)"):
        fn = variants.get(name)
        if fn is None:
            continue

        async def loop(fn: Runner = fn) -> None:
            for _ in range(200):
                await fn("true")

        prof = cProfile.Profile()
        prof.enable()
        asyncio.run(loop())
        prof.disable()
        print(f"\n--- cProfile: 200 x {name} 'true' (cumulative, top 15)")
        pstats.Stats(prof).sort_stats("cumulative").print_stats(15)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--check", action="store_true", help="exit 1 if the target is missed")
    parser.add_argument("--profile", action="store_true", help="cProfile host and tool paths")
    args = parser.parse_args(argv)

    base = Path(tempfile.mkdtemp(prefix="bench-sandbox-"))
    base.chmod(0o755)
    root = base / "repo"
    root.mkdir()
    try:
        _repo(root)
        variants = _variants(root)
        times = asyncio.run(_measure(variants, args.iterations, args.warmup))
        if args.profile:
            _profile(variants)
    finally:
        shutil.rmtree(base, ignore_errors=True)

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, {args.iterations} iterations")
    width = max(len(n) for n in variants)
    missed = False
    for label in COMMANDS:
        base_med = statistics.median(times[(label, PLAIN)])
        print(f"\n{label}\n{'variant':<{width}}  {'median':>9}  {'p90':>9}  ratio")
        for name in variants:
            samples = times[(label, name)]
            med = statistics.median(samples)
            print(
                f"{name:<{width}}  {med * 1e6:>7.0f}µs  {_pct(samples, 0.9) * 1e6:>7.0f}µs  "
                f"{med / base_med:.2f}"
            )
        if ("os" in variants) and label == "true":
            ratio = statistics.median(times[(label, "os")]) / base_med
            met = ratio <= TARGET_RATIO
            missed = not met
            print(
                f"target: os / plain <= {TARGET_RATIO:.2f}: {ratio:.2f} -> "
                f"{'met' if met else 'MISSED'}"
            )
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
