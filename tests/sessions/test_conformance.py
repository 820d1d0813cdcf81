"""Every backend passes helikon.sessions.testkit (Redis and PostgreSQL: the local services)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from helikon.sessions import CompactingSession, MemorySession, Session
from helikon.sessions.testkit import Backend, SessionConformance
from helikon.testing import MockModel

REPO = Path(__file__).resolve().parents[2]
CHILD_ENV = {"PYTHONPATH": str(REPO)}


class TestMemorySession(SessionConformance):
    @pytest.fixture
    def backend(self) -> Backend:
        stores: dict[str, MemorySession] = {}

        async def open_memory(sid: str) -> Session:
            return stores.setdefault(sid, MemorySession())

        return Backend(open_memory, durable=False)


class TestCompactingOverMemory(SessionConformance):
    """The wrapper is a transparent Session while under its threshold."""

    @pytest.fixture
    def backend(self) -> Backend:
        stores: dict[str, MemorySession] = {}

        async def open_wrapped(sid: str) -> Session:
            inner = stores.setdefault(sid, MemorySession())
            return CompactingSession(inner, MockModel([]), threshold=10**9)

        return Backend(open_wrapped, durable=False)


class TestSqliteSession(SessionConformance):
    @pytest.fixture
    def backend(self, sqlite_pool: Any) -> Backend:
        from helikon.sessions.sqlite import SqliteSession

        async def open_sqlite(sid: str) -> Session:
            return await SqliteSession.open(sqlite_pool, sid)

        return Backend(
            open_sqlite,
            subprocess_open="tests.sessions.backends:open_sqlite",
            subprocess_env={**CHILD_ENV, "HELIKON_TEST_SQLITE_PATH": sqlite_pool.path},
        )


class TestSqliteSessionOneLine(SessionConformance):
    """``SqliteSession(session_id, path)``: its own pool, a connection per operation, the
    schema migrated on first use (child processes use the same form)."""

    @pytest.fixture
    def backend(self, tmp_path: Path) -> Backend:
        from helikon.sessions.sqlite import SqliteSession

        path = tmp_path / "one-line.db"

        async def open_sqlite(sid: str) -> Session:
            return SqliteSession(sid, path)

        return Backend(
            open_sqlite,
            subprocess_open="tests.sessions.backends:open_sqlite_one_line",
            subprocess_env={**CHILD_ENV, "HELIKON_TEST_SQLITE_PATH": str(path)},
        )


class TestSqliteSessionOnWorkerThreads(SessionConformance):
    """``write_on_loop_thread=False``: every append goes through aiosqlite's worker thread
    (and the cancellation shield); child processes write on their loop threads."""

    @pytest.fixture
    async def backend(self, tmp_path: Path) -> AsyncIterator[Backend]:
        from helikon.sessions.sqlite import SqlitePool, SqliteSession

        pool = await SqlitePool.connect(
            tmp_path / "workers.db", max_connections=8, write_on_loop_thread=False
        )

        async def open_sqlite(sid: str) -> Session:
            return await SqliteSession.open(pool, sid)

        yield Backend(
            open_sqlite,
            subprocess_open="tests.sessions.backends:open_sqlite",
            subprocess_env={**CHILD_ENV, "HELIKON_TEST_SQLITE_PATH": pool.path},
        )
        await pool.close()


class TestRedisSession(SessionConformance):
    @pytest.fixture
    def backend(self, redis_client: tuple[Any, str]) -> Backend:
        from helikon.sessions.redis import RedisSession

        client, prefix = redis_client

        async def open_redis(sid: str) -> Session:
            return RedisSession(client, sid, prefix=prefix)

        return Backend(
            open_redis,
            subprocess_open="tests.sessions.backends:open_redis",
            subprocess_env={**CHILD_ENV, "HELIKON_TEST_REDIS_PREFIX": prefix},
        )


class TestPostgresSession(SessionConformance):
    @pytest.fixture
    def backend(self, postgres_pool: tuple[Any, str], postgres_dsn: str) -> Backend:
        from helikon.sessions.postgres import PostgresSession

        pool, schema = postgres_pool

        async def open_postgres(sid: str) -> Session:
            return PostgresSession.open_without_migrate(pool, sid, schema=schema)

        return Backend(
            open_postgres,
            subprocess_open="tests.sessions.backends:open_postgres",
            subprocess_env={
                **CHILD_ENV,
                "HELIKON_TEST_POSTGRES_SCHEMA": schema,
                "HELIKON_TEST_POSTGRES_DSN": postgres_dsn,
            },
        )
