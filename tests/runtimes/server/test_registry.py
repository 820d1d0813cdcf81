"""The run registry: finished runs indexed by finish order, so requests do not scan them."""

from __future__ import annotations

import asyncio
import time

from helikon.runtimes.server.runs import Run, RunRegistry


class CountingRun(Run):
    """A run that counts how often its ``finished_at`` is read."""

    reads = 0

    @property  # type: ignore[override]
    def finished_at(self) -> float | None:
        CountingRun.reads += 1
        return self._finished_at

    @finished_at.setter
    def finished_at(self, value: float | None) -> None:
        self._finished_at = value


async def nothing(run: Run) -> None:
    return None


async def finished_runs(registry: RunRegistry, n: int, cls: type[Run] = Run) -> list[Run]:
    runs = [cls("calc", None) for _ in range(n)]
    for run in runs:
        registry.start(run, nothing)
        assert run.task is not None
        await run.task
    return runs


async def test_a_lookup_reads_no_more_runs_with_a_thousand_retained() -> None:
    registry = RunRegistry(retention=300, max_retained=5000, grace=1)
    runs = await finished_runs(registry, 1000, CountingRun)
    CountingRun.reads = 0
    assert registry.get(runs[500].id) is runs[500]
    assert CountingRun.reads <= 1  # the oldest only: it is within retention, so all are
    CountingRun.reads = 0
    registry.start(CountingRun("calc", None), nothing)
    assert CountingRun.reads <= 2 and registry.active == 1


async def test_the_oldest_finished_go_first_past_the_count_and_the_retention() -> None:
    registry = RunRegistry(retention=300, max_retained=3, grace=1)
    waiting = Run("calc", None)  # never finishes: never pruned
    registry.start(waiting, lambda r: asyncio.Event().wait())
    runs = await finished_runs(registry, 5)
    registry.prune()
    assert [registry.get(r.id) for r in runs] == [None, None, *runs[2:]]
    assert len(registry) == 4 and registry.active == 1
    registry.prune(now=time.monotonic() + 301)
    assert [registry.get(r.id) for r in runs] == [None] * 5
    assert registry.get(waiting.id) is waiting and len(registry) == 1
    await registry.aclose()
    assert waiting.done and registry.active == 0
    registry.prune(now=time.monotonic() + 301)
    assert len(registry) == 0


async def test_a_run_finishing_out_of_start_order_is_dropped_in_finish_order() -> None:
    registry = RunRegistry(retention=300, max_retained=1, grace=1)
    gates = [asyncio.Event(), asyncio.Event()]
    first, second = Run("calc", None), Run("calc", None)
    registry.start(first, lambda r: gates[0].wait())
    registry.start(second, lambda r: gates[1].wait())
    gates[1].set()
    await second.task  # type: ignore[misc]
    gates[0].set()
    await first.task  # type: ignore[misc]
    assert registry.get(second.id) is None  # finished first, so dropped first
    assert registry.get(first.id) is first


async def test_an_adopted_run_is_indexed_when_it_finishes() -> None:
    registry = RunRegistry(retention=300, max_retained=0, grace=1)
    run = Run("calc", None)
    assert registry.adopt(run) is run
    assert registry.adopt(Run("calc", None)) is not run  # another id: another run
    again = Run("calc", None)
    again.id = run.id
    assert registry.adopt(again) is run  # the one registered wins
    assert registry.active == 2
    run.finish({"kind": "Other", "message": "x"})
    assert registry.get(run.id) is None and registry.active == 1
