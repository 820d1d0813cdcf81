"""The session as the ledger of a paused run: recording the pause, claiming the resume.

A pause is recorded like the end of a run, except that the waiting calls get no
"did not complete" result: they are not over. The :class:`~helikon.RunState` then notes the
session's id and how many events its log holds (``session_position``).

A resume claims the pause before any tool runs, so a paused run is resumed at most once,
even by two processes at the same moment:

1. The log must hold exactly ``session_position`` events and no ``approvals_answered``
   event for the run (else: already resumed, or the session moved on; refused).
2. An ``approvals_answered`` event with a fresh claim id is appended.
3. The log is read again: the first ``approvals_answered`` event for the run after the
   pause must be ours; a resume that lost the race runs nothing.

A run paused **without** a session has no log to claim in:

* resumed with a session (any :class:`~helikon.sessions.Session` the resuming processes
  share, e.g. ``SqliteSession(id, "runs.db")``), that session is the ledger: steps 2 and 3
  above, with no position to check (the resumed run is then recorded there);
* resumed without one, the claim is kept in this process, so only the process that paused
  the run may resume it (``RunState.paused_in``); elsewhere the resume is refused, saying
  to pass a session: two processes holding the same state could otherwise both run the
  approved calls.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from helikon.core.decisions import Approve, Decision, Deny, Edit
from helikon.core.run_state import PROCESS_ID, RunState
from helikon.errors import ResumeRefused
from helikon.sessions import Session
from helikon.sessions.chain import Chained, verify
from helikon.sessions.events import (
    ApprovalsAnswered,
    PermissionDecided,
    SequenceId,
    SessionEvent,
)

__all__ = ["claim_resume", "human_denials", "session_position"]

_CLAIMED_IN_PROCESS: set[str] = set()


async def session_position(session: Session) -> int:
    """How many events ``session``'s log holds."""
    return len(await session.events())


def _summary(decisions: Mapping[str, Decision]) -> dict[str, str]:
    return {
        call_id: "approve" if isinstance(d, Approve) else "deny" if isinstance(d, Deny) else "edit"
        for call_id, d in decisions.items()
    }


async def claim_resume(
    session: Session | None, state: RunState, decisions: Mapping[str, Decision]
) -> None:
    """Claim the paused run ``state`` for this resume (see the module doc).

    Raises:
        ResumeRefused: the run was already resumed (here or elsewhere), the session is not
            the one the run paused in or changed since, or another resume claimed it first.
            Nothing ran.
        SessionTampered: the session's hash chain does not verify (nothing ran).
        SessionError: the session could not be read or written.
    """
    if state.session_position is None and session is None:
        if state.paused_in is not None and state.paused_in != PROCESS_ID:
            raise ResumeRefused(_ELSEWHERE.format(run_id=state.run_id))
        if state.run_id in _CLAIMED_IN_PROCESS:
            raise ResumeRefused(_ALREADY.format(run_id=state.run_id))
        _CLAIMED_IN_PROCESS.add(state.run_id)
        return
    if session is None:
        raise ResumeRefused(
            f"the paused run recorded into session {state.session_id!r}; pass that session "
            "to resume (session=...)"
        )
    own_id = getattr(session, "session_id", None)
    if state.session_id is not None and own_id is not None and own_id != state.session_id:
        raise ResumeRefused(
            f"the run paused in session {state.session_id!r}, not {own_id!r}; pass that session"
        )
    if isinstance(session, Chained):
        (await verify(session)).check(f"session {own_id or state.session_id or ''!r}")
    position = state.session_position
    log = await session.events()
    if any(_answers(e, state) for e in log[position or 0 :]):
        raise ResumeRefused(_ALREADY.format(run_id=state.run_id))
    if position is None:  # paused without a session: this one is only the ledger
        position = 0
    elif len(log) != position:
        raise ResumeRefused(
            f"session {state.session_id or ''!r} changed since the run paused: its log held "
            f"{position} events then and {len(log)} now (another run used it); the paused "
            "calls can no longer be resumed"
        )
    claim = uuid.uuid4().hex
    await session.append(
        [
            ApprovalsAnswered(
                run_id=state.run_id,
                claim=claim,
                decisions=_summary(decisions),
                reasons={c: d.reason for c, d in decisions.items() if isinstance(d, Deny)},
                args={c: d.args for c, d in decisions.items() if isinstance(d, Edit)},
            )
        ]
    )
    after = await session.events(SequenceId(position - 1) if position > 0 else None)
    first = next((e for e in after if _answers(e, state)), None)
    if not isinstance(first, ApprovalsAnswered) or first.claim != claim:
        raise ResumeRefused(
            f"another resume of paused run {state.run_id} claimed it first; nothing ran here"
        )


def human_denials(
    state: RunState, decisions: Mapping[str, Decision], log: list[SessionEvent]
) -> list[PermissionDecided]:
    """The ``permission_decided`` events of the calls a person denied on this resume
    (``decided_by="human"``, ``reason`` the ``Deny`` reason), in the order the calls wait.

    A denied call does not run again, so the permission pipeline records nothing for it;
    these events close its ``pending`` ask. Stage and rule are those of the call's recorded
    ask in ``log`` (the pipeline stage that asked); ``"resume"`` when the log holds none
    (the run paused without a session).
    """
    asks = {e.call_id: e for e in log if isinstance(e, PermissionDecided) and e.decision == "ask"}
    out = []
    for p in state.pending:
        d = decisions.get(p.call_id)
        if not isinstance(d, Deny):
            continue
        ask = asks.get(p.call_id)
        out.append(
            PermissionDecided(
                call_id=p.call_id,
                tool=p.tool,
                decision="deny",
                stage=ask.stage if ask is not None else "resume",
                rule=ask.rule if ask is not None else None,
                reason=d.reason,
                decided_by="human",
            )
        )
    return out


def _answers(event: object, state: RunState) -> bool:
    return isinstance(event, ApprovalsAnswered) and event.run_id == state.run_id


_ELSEWHERE = (
    "paused run {run_id} was paused without a session in another process, where its "
    "resume-once claim is kept; resuming it here without a session could run the approved "
    "calls twice. Pass a session the resuming processes share as the ledger "
    "(Runner.resume(..., session=SqliteSession('<id>', 'runs.db')), or Redis / PostgreSQL "
    "sessions), or run with a session from the start (Runner.run(..., session=...))"
)

_ALREADY = (
    "paused run {run_id} was already resumed; a RunState resumes once (nothing ran again). "
    "Use the state the resumed run returned, if it paused again"
)
