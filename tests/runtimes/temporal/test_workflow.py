"""The agent-loop workflow on a real Temporal dev server, worker in this process."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from temporalio.client import Client

from helikon import Agent, RunConfig, RunContext, tool
from helikon.core.context import ToolContext
from helikon.core.permissions import DenyRule, Permissions
from helikon.errors import ConfigError, RunError
from helikon.runtimes.temporal import (
    TemporalAgentWorker,
    TemporalRunner,
    TemporalRunnerConfig,
    WorkerPosture,
)
from helikon.sessions import MemorySession
from helikon.testing import Call, Delay, Fail, MockModel, Text, Usage
from tests.runtimes.temporal._support import bounded


@tool
async def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


@tool
async def whoami(ctx: ToolContext[Any]) -> str:
    """The tenant the worker rebuilt from the seed."""
    return f"tenant={ctx.user_ctx['tenant']}"


@tool
async def leak() -> str:
    """Returns a secret."""
    return "token sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcd here"


@pytest.fixture
async def client(temporal_address: str) -> Client:
    return await bounded(Client.connect(temporal_address))


def _queue() -> str:
    return f"q-{uuid.uuid4().hex[:8]}"


def _runner(client: Client, queue: str, **kw: Any) -> TemporalRunner:
    cfg = TemporalRunnerConfig(queue, model_timeout=20, tool_timeout=20, prepare_timeout=20, **kw)
    return TemporalRunner(client, cfg)


async def test_tool_call_run_completes_with_exact_output(client: Client) -> None:
    model = MockModel(
        [[Call("c1", "add", {"a": 2, "b": 3}), Usage(10, 2)], [Text("2 + 3 = 5"), Usage(14, 4)]]
    )
    agent = Agent(name="calc", model=model, instructions="Use the tool.", tools=[add])
    queue = _queue()
    session = MemorySession()
    async with TemporalAgentWorker(client, queue, [agent]).running():
        result = await bounded(_runner(client, queue).run(agent, "2+3?", session=session))
    assert result.final_output == "2 + 3 = 5"
    assert [e.type for e in result.events] == [
        "run_started",
        "turn_started",
        "tool_call_item",
        "tool_output_item",
        "turn_started",
        "message_output",
        "run_completed",
    ]
    assert result.usage.input_tokens == 24 and result.usage.output_tokens == 6
    model.assert_exhausted()
    # the worker called the model with the instructions, the input and the tool's result
    second = model.requests[1]
    assert [m.type for m in second.messages] == [
        "system",
        "user_message",
        "tool_call",
        "tool_result",
    ]
    assert [t.name for t in second.tools] == ["add"]
    # the client recorded the run in the session
    assert [i.type for i in await session.snapshot()] == [
        "user_message",
        "tool_call",
        "tool_result",
        "assistant_message",
    ]


async def test_history_from_the_session_reaches_the_model(client: Client) -> None:
    model = MockModel([[Text("first")], [Text("second")]])
    agent = Agent(name="chat", model=model)
    queue, session = _queue(), MemorySession()
    async with TemporalAgentWorker(client, queue, [agent]).running():
        runner = _runner(client, queue)
        await bounded(runner.run(agent, "one", session=session))
        result = await bounded(runner.run("chat", "two", session=session))
    assert result.final_output == "second"
    assert [m.type for m in model.requests[1].messages] == [
        "user_message",
        "assistant_message",
        "user_message",
    ]


async def test_model_error_is_not_retried_and_fails_the_run(client: Client) -> None:
    model = MockModel([[Fail("other", "boom")], [Text("a retry would get this")]])
    agent = Agent(name="flaky", model=model)
    queue = _queue()
    async with TemporalAgentWorker(client, queue, [agent]).running():
        with pytest.raises(RunError) as err:
            await bounded(_runner(client, queue).run(agent, "hi"))
    assert err.value.error.kind == "Other"
    assert "model error" in str(err.value.error) and "boom" in str(err.value.error)
    assert model.remaining == 1  # exactly one attempt


async def test_max_turns_from_run_config(client: Client) -> None:
    model = MockModel([[Call(f"c{i}", "add", {"a": 1, "b": 1})] for i in range(3)])
    agent = Agent(name="loop", model=model, tools=[add])
    queue = _queue()
    async with TemporalAgentWorker(client, queue, [agent]).running():
        with pytest.raises(RunError) as err:
            await bounded(
                _runner(client, queue).run(agent, "go", run_config=RunConfig(max_turns=2))
            )
    assert err.value.error.kind == "MaxTurnsExceeded"


async def test_run_timeout_is_a_durable_timer(client: Client) -> None:
    model = MockModel([[Delay(30), Text("late")]])
    agent = Agent(name="slow", model=model)
    queue = _queue()
    async with TemporalAgentWorker(client, queue, [agent]).running():
        with pytest.raises(RunError) as err:
            await bounded(
                _runner(client, queue).run(agent, "hi", run_config=RunConfig(timeout=1.0))
            )
    assert err.value.error.kind == "Timeout"


async def test_seed_reaches_tools_and_posture_is_the_workers(client: Client) -> None:
    model = MockModel(
        [
            [Call("c1", "whoami", {}), Call("c2", "leak", {}), Call("c3", "add", {"a": 1, "b": 2})],
            [Text("ok")],
        ]
    )
    agent = Agent(name="t", model=model, tools=[whoami, leak, add])
    queue = _queue()
    posture = WorkerPosture(Permissions(deny_rules=(DenyRule.tool("add"),)))
    worker = TemporalAgentWorker(
        client, queue, [agent], posture=posture, ctx_factory=lambda seed: {"tenant": seed["t"]}
    )
    runner = TemporalRunner(client, TemporalRunnerConfig(queue).with_ctx_seed({"t": "acme"}))
    async with worker.running():
        # the caller's own context is not an argument: nothing of it reaches the worker
        result = await bounded(runner.run(agent, "go"))
    outputs = {e.item.call_id: e.item for e in result.events if e.type == "tool_output_item"}
    assert outputs["c1"].content[0].text == "tenant=acme"
    assert "sk-proj-ABCDEFGHIJ" not in outputs["c2"].content[0].text
    assert outputs["c3"].is_error and "permission denied" in outputs["c3"].content[0].text
    assert any(e.type == "permission_denied" and e.tool == "add" for e in result.events)


async def test_bad_seed_fails_fast_before_any_model_call(client: Client) -> None:
    model = MockModel([[Text("never")]])
    agent = Agent(name="seeded", model=model)
    queue = _queue()

    def factory(seed: Any) -> Any:
        raise ValueError("tenant missing")

    runner = TemporalRunner(client, TemporalRunnerConfig(queue).with_ctx_seed({}))
    async with TemporalAgentWorker(client, queue, [agent], ctx_factory=factory).running():
        with pytest.raises(RunError) as err:
            await bounded(runner.run(agent, "hi"))
    assert "ctx seed" in str(err.value.error) and "tenant missing" in str(err.value.error)
    assert model.remaining == 1


async def test_unknown_agent_fails_the_run(client: Client) -> None:
    agent = Agent(name="known", model=MockModel([[Text("x")]]))
    queue = _queue()
    async with TemporalAgentWorker(client, queue, [agent]).running():
        with pytest.raises(RunError) as err:
            await bounded(_runner(client, queue).run("unknown", "hi"))
    assert "no agent named 'unknown'" in str(err.value.error)


def test_v0_constraints_are_refused_at_registration() -> None:
    from helikon.runtimes.temporal import check_durable

    target = Agent(name="b", model=MockModel())
    with pytest.raises(ConfigError, match="handoffs"):
        check_durable(Agent(name="a", model=MockModel(), handoffs=[target]))

    class Guard:
        async def check(self, ctx: RunContext[Any], data: Any) -> Any:
            return None

    with pytest.raises(ConfigError, match="input_guardrails"):
        check_durable(Agent(name="a", model=MockModel(), input_guardrails=[Guard()]))
