"""Turn a run's agent events into session events (run-lifecycle persistence)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from helikon.core.events import (
    AgentEvent,
    AgentUpdated,
    ConversationRepaired,
    HandoffItem,
    MessageOutput,
    RunStarted,
    ToolCallItem,
    ToolOutputItem,
)
from helikon.core.items import (
    AssistantMessage,
    Item,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from helikon.sessions.events import (
    AssistantMessageEvent,
    HandoffOccurred,
    PermissionDecided,
    SessionEvent,
    ToolCalled,
    ToolReturned,
    UserMessageEvent,
)
from helikon.sessions.events import ConversationRepaired as SessionRepair
from helikon.sessions.repair import to_session_event

__all__ = ["DID_NOT_COMPLETE", "SessionRecorder"]

DID_NOT_COMPLETE = (
    "Tool call did not complete: the run ended before it returned a result. "
    "The call may or may not have taken effect."
)
"""Text of the result :meth:`SessionRecorder.drain` synthesizes for an unanswered call."""


class SessionRecorder:
    """Accumulates one run's session events; the runner appends what :meth:`drain` returns.

    * :meth:`record_input` records the run's new input items first (system items are
      skipped: instructions are not conversation; an assistant item without an agent is
      attributed to the tracked agent).
    * :meth:`observe` turns ``MessageOutput``, ``ToolCallItem``, ``ToolOutputItem``,
      ``HandoffItem`` and ``ConversationRepaired`` (a fix the loop made before a model
      call) into events; ``RunStarted`` and ``AgentUpdated`` only change the tracked agent
      (initially ``root_agent``). Other events are ignored.
    * :meth:`record` adds any other event.
    * :meth:`drain` returns the events and clears the buffer, first synthesizing an error
      ``tool_returned`` for every call without a result, so the log always projects to a
      provider-valid conversation even when the run was cancelled mid-tool.

    Args:
        root_agent: the name of the run's root agent.

    Example:
        >>> from helikon.core.events import ToolCallItem
        >>> from helikon.core.items import ToolCall, UserMessage
        >>> rec = SessionRecorder("root")
        >>> rec.record_input([UserMessage.text("hi")])
        >>> rec.observe(ToolCallItem(item=ToolCall(call_id="c1", name="slow")))
        >>> [e.type for e in rec.drain()]
        ['user_message', 'tool_called', 'tool_returned']
    """

    def __init__(self, root_agent: str, edited: Mapping[str, Any] | None = None) -> None:
        """``edited``: call id -> the arguments a person's ``Edit`` gave on a resume; each
        such call's ``permission_decided`` event records them (``args``)."""
        self.agent = root_agent
        self._edited = dict(edited or {})
        self._events: list[SessionEvent] = []
        self._open_calls: dict[str, None] = {}

    def __len__(self) -> int:
        return len(self._events)

    def record_input(self, items: Iterable[Item]) -> None:
        """Record the run's input items (call before observing the run)."""
        for item in items:
            if isinstance(item, UserMessage):
                self._add(UserMessageEvent(content=list(item.content)))
            elif isinstance(item, AssistantMessage):
                self._add(self._assistant(item))
            elif isinstance(item, ToolCall):
                self._add(_called(item, None, None))
            elif isinstance(item, ToolResult):
                self._add(_returned(item))

    def observe(self, event: AgentEvent) -> None:
        """Fold one agent event in."""
        if isinstance(event, MessageOutput):
            self._add(self._assistant(event.item, event.model, event.response_id))
        elif isinstance(event, ToolCallItem):
            self._add(_called(event.item, event.model, event.response_id))
        elif isinstance(event, ToolOutputItem):
            self._add(_returned(event.item))
        elif isinstance(event, HandoffItem):
            self._add(HandoffOccurred(from_agent=event.from_agent, to_agent=event.to_agent))
        elif isinstance(event, ConversationRepaired):
            self._add(to_session_event(event))
        elif isinstance(event, RunStarted | AgentUpdated):
            self.agent = event.agent

    def record(self, event: SessionEvent) -> None:
        """Record an event the agent stream does not carry."""
        self._add(event)

    def record_decision(self, fields: dict[str, Any]) -> None:
        """Record a permission decision the tool pipeline reported (the fields of a
        :class:`~helikon.sessions.events.PermissionDecided`); the run context's
        ``decision_log``."""
        event = PermissionDecided.model_validate(fields)
        if event.call_id in self._edited and event.args is None:
            event = event.model_copy(update={"args": self._edited[event.call_id]})
        # Calls of one turn are decided concurrently (read-only ones run together), so
        # decisions arrive in completion order; they are kept in the calls' order, so a log
        # (and its replay) does not depend on timing.
        rank = self._rank(event)
        at = len(self._events)
        while at > 0:
            before = self._events[at - 1]
            if not isinstance(before, PermissionDecided) or self._rank(before) <= rank:
                break
            at -= 1
        self._events.insert(at, event)

    def _rank(self, event: PermissionDecided) -> int:
        """The position of the decided call among the open calls (unknown ones last)."""
        for i, call_id in enumerate(self._open_calls):
            if call_id == event.call_id:
                return i
        return len(self._open_calls)

    def pending(self) -> list[SessionEvent]:
        """The events recorded so far (not cleared, no results synthesized)."""
        return list(self._events)

    def drain(self, keep_open: Collection[str] = ()) -> list[SessionEvent]:
        """The recorded events plus a synthesized result per unanswered call; clears them.

        Calls in ``keep_open`` (a paused run's waiting calls) get no result: they are not
        over, a resume answers them.
        """
        for call_id in self._open_calls:
            if call_id in keep_open:
                continue
            self._events.append(
                ToolReturned(
                    call_id=call_id, content=[TextPart(text=DID_NOT_COMPLETE)], is_error=True
                )
            )
        out, self._events, self._open_calls = self._events, [], {}
        return out

    def _assistant(
        self, item: AssistantMessage, model: str | None = None, response_id: str | None = None
    ) -> AssistantMessageEvent:
        return AssistantMessageEvent(
            content=list(item.content),
            agent=item.agent if item.agent is not None else self.agent,
            provider_data=item.provider_data,
            model=model,
            response_id=response_id,
        )

    def _add(self, event: SessionEvent) -> None:
        if isinstance(event, ToolCalled):
            self._open_calls[event.call_id] = None
        elif isinstance(event, ToolReturned) or (
            isinstance(event, SessionRepair) and event.repair == "tool_result_synthesized"
        ):
            self._open_calls.pop(event.call_id or "", None)
        self._events.append(event)


def _called(item: ToolCall, model: str | None, response_id: str | None) -> ToolCalled:
    return ToolCalled(
        call_id=item.call_id,
        name=item.name,
        args=item.args,
        provider_data=item.provider_data,
        model=model,
        response_id=response_id,
    )


def _returned(item: ToolResult) -> ToolReturned:
    return ToolReturned(call_id=item.call_id, content=list(item.content), is_error=item.is_error)
