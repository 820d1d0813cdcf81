"""ParallelAgent and LoopAgent on scripted models."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from helikon import Agent, RunConfig, RunContext, RunError, ToolContext, tool
from helikon.agents import LoopAgent, ParallelAgent, SequentialAgent, escalate
from helikon.errors import ConfigError, MaxIterationsExceeded
from helikon.runtimes import Runner
from helikon.sessions import MemorySession, find_repairs
from helikon.testing import Call, Delay, Fail, MockModel, Text, Usage


def _agent(name: str, scripts: list[list[Any]], **kw: Any) -> Agent:
    return Agent(name=name, model=MockModel(scripts), **kw)


# --------------------------------------------------------------------------- Parallel


async def test_parallel_answers_sorted_key_json_whatever_the_finish_order() -> None:
    fan = (
        ParallelAgent("multi-lens", "Three takes.")
        .branch("pessimist", _agent("p", [[Delay(0.05), Text("bad"), Usage(1, 1)]]))
        .branch("realist", _agent("r", [[Delay(0.1), Text("mixed"), Usage(2, 1)]]))
        .branch("optimist", _agent("o", [[Text("größer"), Usage(4, 1)]]))
    )
    ctx = RunContext.ephemeral(None)
    result = await fan.run("outlook?", ctx)
    assert result.final_output == '{"optimist":"größer","pessimist":"bad","realist":"mixed"}'
    assert ctx.state == {"optimist": "größer", "pessimist": "bad", "realist": "mixed"}
    assert (result.usage.input_tokens, result.usage.output_tokens) == (7, 3)
    # each branch's events form one block after its AgentUpdated; the answer comes last
    blocks = [(e.type, getattr(e, "agent", None)) for e in result.events]
    assert blocks[0] == ("run_started", "multi-lens")
    assert blocks[-3:] == [
        ("agent_updated", "multi-lens"),
        ("message_output", None),
        ("run_completed", None),
    ]
    updated = [a for t, a in blocks if t == "agent_updated"]
    assert sorted(updated[:-1]) == ["o", "p", "r"]
    assert result.events[-2].item.agent == "multi-lens"  # type: ignore[union-attr]


async def test_parallel_collects_every_failure_after_siblings_finish() -> None:
    slow_ok = MockModel([[Delay(0.1), Text("fine")]])
    fan = ParallelAgent(
        "fan",
        branches=[
            _agent("a", [[Fail("Unavailable", "down"), Usage(1, 0)]]),
            Agent(name="b", model=slow_ok),
            _agent("c", [[Fail("Refused", "no")]]),
        ],
    )
    ctx = RunContext.ephemeral(None)
    with pytest.raises(RunError) as info:
        await fan.run("x", ctx)
    assert info.value.error.kind == "Other"
    assert str(info.value.error) == (
        "ParallelAgent 'fan': 2 of 3 failed: a: Other: model error (Unavailable): down; "
        "c: Other: model error (Refused): no"
    )
    assert ctx.state == {"b": "fine"}  # the sibling finished and stored its result
    assert slow_ok.remaining == 0


async def test_parallel_duplicate_keys_fail_before_any_branch_starts() -> None:
    m = MockModel([[Text("x")]])
    fan = ParallelAgent("fan").add(Agent(name="a", model=m)).add(_agent("a", [[Text("y")]]))
    with pytest.raises(RunError, match="duplicate branch key\\(s\\) 'a'"):
        await fan.run("x")
    assert m.remaining == 1


async def test_cancelling_a_parallel_agent_mid_run_stops_every_branch() -> None:
    started: list[str] = []
    stopped: list[str] = []

    @tool
    async def slow(ctx: ToolContext[Any], who: str) -> str:
        """Work for a long time."""
        started.append(who)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            stopped.append(who)
            raise
        return "done"

    def branch(name: str) -> Agent:
        script: list[list[Any]] = [[Call(f"{name}1", "slow", {"who": name})], [Text("late")]]
        return _agent(name, script, tools=[slow])

    fan = ParallelAgent("fan", branches=[branch("a"), branch("b"), branch("c")])
    ctx = RunContext.ephemeral(None)
    events: list[Any] = []
    t0 = time.monotonic()

    async def consume() -> None:
        async for ev in fan.stream("go", ctx):
            events.append(ev)
            if len(started) == 3 and not ctx.cancel.cancelled:
                ctx.cancel.cancel()

    async def cancel_when_all_started() -> None:
        while len(started) < 3:
            await asyncio.sleep(0.01)
        ctx.cancel.cancel()

    await asyncio.wait_for(asyncio.gather(consume(), cancel_when_all_started()), 5)
    for _ in range(5):
        await asyncio.sleep(0)
    assert time.monotonic() - t0 < 2
    assert events[-1].type == "run_failed"
    assert events[-1].error["kind"] == "Cancelled"
    assert sorted(started) == sorted(stopped) == ["a", "b", "c"]


async def test_parallel_timeout_is_reported_as_timeout() -> None:
    fan = ParallelAgent(
        "fan",
        branches=[_agent("a", [[Delay(30), Text("x")]]), _agent("b", [[Text("quick")]])],
        run_config=RunConfig(timeout=0.1),
    )
    with pytest.raises(RunError) as info:
        await asyncio.wait_for(fan.run("go"), 5)
    assert info.value.error.kind == "Timeout"


async def test_parallel_in_a_runner_session_projects_to_a_valid_conversation() -> None:
    @tool
    async def lookup(q: str) -> str:
        """Look up."""
        await asyncio.sleep(0.01)
        return q.upper()

    def branch(name: str, delay: float) -> Agent:
        return _agent(
            name,
            [
                [Delay(delay), Call(f"{name}-c1", "lookup", {"q": name})],
                [Delay(delay), Text(f"{name} says hi")],
            ],
            tools=[lookup],
        )

    pipeline = SequentialAgent(
        "pipe",
        steps=[
            ParallelAgent("fan", branches=[branch("a", 0.02), branch("b", 0.01)]),
            _agent("summary", [[Text("all done")]]),
        ],
    )
    session = MemorySession()
    result = await Runner().run(pipeline, "go", session=session)
    assert result.final_output == "all done"
    convo = await session.snapshot()
    assert find_repairs(convo) == []
    kinds = [i.type for i in convo]
    assert kinds[0] == "user_message"
    assert kinds.count("tool_call") == 2 and kinds.count("tool_result") == 2
    # every tool result directly follows its own call (each branch is one block)
    for i, item in enumerate(convo):
        if item.type == "tool_result":
            assert convo[i - 1].type == "tool_call"
            assert convo[i - 1].call_id == item.call_id  # type: ignore[union-attr]
    texts = [i.content[0].text for i in convo if i.type == "assistant_message"]  # type: ignore[union-attr]
    assert texts[-2:] == ['{"a":"a says hi","b":"b says hi"}', "all done"]


# --------------------------------------------------------------------------- Loop


def _critic(passes_on: int) -> Agent:
    calls = {"n": 0}

    @tool
    def review(ctx: ToolContext[Any]) -> str:
        """Review the draft."""
        calls["n"] += 1
        if calls["n"] >= passes_on:
            escalate(ctx)
            return "approved"
        return "needs work"

    scripts: list[list[Any]] = []
    for i in range(passes_on):
        scripts += [[Call(f"r{i}", "review", {})], [Text(f"review {i + 1}")]]
    return _agent("critic", scripts, tools=[review])


async def test_loop_stops_when_a_tool_escalates() -> None:
    drafter = Agent(
        name="drafter",
        model=MockModel([[Text("draft 1")], [Text("draft 2")], [Text("draft 3")]]),
        instructions=lambda ctx: f"Previous review: {ctx.state.get('critic', 'none')}",
    )
    loop = LoopAgent("refine", "Iterate.", 5).then(drafter).then(_critic(passes_on=2))
    ctx = RunContext.ephemeral(None)
    result = await loop.run("write", ctx)
    assert result.final_output == "review 2"
    assert ctx.state == {"drafter": "draft 2", "critic": "review 2"}
    assert drafter.model.remaining == 1  # type: ignore[attr-defined]
    system = drafter.model.requests[1].messages[0]  # type: ignore[attr-defined]
    assert system.content[0].text == "Previous review: review 1"


async def test_loop_mid_pass_escalation_skips_the_rest_of_the_pass() -> None:
    after = MockModel([[Text("never")]])

    @tool
    def stop(ctx: ToolContext[Any]) -> str:
        """Stop the loop."""
        escalate(ctx)
        return "stopping"

    first = _agent("first", [[Call("s1", "stop", {})], [Text("stopped")]], tools=[stop])
    loop = LoopAgent("l", max_iterations=3, steps=[first, Agent(name="after", model=after)])
    assert (await loop.run("x")).final_output == "stopped"
    assert after.remaining == 1


async def test_loop_without_escalation_fails_with_max_iterations() -> None:
    loop = LoopAgent("l", max_iterations=2, steps=[_agent("a", [[Text("1")], [Text("2")]])])
    with pytest.raises(RunError) as info:
        await loop.run("x")
    assert isinstance(info.value.error, MaxIterationsExceeded)
    assert str(info.value.error) == "max iterations (2) exceeded without an escalation"
    events = info.value.events
    assert events[-1].error == {  # type: ignore[union-attr]
        "kind": "MaxIterationsExceeded",
        "message": "max iterations (2) exceeded without an escalation",
        "max_iterations": 2,
    }


def test_loop_validation() -> None:
    with pytest.raises(ConfigError, match=">= 1"):
        LoopAgent("l", max_iterations=0)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ParallelAgent("p", branches="ab"), "ParallelAgent(branches=...)"),
        (lambda: ParallelAgent("p", branches=3), "ParallelAgent(branches=...)"),
        (lambda: SequentialAgent("s", steps=b"ab"), "SequentialAgent(steps=...)"),
        (lambda: LoopAgent("l", steps=None), "LoopAgent(steps=...)"),
    ],
)
def test_agent_lists_refuse_a_string_or_a_non_iterable(build: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=r"must be a list of agents, got \w+") as caught:
        build()
    assert str(caught.value).startswith(message)
