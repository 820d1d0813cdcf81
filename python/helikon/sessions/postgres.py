"""PostgreSQL :class:`~helikon.sessions.Session` backend (extra ``helikon[postgres]``, asyncpg).

Every session's log lives in one ``session_events`` table (``session_id``, ``sequence``,
``kind``, ``payload JSONB``, ``ts``; primary key ``(session_id, sequence)``) in a schema of
your choice (default ``public``). Many sessions share one ``asyncpg`` pool.

An append is one READ COMMITTED transaction: it takes ``pg_advisory_xact_lock`` on
``hashtextextended(session_id, 0)`` (a 64-bit key, so unrelated sessions practically
never wait on each other), allocates ``COALESCE(MAX(sequence), -1) + 1`` onwards and
inserts the whole batch in one statement; the lock is released at COMMIT. Sequences are
contiguous, whatever the number of writers.

Migrations are idempotent and serialized by a session-level advisory lock, so many
processes may run :meth:`PostgresSession.migrate` at startup at once.

Two PostgreSQL limits show through: text cannot hold the NUL character (U+0000), which is
stored as U+FFFD, and JSONB does not keep the key order of JSON objects, so a read-back
event is equal to the one written but its ``args`` may serialize with keys reordered.

asyncpg was chosen over psycopg 3 because it is asyncio-native end to end (no libpq
system dependency, its own pool, binary protocol and prepared-statement cache); its lack
of type hints is confined to this module.

Example:
    >>> async def demo():  # doctest: +SKIP
    ...     pool = await asyncpg.create_pool("postgresql://app@localhost/app")
    ...     await PostgresSession.migrate(pool)                 # once, at startup
    ...     session = PostgresSession.open_without_migrate(pool, "user-42")
    ...     await session.append([user_message("hi")])
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Sequence
from typing import Any

try:
    import asyncpg  # type: ignore[import-untyped, import-not-found, unused-ignore]
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "helikon.sessions.postgres needs the 'postgres' extra: pip install 'helikon[postgres]'"
    ) from exc

from helikon.core.items import Item
from helikon.errors import ConfigError, SessionBackendError, SessionError, SessionUnavailable
from helikon.sessions._codec import check_since, decode_all, encode_all
from helikon.sessions.chain import link_all
from helikon.sessions.events import SequenceId, SessionEvent
from helikon.sessions.projection import project
from helikon.sessions.shield import complete
from helikon.sessions.tail import last_items

__all__ = ["PostgresSession"]

_MIGRATION_LOCK = 0x68656C696B6F6E  # "helikon": the key serializing migrations
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def _migrations(schema: str) -> list[tuple[int, str, list[str]]]:
    s = f'"{schema}"'
    return [
        (
            1,
            "session_events",
            [
                f"CREATE TABLE IF NOT EXISTS {s}.session_events ("
                " session_id TEXT NOT NULL,"
                " sequence BIGINT NOT NULL,"
                " kind TEXT NOT NULL,"
                " payload JSONB NOT NULL,"
                " ts TIMESTAMPTZ NOT NULL,"
                " PRIMARY KEY (session_id, sequence))",
            ],
        ),
        # the hash chain (helikon.sessions.chain): NULL in rows written before it
        (
            2,
            "session_events_hash",
            [f"ALTER TABLE {s}.session_events ADD COLUMN IF NOT EXISTS hash BYTEA"],
        ),
    ]


def _error(exc: BaseException, doing: str) -> SessionError:
    unavailable = (
        OSError,
        asyncpg.exceptions.ConnectionDoesNotExistError,
        asyncpg.exceptions.CannotConnectNowError,
        asyncpg.exceptions.TooManyConnectionsError,
        asyncpg.exceptions.InterfaceError,
        TimeoutError,
    )
    if isinstance(exc, unavailable):
        return SessionUnavailable(f"postgres: {doing}: {exc}")
    return SessionBackendError(f"postgres: {doing}: {exc}")


def _check_schema(schema: str) -> str:
    if not isinstance(schema, str) or not _IDENT.match(schema):
        raise ConfigError(
            f"PostgresSession: schema must be a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*), "
            f"got {schema!r}"
        )
    return schema


def _strip_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, list):
        return [_strip_nul(v) for v in value]
    if isinstance(value, dict):
        return {_strip_nul(k): _strip_nul(v) for k, v in value.items()}
    return value


def _pg_json(row: str) -> str:
    if "\\u0000" not in row:
        return row
    return json.dumps(_strip_nul(json.loads(row)), separators=(",", ":"), ensure_ascii=False)


def _check_pool(where: str, pool: object) -> None:
    """Reject a DSN, a coroutine or anything else that is not a pool, before any I/O.

    Raises:
        ConfigError: the message says how to make a pool (never echoing a DSN's password).
    """
    if callable(getattr(pool, "acquire", None)):
        return
    if isinstance(pool, str | bytes):
        hint = "pass a pool: pool = await asyncpg.create_pool(dsn)"
    elif inspect.iscoroutine(pool):
        pool.close()  # never awaited: close it so Python does not warn
        hint = f"did you forget to await {pool.__qualname__}(...)?"
    else:
        hint = "pass a pool: pool = await asyncpg.create_pool(dsn)"
    raise ConfigError(
        f"{where}(pool=...) must be an asyncpg pool, got {type(pool).__name__}; {hint}"
    )


class PostgresSession:
    """One session's log in PostgreSQL, through a shared ``asyncpg`` pool.

    Build with :meth:`open` (runs the migrations) or, after :meth:`migrate` at startup,
    with :meth:`open_without_migrate` on the hot path.

    Args:
        pool: an ``asyncpg.Pool`` (or anything with the same ``acquire()``).
        session_id: the id this instance reads and writes (non-empty).
        schema: the schema holding ``session_events`` (a plain identifier).

    Raises:
        ConfigError: an empty ``session_id`` or a bad ``schema``.
    """

    def __init__(self, pool: Any, session_id: str, *, schema: str = "public") -> None:
        _check_pool("PostgresSession", pool)
        if not isinstance(session_id, str) or not session_id:
            raise ConfigError(
                f"PostgresSession: session_id must be a non-empty str, got {session_id!r}"
            )
        self._pool = pool
        self._id = session_id
        self.schema = _check_schema(schema)
        self._table = f'"{self.schema}".session_events'

    def __repr__(self) -> str:
        return f"PostgresSession({self._table!r}, {self._id!r})"

    @property
    def session_id(self) -> str:
        """The id this instance reads and writes."""
        return self._id

    @classmethod
    async def migrate(cls, pool: Any, *, schema: str = "public") -> None:
        """Create or upgrade the schema; idempotent, serialized by an advisory lock.

        Raises:
            SessionError: the database cannot be reached or refused a statement.
            ConfigError: a bad ``schema``, or ``pool`` is not a pool (a DSN, say).
        """
        _check_pool("PostgresSession.migrate", pool)
        schema = _check_schema(schema)
        try:
            async with pool.acquire() as conn, conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
                await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
                await conn.execute(
                    f'CREATE TABLE IF NOT EXISTS "{schema}".helikon_migrations ('
                    " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                    " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
                )
                done = {
                    int(r["version"])
                    for r in await conn.fetch(f'SELECT version FROM "{schema}".helikon_migrations')
                }
                for version, name, statements in _migrations(schema):
                    if version in done:
                        continue
                    for sql in statements:
                        await conn.execute(sql)
                    await conn.execute(
                        f'INSERT INTO "{schema}".helikon_migrations (version, name)'
                        " VALUES ($1, $2)",
                        version,
                        name,
                    )
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as exc:
            raise _error(exc, "migrate") from exc

    @classmethod
    async def open(cls, pool: Any, session_id: str, *, schema: str = "public") -> PostgresSession:
        """Run the migrations, then open ``session_id``.

        Raises:
            SessionError: the migrations failed.
            ConfigError: an empty ``session_id``, a bad ``schema``, or ``pool`` is not a
                pool (a DSN, say: pass ``await asyncpg.create_pool(dsn)``).
        """
        _check_pool("PostgresSession.open", pool)
        await cls.migrate(pool, schema=schema)
        return cls(pool, session_id, schema=schema)

    @classmethod
    def open_without_migrate(
        cls, pool: Any, session_id: str, *, schema: str = "public"
    ) -> PostgresSession:
        """Open ``session_id`` on an already migrated database (no I/O)."""
        return cls(pool, session_id, schema=schema)

    async def append(self, events: Sequence[SessionEvent]) -> list[SequenceId]:
        """Append ``events`` in one transaction under the session's advisory lock.

        A caller cancelled mid-append does not tear the transaction down: it commits or
        rolls back as a whole.

        Raises:
            SessionUnavailable: the database cannot be reached.
            SessionBackendError: PostgreSQL refused; nothing was written.
            SessionOther: an event cannot be serialized; nothing was written.
        """
        rows = [_pg_json(r) for r in encode_all(events)]
        if not rows:
            return []
        kinds = [e.type for e in events]
        stamps = [e.ts for e in events]
        return await complete(self._append(rows, kinds, stamps))

    async def _append(
        self, rows: list[str], kinds: Sequence[str], stamps: list[Any]
    ) -> list[SequenceId]:
        try:
            async with self._pool.acquire() as conn, conn.transaction(isolation="read_committed"):
                await conn.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", self._id
                )
                # the next sequence, the last hash, and each payload as jsonb will return
                # it (the hash covers the stored text, which jsonb normalizes)
                tail = await conn.fetchrow(
                    f"SELECT (SELECT COALESCE(MAX(sequence), -1) + 1 FROM {self._table}"
                    " WHERE session_id = $1) AS first,"
                    f" (SELECT hash FROM {self._table} WHERE session_id = $1"
                    " ORDER BY sequence DESC LIMIT 1) AS h,"
                    " ARRAY(SELECT p::jsonb::text FROM unnest($2::text[]) WITH ORDINALITY"
                    " AS u(p, o) ORDER BY o) AS texts",
                    self._id,
                    rows,
                )
                first = int(tail["first"])
                hashes = link_all(tail["h"], first, tail["texts"])
                await conn.execute(
                    f"INSERT INTO {self._table} (session_id, sequence, kind, payload, ts, hash)"
                    " SELECT $1, $2 + o - 1, k, p::jsonb, t, h"
                    " FROM unnest($3::text[], $4::text[], $5::timestamptz[], $6::bytea[])"
                    " WITH ORDINALITY AS u(k, p, t, h, o)",
                    self._id,
                    first,
                    kinds,
                    rows,
                    stamps,
                    hashes,
                )
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as exc:
            raise _error(exc, f"append to session {self._id!r}") from exc
        return [SequenceId(first + i) for i in range(len(rows))]

    async def events(self, since: SequenceId | None = None) -> list[SessionEvent]:
        """The events after ``since`` (exclusive), or all, in order.

        Raises:
            SessionError: the read failed or a stored row does not parse.
            ConfigError: ``since`` is negative.
        """
        records = await self._rows("", check_since(since))
        return decode_all([(f"{self._id!r}#{r['sequence']}", r["payload"]) for r in records])

    async def _rows(self, extra: str, after: int) -> list[Any]:
        """The rows after ``after``, in order: sequence, payload text and the ``extra``
        columns.

        Raises:
            SessionError: the read failed.
        """
        try:
            async with self._pool.acquire() as conn:
                records: list[Any] = await conn.fetch(
                    f"SELECT sequence, payload::text AS payload{extra} FROM {self._table}"
                    " WHERE session_id = $1 AND sequence > $2 ORDER BY sequence",
                    self._id,
                    after,
                )
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as exc:
            raise _error(exc, f"read session {self._id!r}") from exc
        return records

    async def chain_records(self) -> list[tuple[int, str, bytes | None]]:
        """Every ``(sequence, payload text, hash)``, for :func:`helikon.sessions.chain.verify`.

        Raises:
            SessionError: the read failed.
        """
        records = await self._rows(", hash", -1)
        return [(int(r["sequence"]), r["payload"], r["hash"]) for r in records]

    async def snapshot(self, last: int | None = None) -> list[Item]:
        """The projected conversation, or its ``last`` items (see
        :func:`helikon.sessions.last_items`).

        Raises:
            ConfigError: ``last`` is not an int >= 0.
        """
        return last_items(project(await self.events()), last, where="PostgresSession.snapshot")
