"""An answer remembered with ``remember=True`` holds for the rest of a pattern's run, not only
inside the step that asked: later steps of a SequentialAgent, successors in a GraphAgent,
and across a second pause and resume."""

from __future__ import annotations

from typing import Any

import pytest

from helikon import (
    Agent,
    Approve,
    Deny,
    GraphAgent,
    RunConfig,
    RunContext,
    RunState,
    SequentialAgent,
    tool,
)
from helikon.core.permissions import AskUser, PermissionAllow, PermissionDecision
from helikon.errors import RunInterruptedError
from helikon.runtimes.runner import Runner
from helikon.testing import Call, MockModel, Text

from . import _support as s

DEFER = RunConfig(approval="defer")
REFUND_A7 = ("refund", {"order": "A7", "amount": 40})
REFUND_B1 = ("refund", {"order": "B1", "amount": 5})


@pytest.fixture(autouse=True)
def _clear() -> None:
    s.RAN.clear()


@tool
def notify(text: str) -> str:
    """Send a note to the customer."""
    s.RAN.append(("notify", text))
    return "sent"


class AsksForRefundsAndNotes:
    async def check(self, ctx: RunContext[Any], tool: str, args: Any) -> PermissionDecision:
        if tool in ("refund", "notify"):
            return AskUser(f"{tool} needs approval")
        return PermissionAllow()


def _ctx() -> RunContext[None]:
    return RunContext.ephemeral().with_permission_policy(AsksForRefundsAndNotes())


def _agent(name: str, scripts: list[list[Any]]) -> Agent:
    return Agent(name=name, model=MockModel(scripts), tools=[s.refund, notify])


def _refund(call_id: str, order: str, amount: int) -> list[Any]:
    return [Call(call_id, "refund", {"order": order, "amount": amount})]


async def _pause(runnable: Any) -> RunState:
    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(runnable, "go", ctx=_ctx(), run_config=DEFER)
    return RunState.from_json(err.value.state.to_json())


def _seq(a: Agent, b: Agent) -> SequentialAgent:
    return SequentialAgent("seq", steps=[a, b])


async def test_sequential_an_approval_remembered_in_one_step_answers_a_later_step() -> None:
    state = await _pause(_seq(_agent("a", [_refund("c1", "A7", 40)]), _agent("b", [])))
    b = _agent("b", [_refund("c2", "B1", 5), [Text("b done")]])
    result = await Runner().resume(
        _seq(_agent("a", [[Text("a done")]]), b),
        state,
        decisions={"c1": Approve(remember=True)},
        ctx=_ctx(),
    )
    assert result.final_output == "b done"
    assert s.RAN == [REFUND_A7, REFUND_B1]  # step b's refund ran without a pause


async def test_sequential_without_remember_the_later_step_pauses_again() -> None:
    state = await _pause(_seq(_agent("a", [_refund("c1", "A7", 40)]), _agent("b", [])))
    with pytest.raises(RunInterruptedError) as err:
        await Runner().resume(
            _seq(_agent("a", [[Text("a done")]]), _agent("b", [_refund("c2", "B1", 5)])),
            state,
            decisions={"c1": Approve()},
            ctx=_ctx(),
        )
    assert [(p.call_id, p.agent) for p in err.value.state.pending] == [("c2", "b")]
    assert s.RAN == [REFUND_A7]


async def test_sequential_a_remembered_denial_answers_a_later_step() -> None:
    state = await _pause(_seq(_agent("a", [_refund("c1", "A7", 40)]), _agent("b", [])))
    b = _agent("b", [_refund("c2", "B1", 5), [Text("b done")]])
    await Runner().resume(
        _seq(_agent("a", [[Text("a done")]]), b),
        state,
        decisions={"c1": Deny("no refunds today", remember=True)},
        ctx=_ctx(),
    )
    assert s.RAN == []
    denied = b.model.requests[1].messages[-1]  # type: ignore[attr-defined]
    assert denied.is_error
    assert denied.content[0].text == (
        "permission denied: refund needs approval: denied for the rest of this run"
    )


async def test_graph_a_remembered_approval_holds_in_successor_nodes() -> None:
    def graph(a: Agent, b: Agent, c: Agent) -> GraphAgent:
        return GraphAgent("g", nodes=[a, b, c], edges=[("a", "b"), ("a", "c")])

    state = await _pause(
        graph(_agent("a", [_refund("c1", "A7", 40)]), _agent("b", []), _agent("c", []))
    )
    assert state.agent_path == ["g", "a"]
    result = await Runner().resume(
        graph(
            _agent("a", [[Text("A")]]),
            _agent("b", [_refund("c2", "B1", 5), [Text("B")]]),
            _agent("c", [[Text("C")]]),
        ),
        state,
        decisions={"c1": Approve(remember=True)},
        ctx=_ctx(),
    )
    assert "B" in str(result.final_output) and "C" in str(result.final_output)
    assert sorted(map(str, s.RAN)) == sorted(map(str, [REFUND_A7, REFUND_B1]))


async def test_a_remembered_answer_survives_a_second_pause_and_resume() -> None:
    def pipe(a: Agent, b: Agent, c: Agent) -> SequentialAgent:
        return SequentialAgent("pipe", steps=[a, b, c])

    state = await _pause(
        pipe(_agent("a", [_refund("c1", "A7", 40)]), _agent("b", []), _agent("c", []))
    )
    with pytest.raises(RunInterruptedError) as err:  # b asks for something else
        await Runner().resume(
            pipe(
                _agent("a", [[Text("a done")]]),
                _agent("b", [[Call("n1", "notify", {"text": "hi"})]]),
                _agent("c", []),
            ),
            state,
            decisions={"c1": Approve(remember=True)},
            ctx=_ctx(),
        )
    second = RunState.from_json(err.value.state.to_json())
    assert second.remembered == {"refund": "approve"}
    assert [p.call_id for p in second.pending] == ["n1"]
    result = await Runner().resume(
        pipe(
            _agent("a", []),
            _agent("b", [[Text("b done")]]),
            _agent("c", [_refund("c3", "B1", 5), [Text("c done")]]),
        ),
        second,
        decisions={"n1": Approve()},
        ctx=_ctx(),
    )
    assert result.final_output == "c done"
    assert s.RAN == [REFUND_A7, ("notify", "hi"), REFUND_B1]
