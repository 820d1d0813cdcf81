"""A typed agent with handoffs: the handoffs are offered, and the answering agent's
output type types the result (found by a new-user trial)."""

from __future__ import annotations

from pydantic import BaseModel

from helikon import Agent
from helikon.testing import Call, MockModel, Text


class Route(BaseModel):
    dept: str


class Ticket(BaseModel):
    issue: str
    priority: int


def test_a_typed_agent_with_only_handoffs_is_offered_them_and_can_hand_off() -> None:
    chat_model = MockModel([[Text("Hello there!")]])
    chat = Agent(name="chat", description="Small talk.", model=chat_model)
    triage_model = MockModel([[Call("h1", "transfer_to_chat", {})]])
    triage = Agent(name="triage", model=triage_model, handoffs=[chat], output_type=Route)
    result = triage.run_sync("hi")
    assert [t.name for t in triage_model.requests[0].tools] == ["transfer_to_chat"]
    assert result.last_agent is chat
    assert result.final_output == "Hello there!"  # chat has no output type: its text


def test_a_typed_agent_with_only_handoffs_still_answers_typed_itself() -> None:
    chat = Agent(name="chat", description="Small talk.", model=MockModel([]))
    # MockModel's output mode is "finalize": the answer turn, then the constrained turn.
    model = MockModel([[Text("That is billing.")], [Text('{"dept": "billing"}')]])
    triage = Agent(name="triage", model=model, handoffs=[chat], output_type=Route)
    result = triage.run_sync("my invoice is wrong")
    assert [t.name for t in model.requests[0].tools] == ["transfer_to_chat"]
    assert model.requests[1].tools == []
    assert result.final_output == Route(dept="billing")
    assert result.final_output_as(Route).dept == "billing"


def test_after_a_handoff_the_targets_output_type_types_the_result() -> None:
    spec = Agent(
        name="ticketer",
        description="Files tickets.",
        output_type=Ticket,
        model=MockModel([[Text('{"issue": "refund", "priority": 2}')]]),
    )
    triage = Agent(
        name="triage", handoffs=[spec], model=MockModel([[Call("h1", "transfer_to_ticketer", {})]])
    )
    result = triage.run_sync("file it")
    assert result.last_agent is spec
    assert result.final_output == Ticket(issue="refund", priority=2)
    assert result.final_output_as(Ticket).priority == 2
