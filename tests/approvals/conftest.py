"""Fixtures for the cross-process approval tests."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from tests.conftest import require_service
from tests.sessions import backends


@pytest.fixture
def postgres_schema() -> Iterator[tuple[str, str]]:
    """A DSN and a migrated schema unique to this test (dropped after)."""
    require_service("postgres", lambda: backends.postgres_dsn() is not None)
    dsn = backends.postgres_dsn()
    assert dsn is not None
    schema = f"helikon_appr_{uuid.uuid4().hex[:12]}"

    async def setup() -> None:
        import asyncpg  # type: ignore[import-untyped]

        from helikon.sessions.postgres import PostgresSession

        pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2)
        await PostgresSession.migrate(pool, schema=schema)
        await pool.close()

    async def teardown() -> None:
        import asyncpg

        conn = await asyncpg.connect(dsn)
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await conn.close()

    asyncio.run(setup())
    yield dsn, schema
    asyncio.run(teardown())
