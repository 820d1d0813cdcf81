"""``helikon verify SESSION_URL`` on SQLite, Redis and PostgreSQL stores written by real
appends, then edited behind the backend's back: exit codes, the named record, JSON."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

pytest.importorskip("blake3", reason="the hash chain needs blake3 (the sqlite extra has it)")
pytest.importorskip("aiosqlite")

from helikon.cli.main import app
from helikon.sessions import user_message
from tests.conftest import require_service
from tests.sessions import backends


def _verify(*args: str) -> Any:
    return CliRunner().invoke(app, ["verify", *args])


def test_sqlite_ok_then_tampered_with_the_record_named(tmp_path: Path) -> None:
    from helikon.sessions.sqlite import SqliteSession

    db = tmp_path / "s.db"
    for sid, n in (("alpha", 4), ("beta", 2)):
        asyncio.run(SqliteSession(sid, db).append([user_message(f"m{i}") for i in range(n)]))
    r = _verify(f"sqlite://{db}")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert [line.split(", head ")[0] for line in lines] == [
        "alpha: ok, 4 of 4 records chained",
        "beta: ok, 2 of 2 records chained",
    ]
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE session_events SET payload = replace(payload, 'm2', 'mm')"
        " WHERE session_id = 'alpha' AND sequence = 2"
    )
    conn.commit()
    conn.close()
    r = _verify(f"sqlite://{db}")
    assert r.exit_code == 1
    assert r.output.splitlines()[0] == (
        "alpha: TAMPERED at record 2: its content or its predecessor's hash changed (4 records)"
    )
    r = _verify(f"sqlite://{db}#beta", "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert list(doc) == ["beta"] and doc["beta"]["first_bad"] is None
    assert (doc["beta"]["chained"], len(doc["beta"]["head"])) == (2, 64)
    bad = _verify(f"sqlite://{db}#gamma")
    assert bad.exit_code == 2 and "has no session 'gamma'" in bad.output


def test_redis_and_postgres_stores_verify_and_name_a_removed_record() -> None:
    require_service("redis", backends.redis_available)
    require_service("postgres", lambda: backends.postgres_dsn() is not None)
    import asyncpg  # type: ignore[import-untyped]
    import redis.asyncio as aioredis

    from helikon.sessions.postgres import PostgresSession
    from helikon.sessions.redis import RedisSession

    prefix = f"helikon-test-{uuid.uuid4().hex[:12]}"
    schema = f"helikon_test_{uuid.uuid4().hex[:12]}"
    dsn = backends.postgres_dsn()
    assert dsn is not None

    async def write() -> None:
        client = aioredis.Redis.from_url(backends.REDIS_URL)
        await RedisSession(client, "r1", prefix=prefix).append([user_message("a")] * 3)
        await client.xdel(f"{prefix}:session:r1:events", "1-1")
        await client.aclose()
        pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2)
        await PostgresSession.migrate(pool, schema=schema)
        await PostgresSession.open_without_migrate(pool, "p1", schema=schema).append(
            [user_message("a")] * 3
        )
        await pool.close()

    async def clean() -> None:
        client = aioredis.Redis.from_url(backends.REDIS_URL)
        keys = [k async for k in client.scan_iter(match=f"{prefix}:*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()
        conn = await asyncpg.connect(dsn)
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await conn.close()

    asyncio.run(write())
    try:
        r = _verify(f"{backends.REDIS_URL}?prefix={prefix}")
        assert r.exit_code == 1
        assert r.output.strip() == (
            "r1: TAMPERED at record 1: record 1 is missing (the next is 2) (2 records)"
        )
        r = _verify(f"{dsn}?schema={schema}")
        assert r.exit_code == 0, r.output
        assert r.output.startswith("p1: ok, 3 of 3 records chained, head ")
    finally:
        asyncio.run(clean())


def test_a_log_with_every_hash_removed_is_not_verified_and_strict_fails_unchained(
    tmp_path: Path,
) -> None:
    from helikon.sessions.sqlite import SqliteSession

    db = tmp_path / "s.db"
    for sid in ("alpha", "beta"):
        asyncio.run(SqliteSession(sid, db).append([user_message(f"m{i}") for i in range(3)]))
    conn = sqlite3.connect(db)
    conn.execute("UPDATE session_events SET hash = NULL WHERE session_id = 'alpha'")
    conn.commit()
    conn.close()
    r = _verify(f"sqlite://{db}#alpha")
    assert r.exit_code == 3, r.output
    assert r.output.splitlines() == [
        "alpha: not verified: no record is chained (3 records, none with a hash: written "
        "before the chain, or their hashes were removed)"
    ]
    r = _verify(f"sqlite://{db}#alpha", "--format", "json")
    assert r.exit_code == 3
    doc = json.loads(r.output)["alpha"]
    assert (doc["status"], doc["chained"], doc["unchained"]) == ("unverified", 0, [0, 1, 2])
    assert _verify(f"sqlite://{db}#alpha", "--strict").exit_code == 1
    # a fully chained log passes --strict too
    r = _verify(f"sqlite://{db}#beta", "--strict")
    assert r.exit_code == 0, r.output
    assert r.output.split(", head ")[0] == "beta: ok, 3 of 3 records chained"
    # the whole store: one log not verified, none tampered
    r = _verify(f"sqlite://{db}")
    assert r.exit_code == 3 and r.output.startswith("alpha: not verified: no record is chained")
