"""The driver's side of approval pauses: answering asks, and what a resume starts from.

:class:`Approvals` answers the permission pipeline's asks before any approval handler: a
call a person approved (or edited) on resume runs, an answer remembered for the run is
given again, and with ``RunConfig(approval="defer")`` every other ask defers (the run
pauses). :func:`plan_resume` checks a :class:`~helikon.RunState` against the agent and the
decisions before anything runs, and returns where to continue.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from helikon.core.authorize import Deferred
from helikon.core.decisions import Approve, Decision, Deny, Edit, check_decisions, decision_input
from helikon.core.items import Item, SystemMessage, ToolCall
from helikon.core.permissions import PermissionAllow, PermissionDecision, PermissionDeny
from helikon.core.run_state import PendingCall, RunState, config_fingerprint
from helikon.core.usage import Usage
from helikon.errors import ConfigError, InvalidArgs, ResumeRefused

if TYPE_CHECKING:
    from helikon.core.driven import DrivenAgent as Agent

__all__ = [
    "CALLING_APPROVALS",
    "Approvals",
    "ItemTrail",
    "ResumePlan",
    "fingerprint",
    "pause_state",
    "plan_resume",
    "with_edits",
]


@dataclass(slots=True)
class Approvals:
    """How one run answers asks before its approval handler (shared by handoff targets).

    Attributes:
        defer: ``RunConfig(approval="defer")``: an unanswered ask pauses the run.
        remembered: tool name -> ``"approve"`` / ``"deny"``, kept for the rest of the run.
        granted: call ids a person approved or edited, for the resume step that runs them.
    """

    defer: bool = False
    remembered: dict[str, str] = field(default_factory=dict)
    granted: set[str] = field(default_factory=set)
    nested: dict[str, tuple[RunState, dict[str, Decision]]] = field(default_factory=dict)
    """Per call id of an agent-as-tool call that paused inside: its sub-run's state and the
    decisions for it, taken by the tool when the call runs again."""

    @property
    def active(self) -> bool:
        """Whether :meth:`answer` can answer anything (else the handler decides alone)."""
        return self.defer or bool(self.remembered) or bool(self.granted)

    def answer(self, call_id: str, tool: str, prompt: str) -> PermissionDecision | Deferred | None:
        """The answer to an ask, or ``None`` to let the approval handler decide."""
        if call_id in self.granted:
            return PermissionAllow()
        remembered = self.remembered.get(tool)
        if remembered == "approve":
            return PermissionAllow()
        if remembered == "deny":
            return PermissionDeny(f"{prompt}: denied for the rest of this run")
        if self.defer:
            return Deferred(prompt)
        return None

    def decide(
        self, pending: list[PendingCall], decisions: Mapping[str, Decision]
    ) -> list[dict[str, Any]]:
        """Record ``decisions`` (grants and remembered answers) and return the machine's
        ``decisions`` input, in the order the calls wait."""
        checked = check_decisions(pending, decisions)
        by_id = {p.call_id: p for p in pending}
        out = []
        for call_id, d in checked.items():
            if isinstance(d, Approve | Edit):
                self.granted.add(call_id)
            if isinstance(d, Approve | Deny) and d.remember:
                self.remembered[by_id[call_id].tool] = (
                    "approve" if isinstance(d, Approve) else "deny"
                )
            out.append(decision_input(call_id, d))
        return out

    def decide_state(
        self, state: RunState, decisions: Mapping[str, Decision]
    ) -> list[dict[str, Any]]:
        """:meth:`decide` for a whole :class:`RunState`: the decisions answer the calls a
        person sees (``state.pending``, which includes the calls of paused sub-runs); a
        call whose sub-run paused runs again, resuming that sub-run with its share."""
        checked = check_decisions(state.pending, decisions)
        if not state.nested:
            return self.decide(state.pending, checked)
        inner_ids = {p.call_id for sub in state.nested.values() for p in sub.pending}
        own = [p for p in state.pending if p.call_id not in inner_ids]
        out = self.decide(own, {p.call_id: checked[p.call_id] for p in own}) if own else []
        for call_id, sub in state.nested.items():
            share = {p.call_id: checked[p.call_id] for p in sub.pending}
            self.nested[call_id] = (sub, share)
            self.granted.add(call_id)
            out.append({"call_id": call_id, "decision": "approve"})
        return out


class ItemTrail:
    """The items a run adds, noted from its events, so a pause can keep them in the state.

    A fresh run starts with no items; a resumed one with those its state kept
    (``RunState.run_items``), so a run paused twice keeps everything it added. The items are
    those of ``MessageOutput``, ``ToolCallItem`` and ``ToolOutputItem`` events, as
    ``RunResult.new_items`` lists them.
    """

    __slots__ = ("input", "items")

    def __init__(self, input: list[Item] | None, resumed: RunState | None = None) -> None:
        if resumed is not None:
            input = resumed.run_input
        self.input = input
        self.items: list[Item] = list(resumed.run_items or []) if resumed is not None else []

    def note(self, ev: Any) -> None:
        """Keep ``ev``'s item if it is an item event."""
        if ev.type in _ITEM_EVENT_TYPES:
            self.items.append(ev.item)

    def keep(self, state: RunState) -> RunState:
        """``state`` with the run's input and the items noted so far."""
        return state.model_copy(update={"run_input": self.input, "run_items": list(self.items)})


_ITEM_EVENT_TYPES = frozenset({"message_output", "tool_call_item", "tool_output_item"})


CALLING_APPROVALS: ContextVar[Approvals | None] = ContextVar("helikon_approvals", default=None)
"""The calling run's :class:`Approvals`, set inside each tool call's task (an agent as a
tool defers like its caller, and resumes its paused sub-run from it)."""


def fingerprint(agent: Agent, max_turns: int) -> str:
    """:func:`~helikon.core.run_state.config_fingerprint` of ``agent`` under ``max_turns``."""
    return config_fingerprint(agent.name, agent.native_config(max_turns).to_json())


def pause_state(
    *,
    path: list[str],
    agent: Agent,
    max_turns: int,
    loop_state_json: str,
    conversation: list[Item],
    waiting: list[tuple[ToolCall, str, RunState | None]],
    remembered: dict[str, str],
) -> RunState:
    """The :class:`RunState` of an agent that paused (root name and usage set by the root).

    ``conversation`` is the agent's, instructions first; they are left out (a resume renders
    them again).
    """
    convo = (
        conversation[1:]
        if conversation and isinstance(conversation[0], SystemMessage)
        else conversation
    )
    return RunState(
        agent=path[0],
        agent_path=list(path),
        config_fingerprint=fingerprint(agent, max_turns),
        loop_state=json.loads(loop_state_json),
        conversation=list(convo),
        pending=[
            p
            for call, reason, sub in waiting
            for p in (
                sub.pending
                if sub is not None
                else [
                    PendingCall(
                        call_id=call.call_id,
                        tool=call.name,
                        args=call.args,
                        reason=reason,
                        agent=agent.name,
                    )
                ]
            )
        ],
        nested={call.call_id: sub for call, _, sub in waiting if sub is not None},
        remembered={k: v for k, v in remembered.items() if v in ("approve", "deny")},  # type: ignore[misc]
    )


@dataclass(frozen=True, slots=True)
class ResumePlan:
    """Where a resume continues: the chain of agents from the root to the one that asked,
    the machine state to load, the decisions to feed, and the usage spent outside the
    asking agent's machine (its ancestors')."""

    chain: list[Agent]
    state: RunState
    decisions: list[dict[str, Any]]
    approvals: Approvals
    base_usage: Usage


def check_paused(state: object) -> None:
    """Refuse anything but the :class:`RunState` of a run paused for approval.

    Raises:
        ResumeRefused: ``state`` is not a ``RunState``, or its loop is not in
            ``NeedsApproval`` (the message names what it got).
    """
    if not isinstance(state, RunState):
        raise ResumeRefused(
            f"resume takes the RunState a paused run returned, got {type(state).__name__}; "
            "load a saved one with RunState.from_json(text)"
        )
    if state.loop_state.get("state") != "NeedsApproval":
        raise ResumeRefused(
            f"the RunState is not paused for approval (its loop state is "
            f"{state.loop_state.get('state')!r})"
        )


def plan_resume(
    agent: Agent, state: RunState, decisions: Mapping[str, Decision], max_turns: int
) -> ResumePlan:
    """Check ``state`` against ``agent`` and ``decisions``; nothing runs.

    Raises:
        ResumeRefused: the state is not a paused run, ``agent`` is not the agent that
            paused (another name, or its tools, handoffs, output type or turn limit
            changed), the path of the agent that asked cannot be followed, or the decisions
            do not answer exactly the waiting calls.
    """
    check_paused(state)
    if state.conversation is None:
        raise ResumeRefused("the RunState holds no conversation to resume")
    path = state.agent_path or [state.agent]
    if path[0] != agent.name:
        raise ResumeRefused(
            f"the RunState was paused by agent {path[0]!r}; resume it with that agent, not "
            f"{agent.name!r}"
        )
    if state.pattern is not None:
        raise ResumeRefused(
            f"the RunState was paused by the {state.pattern.get('kind')} pattern "
            f"{state.agent!r}; resume it with that pattern (Runner.resume(pattern, state, ...))"
        )
    chain = [agent]
    for name in path[1:]:
        current = chain[-1]
        try:
            chain.append(current.handoff_target(name))
        except ConfigError:
            raise ResumeRefused(
                f"agent {current.name!r} no longer hands off to {name!r}, on the way to the "
                "agent that asked"
            ) from None
    asking = chain[-1]
    if fingerprint(asking, max_turns) != state.config_fingerprint:
        raise ResumeRefused(
            f"agent {asking.name!r} changed since the pause (its tools, handoffs, output type "
            "or max_turns differ); resume with the agent as it was when the run paused"
        )
    approvals = Approvals(remembered=dict(state.remembered))
    machine_input = approvals.decide_state(state, decisions)
    _check_edits(asking, state, decisions)
    asking_usage = Usage.model_validate(state.loop_state.get("usage") or {})
    return ResumePlan(chain, state, machine_input, approvals, _minus(state.usage, asking_usage))


def _check_edits(asking: Agent, state: RunState, decisions: Mapping[str, Decision]) -> None:
    """Refuse an :class:`Edit` whose arguments the asking agent's tool would refuse: the
    model never sent them, so it must not read an ``invalid arguments`` result for them.
    (Calls of a paused sub-run are checked when that sub-run resumes.)

    Raises:
        ResumeRefused: naming the call, the tool and each field that does not validate.
    """
    inner = {p.call_id for sub in state.nested.values() for p in sub.pending}
    tools = {t.name: t for t in asking.tools}
    for p in state.pending:
        d = decisions.get(p.call_id)
        if not isinstance(d, Edit) or p.call_id in inner:
            continue
        validate = getattr(tools.get(p.tool), "validate_args", None)
        if validate is None:
            continue
        try:
            validate(d.args)
        except InvalidArgs as exc:
            raise ResumeRefused(
                f"Edit(args) for call {p.call_id} does not fit tool {p.tool!r}: "
                f"{'; '.join(exc.schema_errors)}; fix those arguments (nothing ran)"
            ) from None


def with_edits(state: RunState, decisions: Mapping[str, Decision]) -> RunState:
    """``state`` with each edited call's arguments replaced by its :class:`Edit`'s, in the
    conversation the next model turn reads and in the run's items (``to_input_list()``):
    the history shows the call that ran, so the model never reads ``refund(amount=40)``
    answered by ``refunded 10``. The model's original arguments stay in the session log's
    ``tool_called`` event; the edit is recorded next to it (``approvals_answered.args``
    and the call's ``permission_decided.args``). The states of paused pattern steps and
    sub-runs (``steps``, ``nested``) are edited the same way."""
    if not isinstance(state, RunState) or not isinstance(decisions, Mapping):
        return state  # refused later, with the message that names the problem
    edits = {c: d.args for c, d in decisions.items() if isinstance(d, Edit)}
    if not edits:
        return state

    def edit(items: list[Item] | None) -> list[Item] | None:
        if items is None:
            return None
        return [
            i.model_copy(update={"args": edits[i.call_id]})
            if isinstance(i, ToolCall) and i.call_id in edits
            else i
            for i in items
        ]

    return state.model_copy(
        update={
            "conversation": edit(state.conversation),
            "run_items": edit(state.run_items),
            "steps": {k: with_edits(v, decisions) for k, v in state.steps.items()},
            "nested": {k: with_edits(v, decisions) for k, v in state.nested.items()},
        }
    )


def _minus(a: Usage, b: Usage) -> Usage:
    """Field-wise ``a - b``, never below zero."""
    fields = a.model_dump()
    other = b.model_dump()
    return Usage.model_validate({k: max(0, v - other.get(k, 0)) for k, v in fields.items()})
