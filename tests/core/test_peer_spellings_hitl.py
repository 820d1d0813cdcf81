"""The OpenAI Agents SDK's human-in-the-loop and import spellings are answered with
helikon's (found by a new-user trial; docs/migrating.md promises the hint)."""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

import pytest

import helikon
from helikon import Agent, Approve, ConfigError, RunConfig, RunInterruptedError, Runner, tool
from helikon.core.run_state import RunState
from helikon.errors import PeerImportError, PeerSpellingError
from helikon.testing import Call, MockModel, Text

_RESUME = "Runner.resume(agent, state, decisions={call_id: Approve() | Deny(reason) | Edit(args)})"


@tool(needs_approval=True)
def transfer(to: str, amount: int) -> str:
    """Move money."""
    return f"sent {amount} to {to}"


def _paused() -> RunState:
    agent = Agent(
        name="bank",
        model=MockModel([[Call("c1", "transfer", {"to": "eve", "amount": 5})]]),
        tools=[transfer],
    )
    with pytest.raises(RunInterruptedError) as err:
        Runner.run_sync(agent, "pay eve", run_config=RunConfig(approval="defer"))
    state: RunState = err.value.state
    return state


def test_tool_requires_approval_names_needs_approval() -> None:
    with pytest.raises(PeerSpellingError) as err:

        @tool(requires_approval=True)
        def f(x: int) -> int:
            return x

    assert str(err.value) == (
        "@tool(requires_approval=...) is another SDK's spelling; in helikon use "
        "@tool(needs_approval=...)"
    )
    with pytest.raises(PeerSpellingError, match=r"use @tool\(name=\.\.\.\)"):
        tool(name_override="x")
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'") as plain:
        tool(colour="red")
    assert not isinstance(plain.value, PeerSpellingError)


def test_result_interruptions_names_run_interrupted_error_and_resume() -> None:
    result = Agent(name="a", model=MockModel([[Text("hi")]])).run_sync("hi")
    with pytest.raises(PeerSpellingError) as err:
        result.interruptions  # type: ignore[attr-defined]  # noqa: B018
    message = str(err.value)
    assert message.startswith("RunResult.interruptions is another SDK's spelling; in helikon")
    assert "except RunInterruptedError as err" in message
    assert "err.state.pending" in message
    assert message.endswith(_RESUME)
    with pytest.raises(PeerSpellingError, match=r"err\.state is the paused run's RunState"):
        result.to_state()  # type: ignore[attr-defined]


def test_state_approve_reject_and_get_interruptions_name_helikons_spelling() -> None:
    state = _paused()
    with pytest.raises(PeerSpellingError) as err:
        state.approve(state.pending[0])  # type: ignore[attr-defined]
    assert str(err.value) == (
        "RunState.approve is another SDK's spelling; in helikon use "
        "decisions={call_id: Approve()} given to " + _RESUME
    )
    with pytest.raises(PeerSpellingError, match=r"decisions=\{call_id: Deny\(reason\)\}"):
        state.reject(state.pending[0])  # type: ignore[attr-defined]
    with pytest.raises(PeerSpellingError, match=r"in helikon use state\.pending \(the waiting"):
        state.get_interruptions()  # type: ignore[attr-defined]
    assert not hasattr(state, "approve")
    with pytest.raises(AttributeError) as plain:
        state.no_such_thing  # type: ignore[attr-defined]  # noqa: B018
    assert not isinstance(plain.value, PeerSpellingError)
    assert [p.call_id for p in state.pending] == ["c1"]


def test_running_a_state_says_to_resume_it() -> None:
    state = _paused()
    agent = Agent(name="bank", model=MockModel([[Text("Sent.")]]), tools=[transfer])
    expected = r"^a paused run's RunState is not a run input: resume it with await Runner\.resume"
    with pytest.raises(ConfigError, match=expected):
        Runner.run_sync(agent, state)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=expected):
        asyncio.run(Runner.run(agent, state))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"Runner\.resume_sync\(\.\.\.\) in synchronous code"):
        agent.run_sync(state)  # type: ignore[arg-type]
    # nothing ran: the state still resumes
    result = Runner.resume_sync(agent, state, decisions={"c1": Approve()})
    assert result.final_output == "Sent."
    assert [i.type for i in result.new_items] == ["tool_call", "tool_result", "assistant_message"]


def test_resume_sync_refuses_inside_an_event_loop() -> None:
    state = _paused()
    agent = Agent(name="bank", model=MockModel([[Text("Sent.")]]), tools=[transfer])

    async def inside() -> None:
        Runner.resume_sync(agent, state, decisions={"c1": Approve()})

    with pytest.raises(RuntimeError, match=r"use await Runner\.resume\(\)$"):
        asyncio.run(inside())


@pytest.mark.parametrize(
    ("module", "name", "fix"),
    [
        ("helikon", "function_tool", "in helikon use tool (from helikon import tool;"),
        ("helikon", "input_guardrail", "Agent(input_guardrails=[check])"),
        ("helikon", "output_guardrail", "Agent(output_guardrails=[check])"),
        ("helikon", "GuardrailFunctionOutput", "Pass() to let the run go on"),
        ("helikon.sessions", "SQLiteSession", "from helikon.sessions import SqliteSession"),
        ("helikon.sessions.sqlite", "SQLiteSession", "from helikon.sessions import SqliteSession"),
    ],
)
def test_peer_imports_name_helikons_spelling(module: str, name: str, fix: str) -> None:
    mod = importlib.import_module(module)
    with pytest.raises(PeerImportError) as err:
        getattr(mod, name)
    assert str(err.value).startswith(f"{module}.{name} is another SDK's name; in helikon use ")
    assert fix in str(err.value)
    assert isinstance(err.value, ImportError)
    assert isinstance(err.value, ConfigError)


def test_from_helikon_import_function_tool_shows_the_fix() -> None:
    with pytest.raises(PeerImportError, match=r"in helikon use tool \(from helikon import tool"):
        from helikon import function_tool  # type: ignore[attr-defined]  # noqa: F401
    with pytest.raises(PeerImportError, match=r"use SqliteSession"):
        from helikon.sessions.sqlite import SQLiteSession  # type: ignore[attr-defined]  # noqa: F401


def test_other_missing_names_stay_plain_attribute_errors() -> None:
    assert not hasattr(helikon, "no_such_name")
    with pytest.raises(ImportError, match="cannot import name 'no_such_name'") as err:
        from helikon import no_such_name  # type: ignore[attr-defined]  # noqa: F401
    assert not isinstance(err.value, PeerImportError)
    state: Any = helikon.sessions
    assert not hasattr(state, "NoSession")
