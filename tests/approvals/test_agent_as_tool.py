"""An ask inside an agent used as a tool surfaces at the top-level run, with the path of
the agent that asked, and the resume continues inside that sub-run."""

from __future__ import annotations

import pytest

from helikon import Agent, AgentAsTool, Approve, Deny, RunConfig, RunState
from helikon.errors import RunInterruptedError
from helikon.runtimes.runner import Runner
from helikon.sessions import MemorySession
from helikon.testing import Call, MockModel, Text

from . import _support as s

DEFER = RunConfig(approval="defer")


@pytest.fixture(autouse=True)
def _clear() -> None:
    s.RAN.clear()


def _front(sub_scripts: list[list[object]], front_scripts: list[list[object]]) -> Agent:
    support = Agent(name="support", model=MockModel(sub_scripts), tools=[s.lookup, s.refund])
    return Agent(
        name="front", model=MockModel(front_scripts), tools=[AgentAsTool(support, name="support")]
    )


async def test_an_ask_inside_an_agent_as_tool_pauses_the_caller_and_resumes_inside() -> None:
    session = MemorySession()
    front = _front([s.first_turn()], [[Call("t1", "support", {"input": "refund A7"})]])
    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(front, "please refund", session=session, ctx=s.ctx(), run_config=DEFER)
    state = RunState.from_json(err.value.state.to_json())
    assert [(p.call_id, p.tool, p.agent) for p in state.pending] == [("c2", "refund", "support")]
    assert list(state.nested) == ["t1"]
    assert state.nested["t1"].agent == "support"
    assert s.RAN == [("lookup", "A7")]
    # resume: the sub-run's model answers after the refund, then the caller's
    front = _front([[Text("Refunded 40.")]], [[Text("Support refunded it.")]])
    result = await Runner().resume(
        front, state, decisions={"c2": Approve()}, session=session, ctx=s.ctx()
    )
    assert result.final_output == "Support refunded it."
    assert s.RAN == [("lookup", "A7"), ("refund", {"order": "A7", "amount": 40})]
    results = [e.item for e in result.events if e.type == "tool_output_item"]
    assert [(r.call_id, r.content[0].text) for r in results] == [("t1", "Refunded 40.")]


async def test_a_denial_inside_reaches_the_sub_agents_model() -> None:
    front = _front([s.first_turn()], [[Call("t1", "support", {"input": "refund A7"})]])
    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(front, "please refund", ctx=s.ctx(), run_config=DEFER)
    sub_model = MockModel([[Text("Could not refund.")]])
    support = Agent(name="support", model=sub_model, tools=[s.lookup, s.refund])
    front = Agent(
        name="front",
        model=MockModel([[Text("No refund.")]]),
        tools=[AgentAsTool(support, name="support")],
    )
    result = await Runner().resume(
        front, err.value.state, decisions={"c2": Deny("limit reached")}, ctx=s.ctx()
    )
    assert result.final_output == "No refund."
    last = sub_model.requests[0].messages[-1]
    assert last.content[0].text == "approval denied: limit reached"  # type: ignore[union-attr]
    assert s.RAN == [("lookup", "A7")]
