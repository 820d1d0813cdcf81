"""PostgresSession specifics: schema, advisory locks, rollback mid-batch, NUL, errors."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest

from helikon.errors import ConfigError, SessionBackendError, SessionUnavailable
from helikon.sessions import compacted, user_message
from helikon.sessions.postgres import PostgresSession
from helikon.sessions.testkit import numbered
from tests.sessions.util import first_text


async def test_table_layout(postgres_pool: tuple[Any, str]) -> None:
    pool, schema = postgres_pool
    session = PostgresSession.open_without_migrate(pool, "s", schema=schema)
    await session.append([user_message("hi")])
    async with pool.acquire() as conn:
        cols = {
            r["column_name"]: r["data_type"]
            for r in await conn.fetch(
                "SELECT column_name, data_type FROM information_schema.columns"
                " WHERE table_schema = $1 AND table_name = 'session_events'",
                schema,
            )
        }
        row = await conn.fetchrow(f'SELECT * FROM "{schema}".session_events')
    assert cols == {
        "session_id": "text",
        "sequence": "bigint",
        "kind": "text",
        "payload": "jsonb",
        "ts": "timestamp with time zone",
        "hash": "bytea",
    }
    assert row["session_id"] == "s" and row["sequence"] == 0 and row["kind"] == "user_message"
    assert json.loads(row["payload"])["content"][0]["text"] == "hi"


async def test_concurrent_migrations_are_serialized(postgres_dsn: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    schema = f"helikon_test_{uuid.uuid4().hex[:12]}"
    pool = await asyncpg.create_pool(postgres_dsn, min_size=1, max_size=6)
    try:
        await asyncio.gather(*(PostgresSession.migrate(pool, schema=schema) for _ in range(6)))
        session = await PostgresSession.open(pool, "s", schema=schema)
        assert await session.append([user_message("x")]) == [0]
        async with pool.acquire() as conn:
            assert await conn.fetchval(f'SELECT count(*) FROM "{schema}".helikon_migrations') == 2
    finally:
        async with pool.acquire() as conn:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await pool.close()


async def test_failure_mid_batch_rolls_back_everything(postgres_pool: tuple[Any, str]) -> None:
    """A row the database rejects half-way through a batch leaves no trace of the batch."""
    pool, schema = postgres_pool
    async with pool.acquire() as conn:
        await conn.execute(
            f'CREATE FUNCTION "{schema}".boom() RETURNS trigger LANGUAGE plpgsql AS $$'
            " BEGIN RAISE EXCEPTION 'injected failure'; END $$"
        )
        await conn.execute(
            f'CREATE TRIGGER boom BEFORE INSERT ON "{schema}".session_events FOR EACH ROW'
            " WHEN (NEW.payload->>'summary' = 'BOOM')"
            f' EXECUTE FUNCTION "{schema}".boom()'
        )
    session = PostgresSession.open_without_migrate(pool, "s", schema=schema)
    await session.append(numbered("before", 2))
    with pytest.raises(SessionBackendError, match="injected failure"):
        await session.append([*numbered("doomed", 2), compacted("BOOM", 1), *numbered("x", 1)])
    assert len(await session.events()) == 2
    assert await session.append(numbered("after", 1)) == [2]


async def test_advisory_lock_serializes_one_session_only(postgres_pool: tuple[Any, str]) -> None:
    """A writer holding session A's lock blocks A's appends, not B's."""
    pool, schema = postgres_pool
    a = PostgresSession.open_without_migrate(pool, "A", schema=schema)
    b = PostgresSession.open_without_migrate(pool, "B", schema=schema)
    async with pool.acquire() as holder, holder.transaction():
        await holder.execute("SELECT pg_advisory_xact_lock(hashtextextended('A', 0))")
        blocked = asyncio.ensure_future(a.append(numbered("a", 1)))
        assert await asyncio.wait_for(b.append(numbered("b", 1)), 5) == [0]
        await asyncio.sleep(0.2)
        assert not blocked.done(), "A's append must wait for A's advisory lock"
    assert await asyncio.wait_for(blocked, 5) == [0]


async def test_nul_characters_are_replaced(postgres_pool: tuple[Any, str]) -> None:
    pool, schema = postgres_pool
    session = PostgresSession.open_without_migrate(pool, "nul", schema=schema)
    await session.append([user_message("a\x00b"), user_message("literal \\u0000 stays")])
    texts = [first_text(e) for e in await session.events()]
    assert texts == ["a\ufffdb", "literal \\u0000 stays"]


async def test_schema_must_be_an_identifier(postgres_pool: tuple[Any, str]) -> None:
    pool, _ = postgres_pool
    with pytest.raises(ConfigError, match="identifier"):
        PostgresSession(pool, "s", schema='x"; DROP TABLE y; --')
    with pytest.raises(ConfigError):
        PostgresSession(pool, "")


async def test_unreachable_server_is_unavailable() -> None:
    import asyncpg

    class Ctx:
        async def __aenter__(self) -> Any:
            return await asyncpg.connect("postgresql://nobody@127.0.0.1:9/none", timeout=2)

        async def __aexit__(self, *exc: object) -> None:
            return None

    class Pool:
        def acquire(self) -> Ctx:
            return Ctx()

    session = PostgresSession(Pool(), "s")
    with pytest.raises(SessionUnavailable):
        await session.append([user_message("x")])
    with pytest.raises(SessionUnavailable):
        await session.events()


async def test_closed_pool_is_unavailable(postgres_dsn: str) -> None:
    import asyncpg

    pool = await asyncpg.create_pool(postgres_dsn, min_size=1, max_size=1)
    await pool.close()
    session = PostgresSession(pool, "s")
    with pytest.raises(SessionUnavailable):
        await session.events()
