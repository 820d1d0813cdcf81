"""Errors a new user meets first name the thing at fault and the fix: a scripted model that
ran out (whose, and whether it was the finalizing turn), ``BashTool`` given a path, a
guardrail returning the wrong type."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from helikon import Agent, ConfigError, InputGuardrailTripwire, RunError, tool
from helikon.testing import Call, MockModel, Text


class Refund(BaseModel):
    order: str
    amount: int


@tool(effect="read_only")
def lookup(order: str) -> str:
    """Look an order up."""
    return f"{order}: 40 EUR"


def test_an_exhausted_script_names_the_agent() -> None:
    billing = Agent(name="billing", model=MockModel([]))
    triage = Agent(
        name="triage",
        model=MockModel([[Call("h1", "transfer_to_billing", {})]]),
        handoffs=[billing],
    )
    with pytest.raises(RunError) as err:
        triage.run_sync("invoice?")
    assert str(err.value.error) == (
        "model error (Other): MockModel script exhausted: call 1 of agent 'billing' has no "
        "script (0 played)"
    )


def test_an_exhausted_script_says_when_the_call_is_the_finalizing_turn() -> None:
    model = MockModel([[Call("c1", "lookup", {"order": "A7"})], [Text("A7 is 40 EUR.")]])
    agent = Agent(
        name="refunds", model=model, tools=[lookup], output_type=Refund, output_mode="finalize"
    )
    with pytest.raises(RunError) as err:
        agent.run_sync("refund A7")
    assert str(err.value.error) == (
        "model error (Other): MockModel script exhausted: call 3 of agent 'refunds' has no "
        "script (2 played); this call is the finalizing turn, where the agent's output_type "
        "is asked for as JSON after its tools ran (output_mode='finalize'): script one more "
        "turn answering the JSON, or answer it in the last turn with output_mode='tool' or "
        "'native'"
    )


def test_bash_tool_given_a_path_points_to_best_available_backend() -> None:
    from helikon.tools import BashTool

    with pytest.raises(ConfigError) as err:
        BashTool("/srv/workspace")  # type: ignore[arg-type]
    assert str(err.value) == (
        "BashTool needs an ExecutionBackend, not a path ('/srv/workspace'): open the workspace "
        "and pick the strongest backend this machine enforces: backend, reason = "
        "best_available_backend(Sandbox.open('/srv/workspace')); BashTool(backend) (from "
        "helikon.tools import BashTool, Sandbox, best_available_backend)"
    )


def test_a_guardrail_returning_a_bool_names_itself_and_the_expected_type() -> None:
    def no_passwords(input: object) -> bool:
        return True  # the mistake: a bool instead of Pass() / Tripwire(...)

    agent = Agent(name="a", model=MockModel([[Text("unused")]]), input_guardrails=[no_passwords])
    with pytest.raises(RunError) as err:
        agent.run_sync("hi")
    assert isinstance(err.value.error, InputGuardrailTripwire)
    assert str(err.value.error) == (
        "input guardrail tripped (other): guardrail "
        "test_a_guardrail_returning_a_bool_names_itself_and_the_expected_type.<locals>."
        "no_passwords returned True, not Pass() or Tripwire(...)"
    )
