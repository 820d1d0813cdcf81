"""Sessions given the wrong object (a path, a DSN, a URL, a model name, an un-awaited open)
fail at once with a ConfigError saying what to pass, not later with an AttributeError."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from helikon.errors import ConfigError
from helikon.sessions import CompactingSession, MemorySession, user_message
from helikon.testing import MockModel, Text


async def test_sqlite_open_with_a_path_says_to_connect_a_pool(tmp_path: Path) -> None:
    from helikon.sessions.sqlite import SqliteSession

    with pytest.raises(ConfigError) as exc:
        await SqliteSession.open("chat.db", "id")
    assert str(exc.value) == (
        "SqliteSession.open(pool=...) must be a SqlitePool, got str; "
        "pass a pool: pool = await SqlitePool.connect('chat.db')"
    )
    with pytest.raises(ConfigError) as exc:
        await SqliteSession.open(tmp_path / "chat.db", "id")
    assert f"pool = await SqlitePool.connect('{tmp_path / 'chat.db'}')" in str(exc.value)
    assert not (tmp_path / "chat.db").exists()  # nothing was created
    with pytest.raises(ConfigError) as exc:
        SqliteSession.open_without_migrate("chat.db", "id")  # type: ignore[arg-type]
    assert str(exc.value).startswith(
        "SqliteSession.open_without_migrate(pool=...) must be a SqlitePool, got str;"
    )
    with pytest.raises(ConfigError) as exc:
        await SqliteSession.migrate(None)  # type: ignore[arg-type]
    assert str(exc.value) == (
        "SqliteSession.migrate(pool=...) must be a SqlitePool, got NoneType; "
        "pass a pool: pool = await SqlitePool.connect(path)"
    )


async def test_sqlite_open_with_an_unawaited_connect_says_to_await(tmp_path: Path) -> None:
    from helikon.sessions.sqlite import SqlitePool, SqliteSession

    with pytest.raises(ConfigError) as exc:
        await SqliteSession.open(SqlitePool.connect(tmp_path / "x.db"), "id")  # type: ignore[arg-type]
    assert str(exc.value) == (
        "SqliteSession.open(pool=...) must be a SqlitePool, got coroutine; "
        "did you forget to await SqlitePool.connect(...)?"
    )
    gc.collect()  # the coroutine was closed: no "never awaited" warning (warnings are errors)


async def test_sqlite_with_a_real_pool_still_opens(sqlite_pool: Any) -> None:
    from helikon.sessions.sqlite import SqliteSession

    session = await SqliteSession.open(sqlite_pool, "ok")
    assert await session.append([user_message("hi")]) == [0]


async def test_postgres_open_with_a_dsn_says_to_create_a_pool() -> None:
    from helikon.sessions.postgres import PostgresSession

    dsn = "postgresql://app:secret@localhost/app"
    with pytest.raises(ConfigError) as exc:
        await PostgresSession.open(dsn, "id")
    assert str(exc.value) == (
        "PostgresSession.open(pool=...) must be an asyncpg pool, got str; "
        "pass a pool: pool = await asyncpg.create_pool(dsn)"
    )
    assert "secret" not in str(exc.value)
    with pytest.raises(ConfigError) as exc:
        await PostgresSession.migrate(dsn)
    assert str(exc.value).startswith("PostgresSession.migrate(pool=...) must be an asyncpg pool")
    with pytest.raises(ConfigError) as exc:
        PostgresSession.open_without_migrate(dsn, "id")
    assert str(exc.value).startswith("PostgresSession(pool=...) must be an asyncpg pool, got str")


async def test_postgres_with_a_real_pool_still_opens(postgres_pool: tuple[Any, str]) -> None:
    from helikon.sessions.postgres import PostgresSession

    pool, schema = postgres_pool
    session = await PostgresSession.open(pool, "ok", schema=schema)
    assert await session.append([user_message("hi")]) == [0]


def test_redis_with_a_url_says_to_make_a_client() -> None:
    from helikon.sessions.redis import RedisSession

    with pytest.raises(ConfigError) as exc:
        RedisSession("redis://localhost:6379/0", "id")  # type: ignore[arg-type]
    assert str(exc.value) == (
        "RedisSession(client=...) must be a redis.asyncio.Redis client, got str; "
        "pass a client: RedisSession(redis.asyncio.Redis.from_url(url), session_id), "
        "or use await RedisSession.connect(url, session_id)"
    )
    with pytest.raises(ConfigError) as exc:
        RedisSession(None, "id")  # type: ignore[arg-type]
    assert str(exc.value) == (
        "RedisSession(client=...) must be a redis.asyncio.Redis client, got NoneType; "
        "pass a client: RedisSession(redis.asyncio.Redis.from_url(url), session_id)"
    )


@pytest.mark.parametrize(
    ("model", "got"),
    [("gpt-5-mini", "the str 'gpt-5-mini'"), (None, "NoneType"), (object(), "object")],
)
def test_compacting_session_needs_a_model_object(model: Any, got: str) -> None:
    with pytest.raises(ConfigError) as exc:
        CompactingSession(MemorySession(), model, threshold=1)
    assert str(exc.value) == (
        "CompactingSession(model=...) must be a helikon Model (an object with an invoke() "
        f'method), got {got}; pass a model instance, e.g. OpenAIModel.chat("gpt-5-mini") '
        "or MockModel([...])"
    )


async def test_compacting_session_needs_an_awaited_session(tmp_path: Path) -> None:
    from helikon.sessions.sqlite import SqlitePool, SqliteSession

    model = MockModel([[Text("S")]])
    async with await SqlitePool.connect(tmp_path / "s.db") as pool:
        with pytest.raises(ConfigError) as exc:
            CompactingSession(SqliteSession.open(pool, "x"), model, threshold=1)  # type: ignore[arg-type]
        assert str(exc.value) == (
            "CompactingSession(inner=...) must be a Session (MemorySession, SqliteSession, "
            "RedisSession, PostgresSession, ...), got coroutine; "
            "did you forget to await SqliteSession.open(...)?"
        )
        gc.collect()  # closed, so no "never awaited" warning
        # the awaited session works, and compacts
        session = CompactingSession(await SqliteSession.open(pool, "x"), model, threshold=1)
        await session.append([user_message("a long enough message")])
        assert session.compactions == 1
    with pytest.raises(ConfigError) as exc:
        CompactingSession("chat.db", model, threshold=1)  # type: ignore[arg-type]
    assert str(exc.value).endswith(
        "got str; e.g. CompactingSession(MemorySession(), model, threshold=...)"
    )
