"""The durable driver answered in-process (no Temporal).

Each case runs an agent through :class:`DurableDriver` whose requests are served by the
worker's activity implementations called directly, and checks the exact events. The rules
around the machine are the loop core's, which the ephemeral driver calls too
(``tests/core/test_loop_core.py``), so there is no copy to compare against.
"""

from __future__ import annotations

from typing import Any

import pydantic
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


async def test_invalid_args_twice_ends_the_run() -> None:
    scripts, kw, rc = CASES["invalid_args_twice"]
    events = await _durable(_agent(scripts, **kw), "q", rc)
    assert [e["type"] for e in events] == [
        "run_started",
        "turn_started",
        "tool_call_item",
        "tool_output_item",
        "turn_started",
        "tool_call_item",
        "run_failed",
    ]
    assert events[-1]["error"]["message"].startswith(
        "tool 'add' got invalid arguments again after the errors were fed back once: a: "
    )


async def test_structured_output_repaired_then_completed() -> None:
    scripts, kw, rc = CASES["structured_repair"]
    events = await _durable(_agent(scripts, **kw), "q", rc)
    assert [e["type"] for e in events] == [
        "run_started",
        "turn_started",
        "message_output",
        "turn_started",
        "message_output",
        "run_completed",
    ]
    assert events[-2]["item"]["content"] == [{"type": "text", "text": '{"n": 5}'}]


async def test_max_turns_fails_with_the_limit() -> None:
    scripts, kw, rc = CASES["max_turns"]
    events = await _durable(_agent(scripts, **kw), "q", rc)
    assert events[-1]["type"] == "run_failed"
    assert events[-1]["error"] == {
        "kind": "MaxTurnsExceeded",
        "message": "max turns (2) exceeded",
        "max_turns": 2,
    }


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
    assert [e["type"] for e in events] == ["run_started", "turn_started", "run_failed"]
    assert events[-1]["error"]["message"].startswith("model error (")


class _NamedMock(MockModel):
    """A scripted model whose Finish names the answering model and the response id."""

    async def invoke(self, request: Any, cancel: Any) -> Any:
        from helikon.core.model import Finish as FinishEvent

        turn = len(self.requests)
        async for ev in super().invoke(request, cancel):
            if isinstance(ev, FinishEvent):
                ev = ev.model_copy(update={"model": "m-2025", "response_id": f"resp_{turn}"})
            yield ev


async def test_durable_events_name_the_answering_model_and_response() -> None:
    agent = Agent(
        name="calc",
        model=_NamedMock([[Call("c1", "add", {"a": 2, "b": 3})], [Text("5")]]),
        tools=[add],
    )
    events = await _durable(agent, "2+3?", RunConfig())
    settled = [
        (e["type"], e.get("model"), e.get("response_id"))
        for e in events
        if e["type"] in ("tool_call_item", "message_output")
    ]
    assert settled == [
        ("tool_call_item", "m-2025", "resp_0"),
        ("message_output", "m-2025", "resp_1"),
    ]


async def test_durable_runs_keep_the_retry_bounds() -> None:
    """Agent(retries=) bounds the repair turns and @tool(retries=) a tool's ModelRetry rounds,
    as in a plain run."""
    from helikon import ModelRetry

    bad = [Text('{"n": "x"}')]
    # the prose turn, the finalizing turn, then two repair turns
    agent = _agent([bad, bad, bad, [Text('{"n": 3}')]], output_type=Answer, retries=2)
    events = await _durable(agent, "n?", RunConfig())
    assert [e["attempt"] for e in events if e["type"] == "repair_started"] == [1, 2]
    assert events[-1]["type"] == "run_completed"

    @tool(retries=2)
    async def flaky(q: str) -> str:
        """Asks again."""
        raise ModelRetry("not yet")

    asks = [[Call(f"c{i}", "flaky", {"q": "x"})] for i in range(3)]
    agent = Agent(name="calc", model=MockModel(asks), tools=[flaky])
    events = await _durable(agent, "go", RunConfig())
    error = events[-1]["error"]
    assert (error["kind"], error["tool"], error["retries"]) == ("ToolRetriesExceeded", "flaky", 2)
    outputs = [e["item"] for e in events if e["type"] == "tool_output_item"]
    assert [o["content"][0]["text"] for o in outputs] == ["not yet", "not yet"]


def test_output_validators_are_refused_for_durable_runs() -> None:
    import pytest

    from helikon.errors import ConfigError
    from helikon.runtimes.temporal.worker import check_durable

    agent = _agent([], output_type=Answer, output_validators=[lambda answer: None])
    with pytest.raises(ConfigError) as exc:
        check_durable(agent)
    assert str(exc.value).startswith(
        "agent 'calc' cannot run durably: it has output_validators; the Temporal runner does "
        "not support hooks, guardrails, output validators or handoffs in v0"
    )
