"""append() given something other than a list of session events: a ConfigError, nothing written.

Every backend serializes through the same codec, so each one refuses the same mistakes: a
single event instead of a list, a conversation item (``UserMessage``) instead of its event,
a plain dict.
"""

from __future__ import annotations

from typing import Any

import pytest

from helikon import TextPart, UserMessage
from helikon.errors import ConfigError
from helikon.sessions import MemorySession, Session, user_message


async def _check_refusals(session: Session) -> None:
    kept = [user_message("kept")]
    await session.append(kept)

    with pytest.raises(ConfigError) as exc:
        await session.append(user_message("alone"))  # type: ignore[arg-type]
    assert str(exc.value) == (
        "append(events) takes a list of events; got a single UserMessageEvent: pass [event]"
    )

    item = UserMessage(content=[TextPart(text="an item")])
    with pytest.raises(ConfigError) as exc:
        await session.append([user_message("fine"), item])  # type: ignore[list-item]
    assert str(exc.value).startswith(
        "append(events): events[1] is a UserMessage (that is a conversation item; sessions "
        "store events), not a session event; expected a SessionEvent"
    )

    with pytest.raises(ConfigError, match=r"events\[0\] is a dict, not a session event"):
        await session.append([{"type": "user_message", "content": "x"}])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match=r"takes a list of session events, got str"):
        await session.append("hello")  # type: ignore[arg-type]

    # nothing of the refused batches was written; the session still works
    assert [e.model_dump(mode="json") for e in await session.events()] == [
        e.model_dump(mode="json") for e in kept
    ]
    assert await session.append([user_message("after")]) == [1]


@pytest.mark.asyncio
async def test_memory_session_refuses_non_events() -> None:
    await _check_refusals(MemorySession())


@pytest.mark.asyncio
async def test_sqlite_session_refuses_non_events(sqlite_pool: Any) -> None:
    from helikon.sessions.sqlite import SqliteSession

    await _check_refusals(await SqliteSession.open(sqlite_pool, "append-errors"))


@pytest.mark.asyncio
async def test_redis_session_refuses_non_events(redis_client: tuple[Any, str]) -> None:
    from helikon.sessions.redis import RedisSession

    client, prefix = redis_client
    await _check_refusals(RedisSession(client, "append-errors", prefix=prefix))


@pytest.mark.asyncio
async def test_postgres_session_refuses_non_events(postgres_pool: tuple[Any, str]) -> None:
    from helikon.sessions.postgres import PostgresSession

    pool, schema = postgres_pool
    session = PostgresSession.open_without_migrate(pool, "append-errors", schema=schema)
    await _check_refusals(session)
