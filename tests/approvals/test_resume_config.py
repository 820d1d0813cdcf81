"""A resume runs under the RunConfig its run paused under: the state stores it, a resume
without run_config uses it, and one with different values is refused naming each field."""

from __future__ import annotations

from typing import Any

import pytest

from helikon import Agent, Approve, RunConfig, RunState, SequentialAgent, UsageLimits
from helikon.errors import ResumeRefused, RunError, RunInterruptedError
from helikon.runtimes.runner import Runner
from helikon.testing import Call, MockModel, Text

from . import _support as s

PAUSED_WITH = RunConfig(approval="defer", max_turns=3, usage_limits=UsageLimits(request_limit=9))


@pytest.fixture(autouse=True)
def _clear() -> None:
    s.RAN.clear()


async def _pause(runnable: Any, config: RunConfig = PAUSED_WITH) -> RunState:
    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(runnable, "refund A7", ctx=s.ctx(), run_config=config)
    return RunState.from_json(err.value.state.to_json())  # as if stored and loaded


def _lookups(n: int) -> list[list[Any]]:
    return [[Call(f"l{i}", "lookup", {"order": f"B{i}"})] for i in range(n)]


async def test_the_state_keeps_the_config_and_a_bare_resume_runs_under_it() -> None:
    state = await _pause(s.agent([s.first_turn()]))
    assert state.run_config == {
        "max_turns": 3,
        "parallel_tool_call_limit": None,
        "max_agent_depth": 8,
        "timeout": None,
        "approval": "defer",
        "usage_limits": {
            "request_limit": 9,
            "total_tokens_limit": None,
            "input_tokens_limit": None,
            "output_tokens_limit": None,
        },
        "max_handoffs": None,
    }
    # the agent's own config has max_turns=16; the resume still stops after 3 turns
    agent = s.agent([*_lookups(5), [Text("never")]])
    with pytest.raises(RunError, match="max turns"):
        await Runner().resume(agent, state, decisions={"c2": Approve()}, ctx=s.ctx())
    assert len(agent.model.requests) == 2  # type: ignore[attr-defined]  # turns 2 and 3
    assert ("refund", {"order": "A7", "amount": 40}) in s.RAN


async def test_a_bare_resume_of_a_run_paused_under_a_given_config_is_not_refused() -> None:
    state = await _pause(s.agent([s.first_turn()]))
    result = await Runner().resume(
        s.agent([[Text("Refunded.")]]), state, decisions={"c2": Approve()}, ctx=s.ctx()
    )
    assert result.final_output == "Refunded."


async def test_a_different_config_is_refused_naming_each_field_and_nothing_runs() -> None:
    state = await _pause(s.agent([s.first_turn()]))
    other = RunConfig(approval="defer", max_turns=5, timeout=30.0)
    with pytest.raises(ResumeRefused) as err:
        await Runner().resume(
            s.agent([[Text("x")]]),
            state,
            decisions={"c2": Approve()},
            ctx=s.ctx(),
            run_config=other,
        )
    assert str(err.value) == (
        f"the resume's run_config differs from the one run {state.run_id} paused under: "
        "max_turns (3 at the pause, 5 now), timeout (None at the pause, 30.0 now), "
        "usage_limits (UsageLimits(request_limit=9, total_tokens_limit=None, "
        "input_tokens_limit=None, output_tokens_limit=None) at the pause, None now); "
        "resume without run_config (the paused run's is used) or with the same values"
    )
    assert s.RAN == [("lookup", "A7")]


async def test_the_same_config_or_another_approval_mode_resumes() -> None:
    state = await _pause(s.agent([s.first_turn()]))
    inline = RunConfig(approval="inline", max_turns=3, usage_limits=UsageLimits(request_limit=9))
    result = await Runner().resume(
        s.agent([[Text("Refunded.")]]),
        state,
        decisions={"c2": Approve()},
        ctx=s.ctx(),
        run_config=inline,
    )
    assert result.final_output == "Refunded."


def _seq(check: list[list[Any]], support: list[list[Any]]) -> SequentialAgent:
    return SequentialAgent(
        "seq",
        steps=[Agent(name="check", model=MockModel(check), tools=[s.lookup]), s.agent(support)],
    )


async def test_a_pattern_paused_under_a_given_config_resumes_under_it_or_refuses() -> None:
    config = RunConfig(approval="defer", max_turns=4)
    state = await _pause(_seq([[Text("A7 ok")]], [s.first_turn()]), config)
    assert state.run_config is not None and state.run_config["max_turns"] == 4
    with pytest.raises(ResumeRefused, match=r"max_turns \(4 at the pause, 16 now\)"):
        await Runner().resume(
            _seq([], [[Text("x")]]),
            state,
            decisions={"c2": Approve()},
            ctx=s.ctx(),
            run_config=RunConfig(approval="defer"),
        )
    result = await Runner().resume(
        _seq([], [[Text("Refunded.")]]), state, decisions={"c2": Approve()}, ctx=s.ctx()
    )
    assert result.final_output == "Refunded."
