"""What a resume records for a person's answers: a denial closes the call's ask with a
``permission_decided`` of its own, and ``approvals_answered`` keeps the reason (and an
edit's arguments), so the audit and ``policy check`` read who refused the call and why."""

from __future__ import annotations

from typing import Any

import pytest

from helikon import Agent, RunConfig, RunContext, SequentialAgent
from helikon.audit import dry_run, recorded_calls
from helikon.cli.policy_cmd import table_lines
from helikon.core.decisions import Deny, Edit
from helikon.core.items import ToolCall, ToolResult
from helikon.errors import ResumeRefused, RunInterruptedError
from helikon.runtimes.runner import Runner
from helikon.sessions import MemorySession, PermissionDecided
from helikon.sessions.events import ApprovalsAnswered, ToolCalled
from helikon.testing import Call, MockModel, Text

from . import _support as s

DEFER = RunConfig(approval="defer")


@pytest.fixture(autouse=True)
def _clear() -> None:
    s.RAN.clear()


async def _paused(session: MemorySession) -> RunInterruptedError:
    agent = s.agent([s.first_turn()])
    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(agent, "refund A7", session=session, ctx=s.ctx(), run_config=DEFER)
    return err.value


async def test_a_denial_on_resume_is_recorded_as_the_person_s_decision() -> None:
    session = MemorySession()
    state = (await _paused(session)).state
    await Runner().resume(
        s.agent([[Text("Not refunded.")]]),
        state,
        decisions={"c2": Deny("over the refund limit")},
        session=session,
        ctx=s.ctx(),
    )
    events = await session.events()
    resumed = [(e.type, getattr(e, "call_id", None)) for e in events][7:]
    assert resumed == [
        ("approvals_answered", None),
        ("permission_decided", "c2"),
        ("tool_returned", "c2"),
        ("assistant_message", None),
    ]
    answered = next(e for e in events if isinstance(e, ApprovalsAnswered))
    assert answered.decisions == {"c2": "deny"}
    assert answered.reasons == {"c2": "over the refund limit"}
    assert answered.args == {}
    decided = [
        (e.call_id, e.decision, e.stage, e.rule, e.reason, e.decided_by)
        for e in events
        if isinstance(e, PermissionDecided) and e.call_id == "c2"
    ]
    assert decided == [
        ("c2", "ask", "policy", "AsksForRefunds", "refund of 40 needs approval", "pending"),
        ("c2", "deny", "policy", "AsksForRefunds", "over the refund limit", "human"),
    ]
    assert s.RAN == [("lookup", "A7")]
    calls = {c.call_id: c for c in recorded_calls(events, session_id="s")}
    refund = calls["c2"]
    assert (refund.outcome, refund.recorded_reason, refund.decided_by) == (
        "denied",
        "over the refund limit",
        "human",
    )
    # a candidate with no policy would have let it run: policy check lists the flip
    changes = await dry_run(RunContext.ephemeral(), events, session_id="s")
    assert [(c.call_id, c.before, c.after, c.recorded_by) for c in changes] == [
        ("c2", "denied", "allow", "human")
    ]
    assert "  denied (human)  allow  " in table_lines(changes)[1]


async def test_an_edit_is_recorded_and_the_history_shows_the_call_that_ran() -> None:
    session = MemorySession()
    state = (await _paused(session)).state
    agent = s.agent([[Text("Refunded 10.")]])
    result = await Runner().resume(
        agent,
        state,
        decisions={"c2": Edit({"order": "A7", "amount": 10})},
        session=session,
        ctx=s.ctx(),
    )
    assert s.RAN == [("lookup", "A7"), ("refund", {"order": "A7", "amount": 10})]
    events = await session.events()
    answered = next(e for e in events if isinstance(e, ApprovalsAnswered))
    assert (answered.decisions, answered.reasons, answered.args) == (
        {"c2": "edit"},
        {},
        {"c2": {"order": "A7", "amount": 10}},
    )
    decided = [
        (e.decision, e.reason, e.decided_by, e.args)
        for e in events
        if isinstance(e, PermissionDecided) and e.call_id == "c2"
    ]
    assert decided == [
        ("ask", "refund of 40 needs approval", "pending", None),
        ("allow", "refund of 10 needs approval", "human", {"order": "A7", "amount": 10}),
    ]
    # the log keeps what the model sent; the audit reads what ran
    [called] = [e for e in events if isinstance(e, ToolCalled) and e.call_id == "c2"]
    assert called.args == {"order": "A7", "amount": 40}
    calls = {c.call_id: c for c in recorded_calls(events, session_id="s")}
    assert (calls["c2"].args, calls["c2"].outcome, calls["c2"].decided_by) == (
        {"order": "A7", "amount": 10},
        "allowed",
        "human",
    )
    # the model's next turn and to_input_list() show the call that ran
    [request] = agent.model.requests  # type: ignore[attr-defined]
    sent = [(i.call_id, i.args) for i in request.messages if isinstance(i, ToolCall)]
    assert sent == [("c1", {"order": "A7"}), ("c2", {"order": "A7", "amount": 10})]
    history = [(i.call_id, i.args) for i in result.to_input_list() if isinstance(i, ToolCall)]
    assert history == [("c1", {"order": "A7"}), ("c2", {"order": "A7", "amount": 10})]
    results = [i for i in result.to_input_list() if isinstance(i, ToolResult)]
    assert [r.content[0].text for r in results] == [  # type: ignore[union-attr]
        "order A7: 40 EUR",
        "refunded 10 on A7",
    ]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"order": "A7", "amount": "lots"}, "amount: Input should be a valid integer"),
        ({"order": "A7"}, "amount: Field required"),
        ({"amount": 10, "order": ["A7"]}, "order: Input should be a valid string"),
    ],
)
async def test_an_edit_the_tool_s_schema_refuses_is_refused_at_resume(
    args: dict[str, object], problem: str
) -> None:
    session = MemorySession()
    state = (await _paused(session)).state
    before = len(await session.events())
    with pytest.raises(ResumeRefused) as err:
        await Runner().resume(
            s.agent([[Text("never")]]),
            state,
            decisions={"c2": Edit(args)},
            session=session,
            ctx=s.ctx(),
        )
    assert str(err.value).startswith(
        f"Edit(args) for call c2 does not fit tool 'refund': {problem}"
    )
    assert str(err.value).endswith("; fix those arguments (nothing ran)")
    assert len(await session.events()) == before and s.RAN == [("lookup", "A7")]
    # nothing was claimed: the corrected edit resumes the run
    await Runner().resume(
        s.agent([[Text("ok")]]),
        state,
        decisions={"c2": Edit({"order": "A7", "amount": 5})},
        session=session,
        ctx=s.ctx(),
    )
    assert s.RAN[-1] == ("refund", {"order": "A7", "amount": 5})


async def test_the_next_run_on_the_session_reads_the_edited_call() -> None:
    session = MemorySession()
    state = (await _paused(session)).state
    await Runner().resume(
        s.agent([[Text("Refunded 10.")]]),
        state,
        decisions={"c2": Edit({"order": "A7", "amount": 10})},
        session=session,
        ctx=s.ctx(),
    )
    agent = s.agent([[Text("You're welcome.")]])
    await Runner().run(agent, "thanks", session=session, ctx=s.ctx())
    [request] = agent.model.requests  # type: ignore[attr-defined]
    sent = [(i.call_id, i.args) for i in request.messages if isinstance(i, ToolCall)]
    assert sent == [("c1", {"order": "A7"}), ("c2", {"order": "A7", "amount": 10})]


async def test_an_edit_in_a_pattern_step_shows_in_that_step_s_history() -> None:
    def step(name: str, scripts: list[list[Any]]) -> Agent:
        return Agent(name=name, model=MockModel(scripts), tools=[s.lookup, s.refund])

    refund_turn = [Call("c2", "refund", {"order": "A7", "amount": 40})]
    pattern = SequentialAgent("seq", steps=[step("a", [refund_turn])])
    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(pattern, "go", ctx=s.ctx(), run_config=DEFER)
    a2 = step("a", [[Text("refunded")]])
    await Runner().resume(
        SequentialAgent("seq", steps=[a2]),
        err.value.state,
        decisions={"c2": Edit({"order": "A7", "amount": 10})},
        ctx=s.ctx(),
    )
    assert s.RAN == [("refund", {"order": "A7", "amount": 10})]
    [request] = a2.model.requests  # type: ignore[attr-defined]
    sent = [(i.call_id, i.args) for i in request.messages if isinstance(i, ToolCall)]
    assert sent == [("c2", {"order": "A7", "amount": 10})]
    # the schema check reaches the step too
    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(
            SequentialAgent("seq", steps=[step("a", [refund_turn])]),
            "go",
            ctx=s.ctx(),
            run_config=DEFER,
        )
    with pytest.raises(ResumeRefused, match="amount: Input should be a valid integer"):
        await Runner().resume(
            SequentialAgent("seq", steps=[step("a", [[Text("never")]])]),
            err.value.state,
            decisions={"c2": Edit({"order": "A7", "amount": "ten"})},
            ctx=s.ctx(),
        )
