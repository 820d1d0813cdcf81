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


# ------------------------------------------------------------------ live, inside the run


def _dumping_agent(model: MockModel) -> Agent:
    from helikon import tool

    @tool
    def dump(topic: str) -> str:
        """Dump everything about a topic."""
        return f"{topic}:" + "x" * 400

    return Agent(name="a", instructions="Be brief.", model=model, tools=[dump])


def _live_script() -> MockModel:
    from helikon.testing import Call, Usage

    return MockModel(
        [
            [Call("c1", "dump", {"topic": "a"}), Usage(input=10, output=2)],
            [Call("c2", "dump", {"topic": "b"}), Usage(input=20, output=2)],
            [Text("done"), Usage(input=30, output=1)],
        ]
    )


async def test_a_run_over_the_budget_compacts_before_its_next_model_call_in_order() -> None:
    from helikon.testing import Usage

    summariser = MockModel([[Text("S1"), Usage(input=100, output=5)], [Text("log summary")]])
    session = CompactingSession(MemorySession(), summariser, threshold=150)
    model = _live_script()
    events = [e async for e in Runner().run_streamed(_dumping_agent(model), "go", session=session)]
    kinds = [e.type for e in events if not e.type.endswith("_delta")]
    assert kinds == [
        "run_started",
        "turn_started",
        "tool_call_item",
        "tool_output_item",
        "turn_started",
        "tool_call_item",
        "tool_output_item",
        "turn_started",
        "compaction_started",  # live: the machine's Compacting state, before turn 3's call
        "compaction_completed",
        "message_output",
        "compaction_started",  # the session compacting its log after the run
        "compaction_completed",
        "run_completed",
    ]
    live_start, live_end = [e for e in events if e.type.startswith("compaction")][:2]
    counter = HeuristicTokenCounter()
    third = model.requests[2].messages
    # instructions, the summary of what came before the open turn, the open turn as it was
    assert [m.type for m in third] == ["system", "user_message", "tool_call", "tool_result"]
    assert third[1].content[0].text == "[Summary of the conversation so far]\nS1"  # type: ignore[union-attr]
    assert third[2].call_id == "c2"  # type: ignore[union-attr]
    assert live_end.tokens_before == live_start.tokens_before > 150  # type: ignore[union-attr]
    assert live_end.tokens_after == counter.count(third)  # type: ignore[union-attr]
    assert live_end.tokens_after < live_end.tokens_before  # type: ignore[union-attr]
    # the summariser read everything before the open turn, then the prompt
    summary_request = summariser.requests[0].messages
    assert [m.type for m in summary_request] == [
        "system",
        "user_message",
        "tool_call",
        "tool_result",
        "user_message",
    ]
    # the summary call's usage is the run's too
    assert events[-1].usage.input_tokens == 10 + 20 + 30 + 100  # type: ignore[union-attr]
    assert events[-1].usage.output_tokens == 2 + 2 + 1 + 5  # type: ignore[union-attr]


async def test_live_compaction_from_the_context_and_a_useless_summary_is_not_used() -> None:
    from helikon import RunContext
    from helikon.core.compaction import Compaction

    # a summary longer than what it replaces: the conversation stays as it was
    summariser = MockModel([[Text("y" * 2000)]])
    ctx = RunContext.ephemeral().with_compaction(
        Compaction(summariser, 150, HeuristicTokenCounter())
    )
    model = _live_script()
    result = await Runner().run(_dumping_agent(model), "go", ctx=ctx)
    assert result.final_output == "done"
    started = [e for e in result.events if e.type == "compaction_completed"]
    assert len(started) == 1
    assert started[0].tokens_after == started[0].tokens_before  # type: ignore[union-attr]
    assert [m.type for m in model.requests[2].messages] == [
        "system",
        "user_message",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
    ]


def test_a_compaction_is_checked_when_built() -> None:
    import pytest

    from helikon import RunContext
    from helikon.core.compaction import Compaction
    from helikon.errors import ConfigError

    for bad in (0, -5, True, 1.5):
        with pytest.raises(ConfigError, match="threshold"):
            Compaction(MockModel([]), bad, HeuristicTokenCounter())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="model"):
        Compaction("gpt-5", 10, HeuristicTokenCounter())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="count"):
        Compaction(MockModel([]), 10, object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="with_compaction"):
        RunContext.ephemeral().with_compaction("on")  # type: ignore[arg-type]
