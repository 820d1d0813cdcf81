"""Fold a session's event log into the conversation a provider reads.

``project`` walks the log in order:

* ``user_message`` -> a user item; ``assistant_message`` -> an assistant item (agent kept);
  ``tool_called`` -> a tool call; ``tool_returned`` -> a tool result.
* ``handoff_occurred`` -> nothing (audit only).
* ``compacted(summary, n)`` -> the items of the last ``min(n, tracked)`` tracked events are
  removed and those events forgotten, then one system item holds the summary. The marker
  itself is tracked as contributing that item, so ``n`` counts *events*, a later compaction
  can swallow an earlier summary, and ``n = 0`` only appends the summary.
* ``permission_decided`` with ``args`` (a person's ``Edit`` on a resume) -> the call's
  arguments become those it ran with, so the history never shows the model's original
  arguments answered by the edited call's result; other decisions change nothing.
* ``conversation_repaired`` -> the recorded fix is applied to the items so far
  (:mod:`helikon.core.repair`); the event contributes no item of its own.

Content parts and tool arguments are copied verbatim; timestamps play no part.
"""

from __future__ import annotations

from collections.abc import Iterable

from helikon.core.items import (
    AssistantMessage,
    Item,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from helikon.core.repair import Entry, apply_repair
from helikon.sessions.events import (
    AssistantMessageEvent,
    Compacted,
    ConversationRepaired,
    PermissionDecided,
    SessionEvent,
    ToolCalled,
    ToolReturned,
    UserMessageEvent,
)

__all__ = ["event_item", "project"]


def event_item(event: SessionEvent) -> Item | None:
    """The one item an event contributes on its own, or ``None`` (handoffs, repairs).

    A ``compacted`` event yields its summary as a system item.

    Example:
        >>> from helikon.sessions.events import tool_called
        >>> event_item(tool_called("c1", "calc", {"x": 1}))
        ToolCall(type='tool_call', call_id='c1', name='calc', args={'x': 1}, provider_data=None)
    """
    if isinstance(event, UserMessageEvent):
        return UserMessage.model_construct(type="user_message", content=list(event.content))
    if isinstance(event, AssistantMessageEvent):
        return AssistantMessage.model_construct(
            type="assistant_message",
            content=list(event.content),
            agent=event.agent,
            provider_data=event.provider_data,
        )
    if isinstance(event, ToolCalled):
        return ToolCall.model_construct(
            type="tool_call",
            call_id=event.call_id,
            name=event.name,
            args=event.args,
            provider_data=event.provider_data,
        )
    if isinstance(event, ToolReturned):
        return ToolResult.model_construct(
            type="tool_result",
            call_id=event.call_id,
            content=list(event.content),
            is_error=event.is_error,
        )
    if isinstance(event, Compacted):
        return SystemMessage.model_construct(type="system", content=[TextPart(text=event.summary)])
    return None


def project(events: Iterable[SessionEvent]) -> list[Item]:
    """The conversation ``events`` describe (see the module docstring for the rules).

    Example:
        >>> from helikon.sessions.events import compacted, user_message, assistant_message
        >>> log = [user_message("u1"), assistant_message("a1", "x"), compacted("S", 2),
        ...        user_message("u2")]
        >>> [(i.type, i.content[0].text) for i in project(log)]
        [('system', 'S'), ('user_message', 'u2')]
    """
    entries: list[Entry] = []
    tracked: list[int] = []
    for index, event in enumerate(events):
        if isinstance(event, Compacted):
            take = min(event.original_count, len(tracked))
            if take:
                # owners never decrease along the entries, and every event from the cutoff
                # on is either among the forgotten ones or owns no item any more
                cutoff = tracked[-take]
                del tracked[-take:]
                while entries and entries[-1][0] >= cutoff:
                    entries.pop()
        elif isinstance(event, ConversationRepaired):
            apply_repair(entries, event)
        elif isinstance(event, PermissionDecided) and event.args is not None:
            _edit_call(entries, event.call_id, event.args)
        item = event_item(event)
        if item is not None:
            entries.append((index, item))
        tracked.append(index)
    return [item for _, item in entries]


def _edit_call(entries: list[Entry], call_id: str, args: object) -> None:
    """Give the latest call ``call_id`` among ``entries`` the arguments ``args``."""
    for at in range(len(entries) - 1, -1, -1):
        owner, item = entries[at]
        if isinstance(item, ToolCall) and item.call_id == call_id:
            entries[at] = (owner, item.model_copy(update={"args": args}))
            return
