"""What a resume records for a person's answers: a denial closes the call's ask with a
``permission_decided`` of its own, and ``approvals_answered`` keeps the reason (and an
edit's arguments), so the audit and ``policy check`` read who refused the call and why."""

from __future__ import annotations

import pytest

from helikon import RunConfig, RunContext
from helikon.audit import dry_run, recorded_calls
from helikon.cli.policy_cmd import table_lines
from helikon.core.decisions import Deny
from helikon.errors import RunInterruptedError
from helikon.runtimes.runner import Runner
from helikon.sessions import MemorySession, PermissionDecided
from helikon.sessions.events import ApprovalsAnswered
from helikon.testing import Text

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
