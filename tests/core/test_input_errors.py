"""Bad arguments fail at once with a ConfigError that names the argument and the fix.

Each case is a mistake users of agent SDKs make in their first hour: one tool instead of a
list, an instance instead of a type, a dict where a RunConfig goes, a script without its inner
list. The run never starts and nothing reaches a model.
"""

from __future__ import annotations

import asyncio
import traceback
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from helikon import (
    Agent,
    ConfigError,
    OutputType,
    RunConfig,
    RunContext,
    RunError,
    ToolEffect,
    tool,
)
from helikon.core.runnable import input_items
from helikon.testing import Call, MockModel, Text


@tool
def lookup(q: str) -> str:
    """Look something up."""
    return q


def _agent(**kw: Any) -> Agent:
    return Agent(name="a", model=MockModel([[Text("ok")]]), **kw)


# ---------------------------------------------------------------- Agent(...)


def test_a_single_tool_instead_of_a_list_names_the_fix() -> None:
    with pytest.raises(ConfigError) as exc:
        _agent(tools=lookup)
    assert str(exc.value) == (
        "Agent(tools=...) must be a list of tools; got a single tool 'lookup': pass tools=[lookup]"
    )


def test_a_plain_function_as_tools_asks_for_tool_decorator() -> None:
    def weather(city: str) -> str:
        return city

    with pytest.raises(ConfigError) as exc:
        _agent(tools=weather)
    assert "decorate it with @tool and pass tools=[weather]" in str(exc.value)
    with pytest.raises(ConfigError) as exc:
        _agent(tools=[lookup, weather])
    assert str(exc.value) == (
        "Agent(tools=...): tools[1] is the plain function 'weather', not a tool; "
        "decorate the function with @tool"
    )


def test_a_non_tool_object_in_tools_is_named_with_its_index() -> None:
    with pytest.raises(ConfigError) as exc:
        _agent(tools=[lookup, 42])
    assert str(exc.value).startswith("Agent(tools=...): tools[1] is a int (42), not a tool")
    with pytest.raises(ConfigError, match=r"must be a list of tools, got str"):
        _agent(tools="lookup")


def test_a_tool_with_a_bad_effect_is_refused() -> None:
    class Custom:
        name = "custom"
        description = "d"
        parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
        effect = "readonly"

        async def invoke(self, ctx: Any, args: Any) -> Any:
            return None

    with pytest.raises(ConfigError) as exc:
        _agent(tools=[Custom()])
    assert str(exc.value) == (
        "Agent(tools=...): tool 'custom' has effect 'readonly'; it must be a ToolEffect "
        "(ToolEffect.READ_ONLY, ToolEffect.WRITE, ToolEffect.SIDE_EFFECT)"
    )


def test_instructions_must_be_text_or_a_function() -> None:
    with pytest.raises(ConfigError) as exc:
        _agent(instructions=["be brief"])
    assert str(exc.value) == (
        "Agent(instructions=...) must be a str or a function fn(ctx) -> str (sync or async), "
        "got list ['be brief']"
    )

    def two(ctx: Any, extra: Any) -> str:
        return "x"

    with pytest.raises(ConfigError) as exc:
        _agent(instructions=two)
    assert str(exc.value) == (
        "Agent(instructions=...): the function 'two' must take the run context or nothing "
        "(def fn(ctx) -> str or def fn() -> str)"
    )

    async def render(ctx: Any) -> str:
        return "x"

    # an async function is fine (tests/core/test_agent_decorators.py checks what it renders)
    assert _agent(instructions=render).run_sync("hi").final_output == "ok"
    # a plain function is fine
    assert _agent(instructions=lambda ctx: "x").run_sync("hi").final_output == "ok"


def test_single_handoff_hook_and_guardrail_ask_for_a_list() -> None:
    other = _agent()
    with pytest.raises(ConfigError, match=r"got a single handoff 'a': pass handoffs=\[a\]"):
        _agent(handoffs=other)

    class Guard:
        async def check(self, ctx: Any, input: Any) -> Any:
            return None

    with pytest.raises(ConfigError, match=r"got a single guardrail \(Guard\)"):
        _agent(input_guardrails=Guard())

    class Hook:
        async def on_event(self, ctx: Any, event: Any) -> Any:
            return None

    with pytest.raises(ConfigError, match=r"got a single hook \(Hook\): pass hooks=\[hook\]"):
        _agent(hooks=Hook())


def test_model_settings_and_run_config_types_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"model_settings=\.\.\.\) must be a ModelSettings"):
        _agent(model_settings={"temperature": 0})
    with pytest.raises(ConfigError) as exc:
        _agent(run_config={"max_turns": 2})
    assert str(exc.value) == (
        "Agent(run_config=...) must be a RunConfig, got dict; pass run_config="
        "RunConfig(max_turns=2)"
    )


# ---------------------------------------------------------------- run arguments


def test_run_ctx_must_be_a_run_context() -> None:
    agent = _agent()
    with pytest.raises(ConfigError) as exc:
        agent.run_sync("hi", {"user": "ada"})  # type: ignore[arg-type]
    assert str(exc.value) == (
        "Agent.run_sync(ctx=...) must be a RunContext, got dict; to hand your own data to "
        "tools and hooks pass RunContext.ephemeral(deps) (or RunContext(user_ctx=deps))"
    )
    with pytest.raises(ConfigError, match=r"Agent\.stream\(ctx=\.\.\.\) must be a RunContext"):
        agent.stream("hi", ctx="deps")  # type: ignore[arg-type]
    # the right shape runs
    assert agent.run_sync("hi", RunContext.ephemeral({"user": "ada"})).final_output == "ok"


def test_run_config_dict_is_refused_with_the_equivalent_call() -> None:
    agent = _agent()
    with pytest.raises(ConfigError) as exc:
        asyncio.run(agent.run("hi", run_config={"max_turns": 3}))  # type: ignore[arg-type]
    assert str(exc.value).endswith("pass run_config=RunConfig(max_turns=3)")
    assert agent.model.requests == []  # type: ignore[attr-defined]
    assert agent.run_sync("hi", run_config=RunConfig(max_turns=3)).final_output == "ok"


def test_run_sync_failure_is_not_chained_to_the_no_loop_check() -> None:
    agent = Agent(name="a", model=MockModel([[Call("c1", "missing", {})]] * 3))
    with pytest.raises(RunError) as exc:
        agent.run_sync("hi", run_config=RunConfig(max_turns=1))
    text = "".join(traceback.format_exception(exc.value))
    assert "no running event loop" not in text
    assert exc.value.__context__ is None or not isinstance(exc.value.__context__, RuntimeError)


# ---------------------------------------------------------------- input items


def test_a_dict_item_without_type_shows_the_expected_shape() -> None:
    with pytest.raises(ConfigError) as exc:
        input_items([{"role": "user", "content": "hi"}])
    assert str(exc.value) == (
        "agent input[0] has no 'type' key; 'type' must be one of 'system', 'user_message', "
        "'assistant_message', 'tool_call', 'tool_result', e.g. "
        '{"type": "user_message", "content": [{"type": "text", "text": "hi"}]}'
    )


def test_a_dict_item_with_an_unknown_type_is_named() -> None:
    with pytest.raises(ConfigError, match=r"input\[1\] has 'type': 'user', not an item type"):
        input_items(
            [
                {"type": "user_message", "content": [{"type": "text", "text": "a"}]},
                {"type": "user", "content": "b"},
            ]
        )


def test_a_dict_item_with_a_bad_field_names_the_field() -> None:
    with pytest.raises(ConfigError) as exc:
        input_items([{"type": "tool_call", "call_id": "c1", "args": {}}])
    msg = str(exc.value)
    assert msg.startswith("agent input[0] is not a valid tool_call item (name: Field required)")
    assert msg.endswith(
        'expected e.g. {"type": "tool_call", "call_id": "c1", "name": "lookup", "args": {"q": "x"}}'
    )


def test_a_single_dict_item_asks_to_wrap_it_in_a_list() -> None:
    with pytest.raises(ConfigError) as exc:
        input_items({"type": "user_message", "content": []})  # type: ignore[arg-type]
    assert str(exc.value) == (
        "agent input must be a str, a UserMessage or a list of items, got dict; wrap a "
        "single item in a list: [item]"
    )
    with pytest.raises(ConfigError, match=r"got int$"):
        input_items(3)  # type: ignore[arg-type]


# ---------------------------------------------------------------- OutputType


class Answer(BaseModel):
    city: str


@dataclass
class Point:
    x: int


def test_output_type_instance_instead_of_type() -> None:
    with pytest.raises(ConfigError) as exc:
        _agent(output_type=Answer(city="Oslo"))
    assert str(exc.value) == (
        "output_type must be a type, e.g. output_type=Answer, not an instance (Answer(city='Oslo'))"
    )
    with pytest.raises(ConfigError, match=r"output_type=Point, not an instance"):
        OutputType(Point(1))
    with pytest.raises(ConfigError, match=r"not the str value 'Answer'"):
        OutputType("Answer")


def test_output_type_name_rule() -> None:
    with pytest.raises(ConfigError) as exc:
        OutputType(Answer, name="my answer")
    assert str(exc.value) == (
        "OutputType(name='my answer'): a response-format name must match "
        "^[a-zA-Z0-9_-]{1,64}$ (letters, digits, '_' and '-', at most 64 characters)"
    )
    with pytest.raises(ConfigError):
        OutputType(Answer, name="x" * 65)
    assert OutputType(Answer, name="answer-v2").name == "answer-v2"


def test_a_derived_name_is_made_valid() -> None:
    from typing import Generic, TypeVar

    T = TypeVar("T")

    class Page(BaseModel, Generic[T]):
        items: list[T]

    assert OutputType(Page[int]).name == "Page_int"
    assert OutputType(Answer).name == "Answer"


# ---------------------------------------------------------------- @tool effect


def test_tool_effect_accepts_its_value_string() -> None:
    @tool(effect="read_only")
    def peek(q: str) -> str:
        return q

    assert peek.effect is ToolEffect.READ_ONLY


def test_tool_effect_typo_lists_the_valid_values() -> None:
    with pytest.raises(ConfigError) as exc:

        @tool(effect="readonly")
        def peek(q: str) -> str:
            return q

    assert str(exc.value) == (
        "tool 'peek': effect='readonly' is not a ToolEffect; use one of "
        "ToolEffect.READ_ONLY ('read_only'), ToolEffect.WRITE ('write'), "
        "ToolEffect.SIDE_EFFECT ('side_effect')"
    )


# ---------------------------------------------------------------- MockModel scripts


def test_mock_model_script_without_the_inner_list() -> None:
    with pytest.raises(ConfigError) as exc:
        MockModel([Text("x")])  # type: ignore[list-item]
    assert str(exc.value).startswith(
        "MockModel scripts[0] is a single Text step, but each turn must be a list of steps"
    )
    assert 'MockModel([[Text("x")]]) plays one turn answering x' in str(exc.value)


def test_mock_model_non_step_and_non_list() -> None:
    with pytest.raises(ConfigError, match=r"MockModel scripts\[0\]\[1\] is a str, not a step"):
        MockModel([[Text("x"), "y"]])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match=r"a list of turns, each a list of steps, got str"):
        MockModel("hello")  # type: ignore[arg-type]
    m = MockModel([])
    with pytest.raises(ConfigError, match=r"MockModel push\(script\) is a single Text step"):
        m.push(Text("x"))  # type: ignore[arg-type]


def test_strict_mode_errors_name_the_type_as_written() -> None:
    class Ticket(BaseModel):
        meta: dict[str, Any]

    with pytest.raises(ConfigError) as exc:
        OutputType(Ticket)
    assert str(exc.value) == (
        "output_type Ticket cannot use OpenAI strict mode: Ticket.meta: free-form object "
        "(dict) cannot be expressed in OpenAI strict mode. Give the field a fixed shape, or "
        "pass output_type=OutputType(Ticket, strict=False) to send the schema without strict "
        "mode"
    )
    # a list is sent wrapped in {"value": ...} (tests/core/test_output_wrapping.py)
    assert OutputType(list[int]).validate_text('{"value": [1, 2]}') == ([1, 2], [])
    assert OutputType(list[int], strict=False).validate_text("[1, 2]") == ([1, 2], [])


def test_answer_json_reads_one_whole_code_block() -> None:
    from helikon.core.output import answer_json

    assert answer_json('  ```json\n{"a": 1}\n```  ') == '{"a": 1}'
    assert answer_json("```\n[1]\n```") == "[1]"
    assert answer_json('{"a": 1}') == '{"a": 1}'
    # text around the block, or two blocks: left as is (and so not valid JSON)
    assert answer_json("see ```json\n{}\n```") == "see ```json\n{}\n```"
    two = "```json\n{}\n```\nand\n```json\n{}\n```"
    assert OutputType(dict[str, int], strict=False).validate_text(two)[0] is None
