"""A streamed run's result is typed as ``Runner.run``'s is, and ``Runner.run_streamed``'s
stream holds the result once iterated (found by a new-user trial from the OpenAI Agents SDK)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from helikon import Agent, ConfigError, RunError, Runner, RunResultStreaming
from helikon.core.items import UserMessage
from helikon.testing import Call, MockModel, Text


class City(BaseModel):
    city: str


class Ticket(BaseModel):
    issue: str
    priority: int


def _triage() -> tuple[Agent[Any, Any], Agent[Any, Any]]:
    spec = Agent(
        name="ticketer",
        description="Files tickets.",
        output_type=Ticket,
        model=MockModel([[Text('{"issue": "refund", "priority": 2}')]]),
    )
    triage = Agent(
        name="triage", handoffs=[spec], model=MockModel([[Call("h1", "transfer_to_ticketer", {})]])
    )
    return triage, spec


def test_collect_types_the_final_output_by_the_agents_output_type() -> None:
    agent = Agent(name="s", model=MockModel([[Text('{"city": "Oslo"}')]]), output_type=City)
    result = asyncio.run(RunResultStreaming(agent.stream("hi"), agent=agent).collect())
    assert result.final_output == City(city="Oslo")


def test_collect_after_a_handoff_types_by_the_specialist() -> None:
    triage, spec = _triage()
    result = asyncio.run(RunResultStreaming(triage.stream("file it"), agent=triage).collect())
    assert result.last_agent is spec
    assert result.final_output == Ticket(issue="refund", priority=2)


def test_collect_of_an_answer_that_does_not_validate_raises_run_error() -> None:
    agent = Agent(name="s", model=MockModel([[Text("Oslo")]] * 3), output_type=City)
    with pytest.raises(RunError):
        asyncio.run(RunResultStreaming(agent.stream("hi"), agent=agent).collect())


def test_runner_run_still_types_once() -> None:
    agent = Agent(name="s", model=MockModel([[Text('{"city": "Oslo"}')]]), output_type=City)
    assert Runner.run_sync(agent, "hi").final_output == City(city="Oslo")
    text = Agent(name="t", model=MockModel([[Text("plain")]]))
    assert Runner.run_sync(text, "hi").final_output == "plain"


async def _drain(stream: Any) -> list[str]:
    return [e.type async for e in stream]


def test_run_streamed_holds_the_typed_result_after_iteration() -> None:
    triage, spec = _triage()
    stream = Runner.run_streamed(triage, "file it")
    types = asyncio.run(_drain(stream))
    assert types[-1] == "run_completed"
    assert stream.final_output == Ticket(issue="refund", priority=2)
    assert stream.last_agent is spec
    assert stream.usage.requests == 2
    assert stream.result.final_output is stream.final_output
    history = stream.to_input_list()
    assert history[0] == UserMessage.text("file it")
    assert history[1:] == stream.new_items
    assert [i.type for i in history][-1] == "assistant_message"


def test_run_streamed_result_before_the_end_says_to_iterate_it() -> None:
    agent = Agent(name="s", model=MockModel([[Text("hi")]]))
    stream = Runner.run_streamed(agent, "hi")
    with pytest.raises(ConfigError, match=r"^the run's result is there once the stream ended"):
        stream.final_output  # noqa: B018
    asyncio.run(_drain(stream))
    assert stream.final_output == "hi"


def test_run_streamed_failed_run_raises_run_error_on_final_output() -> None:
    agent = Agent(name="s", model=MockModel([[Text("Oslo")]] * 3), output_type=City)
    stream = Runner.run_streamed(agent, "hi")
    asyncio.run(_drain(stream))
    with pytest.raises(RunError):
        stream.final_output  # noqa: B018
