"""A whole agent run against recorded OpenAI traffic: the recorded tool loop, end to end."""

from __future__ import annotations

import pytest
from tests.conftest import SHARED

from helikon import Agent, ToolEffect, tool
from helikon.providers.openai import OpenAIModel
from helikon.testing.replay import ReplayServer

CASSETTE = SHARED / "wire" / "openai" / "chat_tool_loop_stream.yaml"


@tool(effect=ToolEffect.READ_ONLY, description="")
def get_capital(country: str) -> str:
    """Return a country's capital."""
    return {"UK": "London"}.get(country, "unknown")


async def test_recorded_tool_loop_runs_as_an_agent() -> None:
    if not CASSETTE.exists():
        pytest.fail(f"missing recording {CASSETTE}")
    with ReplayServer(CASSETTE) as server:
        model = OpenAIModel.chat(
            "gpt-4o-mini", api_key="test-key", base_url=server.base_url + "/v1"
        )
        agent = Agent(name="capitals", model=model, tools=[get_capital])
        try:
            result = await agent.run("What is the capital of the UK? Use the tool, then answer.")
        finally:
            await model.aclose()
        sent = server.requests
    assert result.final_output == "The capital of the UK is London."
    assert (result.usage.input_tokens, result.usage.output_tokens) == (53 + 78, 15 + 9)
    assert result.usage.total_tokens == 68 + 87
    kinds = [e.type for e in result.events]
    assert kinds.count("tool_call_delta") == 6  # the name chunk and five argument fragments
    call = next(e for e in result.events if e.type == "tool_call_item")
    assert call.item.call_id == "call_ZR5UUuTt3pf61kjwAJIYdVMj"
    assert call.item.args == {"country": "UK"}
    assert len(sent) == 2
    assert sent[1]["messages"] == [
        {
            "role": "user",
            "content": "What is the capital of the UK? Use the tool, then answer.",
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_ZR5UUuTt3pf61kjwAJIYdVMj",
                    "type": "function",
                    "function": {"name": "get_capital", "arguments": '{"country":"UK"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_ZR5UUuTt3pf61kjwAJIYdVMj", "content": "London"},
    ]
    assert [t["function"]["name"] for t in sent[0]["tools"]] == ["get_capital"]
    assert sent[0]["stream"] is True


async def test_each_turns_events_name_the_answering_model_and_response() -> None:
    """Finish's model and response id reach the run's events (recorded traffic)."""
    with ReplayServer(CASSETTE) as server:
        model = OpenAIModel.chat(
            "gpt-4o-mini", api_key="test-key", base_url=server.base_url + "/v1"
        )
        try:
            result = await Agent(name="capitals", model=model, tools=[get_capital]).run(
                "What is the capital of the UK? Use the tool, then answer."
            )
        finally:
            await model.aclose()
    settled = [
        (e.type, e.model, e.response_id)
        for e in result.events
        if e.type in ("tool_call_item", "message_output")
    ]
    assert settled == [
        ("tool_call_item", "gpt-4o-mini-2024-07-18", "chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl"),
        ("message_output", "gpt-4o-mini-2024-07-18", "chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc"),
    ]
    dumped = next(e for e in result.events if e.type == "message_output").model_dump()
    assert (dumped["model"], dumped["response_id"]) == (
        "gpt-4o-mini-2024-07-18",
        "chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc",
    )


async def test_run_completed_and_the_session_records_name_the_answering_model() -> None:
    """RunCompleted names the last turn's model and response; the session keeps each turn's
    (recorded traffic, through Runner with a session)."""
    from helikon import Runner
    from helikon.sessions import MemorySession
    from helikon.sessions.events import event_to_json

    session = MemorySession()
    with ReplayServer(CASSETTE) as server:
        model = OpenAIModel.chat(
            "gpt-4o-mini", api_key="test-key", base_url=server.base_url + "/v1"
        )
        try:
            result = await Runner.run(
                Agent(name="capitals", model=model, tools=[get_capital]),
                "What is the capital of the UK? Use the tool, then answer.",
                session=session,
            )
        finally:
            await model.aclose()
    done = result.events[-1]
    assert done.type == "run_completed"
    assert (done.model, done.response_id) == (
        "gpt-4o-mini-2024-07-18",
        "chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc",
    )
    recorded = [
        (e.type, getattr(e, "model", None), getattr(e, "response_id", None))
        for e in await session.events()
    ]
    assert recorded == [
        ("user_message", None, None),
        ("tool_called", "gpt-4o-mini-2024-07-18", "chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl"),
        ("permission_decided", None, None),
        ("tool_returned", None, None),
        ("assistant_message", "gpt-4o-mini-2024-07-18", "chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc"),
    ]
    stored = event_to_json((await session.events())[-1])
    assert '"model":"gpt-4o-mini-2024-07-18"' in stored
    assert '"response_id":"chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc"' in stored
