"""The loop core: the rules both drivers apply around the native machine, stepped by hand."""

from __future__ import annotations

from typing import Any

import pydantic

from helikon.core.items import (
    AssistantMessage,
    Item,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from helikon.core.loop_core import (
    EMPTY_CONVERSATION,
    LoopCore,
    request_settings,
    turn_plan,
    validate_output,
)
from helikon.core.loop_native import LoopConfig, loop_config_json
from helikon.core.model import ModelSettings
from helikon.core.output import OutputType
from helikon.core.tool_exec import CallOutcome
from helikon.core.usage import Usage


class Answer(pydantic.BaseModel):
    n: int


def _core(output: bool = False, handoffs: tuple[str, ...] = ()) -> LoopCore:
    ot = OutputType(Answer)
    config = LoopConfig(
        loop_config_json(
            4,
            [("add", "Add.")],
            [(h, "billing", "Billing.") for h in handoffs],
            (ot.name, ot.schema) if output else None,
        )
    )
    return LoopCore(config, frozenset(handoffs))


def _call(call_id: str, args: Any = None, name: str = "add") -> ToolCall:
    return ToolCall(call_id=call_id, name=name, args={} if args is None else args)


def _invalid(call_id: str) -> CallOutcome:
    item = ToolResult(call_id=call_id, content=[TextPart(text="bad")], is_error=True)
    return CallOutcome(item, [], ["a: Field required"])


def test_request_settings_follow_the_plan() -> None:
    ot = OutputType(Answer)
    base = ModelSettings(tool_choice="required", temperature=0.5)
    same = request_settings(
        base, ot, response_format=False, clear_tool_choice=False, has_tools=True
    )
    assert same is base
    fmt = request_settings(base, ot, response_format=True, clear_tool_choice=True, has_tools=True)
    assert fmt.response_format is not None and fmt.response_format.name == ot.name
    assert fmt.tool_choice is None and fmt.temperature == 0.5
    no_tools = request_settings(
        base, None, response_format=True, clear_tool_choice=False, has_tools=False
    )
    assert no_tools.tool_choice is None and no_tools.response_format is None


def test_turn_plan_reads_the_machine_plan() -> None:
    plan = turn_plan('{"tools": ["add"], "response_format": {"x": 1}, "clear_tool_choice": 1}')
    assert (plan.tools, plan.response_format, plan.clear_tool_choice) == (("add",), True, True)
    plain = turn_plan('{"tools": [], "response_format": "unchanged"}')
    assert (plain.response_format, plain.clear_tool_choice) == (False, False)


def test_validate_output_verdicts() -> None:
    ot = OutputType(Answer)
    ok = [AssistantMessage(content=[TextPart(text='{"n": 3}')])]
    bad = [AssistantMessage(content=[TextPart(text="three")])]
    assert validate_output(ot, ok) == []
    errors = validate_output(ot, bad)
    assert errors is not None and len(errors) == 1
    assert validate_output(ot, [*bad, _call("c1")]) is None  # a tool call: the machine judges
    assert validate_output(None, bad) is None


def test_only_instructions_is_refused_before_the_model_call() -> None:
    core = _core()
    convo: list[Item] = [SystemMessage(content=[TextPart(text="Be exact.")])]
    kind, *_ = core.start()
    assert kind == "CallModel"
    repairs, refusal = core.before_model_call(convo)
    assert repairs == []
    assert refusal is not None and str(refusal) == EMPTY_CONVERSATION


def test_before_model_call_repairs_a_call_without_result() -> None:
    core = _core()
    convo: list[Item] = [UserMessage.text("hi"), _call("c9")]
    core.start()
    repairs, refusal = core.before_model_call(convo)
    assert refusal is None
    assert [(r.repair, r.call_id) for r in repairs] == [("tool_result_synthesized", "c9")]
    assert isinstance(convo[2], ToolResult) and convo[2].is_error


def test_invalid_args_get_one_feedback_round_per_tool() -> None:
    core = _core()
    calls = [_call("c1"), _call("c2")]
    # two bad calls of one tool in one turn are one round
    assert core.invalid_args_error(calls, [_invalid("c1"), _invalid("c2")]) is None
    error = core.invalid_args_error([_call("c3")], [_invalid("c3")])
    assert error is not None
    assert str(error) == (
        "tool 'add' got invalid arguments again after the errors were fed back once: "
        "a: Field required"
    )


def test_a_turn_drives_the_machine_and_records_the_conversation() -> None:
    core = _core()
    convo: list[Item] = [UserMessage.text("2+3?")]
    core.start()
    core.before_model_call(convo)
    items: list[Item] = [_call("c1", {"a": 2, "b": 3})]
    kind, refs, _, _ = core.model_replied(convo, items, Usage(input_tokens=5), "tool_calls", None)
    assert kind == "ExecuteTools"
    assert [core.event(r).type for r in refs] == ["tool_call_item"]
    assert convo[-1] is items[0]
    result = ToolResult(call_id="c1", content=[TextPart(text="5")])
    kind, refs, _, _ = core.tools_replied(convo, [CallOutcome(result)])
    assert kind == "CallModel"
    assert convo[-1] is result and core.results == [result]
    answer: list[Item] = [AssistantMessage(content=[TextPart(text="5")])]
    core.before_model_call(convo)
    kind, refs, _, _ = core.model_replied(convo, answer, Usage(input_tokens=7), "stop", None)
    assert kind == "Terminate"
    assert core.output_text == "5"
    assert core.usage.input_tokens == 12


def test_a_value_without_exact_json_takes_the_text_path() -> None:
    core = _core()
    convo: list[Item] = [UserMessage.text("q")]
    core.start()
    core.before_model_call(convo)
    items: list[Item] = [_call("c1", {"a": (1, 2)})]  # a tuple: JSON makes it a list
    kind, _, payload, _ = core.model_replied(convo, items, Usage(), "tool_calls", None)
    assert kind == "ExecuteTools"
    (call,) = payload
    assert isinstance(call, str) and '"a":[1,2]' in call.replace(" ", "")


def test_transfer_calls_are_remembered_until_the_handoff() -> None:
    core = _core(handoffs=("transfer_to_billing",))
    convo: list[Item] = [UserMessage.text("refund")]
    core.start()
    core.before_model_call(convo)
    items: list[Item] = [_call("h1", name="transfer_to_billing")]
    kind, refs, payload, _ = core.model_replied(convo, items, Usage(), "tool_calls", None)
    for r in refs:
        core.event(r)
    assert (kind, payload) == ("Handoff", "billing")
    assert core.take_handoff_calls() == ["h1"]
    assert core.take_handoff_calls() == []
    transcript = core.transcript()
    assert transcript[0] == UserMessage.text("refund")
    assert transcript[1] == UserMessage.text(
        "This conversation was transferred to you (billing) from another agent. "
        "Continue helping the user from here."
    )
    assert len(transcript) == 2
