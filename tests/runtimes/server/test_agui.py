"""The AG-UI endpoint: a run streamed as AG-UI events, decoded with ``ag-ui-protocol``."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("ag_ui")

from ag_ui.core import Event, RunAgentInput
from pydantic import TypeAdapter
from starlette.testclient import TestClient

from helikon import Agent
from helikon.runtimes.server import AgentServer
from helikon.runtimes.server.agui_events import AguiTranslator, InputProblem, input_messages
from helikon.testing import Fail, MockModel, Text

from .conftest import calc_agent

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


def _body(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "threadId": "thread-1",
        "runId": "run-1",
        "state": None,
        "messages": list(messages) or [{"id": "u1", "role": "user", "content": "1+2?"}],
        "tools": [],
        "context": [],
        "forwardedProps": None,
        **extra,
    }


def _stream(server: AgentServer, body: Any, **headers: str) -> tuple[Any, list[Any], list[str]]:
    """The response, the decoded AG-UI events and the raw ``data:`` payloads."""
    with (
        TestClient(server.app) as client,
        client.stream("POST", "/agents/calc/ag-ui", json=body, headers=headers) as response,
    ):
        raw = response.read().decode()
    payloads = [line[len("data: ") :] for line in raw.splitlines() if line.startswith("data: ")]
    return response, [EVENTS.validate_json(p) for p in payloads], payloads


def test_a_run_with_a_tool_call_streams_the_exact_agui_sequence() -> None:
    response, events, payloads = _stream(AgentServer([calc_agent()]), _body())
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-run-id"]
    assert [e.type.value for e in events] == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    started, call, args, end, result, msg, content, msg_end, finished = events
    assert (started.thread_id, started.run_id) == ("thread-1", "run-1")
    assert (call.tool_call_id, call.tool_call_name) == ("c1", "add")
    assert json.loads(args.delta) == {"a": 1, "b": 2}
    assert end.tool_call_id == "c1"
    assert (result.tool_call_id, result.content, result.role) == ("c1", "3", "tool")
    assert msg.role == "assistant"
    assert content.message_id == msg.message_id == msg_end.message_id
    assert content.delta == "3"
    assert (finished.thread_id, finished.run_id, finished.result) == ("thread-1", "run-1", "3")
    # the wire form is AG-UI's camelCase JSON
    assert json.loads(payloads[0]) == {
        "type": "RUN_STARTED",
        "threadId": "thread-1",
        "runId": "run-1",
    }


def test_a_failed_run_ends_with_run_error() -> None:
    agent = Agent(name="calc", model=MockModel([[Fail("Other", "the model broke")]]))
    _, events, _ = _stream(AgentServer([agent]), _body())
    assert [e.type.value for e in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert "the model broke" in events[-1].message
    assert events[-1].code == "Other"


def test_the_client_history_is_the_conversation() -> None:
    history = [
        {"id": "s", "role": "system", "content": "Be brief."},
        {"id": "u1", "role": "user", "content": "1+2?"},
        {
            "id": "a1",
            "role": "assistant",
            "content": "Adding.",
            "toolCalls": [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
                }
            ],
        },
        {"id": "t1", "role": "tool", "toolCallId": "c0", "content": "3"},
        {"id": "u2", "role": "user", "content": [{"type": "text", "text": "and again?"}]},
    ]
    assert input_messages(RunAgentInput.model_validate(_body(*history))) == [
        {"type": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {"type": "user_message", "content": [{"type": "text", "text": "1+2?"}]},
        {"type": "assistant_message", "content": [{"type": "text", "text": "Adding."}]},
        {"type": "tool_call", "call_id": "c0", "name": "add", "args": {"a": 1, "b": 2}},
        {
            "type": "tool_result",
            "content": [{"type": "text", "text": "3"}],
            "call_id": "c0",
            "is_error": False,
        },
        {"type": "user_message", "content": [{"type": "text", "text": "and again?"}]},
    ]
    response, events, _ = _stream(AgentServer([calc_agent()]), _body(*history))
    assert response.status_code == 200
    assert events[-1].type.value == "RUN_FINISHED"


def test_bad_tool_call_arguments_are_named() -> None:
    body = _body(
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {"id": "c0", "type": "function", "function": {"name": "add", "arguments": "{"}}
            ],
        }
    )
    with pytest.raises(InputProblem, match=r"messages\[0\]\.tool_calls\[0\]\.function"):
        input_messages(RunAgentInput.model_validate(body))


@pytest.mark.parametrize(
    ("body", "headers", "status", "field"),
    [
        ({"messages": []}, {}, 400, "threadId"),
        (
            _body({"id": "t", "role": "tool", "toolCallId": "c", "content": "3"}),
            {},
            400,
            "messages",
        ),
        (
            _body(
                {
                    "id": "u",
                    "role": "user",
                    "content": [{"type": "image", "source": {"type": "url", "value": "http://x"}}],
                }
            ),
            {},
            400,
            "messages[0].content[0]",
        ),
        (_body(), {"X-Session-Id": "s1"}, 400, "X-Session-Id"),
    ],
)
def test_bad_requests_name_the_field(
    body: dict[str, Any], headers: dict[str, str], status: int, field: str
) -> None:
    with TestClient(AgentServer([calc_agent()]).app) as client:
        response = client.post("/agents/calc/ag-ui", json=body, headers=headers)
    assert response.status_code == status
    assert response.json()["error"] == "invalid_request"
    assert response.json()["field"] == field


def test_an_unknown_agent_is_a_404() -> None:
    with TestClient(AgentServer([calc_agent()]).app) as client:
        response = client.post("/agents/nobody/ag-ui", json=_body())
    assert response.status_code == 404
    assert response.json()["error"] == "unknown_agent"


def test_a_paused_run_sends_its_pending_calls_as_a_state_snapshot() -> None:
    t = AguiTranslator("th", "r", server_run="run-9")
    pending = [{"call_id": "c1", "tool": "Bash", "reason": "ask"}]
    events = t.translate({"type": "run_interrupted", "state": {"pending": pending}})
    assert [e.type.value for e in events] == ["STATE_SNAPSHOT", "RUN_FINISHED"]
    assert events[0].snapshot == {"status": "needs_approval", "run_id": "run-9", "pending": pending}


def test_unstreamed_text_and_calls_still_get_start_and_end() -> None:
    t = AguiTranslator("th", "r")
    text = t.translate(
        {"type": "message_output", "item": {"content": [{"type": "text", "text": "hi"}]}}
    )
    assert [e.type.value for e in text] == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
    ]
    call = t.translate(
        {"type": "tool_call_item", "item": {"call_id": "c", "name": "add", "args": {"a": 1}}}
    )
    assert [e.type.value for e in call] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
    assert call[1].delta == '{"a": 1}'
    other = t.translate({"type": "handoff_item", "from": "a", "to": "b"})
    assert [(e.type.value, e.source, e.event) for e in other] == [
        ("RAW", "helikon", {"type": "handoff_item", "from": "a", "to": "b"})
    ]


def test_a_text_only_run_is_one_text_message() -> None:
    agent = Agent(name="calc", model=MockModel([[Text("hello")]]))
    _, events, _ = _stream(AgentServer([agent]), _body())
    assert [e.type.value for e in events] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert events[-1].result == "hello"
