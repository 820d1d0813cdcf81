"""One-call structured output: ``output_mode`` "tool" and "native" next to "finalize", on the
scripted model (exact model calls, requests and events)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from helikon import Agent, JsonSchemaFormat, ToolCall, ToolResult, tool
from helikon.core.items import AssistantMessage
from helikon.errors import ConfigError
from helikon.testing import Call, MockModel, Text


class Weather(BaseModel):
    city: str
    celsius: int


@tool
def forecast(city: str) -> str:
    """The forecast for a city."""
    return f"{city}: 21 C, sunny"


def _agent(model: MockModel, mode: str | None) -> Agent:
    return Agent(name="w", model=model, tools=[forecast], output_type=Weather, output_mode=mode)


LOOKUP = [Call("c1", "forecast", {"city": "Oslo"})]
ANSWER = '{"city": "Oslo", "celsius": 21}'


async def test_finalize_mode_spends_a_finalizing_call() -> None:
    model = MockModel([LOOKUP, [Text(ANSWER)], [Text(ANSWER)]])
    result = await _agent(model, "finalize").run("Oslo?")
    assert result.final_output == Weather(city="Oslo", celsius=21)
    assert len(model.requests) == 3
    assert [t.name for t in model.requests[1].tools] == ["forecast"]
    assert model.requests[1].settings.response_format is None
    assert model.requests[2].tools == []
    model.assert_exhausted()


async def test_native_mode_sends_the_format_with_the_tools_and_needs_no_extra_call() -> None:
    model = MockModel([LOOKUP, [Text(ANSWER)]])
    result = await _agent(model, "native").run("Oslo?")
    assert result.final_output == Weather(city="Oslo", celsius=21)
    assert len(model.requests) == 2
    for request in model.requests:
        assert [t.name for t in request.tools] == ["forecast"]
        rf = request.settings.response_format
        assert isinstance(rf, JsonSchemaFormat) and (rf.name, rf.strict) == ("Weather", True)
    model.assert_exhausted()


async def test_native_mode_invalid_answer_gets_the_repair_turn() -> None:
    model = MockModel([[Text('{"city": "Oslo"}')], [Text(ANSWER)]])
    result = await _agent(model, "native").run("Oslo?")
    assert result.final_output.celsius == 21
    repair = model.requests[1]
    assert repair.tools == []
    assert "- celsius: Field required" in repair.messages[-1].content[0].text  # type: ignore[union-attr]
    assert [e.type for e in result.events].count("repair_started") == 1


async def test_tool_mode_the_output_tool_call_ends_the_run() -> None:
    model = MockModel([LOOKUP, [Call("o1", "final_result", {"city": "Oslo", "celsius": 21})]])
    result = await _agent(model, "tool").run("Oslo?")
    assert result.final_output == Weather(city="Oslo", celsius=21)
    assert len(model.requests) == 2
    offered = model.requests[0].tools
    assert [t.name for t in offered] == ["forecast", "final_result"]
    assert offered[1].parameters == Weather.model_json_schema()
    assert offered[1].description == (
        "Call this to give the final answer, as a `Weather`; it ends the run."
    )
    assert model.requests[0].settings.response_format is None
    kinds = [e.type for e in result.events]
    assert kinds[-4:] == ["tool_call_item", "tool_output_item", "message_output", "run_completed"]
    ack = [e for e in result.events if e.type == "tool_output_item"][-1].item
    assert (ack.call_id, ack.content[0].text) == ("o1", "Final result accepted.")
    assert result.events[-2].item.content[0].text == '{"city":"Oslo","celsius":21}'
    assert result.events[-2].item.agent == "w"
    # the next turn's input holds the call, its result and the answer, in order
    tail = result.to_input_list()[-3:]
    assert [type(i) for i in tail] == [ToolCall, ToolResult, AssistantMessage]


async def test_tool_mode_invalid_output_call_is_answered_with_the_errors() -> None:
    model = MockModel(
        [[Call("o1", "final_result", {"city": "Oslo", "celsius": "warm"})], [Text(ANSWER)]]
    )
    result = await _agent(model, "tool").run("Oslo?")
    assert result.final_output.celsius == 21
    repair = model.requests[1]
    sent_back = repair.messages[-1]
    assert isinstance(sent_back, ToolResult) and sent_back.call_id == "o1" and sent_back.is_error
    assert "- celsius: Input should be a valid integer" in sent_back.content[0].text  # type: ignore[union-attr]
    assert repair.tools == []


async def test_tool_mode_a_prose_answer_falls_back_to_the_finalizing_turn() -> None:
    model = MockModel([[Text("It is 21 degrees in Oslo.")], [Text(ANSWER)]])
    result = await _agent(model, "tool").run("Oslo?")
    assert result.final_output.celsius == 21
    assert len(model.requests) == 2
    assert model.requests[1].tools == []
    assert [e.type for e in result.events].count("repair_started") == 0
    # and valid JSON text ends the run at once
    model = MockModel([[Text(ANSWER)]])
    assert (await _agent(model, "tool").run("Oslo?")).final_output.celsius == 21
    assert len(model.requests) == 1


async def test_tool_mode_other_calls_next_to_the_output_call_are_not_run() -> None:
    model = MockModel(
        [
            [
                Call("c1", "forecast", {"city": "Oslo"}),
                Call("o1", "final_result", {"city": "Oslo", "celsius": 3}),
            ]
        ]
    )
    result = await _agent(model, "tool").run("Oslo?")
    assert result.final_output.celsius == 3
    outputs = [e.item for e in result.events if e.type == "tool_output_item"]
    assert [(o.call_id, o.content[0].text) for o in outputs] == [
        ("c1", "Not run: the final result was given in the same response."),
        ("o1", "Final result accepted."),
    ]


async def test_the_default_mode_is_the_models_and_else_finalize() -> None:
    model = MockModel([LOOKUP, [Text(ANSWER)], [Text(ANSWER)]])
    await _agent(model, None).run("Oslo?")
    assert len(model.requests) == 3  # MockModel declares no output_mode: finalize

    class NativeMock(MockModel):
        output_mode = "native"

    native = NativeMock([LOOKUP, [Text(ANSWER)]])
    await _agent(native, None).run("Oslo?")
    assert len(native.requests) == 2
    assert _agent(native, "prompted").output_mode == "finalize"
    # a required tool choice could never let a native answer through: the output tool can
    from helikon import ModelSettings, ToolChoice

    forced = NativeMock([LOOKUP, [Call("o1", "final_result", {"city": "Oslo", "celsius": 1})]])
    agent = Agent(
        name="w",
        model=forced,
        tools=[forecast],
        output_type=Weather,
        model_settings=ModelSettings(tool_choice=ToolChoice(mode="required")),
    )
    assert (await agent.run("Oslo?")).final_output.celsius == 1
    assert agent.retry_rules.mode == "tool"
    assert [t.name for t in forced.requests[0].tools] == ["forecast", "final_result"]


def test_a_bad_output_mode_names_the_modes() -> None:
    with pytest.raises(ConfigError) as exc:
        _agent(MockModel([]), "json")
    assert str(exc.value) == (
        "Agent(output_mode=...): output_mode='json' is not a mode; use 'tool', 'native' or "
        "'finalize' (alias 'prompted'), or None for the model's default"
    )


def test_tool_mode_with_a_tool_named_final_result_is_refused() -> None:
    @tool
    def final_result(x: int) -> int:
        """Clash."""
        return x

    with pytest.raises(ConfigError) as exc:
        Agent(
            name="w",
            model=MockModel([]),
            tools=[final_result],
            output_type=Weather,
            output_mode="tool",
        )
    assert str(exc.value) == (
        "Agent(tools=...): a tool is named 'final_result', the output tool's name in "
        "output_mode='tool'; rename the tool, or pass output_mode='native' or 'finalize'"
    )
    # the other modes do not offer an output tool
    Agent(name="w", model=MockModel([]), tools=[final_result], output_type=Weather)


async def test_a_tool_mode_answer_is_recorded_so_the_next_turn_continues_cleanly() -> None:
    from helikon.runtimes import Runner
    from helikon.sessions import MemorySession

    session = MemorySession()
    model = MockModel(
        [
            [Call("o1", "final_result", {"city": "Oslo", "celsius": 21})],
            [Call("o2", "final_result", {"city": "Bergen", "celsius": 17})],
        ]
    )
    agent = _agent(model, "tool")
    first = await Runner().run(agent, "Oslo?", session=session)
    assert first.final_output == Weather(city="Oslo", celsius=21)
    kinds = [e.type for e in await session.events()]
    assert kinds == ["user_message", "tool_called", "tool_returned", "assistant_message"]
    second = await Runner().run(agent, "And Bergen?", session=session)
    assert second.final_output == Weather(city="Bergen", celsius=17)
    sent = model.requests[1].messages
    assert [m.type for m in sent] == [
        "user_message",
        "tool_call",
        "tool_result",
        "assistant_message",
        "user_message",
    ]
    assert not [e for e in second.events if e.type == "conversation_repaired"]
    assert sent[3].agent == "w"  # type: ignore[union-attr]
