"""Compaction the session layer does is visible in the run's stream, tokens before/after."""

from __future__ import annotations

from helikon import Agent
from helikon.runtimes.runner import Runner
from helikon.sessions import CompactingSession, MemorySession
from helikon.sessions.tokens import HeuristicTokenCounter
from helikon.testing import MockModel, Text


async def test_a_compaction_after_the_run_yields_started_and_completed_before_the_end() -> None:
    session = CompactingSession(MemorySession(), MockModel([[Text("short summary")]]), threshold=10)
    agent = Agent(name="a", model=MockModel([[Text("a fairly long answer " * 10)]]))
    stream = Runner().run_streamed(agent, "tell me everything about it", session=session)
    events = [ev async for ev in stream]
    kinds = [e.type for e in events if not e.type.endswith("_delta")]
    assert kinds[-3:] == ["compaction_started", "compaction_completed", "run_completed"]
    started, completed = events[-3], events[-2]
    snapshot = await session.snapshot()
    assert [i.type for i in snapshot] == ["system"]
    counter = HeuristicTokenCounter()
    assert completed.tokens_after == counter.count(snapshot)  # type: ignore[union-attr]
    assert started.tokens_before == completed.tokens_before  # type: ignore[union-attr]
    assert completed.tokens_before > 10 > completed.tokens_after  # type: ignore[union-attr]


async def test_a_skipped_compaction_reports_the_same_size_after() -> None:
    failing = MockModel([[Text("   ")]])  # a blank summary is not used
    session = CompactingSession(MemorySession(), failing, threshold=10)
    agent = Agent(name="a", model=MockModel([[Text("a fairly long answer " * 10)]]))
    events = [ev async for ev in Runner().run_streamed(agent, "q", session=session)]
    started, completed = events[-3], events[-2]
    assert started.type == "compaction_started" and completed.type == "compaction_completed"
    assert completed.tokens_after == completed.tokens_before  # type: ignore[union-attr]


async def test_no_compaction_no_events() -> None:
    session = CompactingSession(MemorySession(), MockModel([]), threshold=10_000)
    agent = Agent(name="a", model=MockModel([[Text("hi")]]))
    events = [ev async for ev in Runner().run_streamed(agent, "q", session=session)]
    assert not [e for e in events if e.type.startswith("compaction")]
