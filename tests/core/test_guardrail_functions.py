"""Guardrails as plain functions (sync or async), the typed value on output, the input items
on input, and distinct input / output tripwire types that old ``except`` clauses still catch."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from helikon import (
    Agent,
    GuardrailInput,
    GuardrailKind,
    GuardrailTripwire,
    InputGuardrailTripwire,
    OutputGuardrailTripwire,
    Pass,
    RunContext,
    RunError,
    Tripwire,
    UserMessage,
)
from helikon.core.items import AssistantMessage, TextPart
from helikon.errors import ConfigError
from helikon.testing import MockModel, Text


class Refund(BaseModel):
    order: str
    amount: int


def _user(text: str) -> UserMessage:
    return UserMessage(content=[TextPart(text=text)])


async def test_a_sync_function_input_guardrail_trips_with_the_input_type() -> None:
    def no_card_numbers(input: GuardrailInput) -> Pass | Tripwire:
        if "4111" in input.text:
            return Tripwire("input_policy", {"matched": "card number"})
        return Pass()

    model = MockModel([[Text("never")]])
    agent = Agent(name="a", model=model, input_guardrails=[no_card_numbers])
    with pytest.raises(RunError) as exc:
        await agent.run("my card is 4111 1111")
    err = exc.value.error
    assert type(err) is InputGuardrailTripwire
    assert isinstance(err, GuardrailTripwire)  # the old `except` clause still holds
    assert str(err) == "input guardrail tripped (input_policy)"
    assert err.info == {"matched": "card number"}
    assert err.kind == "GuardrailTriggered"
    assert exc.value.events[-2].type == "guardrail_triggered"


async def test_an_async_function_with_the_context_passes_a_clean_input() -> None:
    seen: list[tuple[Any, str]] = []

    async def tenant_ok(ctx: RunContext[dict[str, str]], input: GuardrailInput) -> Pass:
        seen.append((ctx.user_ctx["tenant"], input.source))
        return Pass()

    agent = Agent(name="a", model=MockModel([[Text("hi")]]), input_guardrails=[tenant_ok])
    result = await agent.run("hello", RunContext.ephemeral({"tenant": "acme"}))
    assert result.final_output == "hi"
    assert seen == [("acme", "user_text")]


async def test_an_input_guardrail_receives_the_items_not_only_the_joined_text() -> None:
    got: list[GuardrailInput] = []

    def record(input: GuardrailInput) -> Pass:
        got.append(input)
        return Pass()

    earlier = AssistantMessage(content=[TextPart(text="Which order?")])
    items = [_user("refund please"), earlier, _user("order 42")]
    agent = Agent(name="a", model=MockModel([[Text("ok")]]), input_guardrails=[record])
    await agent.run(items)
    assert len(got) == 1
    assert got[0].items == tuple(items)
    assert got[0].text == "refund please\norder 42"
    assert got[0].value is None


async def test_an_output_guardrail_on_a_typed_agent_receives_the_typed_value() -> None:
    values: list[Any] = []

    async def cap(input: GuardrailInput) -> Pass | Tripwire:
        values.append(input.value)
        if input.value.amount > 100:
            return Tripwire(GuardrailKind.OUTPUT_POLICY, {"amount": input.value.amount})
        return Pass()

    model = MockModel([[Text('{"order": "42", "amount": 500}')]])
    agent = Agent(name="a", model=model, output_type=Refund, output_guardrails=[cap])
    with pytest.raises(RunError) as exc:
        await agent.run("refund")
    assert values == [Refund(order="42", amount=500)]
    err = exc.value.error
    assert type(err) is OutputGuardrailTripwire
    assert isinstance(err, GuardrailTripwire)
    assert not isinstance(err, InputGuardrailTripwire)
    assert str(err) == "output guardrail tripped (output_policy)"
    assert err.info == {"amount": 500}


async def test_a_typed_answer_within_the_guardrail_is_returned() -> None:
    def cap(ctx: RunContext[Any], input: GuardrailInput) -> Pass:
        assert isinstance(input.value, Refund)
        return Pass()

    model = MockModel([[Text('{"order": "7", "amount": 20}')]])
    agent = Agent(name="a", model=model, output_type=Refund, output_guardrails=[cap])
    result = await agent.run("refund")
    assert result.final_output == Refund(order="7", amount=20)


async def test_an_untyped_agents_output_value_is_the_text() -> None:
    values: list[Any] = []

    def record(input: GuardrailInput) -> Pass:
        values.append((input.text, input.value, input.items))
        return Pass()

    agent = Agent(name="a", model=MockModel([[Text("plain")]]), output_guardrails=[record])
    await agent.run("hi")
    assert values == [("plain", "plain", ())]


@pytest.mark.parametrize("returned", [True, None, "ok", 0])
async def test_a_function_returning_something_else_fails_closed_naming_it(returned: Any) -> None:
    def sloppy(input: GuardrailInput) -> Any:
        return returned

    agent = Agent(name="a", model=MockModel([[Text("x")]]), output_guardrails=[sloppy])
    with pytest.raises(RunError) as exc:
        await agent.run("hi")
    err = exc.value.error
    assert isinstance(err, OutputGuardrailTripwire)
    assert err.guardrail_kind == "other"
    qual = "test_a_function_returning_something_else_fails_closed_naming_it.<locals>.sloppy"
    assert err.info == {
        "error": f"guardrail {qual} returned {returned!r}, not Pass() or Tripwire(...)"
    }


async def test_a_function_that_raises_trips_as_other() -> None:
    def down(input: GuardrailInput) -> Pass:
        raise RuntimeError("classifier down")

    agent = Agent(name="a", model=MockModel([[Text("x")]]), input_guardrails=[down])
    with pytest.raises(RunError) as exc:
        await agent.run("hi")
    assert isinstance(exc.value.error, InputGuardrailTripwire)
    assert exc.value.error.info == {"error": "RuntimeError: classifier down"}


def test_a_function_with_the_wrong_parameters_is_refused_naming_the_fix() -> None:
    def three(a: Any, b: Any, c: Any) -> Pass:
        return Pass()

    with pytest.raises(ConfigError) as exc:
        Agent(name="a", model=MockModel([]), input_guardrails=[three])
    assert str(exc.value) == (
        "Agent(input_guardrails=...): input_guardrails[0]: the guardrail function 'three' "
        "takes 3 required parameters; write `def three(input)` or `def three(ctx, input)` "
        "(async or not), returning Pass() or Tripwire(...)"
    )


def test_a_single_function_instead_of_a_list_is_refused() -> None:
    def one(input: GuardrailInput) -> Pass:
        return Pass()

    with pytest.raises(ConfigError) as exc:
        Agent(name="a", model=MockModel([]), output_guardrails=one)  # type: ignore[arg-type]
    assert str(exc.value) == (
        "Agent(output_guardrails=...) must be a list of guardrails; got a single guardrail "
        "(function): pass output_guardrails=[guardrail]"
    )


def test_an_object_with_a_sync_check_is_still_refused() -> None:
    class SyncCheck:
        def check(self, ctx: Any, input: Any) -> Pass:
            return Pass()

    with pytest.raises(ConfigError) as exc:
        Agent(name="a", model=MockModel([]), input_guardrails=[SyncCheck()])
    assert "SyncCheck.check is not a coroutine function" in str(exc.value)


def test_the_tripwire_types_survive_their_dict_form() -> None:
    from helikon.core.result import agent_error_from_dict

    for cls in (InputGuardrailTripwire, OutputGuardrailTripwire):
        back = agent_error_from_dict(cls("input_policy", {"x": 1}).to_dict())
        assert type(back) is cls
        assert (back.guardrail_kind, back.info) == ("input_policy", {"x": 1})  # type: ignore[attr-defined]
    old = agent_error_from_dict({"kind": "GuardrailTriggered", "guardrail_kind": "other"})
    assert type(old) is GuardrailTripwire
    assert str(old) == "guardrail tripped (other)"
