"""SQLite :class:`~helikon.sessions.Session` backend (extra ``helikon[sqlite]``, aiosqlite).

Many sessions share one database file and one :class:`SqlitePool`; rows are isolated by
``session_id``. Connections run in WAL mode with ``synchronous = NORMAL`` (a power loss
may drop the newest commits, never corrupt the file) and a ``busy_timeout``.

An append is one ``INSERT ... SELECT ... RETURNING`` statement that allocates the next
sequence numbers with ``MAX(sequence) + 1`` and inserts the whole batch under a
``(session_id, sequence)`` primary key. A write statement takes SQLite's write lock before
it reads, so writers in any number of tasks or processes never produce gaps or duplicates;
and being one statement it is one trip to aiosqlite's worker thread and holds the write
lock only while it runs. Batches over 200 events (or SQLite older than 3.35, which lacks
``RETURNING``) use an explicit ``BEGIN IMMEDIATE`` transaction instead, with the same
guarantees. ``busy_timeout`` caps the wait for the write lock: under sustained contention
the last writer waits out the whole backlog, so size it as writers x appends x the worst
transaction time. An append that exhausts it fails with ``SessionBackendError("database
is locked")`` and persists nothing; the session stays usable.

Example:
    >>> import asyncio, tempfile, os
    >>> from helikon.sessions import user_message
    >>> async def demo(path):
    ...     async with await SqlitePool.connect(path) as pool:
    ...         session = await SqliteSession.open(pool, "user-42")
    ...         await session.append([user_message("hi")])
    ...         return [e.type for e in await session.events()]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     asyncio.run(demo(os.path.join(d, "sessions.db")))
    ['user_message']
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from os import PathLike
from types import TracebackType
from typing import Literal

try:
    import aiosqlite
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "helikon.sessions.sqlite needs the 'sqlite' extra: pip install 'helikon[sqlite]'"
    ) from exc

from helikon.core.items import Item
from helikon.errors import (
    ConfigError,
    SessionBackendError,
    SessionError,
    SessionUnavailable,
)
from helikon.sessions._codec import check_since, decode, encode_all
from helikon.sessions._shield import complete
from helikon.sessions.events import SequenceId, SessionEvent
from helikon.sessions.projection import project

__all__ = ["SqlitePool", "SqliteSession"]

_MIGRATIONS: list[tuple[int, str, list[str]]] = [
    (
        1,
        "session_events",
        [
            "CREATE TABLE IF NOT EXISTS session_events ("
            " session_id TEXT NOT NULL,"
            " sequence INTEGER NOT NULL,"
            " kind TEXT NOT NULL,"
            " payload TEXT NOT NULL,"
            " ts TEXT NOT NULL,"
            " PRIMARY KEY (session_id, sequence)"
            ") WITHOUT ROWID",
        ],
    ),
]
_LATEST = _MIGRATIONS[-1][0]

# The largest batch appended with one statement (the session id plus 4 parameters per
# event: 801 at most), below SQLite's parameter limit (999 before 3.32, 32766 since).
_ONE_STATEMENT_MAX = 200
_HAS_RETURNING = sqlite3.sqlite_version_info >= (3, 35, 0)


def _insert_sql(n: int) -> str:
    # ?1 is the session id; the n (offset, kind, payload, ts) tuples follow as ?2, ?3, ...
    values = ",".join(["(?,?,?,?)"] * n)
    return (
        "INSERT INTO session_events (session_id, sequence, kind, payload, ts)"
        " SELECT ?1, b.first + v.column1, v.column2, v.column3, v.column4"
        " FROM (SELECT COALESCE(MAX(sequence), -1) + 1 AS first FROM session_events"
        " WHERE session_id = ?1) AS b,"
        f" (VALUES {values}) AS v"
        " RETURNING sequence"
    )


def _error(exc: BaseException, doing: str) -> SessionError:
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and "unable to open" in text:
        return SessionUnavailable(f"sqlite: {doing}: {text}")
    if isinstance(exc, ValueError) and "no active connection" in text:
        return SessionUnavailable(f"sqlite: {doing}: the connection is closed")
    return SessionBackendError(f"sqlite: {doing}: {text}")


def _probe(path: str) -> None:
    sqlite3.connect(path).close()


class SqlitePool:
    """A small pool of aiosqlite connections to one database file.

    Every connection is set up with ``journal_mode = WAL``, the given ``synchronous`` level
    and ``busy_timeout``. Use :meth:`connect` to build one and close it (or use it as an
    async context manager) when done.

    Args:
        path: the database file (``":memory:"`` gives a private in-memory database and
            forces one connection).
        max_connections: how many connections may be open at once.
        busy_timeout: seconds a writer waits for SQLite's write lock before failing.
        synchronous: ``"NORMAL"`` (with WAL: durable up to a power loss) or ``"FULL"``.
    """

    def __init__(
        self,
        path: str | PathLike[str],
        *,
        max_connections: int = 4,
        busy_timeout: float = 30.0,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
    ) -> None:
        if max_connections < 1:
            raise ConfigError(
                f"SqlitePool(max_connections=...) must be >= 1, got {max_connections}"
            )
        if busy_timeout < 0:
            raise ConfigError(f"SqlitePool(busy_timeout=...) must be >= 0 s, got {busy_timeout}")
        if synchronous not in ("NORMAL", "FULL"):
            raise ConfigError(
                f"SqlitePool(synchronous=...) must be 'NORMAL' or 'FULL', got {synchronous!r}"
            )
        self.path = str(path)
        self.max_connections = 1 if self.path == ":memory:" else max_connections
        self.busy_timeout = busy_timeout
        self.synchronous = synchronous
        self._idle: list[aiosqlite.Connection] = []
        self._open: set[aiosqlite.Connection] = set()
        self._slots = asyncio.Semaphore(self.max_connections)
        self._closed = False

    def __repr__(self) -> str:
        return f"SqlitePool({self.path!r}, max_connections={self.max_connections})"

    @classmethod
    async def connect(
        cls,
        path: str | PathLike[str],
        *,
        max_connections: int = 4,
        busy_timeout: float = 30.0,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
    ) -> SqlitePool:
        """Open a pool (one connection is opened now to check the file).

        Raises:
            SessionUnavailable: the file cannot be opened.
            ConfigError: a bad argument.
        """
        pool = cls(
            path,
            max_connections=max_connections,
            busy_timeout=busy_timeout,
            synchronous=synchronous,
        )
        async with pool.acquire():
            pass
        return pool

    async def __aenter__(self) -> SqlitePool:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close every connection; later use raises ``SessionUnavailable``."""
        self._closed = True
        conns, self._idle = list(self._open), []
        self._open.clear()
        for conn in conns:
            with suppress(Exception):  # closing is best-effort
                await conn.close()

    async def _new(self) -> aiosqlite.Connection:
        try:
            if self.path != ":memory:":
                # fail here rather than in aiosqlite, whose failed connect leaves its worker
                # thread to report to a loop that may be gone by then
                await asyncio.to_thread(_probe, self.path)
            conn = await aiosqlite.connect(self.path, isolation_level=None)
        except (sqlite3.Error, OSError) as exc:
            raise _error(exc, f"open {self.path!r}") from exc
        try:
            await conn.execute("PRAGMA journal_mode = WAL")
            await conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            await conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        except sqlite3.Error as exc:
            await conn.close()
            raise _error(exc, f"configure {self.path!r}") from exc
        self._open.add(conn)
        return conn

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[aiosqlite.Connection]:
        """Borrow a connection (autocommit mode: issue ``BEGIN`` yourself).

        Raises:
            SessionUnavailable: the pool is closed or the file cannot be opened.
        """
        if self._closed:
            raise SessionUnavailable(f"sqlite: the pool for {self.path!r} is closed")
        async with self._slots:
            conn = self._idle.pop() if self._idle else await self._new()
            healthy = False
            try:
                yield conn
                healthy = True
            finally:
                if not healthy and conn.in_transaction:
                    with suppress(Exception):
                        await conn.execute("ROLLBACK")
                if self._closed or conn.in_transaction:
                    self._open.discard(conn)
                    await conn.close()
                else:
                    self._idle.append(conn)


class SqliteSession:
    """One session's log in a SQLite database shared through a :class:`SqlitePool`.

    Build with :meth:`open` (runs the migrations) or, once :meth:`migrate` has run at
    startup, with :meth:`open_without_migrate` on the hot path.

    Args:
        pool: the database's pool.
        session_id: the id this instance reads and writes (non-empty).

    Raises:
        ConfigError: an empty ``session_id``.
    """

    def __init__(self, pool: SqlitePool, session_id: str) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise ConfigError(
                f"SqliteSession: session_id must be a non-empty str, got {session_id!r}"
            )
        self._pool = pool
        self._id = session_id

    def __repr__(self) -> str:
        return f"SqliteSession({self._pool.path!r}, {self._id!r})"

    @property
    def session_id(self) -> str:
        """The id this instance reads and writes."""
        return self._id

    @classmethod
    async def migrate(cls, pool: SqlitePool) -> None:
        """Create or upgrade the schema (idempotent; serialized by SQLite's write lock).

        Raises:
            SessionError: the database cannot be read or written.
        """
        try:
            async with pool.acquire() as conn:
                try:
                    async with conn.execute("SELECT MAX(version) FROM helikon_migrations") as cur:
                        row = await cur.fetchone()
                    if row is not None and row[0] is not None and int(row[0]) >= _LATEST:
                        return
                except sqlite3.OperationalError:
                    pass  # no migrations table yet
                await conn.execute("BEGIN IMMEDIATE")
                await conn.execute(
                    "CREATE TABLE IF NOT EXISTS helikon_migrations ("
                    " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                    " applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
                )
                async with conn.execute("SELECT version FROM helikon_migrations") as cur:
                    done = {int(r[0]) for r in await cur.fetchall()}
                for version, name, statements in _MIGRATIONS:
                    if version in done:
                        continue
                    for sql in statements:
                        await conn.execute(sql)
                    await conn.execute(
                        "INSERT INTO helikon_migrations (version, name) VALUES (?, ?)",
                        (version, name),
                    )
                await conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise _error(exc, "migrate") from exc

    @classmethod
    async def open(cls, pool: SqlitePool, session_id: str) -> SqliteSession:
        """Run the migrations (one read when current), then open ``session_id``.

        Raises:
            SessionError: the migrations failed.
            ConfigError: an empty ``session_id``.
        """
        await cls.migrate(pool)
        return cls(pool, session_id)

    @classmethod
    def open_without_migrate(cls, pool: SqlitePool, session_id: str) -> SqliteSession:
        """Open ``session_id`` on an already migrated database (no I/O)."""
        return cls(pool, session_id)

    async def append(self, events: Sequence[SessionEvent]) -> list[SequenceId]:
        """Append ``events`` with one statement (or one transaction); all or nothing.

        A caller cancelled mid-append does not tear the transaction down: it commits or
        rolls back as a whole.

        Raises:
            SessionBackendError: SQLite failed (e.g. ``database is locked`` after
                ``busy_timeout``); nothing was written.
            SessionUnavailable: the pool is closed or the file cannot be opened.
            SessionOther: an event cannot be serialized; nothing was written.
        """
        rows = encode_all(events)
        if not rows:
            return []
        kinds = [e.type for e in events]
        stamps = [e.ts.isoformat() for e in events]
        return await complete(self._append(rows, kinds, stamps))

    async def _append(
        self, rows: list[str], kinds: Sequence[str], stamps: list[str]
    ) -> list[SequenceId]:
        if _HAS_RETURNING and len(rows) <= _ONE_STATEMENT_MAX:
            return await self._append_one_statement(rows, kinds, stamps)
        return await self._append_transaction(rows, kinds, stamps)

    async def _append_one_statement(
        self, rows: list[str], kinds: Sequence[str], stamps: list[str]
    ) -> list[SequenceId]:
        # one statement: atomic in autocommit mode and a single hop to the worker thread
        params: list[object] = [self._id]
        for i, row in enumerate(rows):
            params += (i, kinds[i], row, stamps[i])
        try:
            async with self._pool.acquire() as conn:
                got = list(await conn.execute_fetchall(_insert_sql(len(rows)), params))
        except (sqlite3.Error, ValueError) as exc:
            raise _error(exc, f"append to session {self._id!r}") from exc
        if len(got) != len(rows):  # pragma: no cover - SQLite inserts every row or raises
            raise SessionBackendError(
                f"sqlite: append to session {self._id!r}: {len(got)} of {len(rows)} rows written"
            )
        first = min(int(r[0]) for r in got)  # RETURNING's row order is unspecified
        return [SequenceId(first + i) for i in range(len(rows))]

    async def _append_transaction(
        self, rows: list[str], kinds: Sequence[str], stamps: list[str]
    ) -> list[SequenceId]:
        try:
            async with self._pool.acquire() as conn:
                await conn.execute("BEGIN IMMEDIATE")
                async with conn.execute(
                    "SELECT COALESCE(MAX(sequence), -1) + 1 FROM session_events"
                    " WHERE session_id = ?",
                    (self._id,),
                ) as cur:
                    row = await cur.fetchone()
                first = int(row[0]) if row is not None else 0
                await conn.executemany(
                    "INSERT INTO session_events (session_id, sequence, kind, payload, ts)"
                    " VALUES (?, ?, ?, ?, ?)",
                    [(self._id, first + i, kinds[i], rows[i], stamps[i]) for i in range(len(rows))],
                )
                await conn.execute("COMMIT")
        except (sqlite3.Error, ValueError) as exc:
            raise _error(exc, f"append to session {self._id!r}") from exc
        return [SequenceId(first + i) for i in range(len(rows))]

    async def events(self, since: SequenceId | None = None) -> list[SessionEvent]:
        """The events after ``since`` (exclusive), or all, in order.

        Raises:
            SessionError: the read failed or a stored row does not parse.
            ConfigError: ``since`` is negative.
        """
        after = check_since(since)
        try:
            async with self._pool.acquire() as conn:
                rows = await conn.execute_fetchall(  # one hop to the worker thread
                    "SELECT sequence, payload FROM session_events"
                    " WHERE session_id = ? AND sequence > ? ORDER BY sequence",
                    (self._id, after),
                )
        except (sqlite3.Error, ValueError) as exc:
            raise _error(exc, f"read session {self._id!r}") from exc
        return [decode(payload, where=f"{self._id!r}#{seq}") for seq, payload in rows]

    async def snapshot(self) -> list[Item]:
        """The projected conversation."""
        return project(await self.events())
