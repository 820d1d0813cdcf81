"""SqliteSession specifics: pragmas, migrations, the write lock, errors."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from helikon.errors import ConfigError, SessionBackendError, SessionUnavailable
from helikon.sessions import user_message
from helikon.sessions.sqlite import SqlitePool, SqliteSession
from helikon.sessions.testkit import numbered
from tests.sessions.util import first_text


async def test_connections_use_wal_normal_and_busy_timeout(tmp_path: Path) -> None:
    pragmas = {}
    async with (
        await SqlitePool.connect(tmp_path / "s.db", busy_timeout=7.5) as pool,
        pool.acquire() as conn,
    ):
        for name in ("journal_mode", "synchronous", "busy_timeout"):
            async with conn.execute(f"PRAGMA {name}") as cur:
                row = await cur.fetchone()
                assert row is not None
                pragmas[name] = row[0]
    assert pragmas == {"journal_mode": "wal", "synchronous": 1, "busy_timeout": 7500}


async def test_schema_and_migrations_are_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with await SqlitePool.connect(path) as pool:
        await asyncio.gather(*(SqliteSession.migrate(pool) for _ in range(4)))
        session = await SqliteSession.open(pool, "a")
        await session.append([user_message("x")])
        await SqliteSession.migrate(pool)
        assert len(await session.events()) == 1
    db = sqlite3.connect(path)
    try:
        versions = db.execute("SELECT version FROM helikon_migrations").fetchall()
        table = db.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'session_events'"
        ).fetchone()[0]
        row = db.execute("SELECT session_id, sequence, kind, ts FROM session_events").fetchone()
    finally:
        db.close()
    assert versions == [(1,), (2,)]
    assert "PRIMARY KEY (session_id, sequence)" in table and "WITHOUT ROWID" in table
    assert row[:3] == ("a", 0, "user_message") and row[3].endswith("+00:00")


async def test_many_sessions_share_one_file(tmp_path: Path) -> None:
    async with await SqlitePool.connect(tmp_path / "s.db") as pool:
        await SqliteSession.migrate(pool)
        sessions = [SqliteSession.open_without_migrate(pool, f"user-{i}") for i in range(20)]
        await asyncio.gather(*(s.append(numbered(s.session_id, 3)) for s in sessions))
        for s in sessions:
            assert [first_text(e) for e in await s.events()] == [
                f"{s.session_id} {i}" for i in range(3)
            ]


async def test_locked_database_fails_cleanly_and_stays_usable(tmp_path: Path) -> None:
    """The spec: an append that exhausts busy_timeout raises Backend('database is locked'),
    persists nothing, and the session stays usable."""
    path = tmp_path / "s.db"
    async with await SqlitePool.connect(path, busy_timeout=0.2) as pool:
        session = await SqliteSession.open(pool, "s")
        await session.append(numbered("before", 2))
        blocker = sqlite3.connect(path, isolation_level=None)
        try:
            blocker.execute("BEGIN IMMEDIATE")
            with pytest.raises(SessionBackendError, match="database is locked"):
                await session.append(numbered("blocked", 3))
            assert len(await session.events()) == 2, "WAL readers are not blocked by a writer"
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert await session.append(numbered("after", 1)) == [2]
        texts = [first_text(e) for e in await session.events()]
        assert texts == ["before 0", "before 1", "after 0"]


async def test_writers_in_several_pools_serialize(tmp_path: Path) -> None:
    """Separate pools (as separate processes would have) contend on the file lock."""
    path = tmp_path / "s.db"
    pools = [await SqlitePool.connect(path, max_connections=2) for _ in range(3)]
    try:
        await SqliteSession.migrate(pools[0])
        sessions = [SqliteSession.open_without_migrate(p, "shared") for p in pools]

        async def write(i: int, s: SqliteSession) -> list[int]:
            ids: list[int] = []
            for a in range(10):
                ids += await s.append(numbered(f"p{i}-{a}", 2))
            return ids

        got = await asyncio.gather(*(write(i, s) for i, s in enumerate(sessions)))
        assert sorted(x for ids in got for x in ids) == list(range(60))
    finally:
        for p in pools:
            await p.close()


async def test_closed_pool_is_unavailable(tmp_path: Path) -> None:
    pool = await SqlitePool.connect(tmp_path / "s.db")
    session = await SqliteSession.open(pool, "s")
    await pool.close()
    with pytest.raises(SessionUnavailable):
        await session.events()
    with pytest.raises(SessionUnavailable):
        await session.append([user_message("x")])


async def test_unopenable_file_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(SessionUnavailable):
        await SqlitePool.connect(tmp_path / "missing-dir" / "s.db")


async def test_corrupt_row_raises_session_other(tmp_path: Path) -> None:
    from helikon.errors import SessionOther

    path = tmp_path / "s.db"
    async with await SqlitePool.connect(path) as pool:
        session = await SqliteSession.open(pool, "s")
        await session.append([user_message("x")])
        db = sqlite3.connect(path)
        db.execute('UPDATE session_events SET payload = \'{"type": "nope"}\'')
        db.commit()
        db.close()
        with pytest.raises(SessionOther, match="does not parse"):
            await session.events()


@pytest.mark.parametrize(
    "kwargs", [{"max_connections": 0}, {"busy_timeout": -1}, {"synchronous": "OFF"}]
)
def test_bad_pool_arguments(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        SqlitePool(tmp_path / "s.db", **kwargs)


async def test_bad_arguments(sqlite_pool: SqlitePool) -> None:
    with pytest.raises(ConfigError):
        SqliteSession(sqlite_pool, "")
    session = await SqliteSession.open(sqlite_pool, "s")
    with pytest.raises(ConfigError, match="since"):
        await session.events(-1)  # type: ignore[arg-type]


async def test_memory_database_uses_one_connection() -> None:
    async with await SqlitePool.connect(":memory:", max_connections=5) as pool:
        assert pool.max_connections == 1
        session = await SqliteSession.open(pool, "m")
        await asyncio.gather(*(session.append([user_message(str(i))]) for i in range(5)))
        assert len(await session.events()) == 5
