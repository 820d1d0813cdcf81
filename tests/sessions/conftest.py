"""Fixtures giving each sessions test a private SQLite file, Redis prefix or Postgres schema."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_service
from tests.sessions import backends


@pytest.fixture
def redis_url() -> str:
    require_service("redis", backends.redis_available)
    return backends.REDIS_URL


@pytest.fixture
def postgres_dsn() -> str:
    require_service("postgres", lambda: backends.postgres_dsn() is not None)
    dsn = backends.postgres_dsn()
    assert dsn is not None
    return dsn


@pytest.fixture
async def sqlite_pool(tmp_path: Path) -> AsyncIterator[Any]:
    from helikon.sessions.sqlite import SqlitePool

    pool = await SqlitePool.connect(tmp_path / "sessions.db", max_connections=8)
    yield pool
    await pool.close()


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[tuple[Any, str]]:
    """A client and a key prefix unique to this test; the prefix's keys are deleted after."""
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis_url)
    prefix = f"helikon-test-{uuid.uuid4().hex[:12]}"
    yield client, prefix
    keys = [k async for k in client.scan_iter(match=f"{prefix}:*", count=500)]
    if keys:
        await client.delete(*keys)
    await client.aclose()


@pytest.fixture
async def postgres_pool(postgres_dsn: str) -> AsyncIterator[tuple[Any, str]]:
    """A pool and a schema unique to this test (dropped after)."""
    import asyncpg  # type: ignore[import-untyped]

    from helikon.sessions.postgres import PostgresSession

    pool = await asyncpg.create_pool(postgres_dsn, min_size=1, max_size=10)
    schema = f"helikon_test_{uuid.uuid4().hex[:12]}"
    await PostgresSession.migrate(pool, schema=schema)
    yield pool, schema
    async with pool.acquire() as conn:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    await pool.close()
