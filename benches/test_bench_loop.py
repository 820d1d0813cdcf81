"""pytest-benchmark view of the agent-loop scenario (``pytest benches/ --benchmark-only``).

One benchmark group per scenario (turns x plain/streaming), one entry per framework, so
``--benchmark-group-by=group`` tables put helikon next to the peers. A peer that is not
installed is skipped with the reason. The ratio and memory report lives in ``bench_loop.py``.
Each test also checks the scenario ran exactly (N + 1 model calls, final answer ``done``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from loop_scenarios import FINAL_TEXT, Framework, frameworks

FRAMEWORKS: dict[str, Framework] = {fw.name: fw for fw in frameworks()}


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    lp = asyncio.new_event_loop()
    yield lp
    lp.close()


@pytest.mark.parametrize("mode", ["plain", "stream"])
@pytest.mark.parametrize("turns", [1, 10, 20])
@pytest.mark.parametrize("name", list(FRAMEWORKS))
def test_loop_overhead(
    benchmark: Any, loop: asyncio.AbstractEventLoop, name: str, turns: int, mode: str
) -> None:
    fw = FRAMEWORKS[name]
    if not fw.available:
        pytest.skip(fw.reason)
    stamps: list[float] = []
    run = fw.runner(turns, mode == "stream", stamps)
    benchmark.group = f"agent loop: {turns} turn(s), {mode}"
    benchmark.extra_info["model_calls_per_run"] = turns + 1

    def once() -> object:
        stamps.clear()
        return loop.run_until_complete(run())

    out = benchmark(once)
    assert out == FINAL_TEXT
    assert len(stamps) == turns + 1
