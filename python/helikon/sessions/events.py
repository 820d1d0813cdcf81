"""Session events: the entries of a session's append-only log.

Every variant is a frozen pydantic model tagged by ``type`` (the spec's serde shape) and
carries ``ts``, the UTC time it was logged (stamped at construction when not given)::

    {"type": "user_message", "content": [parts], "ts": "..."}
    {"type": "assistant_message", "content": [parts], "agent": "triage", "ts": "..."}
    {"type": "tool_called", "call_id": "c1", "name": "calc", "args": {...}, "ts": "..."}
    {"type": "tool_returned", "call_id": "c1", "content": [parts], "is_error": false, "ts": "..."}
    {"type": "handoff_occurred", "from": "triage", "to": "billing", "ts": "..."}
    {"type": "compacted", "summary": "...", "original_count": 4, "ts": "..."}
    {"type": "conversation_repaired", "repair": "tool_result_synthesized", ...}
    {"type": "approvals_answered", "run_id": "...", "claim": "...", "decisions": {...}, ...}
    {"type": "permission_decided", "call_id": "c1", "tool": "Bash", "decision": "deny",
     "stage": "deny_rule", "rule": "...", "reason": "...", "decided_by": "policy", ...}

The first six are the spec's variants. ``tool_returned`` also keeps the result's
``is_error`` flag and the message/call variants keep the provider's opaque
``provider_data``, so a resumed conversation is the one the model saw.
``conversation_repaired`` is helikon's own: it records a fix that keeps the projected
conversation valid for providers (see :mod:`helikon.core.repair`). So is
``approvals_answered``: a resume of a paused run claims it in the log before any tool runs
(see :mod:`helikon.runtimes.resume`); it adds nothing to the conversation. So is
``permission_decided``: what the permission pipeline decided for one tool call, recorded
between its ``tool_called`` and ``tool_returned``; it adds nothing to the conversation either.

A position in one log is a :data:`SequenceId` (0 for the first event).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, NewType, TypeAlias

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
)

from helikon.core.events import RepairKind
from helikon.core.items import ContentPart, TextPart

__all__ = [
    "ApprovalsAnswered",
    "AssistantMessageEvent",
    "Compacted",
    "ConversationRepaired",
    "HandoffOccurred",
    "PermissionDecided",
    "RepairKind",
    "SequenceId",
    "SessionEvent",
    "SessionForked",
    "ToolCalled",
    "ToolReturned",
    "UserMessageEvent",
    "assistant_message",
    "compacted",
    "event_from_json",
    "event_to_json",
    "handoff_occurred",
    "session_event_adapter",
    "tool_called",
    "tool_returned",
    "user_message",
]

SequenceId = NewType("SequenceId", int)
"""A monotonic position in one session log; the first event is ``SequenceId(0)``."""


def _now() -> datetime:
    return datetime.now(UTC)


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    ts: datetime = Field(default_factory=_now)


class UserMessageEvent(_Event):
    """The user said something."""

    type: Literal["user_message"] = "user_message"
    content: list[ContentPart]


class AssistantMessageEvent(_Event):
    """An agent answered; ``agent`` names it, ``model`` / ``response_id`` the model that
    answered and the provider's id of the response, when the provider named them."""

    type: Literal["assistant_message"] = "assistant_message"
    content: list[ContentPart]
    agent: str | None = None
    provider_data: dict[str, Any] | None = None
    model: str | None = None
    response_id: str | None = None


class ToolCalled(_Event):
    """The model asked for a tool call; ``model`` / ``response_id``: the response it came
    from, as for :class:`AssistantMessageEvent`."""

    type: Literal["tool_called"] = "tool_called"
    call_id: str
    name: str
    args: Any = Field(default_factory=dict)
    provider_data: dict[str, Any] | None = None
    model: str | None = None
    response_id: str | None = None


class ToolReturned(_Event):
    """A tool call's result (``is_error`` when it failed)."""

    type: Literal["tool_returned"] = "tool_returned"
    call_id: str
    content: list[ContentPart]
    is_error: bool = False


class HandoffOccurred(_Event):
    """Control passed from one agent to another (audit only: projects to no message).

    The JSON keys are ``from`` and ``to``; in Python they are ``from_agent`` and ``to_agent``.
    """

    type: Literal["handoff_occurred"] = "handoff_occurred"
    from_agent: str = Field(validation_alias=AliasChoices("from", "from_agent"))
    to_agent: str = Field(validation_alias=AliasChoices("to", "to_agent"))

    @model_serializer(mode="wrap")
    def _aliased(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if "from_agent" in data:
            data["from"] = data.pop("from_agent")
        if "to_agent" in data:
            data["to"] = data.pop("to_agent")
        return data


class Compacted(_Event):
    """A running summary replacing the ``original_count`` events before it.

    ``original_count`` counts events (not messages); see :func:`helikon.sessions.project`.
    ``replaced_hash`` is the chain hash of the last replaced event (helikon's own; absent
    when the backend keeps no chain).
    """

    type: Literal["compacted"] = "compacted"
    summary: str
    original_count: int = Field(ge=0)
    replaced_hash: str | None = None
    """The hash chain's hash (hex) of the last event it replaces, when the backend keeps
    one (see :mod:`helikon.sessions.chain`): the summary names what it stands for."""


class ConversationRepaired(_Event):
    """A fix that keeps the projected conversation valid for providers (helikon's own).

    * ``tool_result_synthesized``: a tool call had no result; ``content`` is the error
      result placed right after the call's turn.
    * ``tool_result_dropped``: a result had no preceding call; it is removed.
    * ``tool_args_replaced``: a call's arguments were not a JSON object (e.g. truncated
      JSON); they become ``args``.
    * ``empty_text_dropped``: blank text parts are removed, and messages left empty.

    ``detail`` says what was wrong, for the audit trail.
    """

    type: Literal["conversation_repaired"] = "conversation_repaired"
    repair: RepairKind
    call_id: str | None = None
    content: list[ContentPart] | None = None
    args: Any = None
    detail: str = ""


class ApprovalsAnswered(_Event):
    """A paused run (``run_id``) was resumed with ``decisions`` (call id -> ``approve``,
    ``deny`` or ``edit``); ``claim`` identifies the resume that wrote it. The first such
    event after the pause wins: a resume whose claim is not first runs nothing.

    ``reasons`` holds each denied call's reason (call id -> the ``Deny`` reason the model
    reads) and ``args`` each edited call's new arguments (call id -> the ``Edit`` arguments
    the tool ran with); both are empty in logs written before they existed.
    """

    type: Literal["approvals_answered"] = "approvals_answered"
    run_id: str
    claim: str
    decisions: dict[str, str] = Field(default_factory=dict)
    reasons: dict[str, str] = Field(default_factory=dict)
    args: dict[str, Any] = Field(default_factory=dict)


class PermissionDecided(_Event):
    """What the permission pipeline decided for the tool call ``call_id`` (helikon's own).

    Attributes:
        call_id, tool: the call and its tool name.
        decision: ``"allow"`` (the tool ran, perhaps with replaced arguments), ``"deny"``
            (it did not run) or ``"ask"`` (it waits for a person: a paused run).
        stage: the stage that settled it: ``deny_rule``, ``guard``, ``allow_rule``,
            ``mode``, ``policy``, ``default``, or ``hook`` (a ``PreToolUse`` hook refused it).
        rule: the rule, guard, mode or policy class that decided, if any.
        reason: a sentence: the denial's reason, or the ask's prompt, or the rule.
        decided_by: ``"policy"`` (the configuration, asking no one), ``"approval_handler"``
            (an ask the run's approval handler answered), ``"human"`` (an ask answered by a
            decision given on a resume, or a remembered one), ``"hook"`` or ``"pending"``
            (asked; nobody has answered yet).
        args: the arguments a person's ``Edit`` gave on a resume (the call ran with them,
            not with its ``tool_called`` arguments); ``None`` for any other decision.
    """

    type: Literal["permission_decided"] = "permission_decided"
    call_id: str
    tool: str
    decision: Literal["allow", "deny", "ask"]
    stage: str
    rule: str | None = None
    reason: str = ""
    decided_by: Literal["policy", "approval_handler", "human", "hook", "pending"] = "policy"
    args: Any = None


class SessionForked(_Event):
    """This log was forked from ``parent`` (a session id) after its event ``at``: the events
    before this one are a copy of the parent's ``0..at`` (helikon's own; adds nothing to the
    conversation). See :func:`helikon.evidence.fork`."""

    type: Literal["session_forked"] = "session_forked"
    parent: str | None = None
    at: int = Field(ge=0)


SessionEvent: TypeAlias = Annotated[
    UserMessageEvent
    | AssistantMessageEvent
    | ToolCalled
    | ToolReturned
    | HandoffOccurred
    | Compacted
    | ConversationRepaired
    | ApprovalsAnswered
    | PermissionDecided
    | SessionForked,
    Field(discriminator="type"),
]

session_event_adapter: TypeAdapter[SessionEvent] = TypeAdapter(SessionEvent)


def event_to_json(event: SessionEvent) -> str:
    """The compact JSON form every backend stores.

    Raises:
        pydantic_core.PydanticSerializationError: a value (e.g. in ``args``) is not JSON.

    Example:
        >>> ev = user_message("hi", ts=datetime(2025, 1, 2, tzinfo=UTC))
        >>> event_to_json(ev)
        '{"ts":"2025-01-02T00:00:00Z","type":"user_message","content":[{"type":"text","text":"hi"}]}'
    """
    return event.model_dump_json(exclude_none=True)


def event_from_json(text: str | bytes) -> SessionEvent:
    """Parse one stored event.

    Raises:
        pydantic.ValidationError: the text is not a session event.

    Example:
        >>> event_from_json('{"type": "handoff_occurred", "from": "a", "to": "b"}').to_agent
        'b'
    """
    return session_event_adapter.validate_json(text)


def _parts(content: str | Sequence[ContentPart]) -> list[ContentPart]:
    return [TextPart(text=content)] if isinstance(content, str) else list(content)


def user_message(
    content: str | Sequence[ContentPart], *, ts: datetime | None = None
) -> UserMessageEvent:
    """A ``user_message`` event (a string becomes one text part).

    Example:
        >>> user_message("hi").content[0].text
        'hi'
    """
    return UserMessageEvent(content=_parts(content), **_ts(ts))


def assistant_message(
    content: str | Sequence[ContentPart], agent: str | None, *, ts: datetime | None = None
) -> AssistantMessageEvent:
    """An ``assistant_message`` event from ``agent``.

    Example:
        >>> assistant_message("hello", "triage").agent
        'triage'
    """
    return AssistantMessageEvent(content=_parts(content), agent=agent, **_ts(ts))


def tool_called(call_id: str, name: str, args: Any, *, ts: datetime | None = None) -> ToolCalled:
    """A ``tool_called`` event.

    Example:
        >>> tool_called("c1", "calc", {"x": 1}).args
        {'x': 1}
    """
    return ToolCalled(call_id=call_id, name=name, args=args, **_ts(ts))


def tool_returned(
    call_id: str,
    content: str | Sequence[ContentPart],
    *,
    is_error: bool = False,
    ts: datetime | None = None,
) -> ToolReturned:
    """A ``tool_returned`` event (a string becomes one text part).

    Example:
        >>> tool_returned("c1", "42").call_id
        'c1'
    """
    return ToolReturned(call_id=call_id, content=_parts(content), is_error=is_error, **_ts(ts))


def handoff_occurred(
    from_agent: str, to_agent: str, *, ts: datetime | None = None
) -> HandoffOccurred:
    """A ``handoff_occurred`` event.

    Example:
        >>> handoff_occurred("triage", "billing").model_dump(exclude={"ts"})
        {'type': 'handoff_occurred', 'from': 'triage', 'to': 'billing'}
    """
    return HandoffOccurred(from_agent=from_agent, to_agent=to_agent, **_ts(ts))


def compacted(summary: str, original_count: int, *, ts: datetime | None = None) -> Compacted:
    """A ``compacted`` marker summarising the ``original_count`` events before it.

    Example:
        >>> compacted("the user asked about billing", 4).original_count
        4
    """
    return Compacted(summary=summary, original_count=original_count, **_ts(ts))


def _ts(ts: datetime | None) -> dict[str, Any]:
    return {} if ts is None else {"ts": ts}
