"""A run pauses for approval and resumes in the same process: each decision's effect,
exactly-once, remembered answers, and refusals."""

from __future__ import annotations

import pytest

from helikon import Agent, RunConfig, RunContext, RunState
from helikon.core.decisions import Approve, Deny, Edit
from helikon.core.items import ToolResult
from helikon.core.permissions import DenyRule
from helikon.errors import ResumeRefused, RunInterruptedError
from helikon.runtimes.runner import Runner
from helikon.sessions import MemorySession, PermissionDecided, SessionEvent
from helikon.testing import Call, MockModel, Text

from . import _support as s

DEFER = RunConfig(approval="defer")


@pytest.fixture(autouse=True)
def _clear() -> None:
    s.RAN.clear()


async def _pause(session: MemorySession | None = None) -> RunInterruptedError:
    agent = s.agent([s.first_turn(), [Text("Done.")]])
    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(agent, "refund A7", session=session, ctx=s.ctx(), run_config=DEFER)
    return err.value


async def test_a_deferred_ask_pauses_after_the_allowed_calls_of_the_turn_ran() -> None:
    err = await _pause()
    kinds = [e.type for e in err.events if not e.type.endswith("_delta")]
    assert kinds == [
        "run_started",
        "turn_started",
        "message_output",
        "tool_call_item",
        "tool_call_item",
        "approval_requested",
        "tool_output_item",
        "run_interrupted",
    ]
    # the allowed call of the turn ran; the refund did not
    assert s.RAN == [("lookup", "A7")]
    state = err.state
    assert [p.model_dump() for p in state.pending] == [
        {
            "call_id": "c2",
            "tool": "refund",
            "args": {"order": "A7", "amount": 40},
            "reason": "refund of 40 needs approval",
            "agent": "support",
        }
    ]
    assert state.agent == "support" and state.agent_path == ["support"]
    assert state.loop_state["state"] == "NeedsApproval"
    assert [i.type for i in state.conversation or []] == [
        "user_message",
        "assistant_message",
        "tool_call",
        "tool_call",
        "tool_result",
    ]
    assert "paused: 1 tool call(s) wait for approval: refund (c2)" in str(err)


async def _resume(state, decisions, scripts, session=None, ctx=None):  # type: ignore[no-untyped-def]
    agent = s.agent(scripts)
    result = await Runner().resume(
        agent, state, decisions=decisions, session=session, ctx=ctx or s.ctx()
    )
    return agent, result


async def test_approved_calls_run_once_and_a_second_resume_is_refused() -> None:
    state = (await _pause()).state
    agent, result = await _resume(state, {"c2": Approve()}, [[Text("Refunded.")]])
    assert result.final_output == "Refunded."
    assert s.RAN == [("lookup", "A7"), ("refund", {"order": "A7", "amount": 40})]
    request = agent.model.requests[0]  # type: ignore[attr-defined]
    results = [m for m in request.messages if isinstance(m, ToolResult)]
    assert [(r.call_id, r.content[0].text) for r in results] == [  # type: ignore[union-attr]
        ("c1", "order A7: 40 EUR"),
        ("c2", "refunded 40 on A7"),
    ]
    with pytest.raises(ResumeRefused, match="was already resumed"):
        await _resume(state, {"c2": Approve()}, [[Text("again")]])
    assert len(s.RAN) == 2  # nothing ran twice


async def test_a_denied_call_returns_the_denial_to_the_model() -> None:
    state = (await _pause()).state
    agent, result = await _resume(state, {"c2": Deny("over the limit")}, [[Text("Sorry.")]])
    assert result.final_output == "Sorry."
    assert s.RAN == [("lookup", "A7")]
    last = agent.model.requests[0].messages[-1]  # type: ignore[attr-defined]
    assert isinstance(last, ToolResult) and last.is_error
    assert last.content[0].text == "approval denied: over the limit"  # type: ignore[union-attr]


async def test_an_edited_call_runs_with_the_new_arguments() -> None:
    state = (await _pause()).state
    _, result = await _resume(
        state, {"c2": Edit({"order": "A7", "amount": 15})}, [[Text("Partly refunded.")]]
    )
    assert result.final_output == "Partly refunded."
    assert s.RAN[-1] == ("refund", {"order": "A7", "amount": 15})


async def test_an_edit_is_checked_again_and_a_deny_rule_still_refuses_it() -> None:
    state = (await _pause()).state
    ctx = s.ctx().with_deny_rules([DenyRule.tool("refund")])
    agent, _ = await _resume(
        state, {"c2": Edit({"order": "A7", "amount": 1})}, [[Text("Blocked.")]], ctx=ctx
    )
    assert s.RAN == [("lookup", "A7")]
    last = agent.model.requests[0].messages[-1]  # type: ignore[attr-defined]
    assert last.is_error and "permission denied" in last.content[0].text


async def test_an_approval_remembered_for_the_run_answers_the_next_ask() -> None:
    state = (await _pause()).state
    again = [Call("c3", "refund", {"order": "B1", "amount": 5})]
    _, result = await _resume(
        state, {"c2": Approve(remember=True)}, [again, [Text("Both refunded.")]]
    )
    assert result.final_output == "Both refunded."
    assert [r for r in s.RAN if r[0] == "refund"] == [
        ("refund", {"order": "A7", "amount": 40}),
        ("refund", {"order": "B1", "amount": 5}),
    ]


async def test_without_remember_the_next_ask_pauses_again() -> None:
    state = (await _pause()).state
    again = [Call("c3", "refund", {"order": "B1", "amount": 5})]
    with pytest.raises(RunInterruptedError) as err:
        await _resume(state, {"c2": Approve()}, [again, [Text("x")]])
    assert [p.call_id for p in err.value.state.pending] == ["c3"]
    assert err.value.state.run_id != state.run_id


async def test_decisions_must_fit_and_the_agent_must_be_the_one_that_paused() -> None:
    state = (await _pause()).state
    with pytest.raises(ResumeRefused, match="no decision for waiting call"):
        await _resume(state, {}, [[Text("x")]])
    other = s.agent([[Text("x")]])
    other.tools.pop()  # a changed agent: no refund tool
    with pytest.raises(ResumeRefused, match="changed since the pause"):
        await Runner().resume(other, state, decisions={"c2": Approve()}, ctx=s.ctx())
    assert s.RAN == [("lookup", "A7")]


def _decision(event: SessionEvent) -> object:
    """A ``permission_decided`` event's fields, or another event's type."""
    if isinstance(event, PermissionDecided):
        return (
            event.call_id,
            event.decision,
            event.stage,
            event.rule,
            event.reason,
            event.decided_by,
        )
    return event.type


async def test_with_a_session_the_log_is_the_ledger() -> None:
    session = MemorySession()
    state = (await _pause(session)).state
    assert state.session_position == len(await session.events())
    # the waiting call got no "did not complete" result in the log; its decision is pending
    assert [_decision(e) for e in (await session.events())[-5:]] == [
        "tool_called",
        "tool_called",
        ("c1", "allow", "policy", "AsksForRefunds", "allowed by policy", "policy"),
        ("c2", "ask", "policy", "AsksForRefunds", "refund of 40 needs approval", "pending"),
        "tool_returned",
    ]
    with pytest.raises(ResumeRefused, match="pass that session"):
        await _resume(state, {"c2": Approve()}, [[Text("x")]])
    _, result = await _resume(state, {"c2": Approve()}, [[Text("Refunded.")]], session=session)
    assert result.final_output == "Refunded."
    kinds = [e.type for e in await session.events()]
    assert kinds.count("approvals_answered") == 1
    # the person's approval is in the log, between the claim and the call's result
    assert [_decision(e) for e in (await session.events())[-4:-1]] == [
        "approvals_answered",
        ("c2", "allow", "policy", "AsksForRefunds", "refund of 40 needs approval", "human"),
        "tool_returned",
    ]
    assert [i.type for i in await session.snapshot()][-3:] == [
        "tool_result",
        "tool_result",
        "assistant_message",
    ]
    with pytest.raises(ResumeRefused, match="was already resumed"):
        await _resume(state, {"c2": Approve()}, [[Text("x")]], session=session)
    assert len(s.RAN) == 2


async def test_a_session_that_moved_on_refuses_the_resume() -> None:
    session = MemorySession()
    state = (await _pause(session)).state
    await Runner().run(s.agent([[Text("hello")]]), "other question", session=session)
    with pytest.raises(ResumeRefused, match="changed since the run paused"):
        await _resume(state, {"c2": Approve()}, [[Text("x")]], session=session)
    assert s.RAN == [("lookup", "A7")]


async def test_inline_approval_without_a_handler_still_denies() -> None:
    agent = s.agent([s.first_turn(), [Text("Done.")]])
    result = await Runner().run(agent, "refund A7", ctx=s.ctx())
    assert result.final_output == "Done."
    assert s.RAN == [("lookup", "A7")]
    assert RunContext  # the default mode never pauses


async def test_an_ask_inside_a_handoff_target_pauses_with_its_path_and_resumes_there() -> None:
    from helikon import Agent
    from helikon.testing import MockModel

    billing = Agent(
        name="billing",
        model=MockModel([[Call("c9", "refund", {"order": "Z1", "amount": 3})]]),
        tools=[s.refund],
    )
    triage = Agent(
        name="triage",
        model=MockModel([[Call("h1", "transfer_to_billing", {})]]),
        handoffs=[billing],
    )
    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(triage, "refund Z1", ctx=s.ctx(), run_config=DEFER)
    state = err.value.state
    assert state.agent == "triage" and state.agent_path == ["triage", "billing"]
    assert state.asking_agent == "billing"
    assert [(p.call_id, p.agent) for p in state.pending] == [("c9", "billing")]
    # resume: the same agents, billing's model answers after the refund ran
    billing.model = MockModel([[Text("Refunded Z1.")]])
    result = await Runner().resume(triage, state, decisions={"c9": Approve()}, ctx=s.ctx())
    assert result.final_output == "Refunded Z1."
    assert s.RAN == [("refund", {"order": "Z1", "amount": 3})]
    assert [e.type for e in result.events if e.type == "agent_updated"] == ["agent_updated"]


async def test_secrets_in_the_permission_reason_are_redacted_in_the_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from typing import Any

    from helikon.core.permissions import AskUser, PermissionDecision

    token = "ghp_" + "Q9w8E7r6T5" * 4
    monkeypatch.setenv("DEPLOY_TOKEN", token)

    class Leaky:
        async def check(self, ctx: Any, tool: str, args: Any) -> PermissionDecision:
            return AskUser(f"refund with credentials {token} and sk-live-{token[4:]}")

    agent = s.agent([s.first_turn(), [Text("x")]])
    ctx = (
        RunContext.ephemeral()
        .with_permission_policy(Leaky())
        .with_extra_secrets(["s3cr3t-extra-value"])
    )
    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(agent, "refund", ctx=ctx, run_config=DEFER)
    text = err.value.state.to_json()
    assert token not in text
    assert "refund with credentials ***" in err.value.state.pending[0].reason


async def test_a_handoff_asked_for_next_to_a_deferred_call_happens_after_the_decision() -> None:
    """Field case BR-27 with an approval: the transfer the model asked for in the turn that
    paused is kept in the state and taken after the approved call ran."""

    def front(scripts: list[list[object]], billing_scripts: list[list[object]]) -> Agent:
        billing = Agent(name="billing", model=MockModel(billing_scripts))
        return Agent(name="front", model=MockModel(scripts), tools=[s.refund], handoffs=[billing])

    session = MemorySession()
    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(
            front(
                [
                    [
                        Call("c2", "refund", {"order": "A7", "amount": 40}),
                        Call("h1", "transfer_to_billing", {}),
                    ]
                ],
                [],
            ),
            "refund then billing",
            session=session,
            ctx=s.ctx(),
            run_config=DEFER,
        )
    state = RunState.from_json(err.value.state.to_json())
    assert state.loop_state["handoff"]["target"] == "billing"
    assert [p.call_id for p in state.pending] == ["c2"]
    result = await Runner().resume(
        front([], [[Text("Billing here: refunded.")]]),
        state,
        decisions={"c2": Approve()},
        session=session,
        ctx=s.ctx(),
    )
    assert result.final_output == "Billing here: refunded."
    assert s.RAN == [("refund", {"order": "A7", "amount": 40})]
    outputs = [
        (e.item.call_id, e.item.content[0].text)  # type: ignore[union-attr]
        for e in result.events
        if e.type == "tool_output_item"
    ]
    assert outputs == [("c2", "refunded 40 on A7"), ("h1", "Transferred to billing.")]
    assert [e.type for e in result.events].count("handoff_item") == 1
