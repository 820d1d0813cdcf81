"""Output validators and tools that raise ``ModelRetry``, bounded by ``retries`` (per agent,
per tool), on the scripted model: exact model calls, what is sent back, the typed errors."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from helikon import (
    Agent,
    InvalidStructuredOutput,
    ModelRetry,
    OutputRetriesExceeded,
    RunContext,
    RunError,
    ToolResult,
    ToolRetriesExceeded,
    UserMessage,
    tool,
)
from helikon.errors import ConfigError
from helikon.testing import Call, MockModel, Text


class Booking(BaseModel):
    flight: str
    seats: int


def _text(item: Any) -> str:
    return str(item.content[0].text)


async def test_a_validator_retry_sends_the_reason_back_and_the_next_answer_passes() -> None:
    seen: list[Booking] = []

    def enough_seats(booking: Booking) -> None:
        seen.append(booking)
        if booking.seats > 4:
            raise ModelRetry("at most 4 seats per booking")

    model = MockModel(
        [[Text('{"flight": "LH1", "seats": 9}')], [Text('{"flight": "LH1", "seats": 4}')]]
    )
    agent = Agent(name="b", model=model, output_type=Booking, output_validators=[enough_seats])
    result = await agent.run("book")
    assert result.final_output == Booking(flight="LH1", seats=4)
    assert seen == [Booking(flight="LH1", seats=9), Booking(flight="LH1", seats=4)]
    assert len(model.requests) == 2
    sent = model.requests[1].messages[-1]
    assert isinstance(sent, UserMessage)
    assert _text(sent) == (
        "Your previous response did not match the required output type `Booking`.\n"
        "Errors:\n- at most 4 seats per booking\n"
        "Reply again with only a JSON object that matches the schema, and no other text."
    )
    assert [e.attempt for e in result.events if e.type == "repair_started"] == [1]


async def test_an_async_validator_gets_the_context_and_exhaustion_names_it() -> None:
    calls: list[tuple[str, int]] = []

    async def within_budget(ctx: RunContext[dict[str, int]], booking: Booking) -> Booking:
        calls.append((type(ctx).__name__, booking.seats))
        if booking.seats > ctx.user_ctx["max"]:
            raise ModelRetry(f"budget allows {ctx.user_ctx['max']} seats")
        return booking

    model = MockModel(
        [[Text('{"flight": "X", "seats": 3}')], [Text('{"flight": "X", "seats": 5}')]]
    )
    agent = Agent(name="b", model=model, output_type=Booking)
    agent.output_validator(within_budget)
    with pytest.raises(RunError) as exc:
        await agent.run("book", RunContext.ephemeral({"max": 2}))
    err = exc.value.error
    assert isinstance(err, OutputRetriesExceeded)
    assert isinstance(err, InvalidStructuredOutput)  # `except InvalidStructuredOutput` holds
    assert err.kind == "OutputRetriesExceeded"
    assert (err.validator, err.reason, err.retries) == (
        "test_an_async_validator_gets_the_context_and_exhaustion_names_it.<locals>.within_budget",
        "budget allows 2 seats",
        1,
    )
    assert err.final_text == '{"flight": "X", "seats": 5}'
    assert str(err).startswith("output validator 'test_an_async_validator_gets_the_context_")
    assert str(err).endswith(
        "within_budget' asked for a retry after one repair attempt: budget allows 2 seats"
    )
    assert calls == [("RunContext", 3), ("RunContext", 5)]
    assert len(model.requests) == 2


async def test_retries_bound_the_repair_turns() -> None:
    bad = [Text('{"flight": "X"}')]
    model = MockModel([bad, bad, bad, [Text('{"flight": "X", "seats": 1}')]])
    result = await Agent(name="b", model=model, output_type=Booking, retries=3).run("book")
    assert result.final_output.seats == 1
    assert [e.attempt for e in result.events if e.type == "repair_started"] == [1, 2, 3]

    model = MockModel([bad, bad, bad])
    with pytest.raises(RunError) as exc:
        await Agent(name="b", model=model, output_type=Booking, retries=2).run("book")
    err = exc.value.error
    assert type(err) is InvalidStructuredOutput
    assert (err.attempts, err.schema_errors) == (2, ["seats: Field required"])
    assert str(err) == "invalid structured output after 2 repair attempts: seats: Field required"
    assert len(model.requests) == 3

    model = MockModel([bad])
    with pytest.raises(RunError) as exc:
        await Agent(name="b", model=model, output_type=Booking, retries=0).run("book")
    assert exc.value.error.attempts == 0  # type: ignore[attr-defined]
    assert len(model.requests) == 1


async def test_a_tool_retry_is_its_result_and_the_model_calls_again() -> None:
    @tool
    def seat_map(flight: str) -> str:
        """Seats left on a flight."""
        if not flight.isupper():
            raise ModelRetry("flight numbers are upper case, e.g. LH1")
        return f"{flight}: 12 seats"

    model = MockModel(
        [
            [Call("c1", "seat_map", {"flight": "lh1"})],
            [Call("c2", "seat_map", {"flight": "LH1"})],
            [Text("12 seats left.")],
        ]
    )
    result = await Agent(name="s", model=model, tools=[seat_map]).run("seats on lh1?")
    assert result.final_output == "12 seats left."
    first = model.requests[1].messages[-1]
    assert isinstance(first, ToolResult) and first.is_error and first.call_id == "c1"
    assert _text(first) == "flight numbers are upper case, e.g. LH1"
    second = model.requests[2].messages[-1]
    assert isinstance(second, ToolResult) and not second.is_error
    assert _text(second) == "LH1: 12 seats"


async def test_a_tool_that_keeps_asking_fails_the_run_naming_it() -> None:
    @tool(retries=2)
    def seat_map(flight: str) -> str:
        """Seats left on a flight."""
        raise ModelRetry("the seat map is being rebuilt, ask again")

    asks = [[Call(f"c{i}", "seat_map", {"flight": "LH1"})] for i in range(3)]
    model = MockModel(asks)
    with pytest.raises(RunError) as exc:
        await Agent(name="s", model=model, tools=[seat_map]).run("seats?")
    err = exc.value.error
    assert isinstance(err, ToolRetriesExceeded)
    assert (err.tool, err.reason, err.retries, err.invalid_args) == (
        "seat_map",
        "the seat map is being rebuilt, ask again",
        2,
        False,
    )
    assert str(err) == (
        "tool 'seat_map' asked for a retry again after the errors were fed back 2 times: "
        "the seat map is being rebuilt, ask again"
    )
    assert len(model.requests) == 3


async def test_the_agents_retries_are_the_default_tool_bound_and_bad_args_count() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    bad = [[Call(f"c{i}", "add", {"a": "x", "b": 1})] for i in range(3)]
    model = MockModel([*bad[:2], [Text("5")]])
    result = await Agent(name="m", model=model, tools=[add], retries=2).run("2+3")
    assert result.final_output == "5"

    model = MockModel(bad[:2])
    with pytest.raises(RunError) as exc:
        await Agent(name="m", model=model, tools=[add]).run("2+3")
    err = exc.value.error
    assert isinstance(err, ToolRetriesExceeded) and err.invalid_args
    assert str(err).startswith(
        "tool 'add' got invalid arguments again after the errors were fed back once: a: "
    )


def test_bad_retry_arguments_are_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"Agent\(retries=...\): retries=-1 must be an int >= 0"):
        Agent(name="a", model=MockModel([]), retries=-1)
    with pytest.raises(ConfigError, match=r"@tool\(retries='2'\) must be an int >= 0, or None"):
        tool(retries="2")(lambda: 1)  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as exc:
        Agent(name="a", model=MockModel([]), output_validators=[lambda a, b, c: None])
    assert "must take (output) or (ctx, output), got (a, b, c)" in str(exc.value)
    with pytest.raises(ConfigError, match="is not callable"):
        Agent(name="a", model=MockModel([]), output_validators=["x"])  # type: ignore[list-item]


async def test_the_error_round_trips_through_its_dict() -> None:
    from helikon.core.result import agent_error_from_dict

    for err in (
        OutputRetriesExceeded("check", "too many", '{"a": 1}', 2),
        ToolRetriesExceeded("seat_map", "again", 1),
        ToolRetriesExceeded("add", "a: bad", 1, invalid_args=True),
        InvalidStructuredOutput(["x: bad"], "{}", 3),
    ):
        back = agent_error_from_dict(err.to_dict())
        assert type(back) is type(err) and str(back) == str(err)
        assert back.to_dict() == err.to_dict()


async def test_a_validator_that_raises_something_else_fails_the_run_naming_it() -> None:
    def broken(booking: Booking) -> None:
        raise KeyError("fleet")

    model = MockModel([[Text('{"flight": "X", "seats": 1}')]])
    agent = Agent(name="b", model=model, output_type=Booking, output_validators=[broken])
    with pytest.raises(RunError) as exc:
        await agent.run("book")
    assert exc.value.error.kind == "Other"
    assert str(exc.value.error) == (
        "output validator 'test_a_validator_that_raises_something_else_fails_the_run_naming_it."
        "<locals>.broken' raised KeyError: 'fleet'"
    )
    assert len(model.requests) == 1


async def test_tool_retry_rounds_are_consecutive_a_success_starts_again() -> None:
    @tool
    def seat_map(flight: str) -> str:
        """Seats left on a flight."""
        if flight == "bad":
            raise ModelRetry("unknown flight")
        return f"{flight}: 12 seats"

    model = MockModel(
        [
            [Call("c1", "seat_map", {"flight": "bad"})],
            [Call("c2", "seat_map", {"flight": "LH1"})],  # a success: the count starts again
            [Call("c3", "seat_map", {"flight": "bad"})],
            [Call("c4", "seat_map", {"flight": "BA2"})],
            [Text("done")],
        ]
    )
    result = await Agent(name="s", model=model, tools=[seat_map]).run("seats?")
    assert result.final_output == "done"
    assert len(model.requests) == 5
