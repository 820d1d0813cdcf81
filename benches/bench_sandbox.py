"""Cost of one sandboxed command against a plain spawn, from Python.

Run ``python benches/bench_sandbox.py`` (``--iterations N``, default 300). It times, in one
process and interleaved round by round so background load hits every variant equally:

* **plain**: ``subprocess.run(["/bin/sh", "-c", "true"])`` — the baseline;
* **host**: ``SandboxPolicy(mode="host").run("true")`` — cwd pin, env scrub, rlimits, the
  supervisor and its process-tree sweep, no containment;
* **os-sandbox**: the same under Landlock + seccomp (+ the uid drop when run as root), via
  the native call and via ``await OsSandboxBackend.run("true")`` (adds the worker-thread hop);
  and once with ``limits.max_processes = None``, which skips the per-call count of the
  uid's tasks in ``/proc`` that the ``RLIMIT_NPROC`` default needs (a diagnostic variant).

It prints the median and p90 per call and each variant's ratio to the plain spawn. Target:
containment adds at most 30% (ratio <= 1.30). This is not a timed test; it never fails on a
number (``--check`` makes it exit 1 when the os-sandbox ratio misses the target).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from helikon import _native
from helikon.errors import SandboxUnavailable
from helikon.tools import OsSandboxBackend, Sandbox

TARGET_RATIO = 1.30
NOBODY = (65534, 65534)


def _plain() -> None:
    subprocess.run(["/bin/sh", "-c", "true"], check=True)


def _policy(root: Path, mode: str, **extra: object) -> _native.SandboxPolicy:
    config: dict[str, object] = {"root": str(root), "mode": mode, **extra}
    if mode == "os_sandbox" and os.geteuid() == 0:
        config["run_as"] = list(NOBODY)
    return _native.SandboxPolicy(json.dumps(config))


def _native_run(policy: _native.SandboxPolicy) -> Callable[[], None]:
    def run() -> None:
        out = json.loads(policy.run("true", 10.0))
        if out["exit_code"] != 0:
            raise RuntimeError(f"sandboxed true failed: {out}")

    return run


def _backend_run(backend: OsSandboxBackend, loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
    def run() -> None:
        r = loop.run_until_complete(backend.run("true", timeout=10.0))
        if r.exit_code != 0:
            raise RuntimeError(f"sandboxed true failed: {r}")

    return run


def _pct(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--check", action="store_true", help="exit 1 if the target is missed")
    args = parser.parse_args(argv)

    root = Path(tempfile.mkdtemp(prefix="bench-sandbox-"))
    root.chmod(0o755)
    if os.geteuid() == 0:
        os.chown(root, *NOBODY)
    loop = asyncio.new_event_loop()
    try:
        variants: dict[str, Callable[[], None]] = {
            "plain /bin/sh -c true (subprocess)": _plain,
            "host mode (native run)": _native_run(_policy(root, "host")),
        }
        try:
            variants["os-sandbox (native run)"] = _native_run(_policy(root, "os_sandbox"))
            variants["os-sandbox, no NPROC limit (native run)"] = _native_run(
                _policy(root, "os_sandbox", limits={"max_processes": None})
            )
            run_as = NOBODY if os.geteuid() == 0 else None
            backend = OsSandboxBackend(Sandbox.open(root), run_as=run_as)
            variants["os-sandbox (await backend.run)"] = _backend_run(backend, loop)
        except SandboxUnavailable as exc:
            print(f"os-sandbox skipped: {exc}")
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.warmup):
            for fn in variants.values():
                fn()
        for _ in range(args.iterations):
            for name, fn in variants.items():
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
    finally:
        loop.close()
        shutil.rmtree(root, ignore_errors=True)

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, {args.iterations} iterations")
    base = statistics.median(times["plain /bin/sh -c true (subprocess)"])
    width = max(len(n) for n in times)
    print(f"{'variant':<{width}}  {'median':>9}  {'p90':>9}  ratio")
    for name, samples in times.items():
        med = statistics.median(samples)
        print(
            f"{name:<{width}}  {med * 1e6:>7.0f}µs  {_pct(samples, 0.9) * 1e6:>7.0f}µs  "
            f"{med / base:.2f}"
        )
    key = "os-sandbox (native run)"
    if key not in times:
        print("target: not measured (no OS sandbox here)")
        return 0
    ratio = statistics.median(times[key]) / base
    met = ratio <= TARGET_RATIO
    print(
        f"target: os-sandbox / plain <= {TARGET_RATIO:.2f}: {ratio:.2f} -> "
        f"{'met' if met else 'MISSED'}"
    )
    return 1 if args.check and not met else 0


if __name__ == "__main__":
    sys.exit(main())
