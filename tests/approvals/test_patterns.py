"""An ask inside a multi-agent pattern pauses the pattern, with the path to the asking step,
and the resume continues exactly there: earlier steps are not run again, finished parallel
branches and graph nodes keep their answers, a loop keeps its iteration count, a swarm its
handoff count."""

from __future__ import annotations

from typing import Any

import pytest

from helikon import (
    Agent,
    AgentAsTool,
    Approve,
    Deny,
    GraphAgent,
    LoopAgent,
    ParallelAgent,
    RunConfig,
    RunState,
    SequentialAgent,
    SwarmAgent,
    tool,
)
from helikon.agents.loop import escalate
from helikon.core.context import ToolContext
from helikon.errors import ResumeRefused, RunError, RunInterruptedError
from helikon.runtimes.runner import Runner
from helikon.sessions import MemorySession
from helikon.testing import Call, MockModel, Text

from . import _support as s

DEFER = RunConfig(approval="defer")


@pytest.fixture(autouse=True)
def _clear() -> None:
    s.RAN.clear()


def _agent(name: str, scripts: list[list[Any]], tools: list[Any] | None = None) -> Agent:
    return Agent(name=name, model=MockModel(scripts), tools=tools or [s.lookup, s.refund])


def _refund_turn(call_id: str = "c2") -> list[Any]:
    return [Call(call_id, "refund", {"order": "A7", "amount": 40})]


async def _pause(pattern: Any, session: Any = None) -> RunState:
    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(pattern, "go", session=session, ctx=s.ctx(), run_config=DEFER)
    return RunState.from_json(err.value.state.to_json())  # as if stored and loaded


# ---------------------------------------------------------------- SequentialAgent


def _seq(a: Agent, b: Agent, c: Agent) -> SequentialAgent:
    return SequentialAgent("seq", steps=[a, b, c])


async def test_sequential_pauses_at_the_asking_step_and_resumes_there() -> None:
    session = MemorySession()
    a = _agent("a", [[Call("c1", "lookup", {"order": "A7"})], [Text("A7 costs 40")]])
    b = _agent("b", [_refund_turn()])
    state = await _pause(_seq(a, b, _agent("c", [])), session)
    assert state.agent == "seq"
    assert state.agent_path == ["seq", "b"]
    assert [(p.call_id, p.tool, p.agent) for p in state.pending] == [("c2", "refund", "b")]
    assert state.pattern is not None and state.pattern["done"] == {"a": "A7 costs 40"}
    assert list(state.steps) == ["b"]
    assert s.RAN == [("lookup", "A7")]

    a2 = _agent("a", [])  # must not be called again
    b2 = _agent("b", [[Text("refunded")]])
    c2 = _agent("c", [[Text("done: all good")]])
    ctx = s.ctx()
    result = await Runner().resume(
        _seq(a2, b2, c2), state, decisions={"c2": Approve()}, session=session, ctx=ctx
    )
    assert result.final_output == "done: all good"
    assert a2.model.requests == []  # type: ignore[attr-defined]
    assert s.RAN == [("lookup", "A7"), ("refund", {"order": "A7", "amount": 40})]
    # the earlier step's answer is back in the shared state, the resumed step's too
    assert ctx.state["a"] == "A7 costs 40"
    assert ctx.state["b"] == "refunded"
    # the resumed step's model read the refund's result after its own call
    last = b2.model.requests[0].messages[-1]  # type: ignore[attr-defined]
    assert last.content[0].text == "refunded 40 on A7"  # type: ignore[union-attr]
    with pytest.raises(ResumeRefused, match="already resumed"):
        await Runner().resume(
            _seq(a2, b2, c2), state, decisions={"c2": Approve()}, session=session, ctx=ctx
        )


async def test_sequential_denial_reaches_the_step_and_the_pattern_goes_on() -> None:
    state = await _pause(
        _seq(_agent("a", [[Text("ok")]]), _agent("b", [_refund_turn()]), _agent("c", []))
    )
    b2 = _agent("b", [[Text("no refund")]])
    result = await Runner().resume(
        _seq(_agent("a", []), b2, _agent("c", [[Text("closed")]])),
        state,
        decisions={"c2": Deny("over the limit")},
        ctx=s.ctx(),
    )
    assert result.final_output == "closed"
    last = b2.model.requests[0].messages[-1]  # type: ignore[attr-defined]
    assert last.content[0].text == "approval denied: over the limit"  # type: ignore[union-attr]
    assert s.RAN == []


async def test_a_changed_pattern_or_incomplete_decisions_are_refused() -> None:
    state = await _pause(
        _seq(_agent("a", [[Text("ok")]]), _agent("b", [_refund_turn()]), _agent("c", []))
    )
    other = SequentialAgent("seq", steps=[_agent("a", []), _agent("x", []), _agent("c", [])])
    with pytest.raises(ResumeRefused, match="changed since the pause"):
        await Runner().resume(other, state, decisions={"c2": Approve()}, ctx=s.ctx())
    same = _seq(_agent("a", []), _agent("b", []), _agent("c", []))
    with pytest.raises(ResumeRefused, match="no decision for waiting call"):
        await Runner().resume(same, state, decisions={}, ctx=s.ctx())
    with pytest.raises(ResumeRefused, match="paused by agent 'seq'; resume it with that agent"):
        await Runner().resume(_agent("b", []), state, decisions={"c2": Approve()}, ctx=s.ctx())
    with pytest.raises(ResumeRefused, match="paused by the sequential pattern 'seq'"):
        await Runner().resume(_agent("seq", []), state, decisions={"c2": Approve()}, ctx=s.ctx())
    assert s.RAN == []


async def test_without_defer_a_pattern_step_still_answers_inline() -> None:
    seq = _seq(
        _agent("a", [[Text("ok")]]),
        _agent("b", [_refund_turn(), [Text("b")]]),
        _agent("c", [[Text("c")]]),
    )
    result = await Runner().run(seq, "go", ctx=s.ctx())  # no handler: the ask is a denial
    assert result.final_output == "c"
    assert s.RAN == []


async def test_a_pattern_whose_own_config_defers_pauses_its_steps() -> None:
    seq = SequentialAgent(
        "seq",
        steps=[_agent("a", [[Text("ok")]]), _agent("b", [_refund_turn()])],
        run_config=DEFER,
    )
    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(seq, "go", ctx=s.ctx())
    assert err.value.state.agent_path == ["seq", "b"]


# ---------------------------------------------------------------- ParallelAgent


async def test_parallel_keeps_finished_branches_and_resumes_the_paused_one() -> None:
    x = _agent("x", [[Call("c1", "lookup", {"order": "A7"})], [Text("looked up")]])
    y = _agent("y", [_refund_turn()])
    state = await _pause(ParallelAgent("fan", branches=[x, y]))
    assert state.agent_path == ["fan", "y"]
    assert state.pattern is not None and state.pattern["done"] == {"x": "looked up"}
    assert list(state.steps) == ["y"]

    x2 = _agent("x", [])
    y2 = _agent("y", [[Text("refunded")]])
    ctx = s.ctx()
    result = await Runner().resume(
        ParallelAgent("fan", branches=[x2, y2]), state, decisions={"c2": Approve()}, ctx=ctx
    )
    assert result.final_output == '{"x":"looked up","y":"refunded"}'
    assert x2.model.requests == []  # type: ignore[attr-defined]
    assert ctx.state["x"] == "looked up"
    assert s.RAN == [("lookup", "A7"), ("refund", {"order": "A7", "amount": 40})]


async def test_parallel_with_two_paused_branches_answers_each() -> None:
    x = _agent("x", [_refund_turn("cx")])
    y = _agent("y", [_refund_turn("cy")])
    state = await _pause(ParallelAgent("fan", branches=[x, y]))
    assert sorted(p.call_id for p in state.pending) == ["cx", "cy"]
    assert list(state.steps) == ["x", "y"]
    x2, y2 = _agent("x", [[Text("X")]]), _agent("y", [[Text("Y")]])
    result = await Runner().resume(
        ParallelAgent("fan", branches=[x2, y2]),
        state,
        decisions={"cx": Approve(), "cy": Deny("no")},
        ctx=s.ctx(),
    )
    assert result.final_output == '{"x":"X","y":"Y"}'
    assert s.RAN == [("refund", {"order": "A7", "amount": 40})]
    last = y2.model.requests[0].messages[-1]  # type: ignore[attr-defined]
    assert last.content[0].text == "approval denied: no"  # type: ignore[union-attr]


async def test_parallel_branches_sharing_a_call_id_fail_closed() -> None:
    fan = ParallelAgent(
        "fan", branches=[_agent("x", [_refund_turn()]), _agent("y", [_refund_turn()])]
    )
    with pytest.raises(RunError) as err:
        await Runner().run(fan, "go", ctx=s.ctx(), run_config=DEFER)
    assert "sharing the id(s) c2" in str(err.value.error)
    assert s.RAN == []


async def test_parallel_failed_branch_fails_the_pattern_even_when_another_paused() -> None:
    broken = Agent(name="x", model=MockModel([]), tools=[])  # runs out of scripts: fails
    fan = ParallelAgent("fan", branches=[broken, _agent("y", [_refund_turn()])])
    with pytest.raises(RunError) as err:
        await Runner().run(fan, "go", ctx=s.ctx(), run_config=DEFER)
    assert "1 of 2 failed: x:" in str(err.value.error)
    assert s.RAN == []


# ---------------------------------------------------------------- LoopAgent

COUNT: list[int] = []


@tool
def note(ctx: ToolContext[Any], text: str) -> str:
    """Note something; 'stop' ends the loop."""
    COUNT.append(1)
    if text == "stop":
        escalate(ctx)
    return "noted"


async def test_loop_keeps_its_iteration_count_across_the_pause() -> None:
    # pass 1: worker answers; pass 2: worker asks (pause); after resume pass 3 must be the
    # last one allowed (max_iterations=3), so the loop fails after exactly one more pass
    worker = _agent("worker", [[Text("pass 1")], _refund_turn()])
    loop = LoopAgent("loop", max_iterations=3, steps=[worker])
    state = await _pause(loop)
    assert state.agent_path == ["loop", "worker"]
    assert state.pattern is not None
    assert (state.pattern["iteration"], state.pattern["index"]) == (1, 0)
    assert state.pattern["done"] == {"worker": "pass 1"}

    worker2 = _agent("worker", [[Text("pass 2")], [Text("pass 3")], [Text("pass 4")]])
    ctx = s.ctx()
    with pytest.raises(RunError) as err:
        await Runner().resume(
            LoopAgent("loop", max_iterations=3, steps=[worker2]),
            state,
            decisions={"c2": Approve()},
            ctx=ctx,
        )
    assert err.value.error.kind == "MaxIterationsExceeded"
    assert len(worker2.model.requests) == 2  # type: ignore[attr-defined]
    assert ctx.state["worker"] == "pass 3"
    assert s.RAN == [("refund", {"order": "A7", "amount": 40})]


async def test_loop_resumes_mid_pass_and_an_escalation_after_the_resume_ends_it() -> None:
    COUNT.clear()
    first = _agent("first", [[Text("f1")]], tools=[note])
    second = _agent("second", [_refund_turn()], tools=[s.lookup, s.refund, note])
    state = await _pause(LoopAgent("loop", max_iterations=5, steps=[first, second]))
    assert (state.pattern or {})["index"] == 1
    first2 = _agent("first", [], tools=[note])
    second2 = Agent(
        name="second",
        model=MockModel([[Call("n1", "note", {"text": "stop"})], [Text("stopping")]]),
        tools=[s.lookup, s.refund, note],
    )
    result = await Runner().resume(
        LoopAgent("loop", max_iterations=5, steps=[first2, second2]),
        state,
        decisions={"c2": Approve()},
        ctx=s.ctx(),
    )
    assert result.final_output == "stopping"
    assert first2.model.requests == []  # type: ignore[attr-defined]
    assert COUNT == [1]


# ---------------------------------------------------------------- GraphAgent


async def test_graph_pauses_at_a_node_keeps_finished_ones_and_runs_successors_after() -> None:
    # a -> b -> d, a -> c -> d: b asks, c finishes; on resume b continues, then d runs
    def graph(a: Agent, b: Agent, c: Agent, d: Agent) -> GraphAgent:
        return GraphAgent(
            "g",
            nodes=[a, b, c, d],
            edges=[("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")],
        )

    state = await _pause(
        graph(
            _agent("a", [[Text("A")]]),
            _agent("b", [_refund_turn()]),
            _agent("c", [[Text("C")]]),
            _agent("d", []),
        )
    )
    assert state.agent_path == ["g", "b"]
    assert state.pattern is not None and state.pattern["done"] == {"a": "A", "c": "C"}
    d2 = _agent("d", [[Text("D")]])
    a2, c2 = _agent("a", []), _agent("c", [])
    result = await Runner().resume(
        graph(a2, _agent("b", [[Text("B")]]), c2, d2),
        state,
        decisions={"c2": Approve()},
        ctx=s.ctx(),
    )
    assert result.final_output == "D"
    assert a2.model.requests == [] and c2.model.requests == []  # type: ignore[attr-defined]
    texts = [m.content[0].text for m in d2.model.requests[0].messages]  # type: ignore[attr-defined]
    assert texts[-2:] == ["[b]\nB", "[c]\nC"]
    assert s.RAN == [("refund", {"order": "A7", "amount": 40})]


# ---------------------------------------------------------------- SwarmAgent


def _swarm(triage: Agent, billing: Agent, max_handoffs: int | None = None) -> SwarmAgent:
    return SwarmAgent("desk", members=[triage, billing], max_handoffs=max_handoffs)


async def test_swarm_pauses_in_the_member_that_asked_and_resumes_there() -> None:
    triage = _agent("triage", [[Call("h1", "transfer_to_billing", {})]])
    billing = _agent("billing", [_refund_turn()])
    state = await _pause(_swarm(triage, billing, max_handoffs=1))
    assert state.agent_path == ["desk", "triage", "billing"]
    assert [(p.call_id, p.agent) for p in state.pending] == [("c2", "billing")]
    assert (state.pattern or {})["handoffs"] == 1

    triage2 = _agent("triage", [])
    billing2 = _agent("billing", [[Text("refunded in billing")]])
    result = await Runner().resume(
        _swarm(triage2, billing2, max_handoffs=1), state, decisions={"c2": Approve()}, ctx=s.ctx()
    )
    assert result.final_output == "refunded in billing"
    assert triage2.model.requests == []  # type: ignore[attr-defined]
    assert s.RAN == [("refund", {"order": "A7", "amount": 40})]


async def test_swarm_handoff_budget_counts_handoffs_before_the_pause() -> None:
    triage = _agent("triage", [[Call("h1", "transfer_to_billing", {})]])
    billing = _agent("billing", [_refund_turn()])
    state = await _pause(_swarm(triage, billing, max_handoffs=1))
    billing2 = _agent("billing", [[Call("h2", "transfer_to_triage", {})]])
    with pytest.raises(RunError) as err:
        await Runner().resume(
            _swarm(_agent("triage", [[Text("x")]]), billing2, max_handoffs=1),
            state,
            decisions={"c2": Approve()},
            ctx=s.ctx(),
        )
    assert err.value.error.kind == "MaxHandoffsExceeded"


# ---------------------------------------------------------------- nesting


async def test_a_parallel_inside_a_sequential_resumes_down_both_levels() -> None:
    def build(first: Agent, x: Agent, y: Agent, last: Agent) -> SequentialAgent:
        return SequentialAgent("outer", steps=[first, ParallelAgent("fan", branches=[x, y]), last])

    state = await _pause(
        build(
            _agent("first", [[Text("F")]]),
            _agent("x", [[Text("X")]]),
            _agent("y", [_refund_turn()]),
            _agent("last", []),
        )
    )
    assert state.agent_path == ["outer", "fan", "y"]
    assert state.steps["fan"].pattern is not None
    assert state.steps["fan"].pattern["done"] == {"x": "X"}
    last = _agent("last", [[Text("L")]])
    ctx = s.ctx()
    result = await Runner().resume(
        build(_agent("first", []), _agent("x", []), _agent("y", [[Text("Y")]]), last),
        state,
        decisions={"c2": Approve()},
        ctx=ctx,
    )
    assert result.final_output == "L"
    assert ctx.state["fan"] == '{"x":"X","y":"Y"}'


async def test_a_pattern_used_as_a_tool_pauses_the_caller_and_resumes_inside() -> None:
    def front(seq_b: Agent, front_scripts: list[list[Any]]) -> Agent:
        seq = SequentialAgent("pipe", steps=[_agent("a", [[Text("A")]]), seq_b])
        return Agent(
            name="front",
            model=MockModel(front_scripts),
            tools=[AgentAsTool(seq, name="pipe")],
        )

    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(
            front(_agent("b", [_refund_turn()]), [[Call("t1", "pipe", {"input": "go"})]]),
            "please",
            ctx=s.ctx(),
            run_config=DEFER,
        )
    state = RunState.from_json(err.value.state.to_json())
    assert [(p.call_id, p.agent) for p in state.pending] == [("c2", "b")]
    assert state.nested["t1"].agent_path == ["pipe", "b"]
    result = await Runner().resume(
        front(_agent("b", [[Text("B done")]]), [[Text("all done")]]),
        state,
        decisions={"c2": Approve()},
        ctx=s.ctx(),
    )
    assert result.final_output == "all done"
    assert s.RAN == [("refund", {"order": "A7", "amount": 40})]
