"""In-memory :class:`~helikon.sessions.Session`, for tests and ephemeral runs."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from helikon.core.items import Item
from helikon.sessions._codec import check_since, decode_all, encode_all
from helikon.sessions.chain import link_all
from helikon.sessions.events import SequenceId, SessionEvent
from helikon.sessions.projection import project
from helikon.sessions.tail import last_items

__all__ = ["MemorySession"]


class MemorySession:
    """One session's log in process memory. One instance is one session (no id).

    Events are stored in their JSON form, exactly as the durable backends store them, so
    an event that would not survive SQLite or PostgreSQL fails here too, and later changes
    to an appended event's (mutable) ``args`` do not leak into the log. Safe to share
    between tasks and threads.

    Example:
        >>> import asyncio
        >>> from helikon.sessions import user_message
        >>> s = MemorySession()
        >>> asyncio.run(s.append([user_message("hi"), user_message("again")]))
        [0, 1]
        >>> [i.type for i in asyncio.run(s.snapshot())]
        ['user_message', 'user_message']
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: list[str] = []
        self._hashes: list[bytes | None] = []

    def __len__(self) -> int:
        return len(self._rows)

    async def append(self, events: Sequence[SessionEvent]) -> list[SequenceId]:
        """Append ``events``; all or nothing.

        Raises:
            SessionOther: an event cannot be serialized (nothing is appended).
        """
        rows = encode_all(events)
        with self._lock:
            first = len(self._rows)
            prev = self._hashes[-1] if self._hashes else None
            self._hashes.extend(link_all(prev, first, rows))
            self._rows.extend(rows)
        return [SequenceId(first + i) for i in range(len(rows))]

    async def events(self, since: SequenceId | None = None) -> list[SessionEvent]:
        """The events after ``since`` (exclusive), or all.

        Raises:
            ConfigError: ``since`` is negative.
        """
        start = check_since(since) + 1
        with self._lock:
            rows = self._rows[start:]
        return decode_all([(f"memory[{start + i}]", row) for i, row in enumerate(rows)])

    async def chain_records(self) -> list[tuple[int, str, bytes | None]]:
        """Every ``(sequence, payload, hash)``, for :func:`helikon.sessions.chain.verify`."""
        with self._lock:
            return [
                (i, r, h) for i, (r, h) in enumerate(zip(self._rows, self._hashes, strict=True))
            ]

    async def snapshot(self, last: int | None = None) -> list[Item]:
        """The projected conversation, or its ``last`` items (see
        :func:`helikon.sessions.last_items`).

        Raises:
            ConfigError: ``last`` is not an int >= 0.
        """
        return last_items(project(await self.events()), last, where="MemorySession.snapshot")
