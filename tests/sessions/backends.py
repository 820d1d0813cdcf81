"""Service probes and session openers for the sessions tests (also used by child processes).

Environment (all optional):

* ``HELIKON_TEST_REDIS_URL``: default ``redis://127.0.0.1:6379/0``.
* ``HELIKON_TEST_POSTGRES_DSN``: default: the first of ``postgresql://postgres@127.0.0.1:5432/test``
  and ``postgresql://root@127.0.0.1:5432/test`` that connects.

Child processes get their target through ``HELIKON_TEST_SQLITE_PATH``,
``HELIKON_TEST_REDIS_PREFIX`` and ``HELIKON_TEST_POSTGRES_SCHEMA``.
"""

from __future__ import annotations

import asyncio
import os
import socket
from functools import cache
from typing import Any

REDIS_URL = os.environ.get("HELIKON_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
_PG_CANDIDATES = (
    [os.environ["HELIKON_TEST_POSTGRES_DSN"]]
    if os.environ.get("HELIKON_TEST_POSTGRES_DSN")
    else [
        "postgresql://postgres@127.0.0.1:5432/test",
        "postgresql://root@127.0.0.1:5432/test",
    ]
)


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


@cache
def redis_available() -> bool:
    """True when Redis answers PING at ``REDIS_URL``."""
    if not _port_open("127.0.0.1", 6379) and "127.0.0.1:6379" in REDIS_URL:
        return False
    try:
        import redis
    except ImportError:
        return False
    try:
        client = redis.Redis.from_url(REDIS_URL, socket_timeout=2)
        ok = bool(client.ping())
        client.close()
        return ok
    except redis.RedisError:
        return False


@cache
def postgres_dsn() -> str | None:
    """The first PostgreSQL DSN that connects, or None."""
    try:
        import asyncpg  # type: ignore[import-untyped]
    except ImportError:
        return None

    async def probe(dsn: str) -> bool:
        try:
            conn = await asyncpg.connect(dsn, timeout=3)
        except (OSError, asyncpg.PostgresError, TimeoutError):
            return False
        await conn.close()
        return True

    for dsn in _PG_CANDIDATES:
        if asyncio.run(probe(dsn)):
            return dsn
    return None


# --------------------------------------------------------------------------- child openers
# Each child process opens the backend once and never closes it (it exits with os._exit).

_STATE: dict[str, Any] = {}


async def open_sqlite(session_id: str) -> Any:
    """Open ``session_id`` in the database at ``HELIKON_TEST_SQLITE_PATH``."""
    from helikon.sessions.sqlite import SqlitePool, SqliteSession

    pool = _STATE.get("sqlite")
    if pool is None:
        pool = _STATE["sqlite"] = await SqlitePool.connect(os.environ["HELIKON_TEST_SQLITE_PATH"])
    return await SqliteSession.open(pool, session_id)


async def open_sqlite_one_line(session_id: str) -> Any:
    """``SqliteSession(session_id, HELIKON_TEST_SQLITE_PATH)``: the one-line form."""
    from helikon.sessions.sqlite import SqliteSession

    return SqliteSession(session_id, os.environ["HELIKON_TEST_SQLITE_PATH"])


async def open_redis(session_id: str) -> Any:
    """Open ``session_id`` under the key prefix ``HELIKON_TEST_REDIS_PREFIX``."""
    import redis.asyncio as aioredis

    from helikon.sessions.redis import RedisSession

    client = _STATE.get("redis")
    if client is None:
        client = _STATE["redis"] = aioredis.Redis.from_url(REDIS_URL)
    return RedisSession(client, session_id, prefix=os.environ["HELIKON_TEST_REDIS_PREFIX"])


async def open_postgres(session_id: str) -> Any:
    """Open ``session_id`` in the schema ``HELIKON_TEST_POSTGRES_SCHEMA``."""
    import asyncpg

    from helikon.sessions.postgres import PostgresSession

    pool = _STATE.get("postgres")
    if pool is None:
        dsn = os.environ.get("HELIKON_TEST_POSTGRES_DSN")
        assert dsn, "set HELIKON_TEST_POSTGRES_DSN for the child process"
        pool = _STATE["postgres"] = await asyncpg.create_pool(dsn, min_size=1, max_size=4)
    schema = os.environ["HELIKON_TEST_POSTGRES_SCHEMA"]
    return await PostgresSession.open(pool, session_id, schema=schema)
