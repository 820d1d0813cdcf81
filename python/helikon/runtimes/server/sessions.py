"""Session affinity: the ``X-Session-Id`` header picks a session; runs on one session queue.

A *session factory* maps a session id to a :class:`~helikon.sessions.Session` (the spec's
``SessionProvider``); the header is read as UTF-8 (1 to 256 characters). The default,
:class:`MemorySessions`, keeps one :class:`~helikon.sessions.MemorySession` per id for the
life of the process. A request without the header runs on a fresh anonymous
``MemorySession`` that is never stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TypeAlias

from helikon.core.cancel import CancellationToken
from helikon.errors import ServerError
from helikon.runtimes.server.unavailable import backend_unavailable
from helikon.sessions import MemorySession, Session

__all__ = [
    "MemorySessions",
    "SessionFactory",
    "SessionLocks",
    "resolve_session",
    "session_id_header",
]

SessionFactory: TypeAlias = Callable[[str], Session | Awaitable[Session]]
"""``factory(session_id) -> Session`` (or an awaitable of one), called for every request
that carries ``X-Session-Id``; e.g. ``lambda sid: SqliteSession.open(pool, sid)``."""

SESSION_HEADER = "x-session-id"
MAX_SESSION_ID = 256


class MemorySessions:
    """The default session factory: one shared :class:`MemorySession` per session id.

    Sessions live as long as this object (no eviction): for long-lived servers with many
    conversations, pass a durable factory instead.

    Example:
        >>> sessions = MemorySessions()
        >>> sessions("user-1") is sessions("user-1")
        True
    """

    def __init__(self) -> None:
        self.sessions: dict[str, MemorySession] = {}

    def __call__(self, session_id: str) -> MemorySession:
        session = self.sessions.get(session_id)
        if session is None:
            session = self.sessions[session_id] = MemorySession()
        return session


def session_id_header(headers: Mapping[str, str]) -> str | None:
    """The ``X-Session-Id`` header decoded as UTF-8 (``None`` when absent).

    ASGI servers hand header values over as bytes and Starlette decodes them as latin-1, so
    ``héllo`` sent as UTF-8 would read ``hÃ©llo``; the bytes are decoded again as UTF-8.

    Raises:
        ServerError: 400 ``invalid_request`` when the value is not UTF-8, is empty or is longer
            than :data:`MAX_SESSION_ID` characters.
    """
    raw = headers.get(SESSION_HEADER)
    if raw is None:
        return None
    try:
        session_id = raw.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        raise _bad_session_id("X-Session-Id must be UTF-8 text") from None
    if not 0 < len(session_id) <= MAX_SESSION_ID:
        raise _bad_session_id(
            f"X-Session-Id must be 1 to {MAX_SESSION_ID} characters, got {len(session_id)}"
        )
    return session_id


def _bad_session_id(message: str) -> ServerError:
    return ServerError(
        message, status=400, code="invalid_request", details={"field": "X-Session-Id"}
    )


async def resolve_session(factory: SessionFactory, session_id: str | None) -> Session:
    """The session for ``session_id`` (a fresh anonymous one for ``None``).

    Raises:
        ServerError: ``session_unavailable``: 503 when the backend cannot be reached or its
            pool is exhausted (:func:`backend_unavailable`), else 500; also 500 when the
            factory did not return a Session. The factory's own ``ServerError`` passes
            through.
    """
    if session_id is None:
        return MemorySession()
    try:
        made = factory(session_id)
        session = await made if inspect.isawaitable(made) else made
    except ServerError:
        raise
    except Exception as exc:
        raise ServerError(
            f"could not open session {session_id!r}: {type(exc).__name__}: {exc}",
            status=503 if backend_unavailable(exc) else 500,
            code="session_unavailable",
        ) from exc
    if not isinstance(session, Session):
        raise ServerError(
            f"the session factory returned {type(session).__name__} for {session_id!r}, "
            "not a Session (MemorySession, SqliteSession, ...)",
            code="session_unavailable",
        )
    return session


class SessionLocks:
    """One lock per session id, so runs on one session run one after another (FIFO)."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def hold(
        self,
        session_id: str | None,
        cancel: CancellationToken,
        on_wait: Callable[[], None] | None = None,
    ) -> AsyncIterator[bool]:
        """Hold ``session_id``'s lock; yields False when ``cancel`` fired while waiting.
        ``on_wait()`` is called first when another run holds the lock."""
        if session_id is None:
            yield not cancel.cancelled
            return
        lock, users = self._locks.get(session_id, (asyncio.Lock(), 0))
        if on_wait is not None and users > 0:
            on_wait()
        self._locks[session_id] = (lock, users + 1)
        try:
            acquired = await _acquire(lock, cancel)
            try:
                yield acquired
            finally:
                if acquired:
                    lock.release()
        finally:
            lock, users = self._locks[session_id]
            if users <= 1:
                del self._locks[session_id]
            else:
                self._locks[session_id] = (lock, users - 1)


async def _acquire(lock: asyncio.Lock, cancel: CancellationToken) -> bool:
    """Acquire ``lock`` unless ``cancel`` fires first; never leaves it held on failure."""
    if cancel.cancelled:
        return False
    acquiring = asyncio.ensure_future(lock.acquire())
    cancelled = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait([acquiring, cancelled], return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        cancelled.cancel()
        if acquiring.done() and not acquiring.cancelled():
            lock.release()
        else:
            acquiring.cancel()
        raise
    cancelled.cancel()
    if not acquiring.done():
        acquiring.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await acquiring
        if acquiring.cancelled():
            return False
    if cancel.cancelled:
        lock.release()
        return False
    return True
