"""``SqliteSession(session_id, path)`` (the one-line form) and ``snapshot(last=n)`` on every
built-in backend."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from helikon import Agent, ConfigError, Runner
from helikon.sessions import (
    CompactingSession,
    MemorySession,
    assistant_message,
    last_items,
    user_message,
)
from helikon.sessions.sqlite import SqlitePool, SqliteSession
from helikon.testing import MockModel, Text

REPO = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- one line


def _chat(db: Path, text: str) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        from helikon import Agent, Runner
        from helikon.core.items import text_of
        from helikon.sessions import SqliteSession
        from helikon.testing import MockModel, Text

        session = SqliteSession("user-42", {str(db)!r})
        agent = Agent(name="a", model=MockModel([[Text("noted")]]))
        asyncio.run(Runner.run(agent, {text!r}, session=session))
        items = asyncio.run(session.snapshot())
        print("|".join(text_of(i.content) for i in items))
        """
    )
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )


def test_one_line_session_survives_a_restart_and_lets_the_process_exit(tmp_path: Path) -> None:
    """No close() anywhere: each process must still exit (no connection thread left open)."""
    db = tmp_path / "chats.db"
    first = _chat(db, "My name is Ada.")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "My name is Ada.|noted"
    second = _chat(db, "What is my name?")
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "My name is Ada.|noted|What is my name?|noted"


async def test_one_line_and_pooled_sessions_share_the_file(tmp_path: Path) -> None:
    db = tmp_path / "chats.db"
    one = SqliteSession("user-1", db)
    await Runner.run(Agent(name="a", model=MockModel([[Text("hello")]])), "hi", session=one)
    async with await SqlitePool.connect(db) as pool:
        pooled = await SqliteSession.open(pool, "user-1")
        assert [i.type for i in await pooled.snapshot()] == ["user_message", "assistant_message"]
        assert await pooled.events() == await one.events()
    assert repr(one) == f"SqliteSession({str(db)!r}, 'user-1')"
    assert one.session_id == "user-1"


@pytest.mark.parametrize("name", ["chats.db", "data/x.sqlite", "h.SQLITE3"])
def test_swapped_arguments_are_named(name: str) -> None:
    with pytest.raises(ConfigError) as caught:
        SqliteSession(name, "user-42")
    assert str(caught.value) == (
        f"SqliteSession({name!r}, 'user-42'): the session id comes first, then the file: "
        f"SqliteSession('user-42', {name!r})"
    )


def test_one_line_session_needs_an_id_and_a_file() -> None:
    with pytest.raises(ConfigError) as caught:
        SqliteSession("", "chats.db")
    assert str(caught.value) == "SqliteSession: session_id must be a non-empty str, got ''"
    with pytest.raises(ConfigError) as caught:
        SqliteSession("user-1", ":memory:")
    assert str(caught.value) == (
        "SqlitePool: keep_connections=False with ':memory:' would lose the database after "
        "every operation; use a file path, or MemorySession for a session in memory"
    )
    with pytest.raises(ConfigError) as caught:
        SqliteSession(42, "user-1")  # type: ignore[call-overload]
    assert str(caught.value) == (
        "SqliteSession(pool=...) must be a SqlitePool, got int; pass a pool: "
        "pool = await SqlitePool.connect(path)"
    )


async def test_a_pool_without_kept_connections_holds_none_open(tmp_path: Path) -> None:
    pool = SqlitePool(tmp_path / "x.db", keep_connections=False, write_on_loop_thread=True)
    assert pool.write_on_loop_thread is False
    session = await SqliteSession.open(pool, "s")
    await session.append([user_message("hi")])
    assert pool._open == set() and pool._idle == []


# -------------------------------------------------------------------- snapshot(last=n)


@pytest.fixture(params=["memory", "compacting", "sqlite-one-line", "sqlite-pooled"])
async def session(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    kind = request.param
    if kind == "memory":
        yield MemorySession()
    elif kind == "compacting":
        yield CompactingSession(MemorySession(), MockModel([]), threshold=10**9)
    elif kind == "sqlite-one-line":
        yield SqliteSession("s", tmp_path / "last.db")
    else:
        async with await SqlitePool.connect(tmp_path / "pooled.db") as pool:
            yield await SqliteSession.open(pool, "s")


async def _check_last(session: Any) -> None:
    await session.append(
        [
            user_message("one"),
            assistant_message("1", "a"),
            user_message("two"),
            assistant_message("2", "a"),
        ]
    )
    everything = await session.snapshot()
    assert len(everything) == 4
    assert await session.snapshot(last=2) == everything[-2:]
    assert [i.type for i in await session.snapshot(last=3)] == [
        "assistant_message",
        "user_message",
        "assistant_message",
    ]
    assert await session.snapshot(last=0) == []
    assert await session.snapshot(last=10) == everything
    assert await session.snapshot(last=None) == everything
    name = type(session).__name__
    for bad in (-1, True, "2", 1.5):
        with pytest.raises(ConfigError) as caught:
            await session.snapshot(last=bad)
        assert str(caught.value) == (
            f"{name}.snapshot(last=...) must be an int >= 0 or None, got {bad!r}"
        )


async def test_snapshot_last_gives_the_final_items(session: Any) -> None:
    await _check_last(session)


async def test_snapshot_last_on_redis(redis_client: tuple[Any, str]) -> None:
    from helikon.sessions.redis import RedisSession

    client, prefix = redis_client
    await _check_last(RedisSession(client, "s", prefix=prefix))


async def test_snapshot_last_on_postgres(postgres_pool: tuple[Any, str]) -> None:
    from helikon.sessions.postgres import PostgresSession

    pool, schema = postgres_pool
    await _check_last(PostgresSession.open_without_migrate(pool, "s", schema=schema))


def test_last_items_on_a_list() -> None:
    assert last_items([1, 2, 3], 1) == [3]
    assert last_items([], 3) == []
    with pytest.raises(ConfigError, match=r"^snapshot\(last=\.\.\.\) must be an int >= 0"):
        last_items([1], -2)
