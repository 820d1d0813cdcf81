"""MemorySession specifics: stored as JSON like the durable backends, thread-safe."""

from __future__ import annotations

import asyncio
import threading

import pytest

from helikon.errors import ConfigError, SessionOther
from helikon.sessions import MemorySession, SequenceId, Session, tool_called, user_message


async def test_later_mutation_of_args_does_not_leak_into_the_log() -> None:
    session = MemorySession()
    args = {"path": "a.txt"}
    await session.append([tool_called("c1", "read", args)])
    args["path"] = "changed"
    (event,) = await session.events()
    assert event.args == {"path": "a.txt"}  # type: ignore[union-attr]


async def test_unserializable_event_fails_like_a_durable_backend() -> None:
    session = MemorySession()
    with pytest.raises(SessionOther, match="not JSON"):
        await session.append([user_message("ok"), tool_called("c", "t", {"x": object()})])
    assert len(session) == 0


async def test_since_must_be_a_position() -> None:
    session = MemorySession()
    with pytest.raises(ConfigError):
        await session.events(SequenceId(-1))
    with pytest.raises(ConfigError):
        await session.events(True)  # type: ignore[arg-type]


def test_threads_append_without_losing_events() -> None:
    session = MemorySession()

    def work(n: int) -> None:
        for i in range(50):
            asyncio.run(session.append([user_message(f"{n}-{i}")]))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(session) == 200


def test_satisfies_the_protocol() -> None:
    assert isinstance(MemorySession(), Session)
