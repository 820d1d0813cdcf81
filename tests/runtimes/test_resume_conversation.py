"""A resumed run's result carries the conversation on like an uninterrupted run's.

A refund approval pauses in one process (a child) and is resumed in this one with a SQLite
session (without a session, paused and resumed here from its JSON: a session-less pause
resumes only in its own process), and a second turn is built from ``to_input_list()`` the way the
quickstart shows: it must see the user's first message, the handoff, the tool call and its
result. ``last_agent``, ``new_items``, ``final_output`` and ``usage`` match the same
conversation run without a pause.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from helikon import (
    Approve,
    RunConfig,
    RunInterruptedError,
    Runner,
    RunResultStreaming,
    RunState,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
    text_of,
)
from helikon.sessions.sqlite import SqliteSession
from helikon.testing import Call, Text
from tests.runtimes import _refunds as r

ROOT = Path(__file__).resolve().parents[2]


def _pause_in_child(tmp: Path, db: Path | None, session_id: str | None) -> RunState:
    state_file = tmp / "state.json"
    cmd = [sys.executable, "-m", "tests.runtimes.resume_proc", str(state_file)]
    if db is not None and session_id is not None:
        cmd += [str(db), session_id]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    return RunState.from_json(state_file.read_text(encoding="utf-8"))


def _view(items: list[Any]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for item in items:
        if isinstance(item, ToolCall):
            out.append(("tool_call", item.call_id, item.name))
        elif isinstance(item, ToolResult):
            out.append(("tool_result", item.call_id, text_of(item.content)))
        else:
            out.append((item.type, item.text()))
    return out


CONVERSATION = [
    ("user_message", "Please refund order A7."),
    ("tool_call", "h1", "transfer_to_refunds"),
    ("tool_result", "h1", "Transferred to refunds."),
    ("tool_call", "c1", "refund"),
    ("tool_result", "c1", "refunded 40 EUR on A7"),
    ("assistant_message", "Refunded 40 EUR on A7."),
]
USAGE = Usage(input_tokens=60, output_tokens=9, total_tokens=69, requests=3)


async def _pause_here() -> RunState:
    triage, _ = r.agents(r.TRIAGE, r.BEFORE_PAUSE)
    with pytest.raises(RunInterruptedError) as paused:
        await Runner.run(
            triage, "Please refund order A7.", ctx=r.ctx(), run_config=RunConfig(approval="defer")
        )
    return RunState.from_json(paused.value.state.to_json())


async def _uninterrupted() -> Any:
    triage, _ = r.agents(r.TRIAGE, [*r.BEFORE_PAUSE, *r.AFTER_PAUSE])
    return await Runner.run(triage, "Please refund order A7.", ctx=r.ctx(ask=False))


async def _second_turn(result: Any) -> list[tuple[str, ...]]:
    """Run the next turn as the quickstart builds it; return what the model was sent."""
    nxt = result.last_agent
    nxt.model.push(r.SECOND_TURN[0])
    history = [*result.to_input_list(), UserMessage.text("Send the receipt too.")]
    second = await nxt.run(history, r.ctx())
    assert second.final_output == "The receipt is on its way."
    sent = nxt.model.requests[-1].messages
    return _view([m for m in sent if m.type != "system_message"])


@pytest.mark.parametrize("with_session", [True, False], ids=["sqlite", "no-session"])
@pytest.mark.parametrize("streamed", [False, True], ids=["resume", "resume_streamed"])
async def test_resumed_result_is_the_uninterrupted_one(
    tmp_path: Path, with_session: bool, streamed: bool
) -> None:
    db = tmp_path / "chats.db" if with_session else None
    sid = f"s-{uuid.uuid4().hex[:8]}" if with_session else None
    if with_session:
        state = _pause_in_child(tmp_path, db, sid)
    else:  # a session-less pause resumes in its own process only (its resume-once claim)
        state = await _pause_here()
    assert [p.call_id for p in state.pending] == ["c1"]

    triage, refunds = r.agents([], r.AFTER_PAUSE)  # this process plays the rest
    session = SqliteSession(sid, db) if sid is not None and db is not None else None
    decisions = {"c1": Approve()}
    if streamed:
        stream = Runner.resume_streamed(
            triage, state, decisions=decisions, session=session, ctx=r.ctx()
        )
        result = await RunResultStreaming(stream, agent=triage, resumed=state).collect()
    else:
        result = await Runner.resume(
            triage, state, decisions=decisions, session=session, ctx=r.ctx()
        )

    baseline = await _uninterrupted()
    assert result.last_agent is refunds
    assert _view(result.to_input_list()) == CONVERSATION
    assert _view(result.new_items) == CONVERSATION[1:]
    assert result.to_input_list() == baseline.to_input_list()
    assert result.new_items == baseline.new_items
    assert result.final_output == baseline.final_output == "Refunded 40 EUR on A7."
    assert result.usage == baseline.usage == USAGE

    sent = await _second_turn(result)
    assert sent == [*CONVERSATION, ("user_message", "Send the receipt too.")]


async def test_a_run_paused_twice_keeps_everything_it_added() -> None:
    triage, refunds = r.agents(
        r.TRIAGE,
        [*r.BEFORE_PAUSE, [Call("c2", "refund", {"order": "B2", "amount": 5})]],
    )
    defer = RunConfig(approval="defer")
    with pytest.raises(RunInterruptedError) as first:
        await Runner.run(triage, "Please refund order A7.", ctx=r.ctx(), run_config=defer)
    with pytest.raises(RunInterruptedError) as second:
        await Runner.resume(triage, first.value.state, decisions={"c1": Approve()}, ctx=r.ctx())
    state = RunState.from_json(second.value.state.to_json())
    refunds.model.push([Text("Refunded A7 and B2.")])
    result = await Runner.resume(triage, state, decisions={"c2": Approve()}, ctx=r.ctx())
    assert result.last_agent is refunds
    assert _view(result.to_input_list()) == [
        *CONVERSATION[:5],
        ("tool_call", "c2", "refund"),
        ("tool_result", "c2", "refunded 5 EUR on B2"),
        ("assistant_message", "Refunded A7 and B2."),
    ]
    assert result.usage.requests == 4
