"""Two steps writing one state key are refused; AgentAsTool suggests a usable tool name."""

from __future__ import annotations

import pytest

from helikon import Agent, AgentAsTool, ConfigError, LoopAgent, RunContext, SequentialAgent
from helikon.testing import MockModel, Text


def _agent(name: str, text: str = "ok") -> Agent:
    return Agent(name=name, model=MockModel([[Text(text)]]))


def test_a_second_step_with_the_same_name_is_refused() -> None:
    draft = _agent("draft")
    with pytest.raises(ConfigError) as exc:
        SequentialAgent("pipeline", steps=[draft, _agent("draft")])
    assert str(exc.value) == (
        "SequentialAgent 'pipeline': a step already writes state['draft']; give this one its "
        "own key: .then_keyed('draft_2', agent)"
    )
    with pytest.raises(ConfigError, match=r"already writes state\['draft'\]; pick another key"):
        SequentialAgent("p").then(draft).then_keyed("draft", _agent("x"))
    with pytest.raises(ConfigError, match=r"LoopAgent 'l': a step already writes"):
        LoopAgent("l", max_iterations=2).then(draft).then(_agent("draft"))


async def test_then_keyed_keeps_both_results() -> None:
    pipe = SequentialAgent("p").then(_agent("draft", "one"))
    pipe.then_keyed("draft_2", _agent("draft", "two"))
    ctx = RunContext.ephemeral()
    result = await pipe.run("go", ctx)
    assert result.final_output == "two"
    assert (ctx.state["draft"], ctx.state["draft_2"]) == ("one", "two")


@pytest.mark.parametrize(
    ("agent_name", "suggested"),
    [("über helper", "uber_helper"), ("🙂", "agent"), ("Ärger", "Arger")],
)
def test_agent_as_tool_suggests_a_close_valid_name(agent_name: str, suggested: str) -> None:
    with pytest.raises(ConfigError) as exc:
        AgentAsTool(_agent(agent_name))
    assert str(exc.value).endswith(f"pass name={suggested!r}")
    assert AgentAsTool(_agent(agent_name), name=suggested).name == suggested
