"""ScriptedModel: concurrent runs of one agent each play the whole script."""

from __future__ import annotations

import asyncio

import pytest

from helikon import Agent, Runner, tool
from helikon.errors import ConfigError, RunError
from helikon.sessions import MemorySession
from helikon.testing import Call, Delay, MockModel, ScriptedModel, Text


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


SCRIPT = [
    [Call("c1", "add", {"a": 1, "b": 2}), Call("c2", "add", {"a": 2, "b": 2})],
    [Delay(0.01), Call("c3", "add", {"a": 3, "b": 3})],
    [Delay(0.01), Text("done")],
]


async def test_fifty_concurrent_runs_each_play_every_turn() -> None:
    agent = Agent(name="calc", model=ScriptedModel(SCRIPT), tools=[add])
    results = await asyncio.gather(*(agent.run(f"q{i}") for i in range(50)))
    assert [r.final_output for r in results] == ["done"] * 50
    for r in results:
        calls = [i.call_id for i in r.new_items if i.type == "tool_call"]
        assert calls == ["c1", "c2", "c3"]


async def test_a_shared_mock_model_mixes_concurrent_runs_up() -> None:
    # the contrast: one queue for every run, so one run takes another's turns
    agent = Agent(name="calc", model=MockModel(SCRIPT * 2), tools=[add])
    results = await asyncio.gather(*(agent.run(f"q{i}") for i in range(2)))
    calls = [[i.call_id for i in r.new_items if i.type == "tool_call"] for r in results]
    assert calls != [["c1", "c2", "c3"]] * 2


async def test_a_run_past_the_script_fails_naming_the_turn() -> None:
    agent = Agent(name="calc", model=ScriptedModel([[Call("c1", "add", {"a": 1, "b": 1})]]))
    with pytest.raises(
        RunError,
        match=r"ScriptedModel has no turn 2 of agent 'calc': it "
        r"scripts 1 turn\(s\) per run",
    ):
        await Agent(name="calc", model=agent.model, tools=[add]).run("x")


async def test_a_later_run_on_a_session_with_history_starts_from_the_first_turn() -> None:
    agent = Agent(name="calc", model=ScriptedModel(SCRIPT), tools=[add])
    session = MemorySession()
    for question in ("a", "b"):
        result = await Runner.run(agent, question, session=session)
        assert result.final_output == "done"
        assert [i.call_id for i in result.new_items if i.type == "tool_call"] == [
            "c1",
            "c2",
            "c3",
        ]


def test_scripts_are_checked_like_mock_models() -> None:
    with pytest.raises(ConfigError, match="each turn must be a list of steps"):
        ScriptedModel([Text("x")])  # type: ignore[list-item]
    assert ScriptedModel(SCRIPT).turns == 3
