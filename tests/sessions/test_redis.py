"""RedisSession specifics: key layout, entry fields, the Lua script's guard, errors."""

from __future__ import annotations

from typing import Any

import pytest

from helikon.errors import SessionBackendError, SessionUnavailable
from helikon.sessions import SequenceId, tool_called, user_message
from helikon.sessions.redis import RedisSession
from helikon.sessions.testkit import numbered
from tests.sessions.util import first_text


async def test_stream_layout_and_fields(redis_client: tuple[Any, str]) -> None:
    client, prefix = redis_client
    session = RedisSession(client, "user-42", prefix=prefix)
    ev = tool_called("c1", "calc", {"x": 1})
    assert await session.append([user_message("hi"), ev]) == [0, 1]
    assert session.events_key == f"{prefix}:session:user-42:events"
    assert await client.get(session.seq_key) == b"2"
    entries = await client.xrange(session.events_key)
    assert [e[0] for e in entries] == [b"0-1", b"1-1"]
    fields = entries[1][1]
    assert fields[b"seq"] == b"1" and fields[b"kind"] == b"tool_called"
    assert int(fields[b"ts"]) == int(ev.ts.timestamp() * 1_000_000) * 1000
    assert b'"call_id":"c1"' in fields[b"payload"]


async def test_default_prefix_matches_the_spec(redis_client: tuple[Any, str]) -> None:
    client, _ = redis_client
    session = RedisSession(client, "user-42")
    assert session.events_key == "helikon:session:user-42:events"
    assert session.seq_key == "helikon:session:user-42:seq"


async def test_decode_responses_client_works(redis_url: str, redis_client: tuple[Any, str]) -> None:
    import redis.asyncio as aioredis

    _, prefix = redis_client
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        session = RedisSession(client, "text", prefix=prefix)
        await session.append(numbered("t", 3))
        assert len(await session.events(SequenceId(0))) == 2
    finally:
        await client.aclose()


async def test_paged_reads(redis_client: tuple[Any, str]) -> None:
    client, prefix = redis_client
    session = RedisSession(client, "big", prefix=prefix)
    await session.append(numbered("m", 1300))
    log = await session.events()
    assert len(log) == 1300 and first_text(log[-1]) == "m 1299"
    assert len(await session.events(SequenceId(1000))) == 299


async def test_counter_behind_stream_refuses_instead_of_reusing(
    redis_client: tuple[Any, str],
) -> None:
    """An evicted counter must not hand out used positions: nothing is written."""
    client, prefix = redis_client
    session = RedisSession(client, "evicted", prefix=prefix)
    await session.append(numbered("a", 3))
    await client.delete(session.seq_key)
    with pytest.raises(SessionBackendError, match="behind"):
        await session.append(numbered("b", 2))
    assert await client.xlen(session.events_key) == 3
    await client.set(session.seq_key, 3)
    assert await session.append(numbered("c", 1)) == [3]


async def test_wrong_type_key_is_a_backend_error(redis_client: tuple[Any, str]) -> None:
    client, prefix = redis_client
    session = RedisSession(client, "wrong", prefix=prefix)
    await client.set(session.events_key, "not a stream")
    with pytest.raises(SessionBackendError):
        await session.append(numbered("x", 1))
    with pytest.raises(SessionBackendError):
        await session.events()


async def test_unreachable_server_is_unavailable() -> None:
    with pytest.raises(SessionUnavailable):
        await RedisSession.connect("redis://127.0.0.1:9/0", "s")
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url("redis://127.0.0.1:9/0")
    try:
        session = RedisSession(client, "s")
        with pytest.raises(SessionUnavailable):
            await session.append([user_message("x")])
        with pytest.raises(SessionUnavailable):
            await session.events()
    finally:
        await client.aclose()


async def test_connect_helper(redis_url: str, redis_client: tuple[Any, str]) -> None:
    _, prefix = redis_client
    session = await RedisSession.connect(redis_url, "c", prefix=prefix)
    try:
        await session.append([user_message("x")])
        assert len(await session.events()) == 1
    finally:
        await session.client.aclose()
