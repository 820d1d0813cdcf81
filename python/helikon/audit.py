"""Policy dry-run: what a candidate permission configuration would have done to recorded runs.

:func:`recorded_calls` reads every ``tool_called`` event of a session log together with what
happened to it. A log written by this version records the decision itself: a
``permission_decided`` event per call (its decision, stage, rule, reason and who decided:
the configuration, the approval handler, a person on a resume, or a hook), and that is what
is used. For a call without one (a log written before decisions were recorded) the outcome
is inferred from its ``tool_returned`` event:

* ``"allowed"``: the tool ran (its result is whatever the tool returned, error or not);
* ``"denied"``: the permission pipeline or a person refused it (the runner's result text
  starts with ``permission denied:`` or ``approval denied:``);
* ``"hook_denied"``: a ``PreToolUse`` hook refused it (``denied by hook:``); hooks are not
  part of a permission configuration, so these calls are not compared;
* ``"unknown"``: the log has no result for the call (a paused or crashed run).

A call a person approved on a resume (its id is ``approve`` or ``edit`` in an
``approvals_answered`` event) is ``allowed`` with :attr:`RecordedCall.asked` set.

:func:`dry_run` then decides each call again with :func:`helikon.permissions.explain` under a
candidate :class:`~helikon.RunContext` (its mode, deny/allow rules, guards and policy) and
returns a :class:`Change` for every call whose outcome flips:

* ``allowed`` -> ``deny`` or ``ask`` (the candidate is stricter for this call);
* ``denied`` -> ``allow`` (the candidate is looser for this call).

Calls with an ``unknown`` or ``hook_denied`` outcome, ``denied`` calls that would now
``ask`` (nothing ran then and nothing runs unasked now) and ``asked`` calls that would ask
again are not changes. The log records a call's name and
arguments but not the tool's :class:`~helikon.ToolEffect`, which the modes need: the built-in
tools' effects are known (``Bash``: side effect, ``Read``: read-only, ``Write``/``Edit``:
write), any other tool counts as ``SIDE_EFFECT`` (the strictest reading) unless ``effects``
names it.

Example:
    >>> import asyncio
    >>> from helikon import RunContext
    >>> from helikon.permissions import DenyRule
    >>> from helikon.sessions import tool_called, tool_returned
    >>> log = [tool_called("c1", "Bash", {"command": "curl http://x"}), tool_returned("c1", "ok")]
    >>> ctx = RunContext.ephemeral().with_deny_rules([DenyRule.bash_command("curl")])
    >>> [(c.call_id, c.before, c.after) for c in asyncio.run(dry_run(ctx, log))]
    [('c1', 'allowed', 'deny')]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from helikon.core.authorize import explain
from helikon.core.items import TextPart
from helikon.core.tool import ToolEffect
from helikon.sessions.events import (
    ApprovalsAnswered,
    PermissionDecided,
    SessionEvent,
    ToolCalled,
    ToolReturned,
)

if TYPE_CHECKING:
    from helikon.core.context import RunContext

__all__ = [
    "BUILTIN_EFFECTS",
    "DENIAL_PREFIXES",
    "HOOK_DENIAL_PREFIX",
    "Change",
    "RecordedCall",
    "dry_run",
    "recorded_calls",
]

Outcome = Literal["allowed", "denied", "hook_denied", "unknown"]

BUILTIN_EFFECTS: Mapping[str, ToolEffect] = {
    "Bash": ToolEffect.SIDE_EFFECT,
    "Read": ToolEffect.READ_ONLY,
    "Write": ToolEffect.WRITE,
    "Edit": ToolEffect.WRITE,
}
"""The effects of helikon's built-in tools, by tool name (others: ``SIDE_EFFECT``)."""

DENIAL_PREFIXES = ("permission denied: ", "approval denied: ")
"""How the runner words a refused call's result (:mod:`helikon.core.tool_exec`)."""

HOOK_DENIAL_PREFIX = "denied by hook: "
"""How the runner words the result of a call a ``PreToolUse`` hook refused."""


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One recorded tool call and what happened to it.

    Attributes:
        session_id: the session the call is in (``""`` when not given).
        sequence: the position of its ``tool_called`` event in the log (0-based).
        call_id: the model's call id.
        tool: the tool name.
        args: the arguments the call ran with: as the model sent them, or a person's
            ``Edit`` on a resume (the ``permission_decided`` event's ``args``).
        outcome: ``"allowed"``, ``"denied"``, ``"hook_denied"`` or ``"unknown"`` (see the
            module doc).
        recorded_reason: for a denial: the recorded reason (the ``permission_decided``
            event's reason, or for an older log the result text).
        asked: a person or the approval handler approved the call.
        decided_by: who decided, from the log's ``permission_decided`` event: ``"policy"``,
            ``"approval_handler"``, ``"human"``, ``"hook"`` or ``"pending"``; ``None`` when
            the log has no decision for the call and the outcome was inferred.
        recorded_stage: the stage that decided (``deny_rule``, ``guard``, ``mode``, ...),
            ``None`` when inferred.
        recorded_rule: the rule that decided, if the log names one.
    """

    session_id: str
    sequence: int
    call_id: str
    tool: str
    args: Any
    outcome: Outcome
    recorded_reason: str = ""
    asked: bool = False
    decided_by: str | None = None
    recorded_stage: str | None = None
    recorded_rule: str | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """A recorded call the candidate configuration decides differently.

    Attributes:
        session_id, sequence, call_id, tool, args: the call (see :class:`RecordedCall`).
        before: ``"allowed"`` or ``"denied"``: what happened when it was recorded.
        after: ``"allow"``, ``"deny"`` or ``"ask"``: the candidate's decision.
        stage: the pipeline stage that decided (``deny_rule``, ``guard``, ``allow_rule``,
            ``mode``, ``policy`` or ``default``), as :class:`~helikon.permissions.Explanation`.
        rule: the rule or guard that decided, if any.
        reason: the explanation's sentence (``DenyRule.bash_command('curl')``,
            ``mode plan``, a guard's reason).
        recorded_by: who decided when the call was recorded (see
            :attr:`RecordedCall.decided_by`; ``None`` for an older log).
    """

    session_id: str
    sequence: int
    call_id: str
    tool: str
    args: Any
    before: str
    after: str
    stage: str
    rule: str | None
    reason: str
    recorded_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The change as a JSON object (the keys are the attribute names)."""
        return {
            "session_id": self.session_id,
            "sequence": self.sequence,
            "call_id": self.call_id,
            "tool": self.tool,
            "args": self.args,
            "before": self.before,
            "after": self.after,
            "stage": self.stage,
            "rule": self.rule,
            "reason": self.reason,
            "recorded_by": self.recorded_by,
        }


def _text(event: ToolReturned) -> str:
    return "".join(p.text for p in event.content if isinstance(p, TextPart))


def recorded_calls(events: Iterable[SessionEvent], *, session_id: str = "") -> list[RecordedCall]:
    """Every ``tool_called`` event of one log, in order, with its recorded outcome.

    A result or decision matches the latest call with its ``call_id`` before it; a
    ``tool_returned`` without a call is ignored. Of several decisions for one call (asked,
    then answered on a resume) the last one counts.
    """
    calls: list[tuple[int, ToolCalled]] = []
    results: dict[int, ToolReturned] = {}
    decided: dict[int, PermissionDecided] = {}
    open_ids: dict[str, int] = {}
    latest: dict[str, int] = {}
    approved: set[str] = set()
    for seq, event in enumerate(events):
        if isinstance(event, ApprovalsAnswered):
            approved |= {cid for cid, d in event.decisions.items() if d in ("approve", "edit")}
        elif isinstance(event, ToolCalled):
            open_ids[event.call_id] = latest[event.call_id] = len(calls)
            calls.append((seq, event))
        elif isinstance(event, PermissionDecided) and event.call_id in latest:
            decided[latest[event.call_id]] = event
        elif isinstance(event, ToolReturned) and event.call_id in open_ids:
            results[open_ids.pop(event.call_id)] = event
    out = []
    for i, (seq, call) in enumerate(calls):
        decision = decided.get(i)
        if decision is not None:
            out.append(_from_decision(session_id, seq, call, decision, i in results))
            continue
        result = results.get(i)
        outcome: Outcome = "unknown"
        reason = ""
        if result is not None:
            text = _text(result)
            if result.is_error and text.startswith(DENIAL_PREFIXES):
                outcome, reason = "denied", text
            elif result.is_error and text.startswith(HOOK_DENIAL_PREFIX):
                outcome, reason = "hook_denied", text
            else:
                outcome = "allowed"
        asked = outcome == "allowed" and call.call_id in approved
        out.append(
            RecordedCall(
                session_id, seq, call.call_id, call.name, call.args, outcome, reason, asked
            )
        )
    return out


def _from_decision(
    session_id: str, seq: int, call: ToolCalled, d: PermissionDecided, answered: bool
) -> RecordedCall:
    """A call whose decision the log records."""
    outcome: Outcome
    if d.decision == "allow":
        outcome = "allowed"
    elif d.decision == "deny":
        outcome = "hook_denied" if d.decided_by == "hook" else "denied"
    else:  # still waiting for a person (or the run ended before an answer)
        outcome = "unknown"
    return RecordedCall(
        session_id,
        seq,
        call.call_id,
        call.name,
        call.args if d.args is None else d.args,
        outcome,
        d.reason if outcome != "allowed" else "",
        outcome == "allowed" and d.decided_by in ("approval_handler", "human"),
        d.decided_by,
        d.stage,
        d.rule,
    )


def _flips(call: RecordedCall, after: str) -> bool:
    if call.outcome == "allowed":
        return after == "deny" or (after == "ask" and not call.asked)
    return call.outcome == "denied" and after == "allow"


async def dry_run(
    policy: RunContext[Any],
    events: Iterable[SessionEvent],
    *,
    session_id: str = "",
    effects: Mapping[str, ToolEffect] | None = None,
) -> list[Change]:
    """The recorded calls of ``events`` whose outcome ``policy`` would flip, in log order.

    ``policy`` is the candidate configuration as a run context (e.g.
    ``RunContext.ephemeral().with_permission_mode(...).with_deny_rules(...)``; the CLI builds
    it from a ``[permissions]`` table). Its approval handler is not consulted: ``ask`` is what
    a person would be asked. Its :class:`~helikon.PermissionPolicy`, if any, is called once per
    recorded call. ``effects`` maps tool names to their effects over :data:`BUILTIN_EFFECTS`.

    Returns:
        one :class:`Change` per flipped call (see the module doc for what counts).
    """
    table = {**BUILTIN_EFFECTS, **(effects or {})}
    changes = []
    for call in recorded_calls(events, session_id=session_id):
        if call.outcome in ("unknown", "hook_denied"):
            continue
        effect = table.get(call.tool, ToolEffect.SIDE_EFFECT)
        e = await explain(policy, call.tool, call.args, effect)
        if _flips(call, e.decision):
            changes.append(
                Change(
                    call.session_id,
                    call.sequence,
                    call.call_id,
                    call.tool,
                    call.args,
                    call.outcome,
                    e.decision,
                    e.stage,
                    e.rule,
                    e.reason,
                    call.decided_by,
                )
            )
    return changes
