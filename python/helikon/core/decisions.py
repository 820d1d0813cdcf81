"""A person's answers to paused tool calls: :class:`Approve`, :class:`Deny`, :class:`Edit`.

``Runner.resume(agent, state, decisions={call_id: decision})`` takes one decision per call
waiting in the :class:`~helikon.RunState`:

* :class:`Approve` runs the call with the arguments the model gave.
* :class:`Deny` does not run it; the model reads ``approval denied: <reason>``.
* :class:`Edit` runs it with new arguments, after the permission pipeline checks them again
  (a deny rule or a deny guard still refuses them; an ask is answered by this edit).

``remember=True`` on :class:`Approve` or :class:`Deny` answers the same way, for the rest of
the run, every later call of that tool that would ask ("always allow this"). It never
overrides a deny rule or a deny guard: it only answers what would otherwise wait.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from helikon.errors import ResumeRefused

if TYPE_CHECKING:
    from helikon.core.run_state import PendingCall

__all__ = [
    "Approve",
    "Decision",
    "Deny",
    "Edit",
    "check_decisions",
    "decision_from_json",
    "decision_input",
    "edited_args",
]


@dataclass(frozen=True, slots=True)
class Approve:
    """Run the call as the model gave it; ``remember`` approves the tool for the run.

    Example:
        >>> Approve(remember=True).remember
        True
    """

    remember: bool = False


@dataclass(frozen=True, slots=True)
class Deny:
    """Do not run the call; the model reads ``reason``. ``remember`` denies the tool's later
    asks in this run without pausing again.

    Raises:
        ResumeRefused: ``reason`` is not a non-empty string.
    """

    reason: str
    remember: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ResumeRefused(
                f"Deny(reason) needs a non-empty reason for the model, got {self.reason!r}"
            )


@dataclass(frozen=True, slots=True)
class Edit:
    """Run the call with ``args`` (a JSON object) instead of the model's arguments.

    Raises:
        ResumeRefused: ``args`` is not a dict.
    """

    args: dict[str, Any]

    def __post_init__(self) -> None:
        if not isinstance(self.args, dict):
            raise ResumeRefused(
                f"Edit(args) takes the new arguments as a dict, got {type(self.args).__name__}"
            )


Decision: TypeAlias = Approve | Deny | Edit


def check_decisions(
    pending: Sequence[PendingCall], decisions: Mapping[str, Decision]
) -> dict[str, Decision]:
    """``decisions`` checked against the waiting calls: exactly one answer per call.

    Never fails open: a missing answer is an error, not a denial or an approval.

    Raises:
        ResumeRefused: ``decisions`` is not a mapping, an answer is not a decision, a
            waiting call has no answer, or an answer names a call that does not wait
            (the message lists the ids).
    """
    if not isinstance(decisions, Mapping):
        raise ResumeRefused(
            f"decisions must map call ids to Approve() | Deny(reason) | Edit(args), got "
            f"{type(decisions).__name__}"
        )
    waiting = [p.call_id for p in pending]
    unknown = sorted(k for k in decisions if k not in waiting)
    if unknown:
        raise ResumeRefused(
            f"decisions name call ids that do not wait for approval: {', '.join(unknown)}; "
            f"waiting: {', '.join(waiting)}"
        )
    missing = [c for c in waiting if c not in decisions]
    if missing:
        raise ResumeRefused(
            f"no decision for waiting call(s) {', '.join(missing)}: answer every call with "
            "Approve(), Deny(reason) or Edit(args)"
        )
    for call_id, d in decisions.items():
        if not isinstance(d, Approve | Deny | Edit):
            raise ResumeRefused(
                f"decision for {call_id} must be Approve(), Deny(reason) or Edit(args), got {d!r}"
            )
    return {c: decisions[c] for c in waiting}


def decision_input(call_id: str, decision: Decision) -> dict[str, Any]:
    """The loop machine's JSON for one decision (see ``helikon_loop::Decision``).

    Example:
        >>> decision_input("c1", Deny("not now"))
        {'call_id': 'c1', 'decision': 'deny', 'reason': 'not now'}
    """
    if isinstance(decision, Approve):
        return {"call_id": call_id, "decision": "approve"}
    if isinstance(decision, Deny):
        return {"call_id": call_id, "decision": "deny", "reason": decision.reason}
    return {"call_id": call_id, "decision": "edit", "args": decision.args}


def edited_args(decisions: Mapping[str, Decision]) -> dict[str, Any]:
    """Call id -> new arguments, for each :class:`Edit` among ``decisions``.

    Example:
        >>> edited_args({"c1": Edit({"amount": 10}), "c2": Approve()})
        {'c1': {'amount': 10}}
    """
    return {c: d.args for c, d in decisions.items() if isinstance(d, Edit)}


def decision_from_json(value: Any) -> Decision:
    """A decision from its JSON form: ``{"decision": "approve", "remember"?}``,
    ``{"decision": "deny", "reason", "remember"?}`` or ``{"decision": "edit", "args"}``.

    Raises:
        ResumeRefused: anything else (the message says what is wrong).
    """
    if not isinstance(value, dict):
        raise ResumeRefused(
            f"a decision is an object like {{'decision': 'approve'}}, got {value!r}"
        )
    kind, remember = value.get("decision"), value.get("remember", False)
    if not isinstance(remember, bool):
        raise ResumeRefused(f"remember must be true or false, got {remember!r}")
    if kind == "approve":
        return Approve(remember=remember)
    if kind == "deny":
        return Deny(value.get("reason", ""), remember=remember)
    if kind == "edit":
        return Edit(value.get("args"))  # type: ignore[arg-type]
    raise ResumeRefused(f"decision must be 'approve', 'deny' or 'edit', got {kind!r}")
