"""The durable driver answered in-process (no Temporal): same events as the ephemeral loop.

Each case runs one agent twice on equal scripts: once with ``agent.stream`` and once through
:class:`DurableDriver` whose requests are served by the worker's activity implementations
called directly. The event streams must match exactly, token deltas aside (a durable model
turn is recorded settled).
"""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from temporalio.exceptions import ApplicationError

from helikon import Agent, RunConfig, tool
from helikon.core.items import ToolCall
from helikon.errors import AgentOther
from helikon.runtimes.temporal import DurableDriver, WorkerPosture
from helikon.runtimes.temporal.activities import AgentActivities
from helikon.runtimes.temporal.durable import CallModel, Finished, RunTools, dump_event
from helikon.runtimes.temporal.payloads import Prepare, ToolInvocation
from helikon.testing import Call, Fail, MockModel, Text, Usage

_DELTAS = {"token_delta", "reasoning_delta", "tool_call_delta"}


@tool
async def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


class Answer(pydantic.BaseModel):
    n: int


def _agent(scripts: list[Any], **kw: Any) -> Agent:
    return Agent(name="calc", model=MockModel(scripts), instructions="Be exact.", tools=[add], **kw)


async def _ephemeral(agent: Agent, text: str, rc: RunConfig) -> list[dict[str, Any]]:
    return [dump_event(e) async for e in agent.stream(text, run_config=rc) if e.type not in _DELTAS]


async def _durable(agent: Agent, text: str, rc: RunConfig) -> list[dict[str, Any]]:
    acts = AgentActivities({agent.name: agent}, WorkerPosture(), None, {}, None)
    prepared = await acts.render_instructions(Prepare(agent=agent.name))
    items = [{"type": "user_message", "content": [{"type": "text", "text": text}]}]
    driver = DurableDriver(
        prepared,
        items,
        max_turns=rc.max_turns,
        parallel_tool_call_limit=rc.parallel_tool_call_limit,
    )
    req = driver.start()
    while not isinstance(req, Finished):
        if isinstance(req, CallModel):
            try:
                reply = await acts.call_model(req.call)
            except ApplicationError as exc:  # the workflow maps a failed activity the same way
                req = driver.fail(AgentOther(exc.message))
                continue
            req = driver.model_replied(reply)
        else:
            assert isinstance(req, RunTools)
            replies = []
            for call in req.calls:
                assert isinstance(call, ToolCall)
                replies.append(
                    await acts.invoke_tool(
                        ToolInvocation(agent=agent.name, call=call.model_dump(mode="json"))
                    )
                )
            req = driver.tools_replied(req.calls, replies)
    return [dump_event(e) for e in driver.events]


CASES: dict[str, tuple[list[Any], dict[str, Any], RunConfig]] = {
    "tool_then_answer": (
        [[Call("c1", "add", {"a": 2, "b": 3}), Usage(5, 1)], [Text("5"), Usage(7, 1)]],
        {},
        RunConfig(),
    ),
    "parallel_calls": (
        [
            [Call("c1", "add", {"a": 1, "b": 1}), Call("c2", "add", {"a": 2, "b": 2})],
            [Text("2, 4")],
        ],
        {},
        RunConfig(parallel_tool_call_limit=1),
    ),
    "unknown_tool": ([[Call("c1", "nope", {})], [Text("sorry")]], {}, RunConfig()),
    "invalid_args_twice": (
        [[Call("c1", "add", {"a": "x"})], [Call("c2", "add", {"a": "y"})], [Text("never")]],
        {},
        RunConfig(),
    ),
    "max_turns": ([[Call("c1", "add", {"a": 1, "b": 1})]] * 3, {}, RunConfig(max_turns=2)),
    "structured_repair": (
        [[Text("not json")], [Text('{"n": 5}')]],
        {"output_type": Answer},
        RunConfig(),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_durable_events_equal_ephemeral(case: str) -> None:
    scripts, kw, rc = CASES[case]
    ephemeral = await _ephemeral(_agent(scripts, **kw), "q", rc)
    durable = await _durable(_agent(scripts, **kw), "q", rc)
    assert durable == ephemeral
    assert durable[-1]["type"] in ("run_completed", "run_failed")


async def test_tool_then_answer_exact_events() -> None:
    scripts, _, rc = CASES["tool_then_answer"]
    events = await _durable(_agent(scripts), "2+3?", rc)
    assert [e["type"] for e in events] == [
        "run_started",
        "turn_started",
        "tool_call_item",
        "tool_output_item",
        "turn_started",
        "message_output",
        "run_completed",
    ]
    assert events[3]["item"]["content"] == [{"type": "text", "text": "5"}]
    assert events[-1]["usage"]["input_tokens"] == 12


async def test_model_error_fails_the_run_like_the_loop() -> None:
    scripts = [[Fail("rate_limited", "slow down")]]
    events = await _durable(_agent(scripts), "q", RunConfig())
    assert events == await _ephemeral(_agent(scripts), "q", RunConfig())
    assert events[-1]["type"] == "run_failed"
    assert events[-1]["error"]["message"].startswith("model error (")
