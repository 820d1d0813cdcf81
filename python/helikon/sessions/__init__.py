"""Sessions: conversation persistence as an append-only event log.

A :class:`Session` stores :data:`SessionEvent` entries; :func:`project` folds them into the
conversation a provider reads. Backends:

* :class:`MemorySession`: in process memory (tests, ephemeral runs).
* :class:`SqliteSession` (extra ``helikon[sqlite]``): many sessions in one SQLite file.
* :class:`RedisSession` (extra ``helikon[redis]``): a Redis Stream per session.
* :class:`PostgresSession` (extra ``helikon[postgres]``): a JSONB table, asyncpg pool.
* :class:`CompactingSession`: wraps any of them and summarises long conversations.

The runner records a run with :class:`SessionRecorder` and loads history with
:func:`load_conversation`, which also repairs a conversation a crash left invalid.
The durable backends import lazily, so ``helikon.sessions`` works without their extras.

Example:
    >>> import asyncio
    >>> from helikon.sessions import MemorySession, user_message, assistant_message
    >>> s = MemorySession()
    >>> asyncio.run(s.append([user_message("hi"), assistant_message("hello", "bot")]))
    [0, 1]
    >>> [i.type for i in asyncio.run(s.snapshot())]
    ['user_message', 'assistant_message']
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from helikon.core.peer_imports import peer_import
from helikon.errors import SessionBackendError, SessionError, SessionOther, SessionUnavailable
from helikon.sessions.compacting import DEFAULT_COMPACTION_PROMPT, CompactingSession
from helikon.sessions.events import (
    AssistantMessageEvent,
    Compacted,
    ConversationRepaired,
    HandoffOccurred,
    PermissionDecided,
    RepairKind,
    SequenceId,
    SessionEvent,
    SessionForked,
    ToolCalled,
    ToolReturned,
    UserMessageEvent,
    assistant_message,
    compacted,
    event_from_json,
    event_to_json,
    handoff_occurred,
    session_event_adapter,
    tool_called,
    tool_returned,
    user_message,
)
from helikon.sessions.memory import MemorySession
from helikon.sessions.projection import event_item, project
from helikon.sessions.protocol import Session
from helikon.sessions.recorder import DID_NOT_COMPLETE, SessionRecorder
from helikon.sessions.repair import (
    INTERRUPTED_RESULT,
    find_repairs,
    load_conversation,
    repair_conversation,
)
from helikon.sessions.tail import last_items
from helikon.sessions.tokens import HeuristicTokenCounter, TokenCounter

if TYPE_CHECKING:
    from helikon.sessions.postgres import PostgresSession
    from helikon.sessions.redis import RedisSession
    from helikon.sessions.sqlite import SqlitePool, SqliteSession

__all__ = [
    "DEFAULT_COMPACTION_PROMPT",
    "DID_NOT_COMPLETE",
    "INTERRUPTED_RESULT",
    "AssistantMessageEvent",
    "Compacted",
    "CompactingSession",
    "ConversationRepaired",
    "HandoffOccurred",
    "HeuristicTokenCounter",
    "MemorySession",
    "PermissionDecided",
    "PostgresSession",
    "RedisSession",
    "RepairKind",
    "SequenceId",
    "Session",
    "SessionBackendError",
    "SessionError",
    "SessionEvent",
    "SessionForked",
    "SessionOther",
    "SessionRecorder",
    "SessionUnavailable",
    "SqlitePool",
    "SqliteSession",
    "TokenCounter",
    "ToolCalled",
    "ToolReturned",
    "UserMessageEvent",
    "assistant_message",
    "compacted",
    "event_from_json",
    "event_item",
    "event_to_json",
    "find_repairs",
    "handoff_occurred",
    "last_items",
    "load_conversation",
    "project",
    "repair_conversation",
    "session_event_adapter",
    "tool_called",
    "tool_returned",
    "user_message",
]

_LAZY = {
    "SqlitePool": "helikon.sessions.sqlite",
    "SqliteSession": "helikon.sessions.sqlite",
    "RedisSession": "helikon.sessions.redis",
    "PostgresSession": "helikon.sessions.postgres",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise peer_import("helikon.sessions", name)
    return getattr(importlib.import_module(module), name)
