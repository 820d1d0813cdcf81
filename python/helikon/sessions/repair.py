"""Repair a session's conversation when it is loaded, and record every fix in the log.

The rules live in :mod:`helikon.core.repair` (the loop also applies them before every model
call). Here they meet the log: :func:`load_conversation` appends each repair as a
:class:`~helikon.sessions.events.ConversationRepaired` event, and :func:`project` applies
those events at their place in the log, so once recorded a repair holds for every later
load. A session left with an interrupted tool call (field case BR-12) loads as a valid
conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from helikon.core import events as agent_events
from helikon.core import repair as rules
from helikon.core.items import Item
from helikon.core.repair import INTERRUPTED_RESULT
from helikon.sessions.events import ConversationRepaired

if TYPE_CHECKING:
    from helikon.sessions.protocol import Session

__all__ = [
    "INTERRUPTED_RESULT",
    "find_repairs",
    "load_conversation",
    "repair_conversation",
    "to_session_event",
]


def to_session_event(repair: agent_events.ConversationRepaired) -> ConversationRepaired:
    """The log entry recording ``repair`` (the same fields, stamped with ``ts``)."""
    return ConversationRepaired(
        repair=repair.repair,
        call_id=repair.call_id,
        content=repair.content,
        args=repair.args,
        detail=repair.detail,
    )


def find_repairs(items: Sequence[Item]) -> list[ConversationRepaired]:
    """The repairs ``items`` needs, as log entries, in the order they apply.

    Example:
        >>> from helikon.core.items import ToolCall, UserMessage
        >>> convo = [UserMessage.text("clean up"), ToolCall(call_id="tu_9", name="Bash")]
        >>> [(r.type, r.repair, r.call_id) for r in find_repairs(convo)]
        [('conversation_repaired', 'tool_result_synthesized', 'tu_9')]
    """
    return [to_session_event(r) for r in rules.find_repairs(items)]


def repair_conversation(
    items: Sequence[Item],
) -> tuple[list[Item], list[ConversationRepaired]]:
    """``items`` made provider-valid, and the log entries recording the repairs.

    Invariant: ``project(log + repairs) == repaired`` for any log projecting to ``items``,
    so appending the repairs to the session makes the fix permanent.

    Example:
        >>> from helikon.core.items import ToolCall, UserMessage
        >>> convo = [UserMessage.text("clean up"), ToolCall(call_id="tu_9", name="Bash")]
        >>> fixed, repairs = repair_conversation(convo)
        >>> [i.type for i in fixed], fixed[2].is_error
        (['user_message', 'tool_call', 'tool_result'], True)
    """
    fixed, repairs = rules.repair_conversation(items)
    return fixed, [to_session_event(r) for r in repairs]


async def load_conversation(session: Session) -> list[Item]:
    """The session's conversation, repaired; repairs are appended to the session first.

    Use this instead of ``session.snapshot()`` before a run. A conversation that needs no
    repair costs one ``snapshot()`` and writes nothing.

    Raises:
        SessionError: reading the session or recording a repair failed.

    Example:
        >>> import asyncio
        >>> from helikon.sessions import MemorySession, tool_called, user_message
        >>> s = MemorySession()
        >>> _ = asyncio.run(s.append([user_message("go"), tool_called("c1", "Bash", {})]))
        >>> [i.type for i in asyncio.run(load_conversation(s))]
        ['user_message', 'tool_call', 'tool_result']
    """
    items = await session.snapshot()
    fixed, repairs = repair_conversation(items)
    if repairs:
        await session.append(repairs)
    return fixed
