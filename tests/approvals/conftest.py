"""Fixtures for the cross-process approval tests."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

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


@pytest.fixture(params=["sqlite", "postgres"])
def backend_env(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    env = {"APPROVAL_BACKEND": request.param, "APPROVAL_SESSION": f"s-{uuid.uuid4().hex[:8]}"}
    if request.param == "sqlite":
        env["HELIKON_TEST_SQLITE_PATH"] = str(tmp_path / "sessions.db")
        return env
    dsn, schema = request.getfixturevalue("postgres_schema")
    env["HELIKON_TEST_POSTGRES_DSN"] = dsn
    env["HELIKON_TEST_POSTGRES_SCHEMA"] = schema
    return env
