"""Lists, unions, ``Literal`` and scalars as ``output_type`` stay strict: sent wrapped in
``{"value": ...}`` and unwrapped into ``final_output``."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from helikon import Agent, OutputType, RunError
from helikon.core.model import JsonSchemaFormat
from helikon.errors import ConfigError
from helikon.testing import MockModel, Text


class Flight(BaseModel):
    number: str
    seats: int


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


def _format(model: MockModel, turn: int = 0) -> JsonSchemaFormat:
    rf = model.requests[turn].settings.response_format
    assert isinstance(rf, JsonSchemaFormat)
    return rf


async def test_list_of_models_is_wrapped_strict_and_unwrapped() -> None:
    answer = '{"value": [{"number": "LH1", "seats": 3}, {"number": "BA2", "seats": 0}]}'
    model = MockModel([[Text(answer)]])
    result = await Agent(name="a", model=model, output_type=list[Flight]).run("list flights")
    assert result.final_output == [Flight(number="LH1", seats=3), Flight(number="BA2", seats=0)]
    rf = _format(model)
    assert rf.strict is True
    assert rf.name == "StructuredOutput"
    assert rf.schema == {
        "type": "object",
        "properties": {"value": {"items": {"$ref": "#/$defs/Flight"}, "type": "array"}},
        "required": ["value"],
        "additionalProperties": False,
        "$defs": {"Flight": Flight.model_json_schema()},
    }
    assert len(model.requests) == 1


async def test_union_of_models_picks_the_member() -> None:
    model = MockModel([[Text('{"value": {"kind": "dog", "good": true}}')]])
    result = await Agent(name="a", model=model, output_type=Cat | Dog).run("which pet?")
    assert result.final_output == Dog(kind="dog", good=True)
    inner = _format(model).schema["properties"]["value"]
    assert inner == {"anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}
    assert set(_format(model).schema["$defs"]) == {"Cat", "Dog"}


async def test_list_of_int_and_its_repair_names_the_wrapped_path() -> None:
    model = MockModel([[Text('{"value": [1, "two"]}')], [Text('{"value": [1, 2]}')]])
    result = await Agent(name="a", model=model, output_type=list[int]).run("count")
    assert result.final_output == [1, 2]
    repair = model.requests[1].messages[-1]
    assert "- value.1: Input should be a valid integer, unable to parse string as an integer" in (
        repair.content[0].text  # type: ignore[union-attr]
    )


async def test_literal_union_fails_typed_after_the_repair_turn() -> None:
    model = MockModel([[Text('{"value": "maybe"}')], [Text('{"value": "perhaps"}')]])
    agent = Agent(name="a", model=model, output_type=Literal["yes", "no"])
    with pytest.raises(RunError) as exc:
        await agent.run("answer")
    err = exc.value.error
    assert err.kind == "InvalidStructuredOutput"
    assert err.schema_errors == ["value: Input should be 'yes' or 'no'"]  # type: ignore[attr-defined]
    assert err.final_text == '{"value": "perhaps"}'  # type: ignore[attr-defined]
    ok = MockModel([[Text('{"value": "no"}')]])
    result = await Agent(name="a", model=ok, output_type=Literal["yes", "no"]).run("answer")
    assert result.final_output == "no"
    assert _format(ok).schema["properties"]["value"] == {"enum": ["yes", "no"], "type": "string"}


def test_a_bare_value_is_accepted_and_a_model_with_a_value_field_is_not_confused() -> None:
    assert OutputType(list[int]).validate_text("[3, 4]") == ([3, 4], [])
    assert OutputType(list[int]).validate_text('{"value": "x"}') == (
        None,
        ["value: Input should be a valid list"],
    )

    class Boxed(BaseModel):
        value: int

    # an object type is never wrapped: its own `value` field is the answer's
    boxed = OutputType(Boxed)
    assert boxed.wrapped is False
    assert boxed.validate_text('{"value": 3}') == (Boxed(value=3), [])
    # a union whose member has a `value` field: the wrapped form and the bare form both read
    either = OutputType(Boxed | Cat)
    assert either.wrapped is True
    assert either.validate_text('{"value": {"value": 3}}') == (Boxed(value=3), [])
    assert either.validate_text('{"value": 3}') == (Boxed(value=3), [])


def test_wrapping_is_strict_only_and_objects_are_untouched() -> None:
    assert OutputType(list[int], strict=False).wrapped is False
    assert OutputType(list[int], strict=False).schema == {
        "items": {"type": "integer"},
        "type": "array",
    }
    assert OutputType(Flight).schema == Flight.model_json_schema()
    assert [OutputType(t).wrapped for t in (int, Cat | None, tuple[int, str])] == [True, True, True]


def test_a_wrapped_type_that_still_cannot_be_strict_names_the_field() -> None:
    with pytest.raises(ConfigError) as exc:
        OutputType(list[dict[str, int]])
    assert str(exc.value).startswith(
        "output_type list[dict[str, int]] cannot use OpenAI strict mode: StructuredOutput.value"
    )
    assert "strict=False" in str(exc.value)
