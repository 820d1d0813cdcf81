"""The peers' spellings that docs/migrating.md lists are answered with helikon's.

One test per spelling, each asserting the error type and the fix its message gives (or,
for ``result.output``, the alias's value).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from helikon import Agent, ConfigError, Runner, UsageLimits, handoff
from helikon.errors import PeerSpellingError
from helikon.testing import MockModel, Text


def _agent(name: str = "a", turns: int = 1) -> Agent[Any, Any]:
    return Agent(name=name, model=MockModel([[Text("hi")]] * turns))


def test_message_history_on_a_run_says_to_pass_the_history_as_input() -> None:
    agent = _agent()
    with pytest.raises(ConfigError) as err:
        agent.run_sync("hi", message_history=[])  # type: ignore[call-arg]
    assert str(err.value).startswith("Agent.run_sync(message_history=...): helikon takes")
    assert "[*result.to_input_list(), UserMessage.text(question)]" in str(err.value)
    with pytest.raises(ConfigError, match=r"^Runner.run_sync\(message_history=\.\.\.\)"):
        Runner.run_sync(agent, "hi", message_history=[])  # type: ignore[call-arg]


def test_result_output_is_final_output() -> None:
    result = _agent().run_sync("hi")
    assert result.output == result.final_output == "hi"


def test_result_usage_called_says_it_is_an_attribute() -> None:
    result = _agent().run_sync("hi")
    with pytest.raises(PeerSpellingError) as err:
        result.usage()  # type: ignore[operator]
    assert str(err.value) == (
        "result.usage is helikon's Usage itself, not a method (Pydantic AI's "
        "result.usage()): write result.usage, e.g. result.usage.total_tokens"
    )
    assert result.usage.requests == 1


def test_result_all_and_new_messages_name_to_input_list_and_new_items() -> None:
    result = _agent().run_sync("hi")
    with pytest.raises(PeerSpellingError, match=r"in helikon use result\.to_input_list\(\)"):
        result.all_messages()  # type: ignore[attr-defined]
    with pytest.raises(PeerSpellingError, match=r"in helikon use result\.new_items"):
        result.new_messages()  # type: ignore[attr-defined]
    assert not hasattr(result, "all_messages")  # still an AttributeError
    with pytest.raises(AttributeError) as plain:
        result.no_such_thing  # type: ignore[attr-defined]  # noqa: B018
    assert not isinstance(plain.value, PeerSpellingError)


def test_agent_as_tool_names_agent_as_tool() -> None:
    agent = _agent()
    with pytest.raises(PeerSpellingError) as err:
        agent.as_tool(tool_name="t", tool_description="d")  # type: ignore[attr-defined]
    assert str(err.value) == (
        "Agent.as_tool is another SDK's spelling; in helikon use AgentAsTool(agent, name=..., "
        "description=...) (from helikon import AgentAsTool), given in another agent's "
        "tools=[...]"
    )
    assert isinstance(err.value, ConfigError) and isinstance(err.value, AttributeError)


def test_tool_plain_names_agent_tool() -> None:
    agent = _agent()
    with pytest.raises(PeerSpellingError) as err:

        @agent.tool_plain  # type: ignore[attr-defined]
        def roll() -> int:
            return 4

    assert "in helikon use @agent.tool (it takes a function with or without" in str(err.value)


def test_agent_run_stream_names_agent_stream() -> None:
    with pytest.raises(PeerSpellingError, match=r"in helikon use agent\.stream\(q\)"):
        _agent().run_stream("hi")  # type: ignore[attr-defined]


def test_handoff_tool_name_override_names_tool_name() -> None:
    target = _agent("billing")
    with pytest.raises(ConfigError) as err:
        handoff(target, tool_name_override="to_billing")  # type: ignore[call-arg]
    assert str(err.value) == (
        "handoff(tool_name_override=...): helikon spells it tool_name=: "
        "handoff(agent, tool_name=...)"
    )
    with pytest.raises(ConfigError, match=r"tool_description=: handoff\(agent"):
        handoff(target, tool_description_override="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'tool_nam'"):
        handoff(target, tool_nam="x")  # type: ignore[call-arg]


def test_stream_events_says_the_stream_is_the_events() -> None:
    async def main() -> list[str]:
        stream = Runner.run_streamed(_agent(), "hi")
        with pytest.raises(PeerSpellingError) as err:
            stream.stream_events()  # type: ignore[attr-defined]
        assert "in helikon use the stream itself: async for e in Runner.run_streamed" in str(
            err.value
        )
        return [e.type async for e in stream]

    types = asyncio.run(main())
    assert types[0] == "run_started" and types[-1] == "run_completed"


def test_usage_limits_tool_calls_limit_says_what_bounds_the_loop() -> None:
    with pytest.raises(ConfigError) as err:
        UsageLimits(tool_calls_limit=3)  # type: ignore[call-arg]
    assert str(err.value) == (
        "UsageLimits(tool_calls_limit=...): helikon's UsageLimits counts model requests and "
        "tokens, not tool calls; bound the loop with UsageLimits(request_limit=N) or "
        "RunConfig(max_turns=N)"
    )
    with pytest.raises(ConfigError, match="helikon spells it output_tokens_limit="):
        UsageLimits(response_tokens_limit=3)  # type: ignore[call-arg]
    assert UsageLimits(3) == UsageLimits(request_limit=3)


def test_output_retries_names_retries() -> None:
    with pytest.raises(ConfigError, match=r"^Agent\(output_retries=\.\.\.\): helikon spells it"):
        Agent(name="a", model=MockModel([]), output_retries=2)  # type: ignore[call-arg]
