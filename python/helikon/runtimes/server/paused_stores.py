"""Durable paused-run stores on the session backends' own connections.

Each takes the pool or client your sessions already use, so a server needs no second
database. The SQL stores keep one table, ``helikon_paused_runs`` (``run_id`` primary key,
``agent``, ``body`` = the :class:`~helikon.runtimes.server.paused.PausedRun` JSON,
``paused_at``), created on first use; Redis keeps one key per run,
``<prefix>:paused_run:<run_id>``.

:meth:`take` is atomic in each: SQLite deletes the row and only the caller whose ``DELETE``
removed it (one row changed) gets the record; PostgreSQL uses ``DELETE ... RETURNING``;
Redis reads and deletes in one ``MULTI`` transaction.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from helikon.errors import ConfigError, ServerError
from helikon.runtimes.server.paused import PausedRun

__all__ = ["PostgresPausedRuns", "RedisPausedRuns", "SqlitePausedRuns"]

_TABLE = "helikon_paused_runs"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def _failed(backend: str, doing: str, exc: Exception) -> ServerError:
    return ServerError(
        f"{backend} paused-run store: could not {doing}: {type(exc).__name__}: {exc}",
        code="paused_runs_unavailable",
    )


def _check_pool(where: str, pool: object, hint: str) -> None:
    if not callable(getattr(pool, "acquire", None)):
        raise ConfigError(f"{where}(pool=...) must be {hint}, got {type(pool).__name__}")


class _SqlStore:
    """The connection handling both SQL stores share: borrow from the pool, create the
    table once, and report a failure as a ``ServerError`` naming the backend."""

    _backend = ""

    def __init__(self, pool: Any) -> None:
        self._pool = pool
        self._ready = False

    async def _create(self, conn: Any) -> None:
        raise NotImplementedError

    @asynccontextmanager
    async def _conn(self, doing: str) -> AsyncIterator[Any]:
        try:
            async with self._pool.acquire() as conn:
                if not self._ready:
                    await self._create(conn)
                    self._ready = True
                yield conn
        except ServerError:
            raise
        except Exception as exc:
            raise _failed(self._backend, doing, exc) from exc


class SqlitePausedRuns(_SqlStore):
    """Paused runs in the SQLite database of your sessions.

    Args:
        pool: the :class:`~helikon.sessions.SqlitePool` your ``SqliteSession`` s use.

    Raises:
        ConfigError: ``pool`` is not a pool (a path, say).

    Example:
        >>> # pool = await SqlitePool.connect("sessions.db")
        >>> # AgentServer(agents, session_factory=lambda sid: SqliteSession.open(pool, sid),
        >>> #             paused_runs=SqlitePausedRuns(pool))
    """

    _backend = "sqlite"

    def __init__(self, pool: Any) -> None:
        _check_pool("SqlitePausedRuns", pool, "a SqlitePool (await SqlitePool.connect(path))")
        super().__init__(pool)

    async def _create(self, conn: Any) -> None:
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {_TABLE} (run_id TEXT PRIMARY KEY, agent TEXT NOT NULL,"
            " body TEXT NOT NULL, paused_at TEXT NOT NULL)"
        )

    async def save(self, run: PausedRun) -> None:
        async with self._conn(f"save run {run.run_id}") as conn:
            await conn.execute(
                f"INSERT OR REPLACE INTO {_TABLE} (run_id, agent, body, paused_at)"
                " VALUES (?, ?, ?, ?)",
                (run.run_id, run.agent, run.to_json(), run.state.paused_at.isoformat()),
            )

    async def _body(self, conn: Any, run_id: str) -> str | None:
        async with conn.execute(f"SELECT body FROM {_TABLE} WHERE run_id = ?", (run_id,)) as cur:
            row = await cur.fetchone()
        return None if row is None else str(row[0])

    async def load(self, run_id: str) -> PausedRun | None:
        async with self._conn(f"load run {run_id}") as conn:
            body = await self._body(conn, run_id)
        return PausedRun.from_json(body) if body is not None else None

    async def take(self, run_id: str) -> PausedRun | None:
        async with self._conn(f"take run {run_id}") as conn:
            body = await self._body(conn, run_id)
            if body is None:
                return None
            # only the DELETE that removed the row wins (another may have read it too)
            async with conn.execute(f"DELETE FROM {_TABLE} WHERE run_id = ?", (run_id,)) as cur:
                won = cur.rowcount == 1
        return PausedRun.from_json(body) if won else None


class PostgresPausedRuns(_SqlStore):
    """Paused runs in the PostgreSQL database of your sessions.

    Args:
        pool: the ``asyncpg`` pool your ``PostgresSession`` s use.
        schema: the schema of the table (default ``"public"``; a plain SQL identifier).

    Raises:
        ConfigError: ``pool`` is not a pool (a DSN, say), or a bad ``schema``.
    """

    _backend = "postgres"

    def __init__(self, pool: Any, *, schema: str = "public") -> None:
        _check_pool("PostgresPausedRuns", pool, "an asyncpg pool (await asyncpg.create_pool(dsn))")
        if not isinstance(schema, str) or not _IDENT.match(schema):
            raise ConfigError(
                "PostgresPausedRuns(schema=...) must be a plain SQL identifier "
                f"([A-Za-z_][A-Za-z0-9_]*), got {schema!r}"
            )
        super().__init__(pool)
        self._table = f'"{schema}".{_TABLE}'
        self._schema = schema

    async def _create(self, conn: Any) -> None:
        await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{self._schema}"')
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {self._table} (run_id TEXT PRIMARY KEY,"
            " agent TEXT NOT NULL, body TEXT NOT NULL, paused_at TIMESTAMPTZ NOT NULL)"
        )

    async def save(self, run: PausedRun) -> None:
        async with self._conn(f"save run {run.run_id}") as conn:
            await conn.execute(
                f"INSERT INTO {self._table} (run_id, agent, body, paused_at)"
                " VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO UPDATE SET"
                " agent = EXCLUDED.agent, body = EXCLUDED.body, paused_at = EXCLUDED.paused_at",
                run.run_id,
                run.agent,
                run.to_json(),
                run.state.paused_at,
            )

    async def load(self, run_id: str) -> PausedRun | None:
        async with self._conn(f"load run {run_id}") as conn:
            body = await conn.fetchval(f"SELECT body FROM {self._table} WHERE run_id = $1", run_id)
        return PausedRun.from_json(body) if body is not None else None

    async def take(self, run_id: str) -> PausedRun | None:
        async with self._conn(f"take run {run_id}") as conn:
            body = await conn.fetchval(
                f"DELETE FROM {self._table} WHERE run_id = $1 RETURNING body", run_id
            )
        return PausedRun.from_json(body) if body is not None else None


class RedisPausedRuns:
    """Paused runs in the Redis of your sessions.

    Args:
        client: the ``redis.asyncio.Redis`` client your ``RedisSession`` s use.
        prefix: the key prefix (default ``"helikon"``, as sessions).

    Raises:
        ConfigError: ``client`` is not a Redis client (a URL, say).
    """

    def __init__(self, client: Any, *, prefix: str = "helikon") -> None:
        if not callable(getattr(client, "pipeline", None)):
            raise ConfigError(
                "RedisPausedRuns(client=...) must be a redis.asyncio.Redis client "
                f"(redis.asyncio.from_url(url)), got {type(client).__name__}"
            )
        self._client = client
        self._prefix = prefix

    def _key(self, run_id: str) -> str:
        return f"{self._prefix}:paused_run:{run_id}"

    async def save(self, run: PausedRun) -> None:
        try:
            await self._client.set(self._key(run.run_id), run.to_json())
        except Exception as exc:
            raise _failed("redis", f"save run {run.run_id}", exc) from exc

    async def load(self, run_id: str) -> PausedRun | None:
        try:
            body = await self._client.get(self._key(run_id))
        except Exception as exc:
            raise _failed("redis", f"load run {run_id}", exc) from exc
        return PausedRun.from_json(body) if body is not None else None

    async def take(self, run_id: str) -> PausedRun | None:
        try:
            async with self._client.pipeline(transaction=True) as pipe:
                body, _ = await pipe.get(self._key(run_id)).delete(self._key(run_id)).execute()
        except Exception as exc:
            raise _failed("redis", f"take run {run_id}", exc) from exc
        return PausedRun.from_json(body) if body is not None else None
