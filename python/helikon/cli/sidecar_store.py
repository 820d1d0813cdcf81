"""A Redis or PostgreSQL session the sidecar's ``[session]`` names by URL.

``helikon run``, ``repl`` and ``resume`` take a session synchronously, before their event loop
runs, and keep no connection between commands. :class:`StoreSession` therefore connects for
each operation (``append``, ``events``, ``snapshot``) on the loop that runs it and closes the
connection after it: nothing is left open when the command ends, and a REPL that runs each turn
on its own loop works too. PostgreSQL's schema is migrated at the first operation of the
process (idempotent, under the backend's advisory lock).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal
from urllib.parse import urlparse

from helikon.core.items import Item
from helikon.errors import SessionUnavailable
from helikon.sessions.events import SequenceId, SessionEvent

__all__ = ["StoreSession"]


class StoreSession:
    """A session in Redis (``redis://``, ``rediss://``) or PostgreSQL (``postgresql://``).

    Args:
        backend: ``"redis"`` or ``"postgres"``.
        url: the server's URL.
        session_id: the conversation.
        namespace: Redis: the key prefix (``helikon``); PostgreSQL: the schema (``public``).

    Every operation raises what the backend's session raises
    (:class:`~helikon.errors.SessionUnavailable` when the server cannot be reached).
    """

    def __init__(
        self, backend: Literal["redis", "postgres"], url: str, session_id: str, namespace: str
    ) -> None:
        self.backend = backend
        self.url = url
        self.namespace = namespace
        self._id = session_id
        self._migrated = False

    def __repr__(self) -> str:
        return f"StoreSession({self.backend!r}, {self._id!r})"

    @property
    def session_id(self) -> str:
        """The id this instance reads and writes."""
        return self._id

    async def append(self, events: Sequence[SessionEvent]) -> list[SequenceId]:
        """Append ``events`` (all or nothing)."""
        async with self._session() as session:
            ids: list[SequenceId] = await session.append(events)
            return ids

    async def events(self, since: SequenceId | None = None) -> list[SessionEvent]:
        """The events after ``since`` (all of them when ``None``)."""
        async with self._session() as session:
            found: list[SessionEvent] = await session.events(since)
            return found

    async def snapshot(self, last: int | None = None) -> list[Item]:
        """The conversation's items (the last ``last`` of them when given)."""
        async with self._session() as session:
            items: list[Item] = await session.snapshot(last)
            return items

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[Any]:
        if self.backend == "redis":
            from helikon.sessions.redis import RedisSession

            redis_session = await RedisSession.connect(self.url, self._id, prefix=self.namespace)
            try:
                yield redis_session
            finally:
                await redis_session.client.aclose()
            return
        import asyncpg  # type: ignore[import-untyped, import-not-found, unused-ignore]

        from helikon.sessions.postgres import PostgresSession

        try:
            pool = await asyncpg.create_pool(self.url, min_size=1, max_size=1)
        except (OSError, asyncpg.PostgresError) as exc:
            host = urlparse(self.url).hostname  # not the URL: it may hold a password
            raise SessionUnavailable(f"postgres: connect to {host}: {exc}") from exc
        try:
            if not self._migrated:
                await PostgresSession.migrate(pool, schema=self.namespace)
                self._migrated = True
            yield PostgresSession(pool, self._id, schema=self.namespace)
        finally:
            await pool.close()
