"""Model calls per run, by structured-output mode, for the same script (``output_modes.py``).

Run ``python benches/bench_output_modes.py`` (``--runs N``, default 200). ``finalize`` is the
loop before output modes existed (every typed run with tools spent a finalizing call);
``native`` and ``tool`` are the one-call paths. Reported per mode, with one tool round and
without tools: the model calls per run (exact: the scenario is deterministic) and the loop's
wall time per run on the in-process model (the framework's own cost; a real model's latency
per saved call is what the first column is about). Not a timed test: it never fails on a
number, only when a mode makes a different number of calls than documented.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from output_modes import EXPECTED_CALLS, MODES, build, run_once


async def _measure(mode: str, with_tools: bool, runs: int) -> tuple[int, float]:
    agent, model = build(mode, with_tools)
    calls = await run_once(agent, model)  # checked, and warms the caches
    if calls != EXPECTED_CALLS[(mode, with_tools)]:
        raise AssertionError(
            f"{mode}: {calls} model calls, expected {EXPECTED_CALLS[(mode, with_tools)]}"
        )
    start = time.perf_counter()
    for _ in range(runs):
        await run_once(agent, model)
    return calls, (time.perf_counter() - start) / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    print(f"{'mode':<10} {'tools':<6} {'model calls/run':>16} {'loop time/run':>14}")
    for with_tools in (True, False):
        base = None
        for mode in MODES:
            calls, seconds = asyncio.run(_measure(mode, with_tools, args.runs))
            base = base or calls
            saved = f"  ({base - calls} fewer than finalize)" if calls < base else ""
            print(
                f"{mode:<10} {'yes' if with_tools else 'no':<6} {calls:>16} "
                f"{seconds * 1e6:>11.0f} us{saved}"
            )


if __name__ == "__main__":
    main()
