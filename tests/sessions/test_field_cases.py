"""Field cases at the session layer: BR-12 (interrupted tool call), BR-14 (persistence at
stream end), BR-15 (cancellation keeps finished turns, transcript stays valid).

The Runner is not built yet, so ``run_with_session`` does what the spec's run lifecycle
prescribes with the public sessions API: load (and repair) the history, record the new
input, observe the run's events, drain and append.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from helikon import Agent, RunContext, tool
from helikon.core.events import AgentEvent, RunCompleted, RunFailed, TokenDelta
from helikon.core.items import Item, ToolCall, ToolResult, UserMessage
from helikon.sessions import (
    INTERRUPTED_RESULT,
    Session,
    SessionEvent,
    SessionRecorder,
    assistant_message,
    find_repairs,
    load_conversation,
    tool_called,
    tool_returned,
    user_message,
)
from helikon.sessions.sqlite import SqlitePool, SqliteSession
from helikon.testing import Call, Delay, MockModel, Text, Usage
from tests.sessions.util import first_text


async def run_with_session(
    agent: Agent, text: str, session: Session, ctx: RunContext[Any] | None = None
) -> list[AgentEvent]:
    history = await load_conversation(session)
    new_input: list[Item] = [UserMessage.text(text)]
    recorder = SessionRecorder(agent.name)
    recorder.record_input(new_input)
    events: list[AgentEvent] = []
    try:
        async for event in agent.stream([*history, *new_input], ctx):
            recorder.observe(event)
            events.append(event)
            if isinstance(event, TokenDelta) and ctx is not None and event.text == "Par":
                ctx.cancel.cancel()
    finally:
        await session.append(recorder.drain())
    return events


def _pairs_adjacent(messages: list[Item]) -> None:
    """Every tool call's result follows its call block directly (provider rule)."""
    assert find_repairs([m for m in messages if m.type != "system"]) == []


@tool
async def sleepy(command: str) -> str:
    """Pretend to run a shell command for a long time."""
    await asyncio.sleep(600)
    return "never"


async def test_br12_crash_mid_tool_is_repaired_on_load(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with await SqlitePool.connect(path) as pool:
        seeded = await SqliteSession.open(pool, "br12")
        await seeded.append(
            [user_message("clean up"), tool_called("tu_9", "Bash", {"command": "sleep 600"})]
        )
    # a new process: a fresh pool on the same file
    async with await SqlitePool.connect(path) as pool:
        session = await SqliteSession.open(pool, "br12")
        model = MockModel([[Text("Cleaned up.")]])
        agent = Agent(name="ops", model=model)
        events = await run_with_session(agent, "continue", session)
        assert isinstance(events[-1], RunCompleted)
        sent = model.requests[0].messages
        assert [m.type for m in sent] == [
            "user_message",
            "tool_call",
            "tool_result",
            "user_message",
        ]
        result = sent[2]
        assert isinstance(result, ToolResult) and result.call_id == "tu_9" and result.is_error
        assert first_text(result) == INTERRUPTED_RESULT
        assert "interrupted" in INTERRUPTED_RESULT
        log = await session.events()
        assert [e.type for e in log] == [
            "user_message",
            "tool_called",
            "conversation_repaired",
            "user_message",
            "assistant_message",
        ]
        _pairs_adjacent(await session.snapshot())
        # the repair holds: the next load finds nothing to fix
        await load_conversation(session)
        assert len(await session.events()) == len(log)


async def test_br12_variant_cooperative_cancel_during_the_tool(tmp_path: Path) -> None:
    async with await SqlitePool.connect(tmp_path / "s.db") as pool:
        session = await SqliteSession.open(pool, "br12b")
        model = MockModel([[Call("tu_9", "sleepy", {"command": "sleep 600"})]])
        agent = Agent(name="ops", model=model, tools=[sleepy])
        ctx: RunContext[Any] = RunContext.ephemeral(None)
        asyncio.get_running_loop().call_later(0.2, ctx.cancel.cancel)
        events = await run_with_session(agent, "clean up", session, ctx)
        assert isinstance(events[-1], RunFailed) and events[-1].error["kind"] == "Cancelled"
        log = await session.events()
        assert [e.type for e in log] == ["user_message", "tool_called", "tool_returned"]
        assert "did not complete" in first_text(log[-1])
        follow = MockModel([[Text("ok")]])
        again = await run_with_session(Agent(name="ops", model=follow), "continue", session)
        assert isinstance(again[-1], RunCompleted)
        sent = follow.requests[0].messages
        assert [m.type for m in sent] == [
            "user_message",
            "tool_call",
            "tool_result",
            "user_message",
        ]
        _pairs_adjacent(sent)


class SlowPool(SqlitePool):
    """Every connection checkout takes 50 ms (BR-14's slowed append)."""

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[Any]:
        await asyncio.sleep(0.05)
        async with super().acquire() as conn:
            yield conn


@pytest.mark.parametrize("on_loop_thread", [True, False])
async def test_br14_a_write_cancelled_by_cleanup_still_lands(
    tmp_path: Path, on_loop_thread: bool
) -> None:
    """BR-14's root cause was cleanup cancelling the in-flight session write. An append that
    started is finished even if its caller is cancelled, in order, for 100 turns (on the
    loop thread it is done before the cancellation; on a worker, the shield finishes it)."""
    pool = SlowPool(tmp_path / "s.db", max_connections=2, write_on_loop_thread=on_loop_thread)
    try:
        session = await SqliteSession.open(pool, "br14")
        expected: list[str] = []
        for i in range(100):
            turn: list[SessionEvent] = [
                user_message(f"u{i}"),
                tool_called(f"c{i}", "echo", {"x": 1}),
                tool_returned(f"c{i}", "1"),
                assistant_message(f"done {i}", "a"),
            ]
            write = asyncio.ensure_future(session.append(turn))
            await asyncio.sleep(0.01)  # the write is in flight
            write.cancel()  # what the buggy cleanup did
            expected += [e.type for e in turn]
            for _ in range(200):
                if len(await session.events()) == len(expected):
                    break
                await asyncio.sleep(0.01)
        log = await session.events()
        assert [e.type for e in log] == expected
        assert [first_text(e) for e in log if e.type == "user_message"] == [
            f"u{i}" for i in range(100)
        ]
    finally:
        await pool.close()


async def test_br15_cancel_mid_stream_keeps_turn_one_and_a_valid_transcript(
    tmp_path: Path,
) -> None:
    @tool
    def echo(x: int) -> str:
        """Echo x."""
        return str(x)

    async with await SqlitePool.connect(tmp_path / "s.db") as pool:
        session = await SqliteSession.open(pool, "br15")
        model = MockModel(
            [
                [Usage(100, 10), Call("c1", "echo", {"x": 1})],
                [Usage(150, 3), Text("Par"), Delay(1.0), Text("tial")],
            ]
        )
        agent = Agent(name="a", model=model, tools=[echo])
        ctx: RunContext[Any] = RunContext.ephemeral(None)
        events = await run_with_session(agent, "go", session, ctx)
        terminal = events[-1]
        assert isinstance(terminal, RunFailed) and terminal.error["kind"] == "Cancelled"
        assert terminal.usage.input_tokens >= 250 and terminal.usage.output_tokens >= 13
        log = await session.events()
        assert [e.type for e in log] == ["user_message", "tool_called", "tool_returned"]
        assert all("Par" not in str(e.model_dump()) for e in log), "the partial turn is left out"
        follow = MockModel([[Text("ok")]])
        again = await run_with_session(Agent(name="a", model=follow), "again", session)
        assert isinstance(again[-1], RunCompleted)
        sent = follow.requests[0].messages
        assert [m.type for m in sent] == [
            "user_message",
            "tool_call",
            "tool_result",
            "user_message",
        ]
        assert isinstance(sent[1], ToolCall) and sent[1].call_id == "c1"
        _pairs_adjacent(sent)
