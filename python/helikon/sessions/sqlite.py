"""SQLite :class:`~helikon.sessions.Session` backend (extra ``helikon[sqlite]``, aiosqlite).

Many sessions share one database file and one :class:`SqlitePool`; rows are isolated by
``session_id``. Connections run in WAL mode with ``synchronous = NORMAL`` (a power loss
may drop the newest commits, never corrupt the file) and a ``busy_timeout``.

An append is one ``INSERT ... SELECT ... RETURNING`` statement that allocates the next
sequence numbers with ``MAX(sequence) + 1`` and inserts the whole batch under a
``(session_id, sequence)`` primary key. A write statement takes SQLite's write lock before
it reads, so writers in any number of tasks or processes never produce gaps or duplicates;
and being one statement it is atomic in autocommit mode and holds the write lock only while
it runs. Batches over 200 events (or SQLite older than 3.35, which lacks ``RETURNING``) use
an explicit ``BEGIN IMMEDIATE`` transaction instead, with the same guarantees.
``busy_timeout`` caps the wait for the write lock: under sustained contention the last
writer waits out the whole backlog, so size it as writers x appends x the worst transaction
time. An append that exhausts it fails with ``SessionBackendError("database is locked")``
and persists nothing; the session stays usable.

**Appends on the event-loop thread** (``SqlitePool(write_on_loop_thread=True)``, the
default). A round trip to aiosqlite's worker thread costs more than the statement itself, so
the pool keeps one extra plain ``sqlite3`` connection that runs the append statement
directly on the event-loop thread when that cannot wait:

* it has ``busy_timeout = 0``: if the write lock is taken (another task's transaction on a
  worker, another process), SQLite answers ``SQLITE_BUSY`` at once, nothing is written,
  and the append goes to a worker thread as before, where it waits up to ``busy_timeout``;
* it is used only with WAL and ``synchronous = NORMAL``, where a commit appends pages to
  the log without ``fsync``; with ``FULL`` (an ``fsync`` per commit) the setting does
  nothing, nor for ``":memory:"``;
* it never checkpoints: with the writer on, no connection of the pool checkpoints on its
  own (``wal_autocheckpoint = 0``). After about 1,000 log pages of the pool's commits a
  worker thread checkpoints on a connection of its own, then makes the one write that
  rewinds the log (the first write after a complete checkpoint does, and it syncs the
  log's header even with ``NORMAL``), holding the loop-thread writer off for that moment:
  appends then go to worker threads, which wait for the rewind. If readers keep it from
  rewinding, the loop thread's next append goes to a worker thread too.

An append run this way never suspends, so a caller cannot be cancelled half-way: it has
committed (or failed, writing nothing) by the time ``append`` returns, and needs no
cancellation shield. A worker-thread append skips the shield too when a connection is
idle (nothing can suspend before aiosqlite queues the statement, and a queued statement
runs whatever happens to its caller); otherwise it runs in a shielded task as before.
Reads, migrations and batches over 200 events stay on worker threads.

**The trade-off**: each such append does short file I/O on the loop thread: ``write()``
of a few pages into the OS page cache and, when SQLite's page cache is cold (another
connection wrote since), ``pread()`` of index pages from the OS cache; tens of
microseconds, but as long as the kernel makes it on a slow or network file system, under
memory pressure (dirty-page throttling), on a cold OS cache, or while SQLite retries its
shared-memory index lock during a concurrent checkpoint. No ``fsync`` runs on the loop
thread, except in one rare case: when a connection outside this pool completes a
checkpoint (the ``sqlite3`` shell, another library, or, in a window of microseconds,
another process's pool), the next append here may be the write that rewinds the log.
Turn it off (``write_on_loop_thread=False``) on such file systems, or when the loop's
latency budget is tighter than a disk access.

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
import inspect
import logging
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from os import PathLike, fspath
from types import TracebackType
from typing import Any, Literal, overload

try:
    import aiosqlite
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "helikon.sessions.sqlite needs the 'sqlite' extra: pip install 'helikon[sqlite]'"
    ) from exc

from helikon.core.items import Item
from helikon.core.peer_imports import peer_import
from helikon.errors import (
    ConfigError,
    SessionBackendError,
    SessionError,
    SessionUnavailable,
)
from helikon.sessions._codec import check_since, decode_all, encode_all
from helikon.sessions._sqlite_schema import insert_sql, migrate_schema
from helikon.sessions._sqlite_writer import LoopWriter
from helikon.sessions.chain import link_all, sql_link
from helikon.sessions.events import SequenceId, SessionEvent
from helikon.sessions.projection import project
from helikon.sessions.shield import complete
from helikon.sessions.tail import last_items

__all__ = ["SqlitePool", "SqliteSession"]

log = logging.getLogger("helikon.sessions")


# The largest batch appended with one statement (the session id plus 4 parameters per
# event: 801 at most), below SQLite's parameter limit (999 before 3.32, 32766 since).
_ONE_STATEMENT_MAX = 200
_HAS_RETURNING = sqlite3.sqlite_version_info >= (3, 35, 0)


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
        write_on_loop_thread: run appends of up to 200 events on the event-loop thread
            when the write lock is free (two more connections: the writer, with
            ``busy_timeout = 0``, and its checkpointer; see the module docs for the
            trade-off). Only with ``synchronous="NORMAL"`` on a file: ``FULL`` commits
            ``fsync``, so there it has no effect.
        keep_connections: keep released connections open for the next use (the default).
            ``False`` closes each one when it is given back, so nothing stays open between
            operations and no :meth:`close` is needed (each operation opens a connection:
            about a millisecond more); it turns ``write_on_loop_thread`` off. This is what
            the one-line ``SqliteSession(session_id, path)`` uses.
    """

    def __init__(
        self,
        path: str | PathLike[str],
        *,
        max_connections: int = 4,
        busy_timeout: float = 30.0,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        write_on_loop_thread: bool = True,
        keep_connections: bool = True,
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
        self.keep_connections = bool(keep_connections)
        self.write_on_loop_thread = bool(write_on_loop_thread) and self.keep_connections
        self._idle: list[aiosqlite.Connection] = []
        self._open: set[aiosqlite.Connection] = set()
        self._slots = asyncio.Semaphore(self.max_connections)
        self._closed = False
        # the loop-thread writer: opened with the first pooled connection
        self._writer: LoopWriter | None = None
        self._writer_wanted = (
            self.write_on_loop_thread and synchronous == "NORMAL" and self.path != ":memory:"
        )
        if not self.keep_connections and self.path == ":memory:":
            raise ConfigError(
                "SqlitePool: keep_connections=False with ':memory:' would lose the database "
                "after every operation; use a file path, or MemorySession for a session in memory"
            )

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
        write_on_loop_thread: bool = True,
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
            write_on_loop_thread=write_on_loop_thread,
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
        writer, self._writer = self._writer, None
        if writer is not None:
            await writer.close()
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
            await conn.create_function("helikon_link", 3, sql_link, deterministic=True)
            await conn.execute("PRAGMA journal_mode = WAL")
            await conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            await conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        except sqlite3.Error as exc:
            await conn.close()
            raise _error(exc, f"configure {self.path!r}") from exc
        if self._writer_wanted:
            await self._open_writer()
        if self._writer is not None:
            # the writer's checkpointer checkpoints for the whole pool, off the loop thread;
            # a checkpoint here would let the loop thread's next append rewind the log
            try:
                await conn.execute("PRAGMA wal_autocheckpoint = 0")
            except sqlite3.Error as exc:
                await conn.close()
                raise _error(exc, f"configure {self.path!r}") from exc
        self._open.add(conn)
        return conn

    async def _open_writer(self) -> None:
        self._writer_wanted = False  # one attempt; a failure leaves appends on the workers
        try:
            writer = await LoopWriter.open(self.path, self.busy_timeout)
        except sqlite3.Error as exc:
            log.warning("sqlite: %r: appends stay on worker threads: %s", self.path, exc)
            return
        if writer is not None and self._closed:
            await writer.close()
        elif writer is not None:
            self._writer = writer

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
                if self._closed or conn.in_transaction or not self.keep_connections:
                    self._open.discard(conn)
                    await conn.close()
                else:
                    self._idle.append(conn)

    def _write_here(
        self, sql: str, params: Sequence[object], n: int, size: int
    ) -> list[Any] | None:
        """Run an append statement on the loop thread if it cannot wait (else None)."""
        writer = self._writer
        if writer is None or self._closed:
            return None
        return writer.write(sql, params, n, size)

    async def _settle(self) -> None:
        """Let the writer's checkpointer rewind the log before a worker-thread append."""
        writer = self._writer
        if writer is not None and writer.task is not None and writer.gate.locked():
            # only the checkpointer holds the gate across a suspension point
            await asyncio.wait([writer.task])

    def _lends_now(self) -> bool:
        """True when borrowing cannot suspend: open, an idle connection and a free slot,
        and no log rewind for worker appends to wait for."""
        writer = self._writer
        return (
            not self._closed
            and bool(self._idle)
            and not self._slots.locked()
            and (writer is None or writer.task is None or not writer.gate.locked())
        )

    async def _give_back(self, conn: aiosqlite.Connection) -> None:
        """Return a connection taken after :meth:`_lends_now` (autocommit statements only:
        one still queued in its worker runs before anything queued later)."""
        try:
            if self._closed:
                self._open.discard(conn)
                with suppress(Exception):
                    await conn.close()
            else:
                self._idle.append(conn)
        finally:
            self._slots.release()

    def _wrote(self, n: int, size: int) -> None:
        """Count an append committed on a worker thread (for the writer's checkpoints)."""
        if self._writer is not None:
            self._writer.wrote(n, size)


_DB_SUFFIXES = (".db", ".sqlite", ".sqlite3", ".db3")


def _looks_like_a_file(text: str) -> bool:
    """A database file name (``chats.db``, ``data/x.sqlite``), not a session id."""
    return text.lower().endswith(_DB_SUFFIXES)


def _check_pool(where: str, pool: object) -> None:
    """Reject a path, a coroutine or anything else that is not a pool, before any I/O.

    Raises:
        ConfigError: the message says how to make a pool.
    """
    if callable(getattr(pool, "acquire", None)):
        return
    if isinstance(pool, str | PathLike):
        hint = f"pass a pool: pool = await SqlitePool.connect({fspath(pool)!r})"
    elif inspect.iscoroutine(pool):
        pool.close()  # never awaited: close it so Python does not warn
        hint = f"did you forget to await {pool.__qualname__}(...)?"
    else:
        hint = "pass a pool: pool = await SqlitePool.connect(path)"
    raise ConfigError(f"{where}(pool=...) must be a SqlitePool, got {type(pool).__name__}; {hint}")


class SqliteSession:
    """One session's log in a SQLite database.

    Two ways to build one:

    * **One line**, for a script or a single process: ``SqliteSession("user-42",
      "chats.db")`` (session id, then the file). The session makes its own pool with
      ``keep_connections=False``: each operation opens a connection and closes it, so there
      is nothing to close and nothing keeps the process from exiting; the schema is
      migrated on first use.
    * **Pooled**, for a server with many sessions: ``await SqliteSession.open(pool, id)``
      (runs the migrations) on a shared :class:`SqlitePool`, or, once :meth:`migrate` has
      run at startup, :meth:`open_without_migrate` on the hot path. ``SqliteSession(pool,
      id)`` is the latter.

    Args:
        pool: the database's pool (pooled form).
        session_id: the id this instance reads and writes (non-empty).
        path: the database file (one-line form; created if missing).

    Raises:
        ConfigError: an empty ``session_id``; a first argument that is neither a pool nor a
            session id; a one-line form whose arguments look swapped (the file first).

    Example:
        >>> import asyncio, os, tempfile
        >>> from helikon.sessions import user_message
        >>> with tempfile.TemporaryDirectory() as d:
        ...     session = SqliteSession("user-42", os.path.join(d, "chats.db"))
        ...     _ = asyncio.run(session.append([user_message("hi")]))
        ...     [i.type for i in asyncio.run(session.snapshot())]
        ['user_message']
    """

    @overload
    def __init__(self, pool: SqlitePool, session_id: str, /) -> None: ...

    @overload
    def __init__(self, session_id: str, path: str | PathLike[str], /) -> None: ...

    def __init__(self, first: Any, second: Any, /) -> None:
        self._migrate_lock: asyncio.Lock | None = None
        if isinstance(first, str) and isinstance(second, str | PathLike):
            session_id, path = first, fspath(second)
            if _looks_like_a_file(session_id) and not _looks_like_a_file(path):
                raise ConfigError(
                    f"SqliteSession({session_id!r}, {path!r}): the session id comes first, "
                    f"then the file: SqliteSession({path!r}, {session_id!r})"
                )
            self._needs_migrate = True
            pool = SqlitePool(path, keep_connections=False)
        else:
            _check_pool("SqliteSession", first)
            pool, session_id = first, second
            self._needs_migrate = False
        if not isinstance(session_id, str) or not session_id:
            raise ConfigError(
                f"SqliteSession: session_id must be a non-empty str, got {session_id!r}"
            )
        self._pool = pool
        self._id = session_id

    async def _ready(self) -> None:
        """Migrate once before the first operation of a one-line session."""
        if not self._needs_migrate:
            return
        if self._migrate_lock is None:
            self._migrate_lock = asyncio.Lock()
        async with self._migrate_lock:
            if self._needs_migrate:
                await self.migrate(self._pool)
                self._needs_migrate = False

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
            ConfigError: ``pool`` is not a :class:`SqlitePool`.
        """
        _check_pool("SqliteSession.migrate", pool)
        try:
            async with pool.acquire() as conn:
                await migrate_schema(conn)
        except sqlite3.Error as exc:
            raise _error(exc, "migrate") from exc

    @classmethod
    async def open(cls, pool: SqlitePool, session_id: str) -> SqliteSession:
        """Run the migrations (one read when current), then open ``session_id``.

        Raises:
            SessionError: the migrations failed.
            ConfigError: ``pool`` is not a :class:`SqlitePool` (a path, say) or an empty
                ``session_id``.
        """
        _check_pool("SqliteSession.open", pool)
        await cls.migrate(pool)
        return cls(pool, session_id)

    @classmethod
    def open_without_migrate(cls, pool: SqlitePool, session_id: str) -> SqliteSession:
        """Open ``session_id`` on an already migrated database (no I/O)."""
        _check_pool("SqliteSession.open_without_migrate", pool)
        return cls(pool, session_id)

    async def append(self, events: Sequence[SessionEvent]) -> list[SequenceId]:
        """Append ``events`` with one statement (or one transaction); all or nothing.

        A caller cancelled mid-append does not tear the transaction down: it commits or
        rolls back as a whole. (An append run on the loop thread, see the module docs,
        never suspends, so it is done before a cancellation can reach it.)

        Raises:
            SessionBackendError: SQLite failed (e.g. ``database is locked`` after
                ``busy_timeout``); nothing was written.
            SessionUnavailable: the pool is closed or the file cannot be opened.
            SessionOther: an event cannot be serialized; nothing was written.
        """
        rows = encode_all(events)
        if not rows:
            return []
        if self._needs_migrate:
            await self._ready()
        kinds = [e.type for e in events]
        stamps = [e.ts.isoformat() for e in events]
        size = sum(map(len, rows))
        if _HAS_RETURNING and len(rows) <= _ONE_STATEMENT_MAX:
            params = self._params(rows, kinds, stamps)
            try:
                got = self._pool._write_here(insert_sql(len(rows)), params, len(rows), size)
            except sqlite3.Error as exc:
                raise _error(exc, f"append to session {self._id!r}") from exc
            if got is not None:
                return self._ids(got, len(rows))
            if self._pool._lends_now():
                # nothing suspends before aiosqlite queues the statement, and a queued
                # statement runs whatever happens to its caller: no shield needed
                return await self._append_queued_now(params, len(rows), size)
            return await complete(self._append_one_statement(params, len(rows), size))
        return await complete(self._append_transaction(rows, kinds, stamps, size))

    def _params(self, rows: list[str], kinds: Sequence[str], stamps: list[str]) -> list[object]:
        params: list[object] = [self._id]
        for i, row in enumerate(rows):
            params += (i, kinds[i], row, stamps[i])
        return params

    def _ids(self, got: Sequence[Any], n: int) -> list[SequenceId]:
        if len(got) != n:  # pragma: no cover - SQLite inserts every row or raises
            raise SessionBackendError(
                f"sqlite: append to session {self._id!r}: {len(got)} of {n} rows written"
            )
        first = min(int(r[0]) for r in got)  # RETURNING's row order is unspecified
        return [SequenceId(first + i) for i in range(n)]

    async def _append_one_statement(
        self, params: list[object], n: int, size: int
    ) -> list[SequenceId]:
        # one statement: atomic in autocommit mode and a single hop to the worker thread
        try:
            async with self._pool.acquire() as conn:
                await self._pool._settle()
                got = list(await conn.execute_fetchall(insert_sql(n), params))
        except (sqlite3.Error, ValueError) as exc:
            raise _error(exc, f"append to session {self._id!r}") from exc
        self._pool._wrote(n, size)
        return self._ids(got, n)

    async def _append_queued_now(self, params: list[object], n: int, size: int) -> list[SequenceId]:
        # only after _lends_now(): the slot is free, so acquire() returns at once
        pool = self._pool
        await pool._slots.acquire()
        conn = pool._idle.pop()
        try:
            got = list(await conn.execute_fetchall(insert_sql(n), params))
        except (sqlite3.Error, ValueError) as exc:
            raise _error(exc, f"append to session {self._id!r}") from exc
        finally:
            await pool._give_back(conn)
        pool._wrote(n, size)
        return self._ids(got, n)

    async def _append_transaction(
        self, rows: list[str], kinds: Sequence[str], stamps: list[str], size: int
    ) -> list[SequenceId]:
        try:
            async with self._pool.acquire() as conn:
                await self._pool._settle()
                await conn.execute("BEGIN IMMEDIATE")
                async with conn.execute(
                    "SELECT sequence, hash FROM session_events"
                    " WHERE session_id = ? ORDER BY sequence DESC LIMIT 1",
                    (self._id,),
                ) as cur:
                    row = await cur.fetchone()
                first = int(row[0]) + 1 if row is not None else 0
                hashes = link_all(row[1] if row is not None else None, first, rows)
                await conn.executemany(
                    "INSERT INTO session_events (session_id, sequence, kind, payload, ts, hash)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (self._id, first + i, kinds[i], rows[i], stamps[i], hashes[i])
                        for i in range(len(rows))
                    ],
                )
                await conn.execute("COMMIT")
        except (sqlite3.Error, ValueError) as exc:
            raise _error(exc, f"append to session {self._id!r}") from exc
        self._pool._wrote(len(rows), size)
        return [SequenceId(first + i) for i in range(len(rows))]

    async def events(self, since: SequenceId | None = None) -> list[SessionEvent]:
        """The events after ``since`` (exclusive), or all, in order.

        Raises:
            SessionError: the read failed or a stored row does not parse.
            ConfigError: ``since`` is negative.
        """
        after = check_since(since)
        if self._needs_migrate:
            await self._ready()
        try:
            async with self._pool.acquire() as conn:
                rows = await conn.execute_fetchall(  # one hop to the worker thread
                    "SELECT sequence, payload FROM session_events"
                    " WHERE session_id = ? AND sequence > ? ORDER BY sequence",
                    (self._id, after),
                )
        except (sqlite3.Error, ValueError) as exc:
            raise _error(exc, f"read session {self._id!r}") from exc
        return decode_all([(f"{self._id!r}#{seq}", payload) for seq, payload in rows])

    async def chain_records(self) -> list[tuple[int, str, bytes | None]]:
        """Every ``(sequence, payload, hash)`` as stored, for
        :func:`helikon.sessions.chain.verify`.

        Raises:
            SessionError: the read failed.
        """
        if self._needs_migrate:
            await self._ready()
        try:
            async with self._pool.acquire() as conn:
                rows = await conn.execute_fetchall(
                    "SELECT sequence, payload, hash FROM session_events"
                    " WHERE session_id = ? ORDER BY sequence",
                    (self._id,),
                )
        except (sqlite3.Error, ValueError) as exc:
            raise _error(exc, f"read session {self._id!r}") from exc
        return [(int(seq), str(payload), h) for seq, payload, h in rows]

    async def snapshot(self, last: int | None = None) -> list[Item]:
        """The projected conversation, or its ``last`` items (see
        :func:`helikon.sessions.last_items`).

        Raises:
            ConfigError: ``last`` is not an int >= 0.
        """
        return last_items(project(await self.events()), last, where="SqliteSession.snapshot")


def __getattr__(name: str) -> Any:
    raise peer_import("helikon.sessions.sqlite", name)
