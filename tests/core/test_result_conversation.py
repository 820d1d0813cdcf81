"""Results carry the conversation on: new_items, to_input_list, last_agent, final_output_as."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from helikon import Agent, OutputTypeError
from helikon.core.items import AssistantMessage, TextPart, ToolCall, ToolResult, UserMessage
from helikon.core.result import RunResult
from helikon.runtimes import Runner
from helikon.testing import Call, MockModel, Text


async def test_two_turn_chat_through_to_input_list() -> None:
    model = MockModel([[Text("Hi Ada.")], [Text("Your name is Ada.")]])
    agent = Agent(name="chat", model=model)
    first = await agent.run("My name is Ada.")
    assert [type(i).__name__ for i in first.new_items] == ["AssistantMessage"]
    history = first.to_input_list()
    assert [(type(i).__name__, i.text()) for i in history] == [  # type: ignore[union-attr]
        ("UserMessage", "My name is Ada."),
        ("AssistantMessage", "Hi Ada."),
    ]
    second = await agent.run([*history, UserMessage.text("What is my name?")])
    assert second.final_output == "Your name is Ada."
    sent = [(type(m).__name__, m.text()) for m in model.requests[1].messages]  # type: ignore[union-attr]
    assert sent[-3:] == [
        ("UserMessage", "My name is Ada."),
        ("AssistantMessage", "Hi Ada."),
        ("UserMessage", "What is my name?"),
    ]
    assert [i.text() for i in second.to_input_list()] == [  # type: ignore[union-attr]
        "My name is Ada.",
        "Hi Ada.",
        "What is my name?",
        "Your name is Ada.",
    ]
    # a new list each time: changing it leaves the result alone
    history.clear()
    assert len(first.to_input_list()) == 2


async def test_new_items_hold_tool_calls_and_results_in_order() -> None:
    from helikon import tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    model = MockModel([[Call("c1", "add", {"a": 2, "b": 3})], [Text("5")]])
    result = await Agent(name="calc", model=model, tools=[add]).run("2+3?")
    items = result.new_items
    assert [type(i) for i in items] == [ToolCall, ToolResult, AssistantMessage]
    assert isinstance(items[0], ToolCall) and items[0].args == {"a": 2, "b": 3}
    assert isinstance(items[1], ToolResult) and items[1].call_id == "c1"
    assert result.to_input_list()[1:] == items


async def test_last_agent_is_the_handoff_target_object() -> None:
    billing = Agent(name="Billing desk", model=MockModel([[Text("Invoice sent.")]]))
    front = Agent(
        name="front",
        model=MockModel([[Call("h1", "transfer_to_billing_desk", {})]]),
        handoffs=[billing],
    )
    result = await front.run("send my invoice")
    assert result.last_agent is billing
    plain = Agent(name="solo", model=MockModel([[Text("ok")]]))
    assert (await plain.run("hi")).last_agent is plain


async def test_runner_run_carries_input_and_last_agent() -> None:
    agent = Agent(name="solo", model=MockModel([[Text("ok")]]))
    result = await Runner().run(agent, "hi")
    assert result.last_agent is agent
    assert [i.text() for i in result.to_input_list()] == ["hi", "ok"]  # type: ignore[union-attr]


class Answer(BaseModel):
    value: int


async def test_final_output_as_returns_the_typed_output() -> None:
    agent = Agent(name="t", model=MockModel([[Text('{"value": 7}')]]), output_type=Answer)
    result = await agent.run("seven")
    answer = result.final_output_as(Answer)
    assert answer == Answer(value=7)
    text = await Agent(name="p", model=MockModel([[Text("plain")]])).run("x")
    assert text.final_output_as(str) == "plain"
    assert RunResult([1, 2]).final_output_as(list[int]) == [1, 2]


async def test_final_output_as_names_expected_and_actual_type() -> None:
    result = await Agent(name="p", model=MockModel([[Text("plain")]])).run("x")
    with pytest.raises(OutputTypeError) as exc:
        result.final_output_as(Answer)
    assert str(exc.value) == (
        "final_output is str, not the expected Answer; give the agent output_type=... to "
        "get a typed output, or ask for the type it has"
    )
    assert exc.value.expected is Answer and exc.value.actual is str
    assert isinstance(exc.value, TypeError)


def test_text_on_user_and_assistant_items() -> None:
    user = UserMessage.text("hello")
    assert user == UserMessage(content=[TextPart(text="hello")])
    assert user.text() == "hello"
    both = UserMessage(content=[TextPart(text="a"), TextPart(text="b")])
    assert both.text() == "ab"
    reply = AssistantMessage(content=[TextPart(text="hi "), TextPart(text="there")], agent="x")
    assert reply.text() == "hi there"
    assert AssistantMessage(content=[]).text() == ""
