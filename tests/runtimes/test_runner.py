"""The Runner: sessions loaded before, recorded after, valid after any interruption."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from helikon import Agent, CancellationToken, RunContext, RunError, ToolCall, ToolResult, tool
from helikon.errors import SessionError
from helikon.runtimes import Runner
from helikon.sessions import (
    MemorySession,
    SequenceId,
    SessionEvent,
    tool_called,
    user_message,
)
from helikon.sessions.sqlite import SqlitePool, SqliteSession
from helikon.testing import Call, Delay, MockModel, Text, Usage


@tool
def echo(x: int) -> dict[str, int]:
    """Echo."""
    return {"x": x}


async def test_run_loads_history_and_records_the_run() -> None:
    session = MemorySession()
    model = MockModel([[Call("c1", "echo", {"x": 1})], [Text("done")], [Text("again")]])
    agent = Agent(name="a", model=model, tools=[echo], instructions="be brief")
    runner = Runner()
    assert (await runner.run(agent, "first", session=session)).final_output == "done"
    kinds = [e.type for e in await session.events()]
    assert kinds == [
        "user_message",
        "tool_called",
        "permission_decided",
        "tool_returned",
        "assistant_message",
    ]
    await runner.run(agent, "second", session=session)
    third_request = model.requests[2]
    assert [m.type for m in third_request.messages] == [
        "system",
        "user_message",
        "tool_call",
        "tool_result",
        "assistant_message",
        "user_message",
    ]
    assert len(await session.events()) == 7  # 6 plus the call's permission decision


class SlowSqlite:
    """A session whose appends take 50 ms (field case BR-14)."""

    def __init__(self, inner: SqliteSession) -> None:
        self.inner = inner

    async def append(self, events: Sequence[SessionEvent]) -> list[SequenceId]:
        await asyncio.sleep(0.05)
        return await self.inner.append(events)

    async def events(self, since: SequenceId | None = None) -> list[SessionEvent]:
        return await self.inner.events(since)

    async def snapshot(self) -> Any:
        return await self.inner.snapshot()


async def test_streamed_run_is_persisted_before_the_stream_ends(tmp_path: Path) -> None:
    """Field case BR-14: the last turn of a streamed run always reaches the session."""
    async with await SqlitePool.connect(tmp_path / "s.db") as pool:
        for i in range(100):
            session = SlowSqlite(await SqliteSession.open(pool, f"s{i}"))
            model = MockModel(
                [[Call("c1", "echo", {"x": 1})], [Text("done")], [Text("second run")]]
            )
            agent = Agent(name="a", model=model, tools=[echo])
            async for _ in Runner().run_streamed(agent, "go", session=session):
                pass
            kinds = [e.type for e in await session.events()]
            assert kinds == [
                "user_message",
                "tool_called",
                "permission_decided",
                "tool_returned",
                "assistant_message",
            ]
            await Runner().run(agent, "more", session=session)
            assert [m.type for m in model.requests[2].messages] == [
                "user_message",
                "tool_call",
                "tool_result",
                "assistant_message",
                "user_message",
            ]


async def test_interrupted_tool_call_is_repaired_on_load(tmp_path: Path) -> None:
    """Field case BR-12: a crash mid-tool leaves tool_called with no result."""
    async with await SqlitePool.connect(tmp_path / "s.db") as pool:
        seeded = await SqliteSession.open(pool, "crashy")
        await seeded.append(
            [user_message("clean up"), tool_called("tu_9", "Bash", {"command": "sleep 600"})]
        )
    async with await SqlitePool.connect(tmp_path / "s.db") as pool:  # "a new process"
        session = await SqliteSession.open(pool, "crashy")
        model = MockModel([[Text("continuing")]])
        result = await Runner().run(Agent(name="a", model=model), "continue", session=session)
        assert result.final_output == "continuing"
        sent = model.requests[0].messages
        assert [m.type for m in sent] == [
            "user_message",
            "tool_call",
            "tool_result",
            "user_message",
        ]
        call, res = sent[1], sent[2]
        assert isinstance(call, ToolCall) and isinstance(res, ToolResult)
        assert res.call_id == "tu_9" and res.is_error
        assert "interrupted" in res.content[0].text.lower()
        kinds = [e.type for e in await session.events()]
        assert "conversation_repaired" in kinds
        assert kinds[-2:] == ["user_message", "assistant_message"]


async def test_cancelled_run_keeps_usage_and_completed_turns(tmp_path: Path) -> None:
    """Field case BR-15: the turn before the cancel is kept; a follow-up run is valid."""
    async with await SqlitePool.connect(tmp_path / "s.db") as pool:
        session = await SqliteSession.open(pool, "c")
        token = CancellationToken()
        model = MockModel(
            [
                [Call("c1", "echo", {"x": 1}), Usage(100, 10)],
                [Usage(150, 3), Text("Par"), Delay(1.0), Text("tial")],
                [Text("fresh")],
            ]
        )
        agent = Agent(name="a", model=model, tools=[echo])
        ctx = RunContext.ephemeral(None).with_cancel(token)
        events = []
        async for ev in Runner().run_streamed(agent, "go", session=session, ctx=ctx):
            events.append(ev)
            if ev.type == "token_delta" and ev.text == "Par":
                token.cancel()
        assert events[-1].type == "run_failed"
        assert events[-1].error["kind"] == "Cancelled"
        assert events[-1].usage.input_tokens >= 250 and events[-1].usage.output_tokens >= 13
        kinds = [e.type for e in await session.events()]
        assert kinds == ["user_message", "tool_called", "permission_decided", "tool_returned"]
        result = await Runner().run(agent, "retry", session=session)
        assert result.final_output == "fresh"
        assert [m.type for m in model.requests[2].messages] == [
            "user_message",
            "tool_call",
            "tool_result",
            "user_message",
        ]


async def test_cancelled_mid_tool_gets_a_synthesized_result() -> None:
    session = MemorySession()
    token = CancellationToken()

    @tool
    async def hang() -> str:
        """Hang."""
        await asyncio.sleep(10)
        return "never"

    agent = Agent(name="a", model=MockModel([[Call("c1", "hang", {})]]), tools=[hang])
    ctx = RunContext.ephemeral(None).with_cancel(token)
    asyncio.get_running_loop().call_later(0.05, token.cancel)
    with pytest.raises(RunError):
        await Runner().run(agent, "go", session=session, ctx=ctx)
    items = await session.snapshot()
    assert [i.type for i in items] == ["user_message", "tool_call", "tool_result"]
    assert items[2].is_error  # type: ignore[union-attr]


class BrokenSession(MemorySession):
    async def snapshot(self) -> Any:
        raise SessionError("database is down")


async def test_read_failure_is_a_hard_error() -> None:
    model = MockModel([[Text("never")]])
    with pytest.raises(SessionError, match="database is down"):
        await Runner().run(Agent(name="a", model=model), "go", session=BrokenSession())
    assert model.requests == []


class WriteFails(MemorySession):
    async def append(self, events: Sequence[SessionEvent]) -> list[SequenceId]:
        raise SessionError("disk full")


async def test_write_failure_is_logged_and_the_result_stands(caplog: Any) -> None:
    agent = Agent(name="a", model=MockModel([[Text("ok")]]))
    result = await Runner().run(agent, "go", session=WriteFails())
    assert result.final_output == "ok"
    assert "could not record the run in the session: disk full" in caplog.text


async def test_resume_continues_without_new_input() -> None:
    session = MemorySession()
    await session.append([user_message("hello")])
    model = MockModel([[Text("hi there")]])
    result = await Runner().resume(Agent(name="a", model=model), session=session)
    assert result.final_output == "hi there"
    assert [m.type for m in model.requests[0].messages] == ["user_message"]


async def test_a_handoff_run_reloads_without_repairs() -> None:
    session = MemorySession()
    billing = Agent(name="billing", description="Invoices.", model=MockModel([[Text("sent")]]))
    front = Agent(
        name="front", model=MockModel([[Call("h1", "transfer_to_billing", {})]]), handoffs=[billing]
    )
    assert (await Runner().run(front, "invoice please", session=session)).final_output == "sent"
    kinds = [e.type for e in await session.events()]
    assert kinds == [
        "user_message",
        "tool_called",
        "tool_returned",
        "handoff_occurred",
        "assistant_message",
    ]
    next_model = MockModel([[Text("ok")]])
    await Runner().run(Agent(name="front", model=next_model), "thanks", session=session)
    assert "conversation_repaired" not in [e.type for e in await session.events()]


async def test_a_session_of_the_wrong_type_is_a_clear_error() -> None:
    from helikon import ConfigError

    agent = Agent(name="a", model=MockModel([[Text("ok")]]))
    with pytest.raises(ConfigError) as exc:
        await Runner().run(agent, "hi", session="my-session")  # type: ignore[arg-type]
    assert str(exc.value) == (
        "Runner.run(session=...) must be a Session (MemorySession, SqliteSession, "
        "RedisSession, PostgresSession, ...), got str; e.g. session=MemorySession()"
    )
    assert agent.model.requests == []  # type: ignore[attr-defined]


async def test_an_unawaited_session_open_is_named(tmp_path: Path) -> None:
    from helikon import ConfigError

    pool = await SqlitePool.connect(tmp_path / "s.db")
    try:
        agent = Agent(name="a", model=MockModel([[Text("ok")]]))
        unopened = SqliteSession.open(pool, "s")
        with pytest.raises(ConfigError, match=r"got coroutine; did you forget to await the open"):
            await Runner().run(agent, "hi", session=unopened)  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match=r"Runner\.resume\(ctx=\.\.\.\) must be a RunContext"):
            await Runner().resume(agent, session=MemorySession(), ctx={"user": 1})  # type: ignore[arg-type]
    finally:
        await pool.close()


async def test_closing_a_stream_early_records_the_run_before_the_next_one() -> None:
    import contextlib

    session = MemorySession()
    model = MockModel([[Call("c1", "echo", {"x": 1})], [Text("answer two")]])
    agent = Agent(name="a", model=model, tools=[echo])
    async with contextlib.aclosing(
        Runner().run_streamed(agent, "FIRST", session=session)
    ) as stream:
        async for ev in stream:
            if ev.type == "tool_call_item":
                break  # the client went away before the tool ran
    # recorded on leaving the block: the input and the call, with a "did not complete" result
    events = await session.events()
    assert [e.type for e in events] == ["user_message", "tool_called", "tool_returned"]
    assert events[2].is_error  # type: ignore[union-attr]
    assert events[2].content[0].text.startswith("Tool call did not complete")  # type: ignore[union-attr]

    await Runner().run(agent, "SECOND", session=session)
    texts = [
        (e.type, e.content[0].text)
        for e in await session.events()
        if e.type in ("user_message", "assistant_message")
    ]
    assert texts == [
        ("user_message", "FIRST"),
        ("user_message", "SECOND"),
        ("assistant_message", "answer two"),
    ]
    # the second run saw the first one's history
    assert [m.type for m in model.requests[-1].messages][:4] == [
        "user_message",
        "tool_call",
        "tool_result",
        "user_message",
    ]
