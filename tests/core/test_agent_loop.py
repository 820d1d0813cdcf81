"""The agent loop end to end on a scripted model."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from pydantic import BaseModel

from helikon import (
    Agent,
    CancellationToken,
    ConfigError,
    JsonSchemaFormat,
    ModelSettings,
    OutputType,
    RunConfig,
    RunContext,
    RunError,
    RunResultStreaming,
    SystemMessage,
    ToolCall,
    ToolChoice,
    ToolEffect,
    ToolResult,
    UserMessage,
    tool,
)
from helikon.testing import Call, Delay, Fail, Finish, MockModel, Text, Usage

calls: list[dict[str, Any]] = []


@tool
def lookup(q: str) -> dict[str, int]:
    """Look something up.

    Args:
        q: the query.
    """
    calls.append({"q": q})
    return {"answer": 42}


@pytest.fixture(autouse=True)
def _reset() -> None:
    calls.clear()


def _br10(text: str, finish: str) -> list[list[Any]]:
    return [
        [Text(text), Call("c1", "lookup", {"q": "x"}), Finish(finish)],
        [Text("It is 42."), Finish("stop")],
    ]


@pytest.mark.parametrize("text", ["Checking.", "", " \n"])
@pytest.mark.parametrize("finish", ["tool_calls", "stop"])
@pytest.mark.parametrize("mode", ["run", "stream", "run_sync"])
async def test_text_before_tool_call_still_runs_the_tool(text: str, finish: str, mode: str) -> None:
    """Field case BR-10: a streamed turn with text and a tool call runs the tool, continues."""
    model = MockModel(_br10(text, finish))
    agent = Agent(name="a", model=model, tools=[lookup])
    if mode == "run":
        result = await agent.run("q?")
    elif mode == "stream":
        result = await RunResultStreaming(agent.stream("q?")).collect()
    else:
        result = await asyncio.to_thread(agent.run_sync, "q?")
    assert calls == [{"q": "x"}]
    assert len(model.requests) == 2
    assert result.final_output == "It is 42."
    outputs = [e for e in result.events if e.type == "message_output"]
    if text:
        assert outputs[0].item.content[-1].text == text  # non-final MessageOutput
        assert len(outputs) == 2
    else:
        assert len(outputs) == 1


async def test_conversation_sent_to_the_model() -> None:
    model = MockModel([[Text("Checking."), Call("c1", "lookup", {"q": "x"})], [Text("done")]])
    agent = Agent(
        name="a", model=model, tools=[lookup], instructions=lambda ctx: f"user={ctx.user_ctx}"
    )
    await agent.run("q?", RunContext.ephemeral("ada"))
    second = model.requests[1]
    assert [type(m).__name__ for m in second.messages] == [
        "SystemMessage",
        "UserMessage",
        "AssistantMessage",
        "ToolCall",
        "ToolResult",
    ]
    assert isinstance(second.messages[0], SystemMessage)
    assert second.messages[0].content[0].text == "user=ada"
    call, res = second.messages[3], second.messages[4]
    assert isinstance(call, ToolCall) and call.args == {"q": "x"}
    assert isinstance(res, ToolResult) and res.content[0].text == '{"answer":42}'
    assert [t.name for t in second.tools] == ["lookup"]
    assert second.tools[0].parameters["properties"]["q"]["description"] == "the query."


async def test_max_turns_fails_with_max_turns_exceeded() -> None:
    model = MockModel([[Call(f"c{i}", "lookup", {"q": "x"})] for i in range(3)])
    agent = Agent(name="a", model=model, tools=[lookup], run_config=RunConfig(max_turns=2))
    with pytest.raises(RunError) as exc:
        await agent.run("loop")
    assert exc.value.error.kind == "MaxTurnsExceeded"
    assert str(exc.value.error) == "max turns (2) exceeded"
    assert len(calls) == 2  # both rounds' outputs kept before the failure
    assert exc.value.events[-1].type == "run_failed"


async def test_parallel_tool_call_limit_is_honoured() -> None:
    running = 0
    peak = 0

    @tool(effect=ToolEffect.READ_ONLY)  # read-only calls of one turn run concurrently
    async def slow(i: int) -> int:
        """Sleep a little."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.02)
        running -= 1
        return i

    script = [[Call(f"c{i}", "slow", {"i": i}) for i in range(6)], [Text("ok")]]
    agent = Agent(name="a", model=MockModel(script), tools=[slow])
    await agent.run("go", run_config=RunConfig(parallel_tool_call_limit=2))
    assert peak == 2
    peak = 0
    agent = Agent(name="a", model=MockModel(script), tools=[slow])
    result = await agent.run("go")
    assert peak == 6
    outs = [e.item.content[0].text for e in result.events if e.type == "tool_output_item"]
    assert outs == ["0", "1", "2", "3", "4", "5"]  # results in call order


async def test_writes_run_one_at_a_time_in_order_while_reads_run_together() -> None:
    log: list[str] = []
    running = {"read": 0, "write": 0}
    peak = {"read": 0, "write": 0}

    async def work(kind: str, i: int) -> str:
        running[kind] += 1
        peak[kind] = max(peak[kind], running[kind])
        log.append(f"{kind}{i} start")
        await asyncio.sleep(0.01 * (4 - i % 4))  # later calls finish first if unordered
        log.append(f"{kind}{i} end")
        running[kind] -= 1
        return f"{kind}{i}"

    @tool(effect=ToolEffect.READ_ONLY)
    async def look(i: int) -> str:
        """Read something."""
        return await work("read", i)

    @tool(effect=ToolEffect.WRITE)
    async def save(i: int) -> str:
        """Write something."""
        return await work("write", i)

    @tool  # the default effect: a side effect, ordered like a write
    async def send(i: int) -> str:
        """Do something."""
        return await work("write", i)

    turn = [
        Call("w0", "save", {"i": 0}),
        Call("r1", "look", {"i": 1}),
        Call("w2", "send", {"i": 2}),
        Call("r3", "look", {"i": 3}),
        Call("w4", "save", {"i": 4}),
        Call("r5", "look", {"i": 5}),
    ]
    agent = Agent(name="a", model=MockModel([turn, [Text("ok")]]), tools=[look, save, send])
    result = await agent.run("go")
    assert peak == {"read": 3, "write": 1}
    writes = [e for e in log if e.startswith("write")]
    assert writes == [
        "write0 start",
        "write0 end",
        "write2 start",
        "write2 end",
        "write4 start",
        "write4 end",
    ]
    outs = [e.item.content[0].text for e in result.events if e.type == "tool_output_item"]
    assert outs == ["write0", "read1", "write2", "read3", "write4", "read5"]


async def test_invalid_args_are_fed_back_once_then_fail() -> None:
    model = MockModel(
        [[Call("c1", "lookup", {"query": "x"})], [Call("c2", "lookup", {"q": "x"})], [Text("ok")]]
    )
    result = await Agent(name="a", model=model, tools=[lookup]).run("go")
    first = next(e for e in result.events if e.type == "tool_output_item")
    assert first.item.is_error
    assert first.item.content[0].text == (
        "invalid arguments: q: Field required; query: Extra inputs are not permitted"
    )
    assert result.final_output == "ok"
    assert calls == [{"q": "x"}]

    calls.clear()
    model = MockModel([[Call("c1", "lookup", {})], [Call("c2", "lookup", {})], [Text("ok")]])
    with pytest.raises(RunError) as exc:
        await Agent(name="a", model=model, tools=[lookup]).run("go")
    assert "invalid arguments again" in str(exc.value.error)
    assert calls == []


async def test_several_bad_calls_to_one_tool_in_one_turn_are_one_feedback_round() -> None:
    calls.clear()
    model = MockModel(
        [
            [Call("c1", "lookup", {"query": "x"}), Call("c2", "lookup", {})],
            [Call("c3", "lookup", {"q": "fixed"})],
            [Text("ok")],
        ]
    )
    result = await Agent(name="a", model=model, tools=[lookup]).run("go")
    outputs = [e.item for e in result.events if e.type == "tool_output_item"]
    assert [(o.call_id, o.is_error) for o in outputs] == [
        ("c1", True),
        ("c2", True),
        ("c3", False),
    ]
    assert result.final_output == "ok"
    assert calls == [{"q": "fixed"}]


async def test_tool_errors_are_results_not_crashes() -> None:
    @tool
    def boom() -> str:
        """Fail."""
        raise RuntimeError("disk full")

    model = MockModel([[Call("c1", "boom", {})], [Text("recovered")]])
    result = await Agent(name="a", model=model, tools=[boom]).run("go")
    out = next(e for e in result.events if e.type == "tool_output_item")
    assert out.item.is_error and out.item.content[0].text == "RuntimeError: disk full"
    assert result.final_output == "recovered"


async def test_model_error_ends_the_run_with_run_failed() -> None:
    model = MockModel([[Text("par"), Fail("RateLimited", "slow down", 2.0)]])
    events = [e async for e in Agent(name="a", model=model).stream("go")]
    assert events[-1].type == "run_failed"
    assert events[-1].message == "model error (RateLimited): slow down"
    with pytest.raises(RunError, match="script exhausted"):
        await Agent(name="a", model=MockModel([])).run("go")


async def test_usage_is_summed_across_turns() -> None:
    model = MockModel(
        [[Call("c1", "lookup", {"q": "x"}), Usage(100, 10)], [Text("done"), Usage(150, 3)]]
    )
    result = await Agent(name="a", model=model, tools=[lookup]).run("go")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (250, 13)
    assert result.usage.total_tokens == 263


async def test_cancellation_mid_stream_keeps_usage() -> None:
    """Field case BR-15 (run side): a cancelled run reports the tokens it spent."""
    token = CancellationToken()
    model = MockModel(
        [
            [Call("c1", "lookup", {"q": "x"}), Usage(100, 10)],
            [Usage(150, 3), Text("Par"), Delay(1.0), Text("tial")],
        ]
    )
    agent = Agent(name="a", model=model, tools=[lookup])
    events = []
    start = time.monotonic()
    async for ev in agent.stream("go", RunContext.ephemeral(None).with_cancel(token)):
        events.append(ev)
        if ev.type == "token_delta" and ev.text == "Par":
            token.cancel()
    assert time.monotonic() - start < 0.9
    terminal = events[-1]
    assert terminal.type == "run_failed"
    assert terminal.error["kind"] == "Cancelled"
    assert terminal.usage.input_tokens >= 250 and terminal.usage.output_tokens >= 13
    assert not any(e.type == "token_delta" and e.text == "tial" for e in events)
    assert calls == [{"q": "x"}]


async def test_cancel_during_a_tool_stops_promptly() -> None:
    token = CancellationToken()

    @tool
    async def hang() -> str:
        """Hang."""
        await asyncio.sleep(10)
        return "never"

    agent = Agent(name="a", model=MockModel([[Call("c1", "hang", {})]]), tools=[hang])
    ctx = RunContext.ephemeral(None).with_cancel(token)
    asyncio.get_running_loop().call_later(0.05, token.cancel)
    with pytest.raises(RunError) as exc:
        await asyncio.wait_for(agent.run("go", ctx), 2)
    assert exc.value.error.kind == "Cancelled"


async def test_timeout_fails_the_run() -> None:
    model = MockModel([[Text("a"), Delay(5), Text("b")]])
    agent = Agent(name="a", model=model, run_config=RunConfig(timeout=0.05))
    with pytest.raises(RunError) as exc:
        await asyncio.wait_for(agent.run("go"), 2)
    assert exc.value.error.kind == "Timeout"
    assert str(exc.value.error) == "run timed out after 0.05s"


class Answer(BaseModel):
    value: int


async def test_structured_output_request_and_typed_result() -> None:
    model = MockModel([[Text('{"value": 3}')]])
    agent = Agent(
        name="a",
        model=model,
        output_type=Answer,
        model_settings=ModelSettings(tool_choice=ToolChoice(mode="required")),
    )
    result = await agent.run("go")
    assert result.final_output == Answer(value=3)
    rf = model.requests[0].settings.response_format
    assert isinstance(rf, JsonSchemaFormat)
    assert (rf.name, rf.strict) == ("Answer", True)
    assert rf.schema["properties"]["value"]["type"] == "integer"
    assert model.requests[0].settings.tool_choice is None
    assert model.requests[0].tools == []
    typed = await RunResultStreaming(
        Agent(name="a", model=MockModel([[Text('{"value": 5}')]]), output_type=Answer).stream("go")
    ).collect_typed(Answer)
    assert typed.final_output.value == 5


async def test_structured_output_repair_turn() -> None:
    model = MockModel([[Text("three")], [Text('{"value": 3}')]])
    result = await Agent(name="a", model=model, output_type=Answer).run("go")
    assert result.final_output == Answer(value=3)
    repair = model.requests[1].messages[-1]
    assert isinstance(repair, UserMessage)
    assert "Answer" in repair.content[0].text
    assert "not valid JSON" in repair.content[0].text
    assert [e.type for e in result.events].count("repair_started") == 1


async def test_invalid_structured_output_error_carries_the_text() -> None:
    model = MockModel([[Text('{"value": "x"}')], [Text('{"value": "y"}')]])
    with pytest.raises(RunError) as exc:
        await Agent(name="a", model=model, output_type=Answer).run("go")
    err = exc.value.error
    assert err.kind == "InvalidStructuredOutput"
    assert err.final_text == '{"value": "y"}'  # type: ignore[attr-defined]
    assert err.schema_errors == [  # type: ignore[attr-defined]
        "value: Input should be a valid integer, unable to parse string as an integer"
    ]


class Ticket(BaseModel):
    title: str
    meta: dict  # type: ignore[type-arg]


async def test_free_form_dict_output_type() -> None:
    """Field case BR-01: strict mode refuses clearly; the non-strict path keeps the data."""
    with pytest.raises(ConfigError) as exc:
        Agent(name="t", model=MockModel([]), output_type=Ticket)
    assert "Ticket.meta" in str(exc.value)
    assert "strict=False" in str(exc.value)
    model = MockModel([[Text('{"title":"x","meta":{"k":1}}')]])
    agent = Agent(name="t", model=model, output_type=OutputType(Ticket, strict=False))
    result = await agent.run("file it")
    assert result.final_output.meta == {"k": 1}
    rf = model.requests[0].settings.response_format
    assert isinstance(rf, JsonSchemaFormat) and rf.strict is False


async def test_handoff_routes_to_the_target_agent() -> None:
    billing = Agent(
        name="Billing desk",
        description="Handles invoices.",
        model=MockModel([[Text("Invoice sent.")]]),
    )
    front_model = MockModel([[Text("routing"), Call("h1", "transfer_to_billing_desk", {})]])
    front = Agent(name="front", model=front_model, handoffs=[billing])
    result = await front.run("send my invoice")
    assert result.final_output == "Invoice sent."
    kinds = [e.type for e in result.events]
    assert "handoff_item" in kinds and "agent_updated" in kinds
    ack = next(e for e in result.events if e.type == "tool_output_item")
    assert ack.item.call_id == "h1"
    assert ack.item.content[0].text == "Transferred to Billing desk."
    assert kinds.index("tool_output_item") < kinds.index("handoff_item")
    (td,) = [t for t in front_model.requests[0].tools if t.name == "transfer_to_billing_desk"]
    assert td.description == "Handles invoices."
    billing_request = billing.model.requests[0]  # type: ignore[attr-defined]
    texts = [type(m).__name__ for m in billing_request.messages]
    assert "ToolCall" not in texts and texts[0] == "UserMessage"


async def test_handoff_name_collision_fails_at_run_start() -> None:
    @tool
    def transfer_to_x() -> str:
        """Clash."""
        return ""

    x = Agent(name="X", model=MockModel([]))
    agent = Agent(name="a", model=MockModel([]), tools=[transfer_to_x], handoffs=[x])
    events = [e async for e in agent.stream("go")]
    assert [e.type for e in events] == ["run_started", "run_failed"]
    assert events[-1].message == (
        "handoff tool name collision: transfer_to_x (tool 'transfer_to_x' and handoff 'X'); "
        "rename an agent or tool (a transfer tool is transfer_to_ + the agent name's ASCII "
        "letters and digits)"
    )

    # names without ASCII letters or digits all give transfer_to_: both agents are named
    ja, zh = Agent(name="日本", model=MockModel([])), Agent(name="投资专家", model=MockModel([]))
    agent = Agent(name="a", model=MockModel([]), handoffs=[ja, zh])
    events = [e async for e in agent.stream("go")]
    assert "transfer_to_ (handoff '日本' and handoff '投资专家')" in events[-1].message


def test_agent_construction_errors() -> None:
    with pytest.raises(TypeError):
        Agent(name="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Agent(model=MockModel([]))  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match="non-empty"):
        Agent(name="", model=MockModel([]))
    with pytest.raises(ConfigError, match=r"'gpt-5' is not a model string; write PROVIDER:"):
        Agent(name="x", model="gpt-5")
    with pytest.raises(ConfigError, match=r"must implement helikon\.Model"):
        Agent(name="x", model=object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="decorate the function with @tool"):
        Agent(name="x", model=MockModel([]), tools=[print])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="two tools are named 'lookup'"):
        Agent(name="x", model=MockModel([]), tools=[lookup, lookup])


def test_run_sync_inside_a_loop_is_a_clear_error() -> None:
    async def inner() -> None:
        with pytest.raises(RuntimeError, match=r"use await agent\.run"):
            Agent(name="x", model=MockModel([[Text("hi")]])).run_sync("go")

    asyncio.run(inner())


class WithDefaults(BaseModel):
    a: int
    b: int = 5
    c: str | None = None


def test_strict_nulls_for_optional_fields_mean_absent() -> None:
    ot = OutputType(WithDefaults)
    value, errors = ot.validate_text('{"a": 1, "b": null, "c": null}')
    assert errors == []
    assert value == WithDefaults(a=1, b=5, c=None)
    _, errors = ot.validate_text('{"a": null, "b": null, "c": null}')
    assert errors == ["a: Input should be a valid integer"]
    _, errors = OutputType(WithDefaults, strict=False).validate_text('{"a": 1, "b": null}')
    assert errors == ["b: Input should be a valid integer"]


async def test_structured_output_in_a_code_block_needs_no_repair_turn() -> None:
    model = MockModel(
        [[Text('Here it is:\n```json\n{"value": 3}\n```')], [Text('```\n{"value": 4}\n```')]]
    )
    # text around the block is not one code block: a repair turn, answered with a bare block
    result = await Agent(name="a", model=model, output_type=Answer).run("go")
    assert result.final_output == Answer(value=4)
    assert [e.type for e in result.events].count("repair_started") == 1

    model = MockModel([[Text('```json\n{"value": 5}\n```')]])
    result = await Agent(name="a", model=model, output_type=Answer).run("go")
    assert result.final_output == Answer(value=5)
    assert "repair_started" not in [e.type for e in result.events]
    typed = await RunResultStreaming(
        Agent(name="a", model=MockModel([[Text('```JSON\n{"value": 6}\n```')]])).stream("go")
    ).collect_typed(Answer)
    assert typed.final_output == Answer(value=6)
