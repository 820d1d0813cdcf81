"""The loop's fast paths behave as the general ones: native state, one inline tool call,
recorded events, the cached environment scan."""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any, ClassVar

import pytest

from helikon import (
    Agent,
    CancellationToken,
    RunConfig,
    RunContext,
    RunError,
    RunResultStreaming,
    ToolContext,
    tool,
)
from helikon.core.result import RunResult
from helikon.testing import Call, Finish, MockModel, Reasoning, Text, Usage

seen: list[Any] = []


@tool
def echo(x: int = 0) -> str:
    """Echo x."""
    seen.append(x)
    return str(x)


@pytest.fixture(autouse=True)
def _reset() -> None:
    seen.clear()


def _script() -> list[list[Any]]:
    return [
        [Reasoning("think", signature="sig"), Text("Looking."), Call("c1", "echo", {"x": 1})],
        [Call("c2", "echo", {"x": 2}), Call("c3", "echo", {"x": 3}), Usage(5, 2)],
        [Text("do"), Text("ne"), Usage(1, 1), Finish("stop")],
    ]


async def test_run_events_equal_the_streamed_events() -> None:
    agent = Agent(name="a", model=MockModel(_script()), tools=[echo])
    streamed = [ev async for ev in agent.stream("go")]
    agent.model = MockModel(_script())
    result = await agent.run("go")
    assert result.final_output == "done" == result.final_text
    assert result.events == streamed
    assert [type(e) for e in result.events] == [type(e) for e in streamed]
    assert result.usage == streamed[-1].usage
    assert (result.usage.input_tokens, result.usage.output_tokens) == (6, 3)
    assert result.events is result.events  # built once
    collected = await RunResultStreaming(iter_events(streamed)).collect()
    assert collected == RunResult("done", streamed, result.usage)
    assert repr(collected).startswith("RunResult(final_output='done', events=[RunStarted(")


async def iter_events(events: list[Any]) -> Any:
    for ev in events:
        yield ev


async def test_failed_run_error_carries_every_event() -> None:
    agent = Agent(name="a", model=MockModel([[Text("hi"), Call("c1", "nope", {})]]))
    with pytest.raises(RunError) as exc:
        await agent.run("go")
    assert [e.type for e in exc.value.events] == [
        "run_started",
        "turn_started",
        "token_delta",
        "tool_call_delta",
        "message_output",
        "tool_call_item",
        "tool_output_item",
        "turn_started",
        "run_failed",
    ]
    assert exc.value.events[2].text == "hi"


async def test_null_arguments_reach_the_tool_as_an_empty_object() -> None:
    got: list[Any] = []

    class Raw:
        name = "raw"
        description = "Raw."
        parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
        effect = echo.effect

        async def invoke(self, ctx: ToolContext[Any], args: Any) -> Any:
            from helikon import ToolOutput

            got.append(args)
            return ToolOutput.from_value("ok")

    model = MockModel([[Call("c1", "raw", "null")], [Text("done")]])
    result = await Agent(name="a", model=model, tools=[Raw()]).run("go")
    assert got == [{}]
    item = next(e for e in result.events if e.type == "tool_call_item").item
    assert item.args == {}
    # the request after it carries an object too (providers reject a null input), and the
    # fix is reported like any other repair
    assert model.requests[1].messages[-2].args == {}
    repairs = [e for e in result.events if e.type == "conversation_repaired"]
    assert [(r.repair, r.call_id, r.detail) for r in repairs] == [
        ("tool_args_replaced", "c1", "arguments were null, not a JSON object")
    ]


async def test_values_json_would_change_take_the_json_path() -> None:
    """NaN arguments and tuple provider data reach events and tools in their JSON form."""
    from helikon.core.events import ToolCallDelta
    from helikon.core.model import Finish as FinishEvent
    from helikon.core.model import FinishReason, ProviderMetadata

    class Model:
        provider = "test"
        model = "m"

        def __init__(self) -> None:
            self.requests: list[Any] = []

        def capabilities(self) -> Any:
            return None

        async def invoke(self, request: Any, cancel: Any) -> Any:
            self.requests.append(request)
            if len(self.requests) == 1:
                yield ToolCallDelta(call_id="c1", name="echo", args_delta='{"x": NaN}')
                yield ProviderMetadata(call_id="c1", data={"t": (1, 2)})
                yield FinishEvent(reason=FinishReason.TOOL_CALLS)
            else:
                yield FinishEvent(reason=FinishReason.STOP)

    model = Model()
    result = await Agent(name="a", model=model, tools=[echo]).run("go")
    item = next(e for e in result.events if e.type == "tool_call_item").item
    assert item.args == {"x": None}
    assert item.provider_data == {"t": [1, 2]}
    out = next(e for e in result.events if e.type == "tool_output_item").item
    assert out.is_error and "x: Input should be a valid integer" in out.content[0].text
    sent = model.requests[1].messages[-2]  # the conversation keeps the model's values
    assert sent.provider_data == {"t": (1, 2)} and sent.args["x"] != sent.args["x"]
    assert seen == []


@pytest.mark.parametrize("swallow", [False, True])
async def test_cancel_during_the_one_tool_call(swallow: bool) -> None:
    token = CancellationToken()
    state: dict[str, Any] = {}

    @tool
    async def hang() -> str:
        """Hang."""
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            state["cancelled"] = True
            if not swallow:
                raise
        return "late"

    agent = Agent(name="a", model=MockModel([[Call("c1", "hang", {})]]), tools=[hang])
    ctx = RunContext.ephemeral(None).with_cancel(token)
    asyncio.get_running_loop().call_later(0.05, token.cancel)
    with pytest.raises(RunError) as exc:
        await asyncio.wait_for(agent.run("go", ctx), 2)
    assert exc.value.error.kind == "Cancelled"
    assert state == {"cancelled": True}
    assert token._callbacks == []  # the tool call's watcher is gone
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0
    await asyncio.sleep(0)  # no cancellation is left pending on this task


async def test_a_tool_that_cancels_the_run_itself_stops_it() -> None:
    @tool
    async def stop(ctx: ToolContext[Any]) -> str:
        """Cancel the run and return at once."""
        ctx.cancel.cancel()
        return "stopped"

    agent = Agent(name="a", model=MockModel([[Call("c1", "stop", {})]]), tools=[stop])
    with pytest.raises(RunError) as exc:
        await agent.run("go")
    assert exc.value.error.kind == "Cancelled"
    await asyncio.sleep(0)


async def test_timeout_during_the_one_tool_call() -> None:
    @tool
    async def slow() -> str:
        """Slow."""
        await asyncio.sleep(10)
        return "never"

    agent = Agent(
        name="a",
        model=MockModel([[Call("c1", "slow", {})]]),
        tools=[slow],
        run_config=RunConfig(timeout=0.05),
    )
    with pytest.raises(RunError) as exc:
        await asyncio.wait_for(agent.run("go"), 2)
    assert exc.value.error.kind == "Timeout"


@pytest.mark.parametrize("calls", [1, 2])
async def test_a_tool_that_swallows_cancellation_cannot_hold_a_timed_out_run(
    calls: int, caplog: pytest.LogCaptureFixture
) -> None:
    @tool
    async def stubborn() -> str:
        """Ignores cancellation three times."""
        for _ in range(3):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(2)
        return "late"

    agent = Agent(
        name="a",
        model=MockModel([[Call(f"c{i}", "stubborn", {}) for i in range(calls)]]),
        tools=[stubborn],
        run_config=RunConfig(timeout=0.05),
    )
    with pytest.raises(RunError) as exc:
        await asyncio.wait_for(agent.run("go"), 1.5)  # the tool alone would take 6 s
    assert exc.value.error.kind == "Timeout"
    await asyncio.sleep(0.01)
    assert "never retrieved" not in caplog.text


async def test_cancelling_the_caller_cancels_the_tool_call() -> None:
    state: dict[str, Any] = {}

    @tool
    async def hang() -> str:
        """Hang."""
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            state["cancelled"] = True
            raise
        return "never"

    agent = Agent(name="a", model=MockModel([[Call("c1", "hang", {})]]), tools=[hang])
    task = asyncio.ensure_future(agent.run("go"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert state == {"cancelled": True}


async def test_cancel_between_the_call_and_the_tool_runs_no_tool() -> None:
    token = CancellationToken()
    model = MockModel([[Call("c1", "echo", {"x": 1})], [Text("done")]])
    agent = Agent(name="a", model=model, tools=[echo])
    events = []
    async for ev in agent.stream("go", RunContext.ephemeral(None).with_cancel(token)):
        events.append(ev)
        if ev.type == "tool_call_item":
            token.cancel()
    assert events[-1].type == "run_failed" and events[-1].error["kind"] == "Cancelled"
    assert seen == []


async def test_secret_env_changes_between_runs_are_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "s3cr3t-" + "v" * 12

    @tool
    def leak() -> str:
        """Leak."""
        return f"value={secret}"

    def agent() -> Agent:
        return Agent(
            name="a", model=MockModel([[Call("c1", "leak", {})], [Text("ok")]]), tools=[leak]
        )

    async def output() -> str:
        result = await agent().run("go")
        out = next(e for e in result.events if e.type == "tool_output_item")
        return str(out.item.content[0].text)

    monkeypatch.delenv("HELIKON_TEST_API_KEY", raising=False)
    assert await output() == f"value={secret}"
    monkeypatch.setenv("HELIKON_TEST_API_KEY", secret)
    assert await output() == "value=***"
    assert await output() == "value=***"
    monkeypatch.setenv("HELIKON_TEST_API_KEY", "other-value-" + "w" * 12)
    assert await output() == f"value={secret}"
    os.environ["HELIKON_TEST_API_KEY"] = secret
    assert await output() == "value=***"
    monkeypatch.delenv("HELIKON_TEST_API_KEY")
    assert await output() == f"value={secret}"


def test_off_cancel_forgets_a_callback() -> None:
    token = CancellationToken()
    fired: list[str] = []
    token.on_cancel(fired.append)
    token.off_cancel(fired.append)
    token.off_cancel(fired.append)  # no-op when absent
    token.cancel("x")
    assert fired == []
