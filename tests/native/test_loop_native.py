"""The loop state machine through the native boundary (``helikon._native``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from helikon import _native
from helikon.errors import ConfigError

ZERO = {
    "input_tokens": 0,
    "output_tokens": 0,
    "cached_input_tokens": 0,
    "reasoning_tokens": 0,
    "total_tokens": 0,
}


def step(state: str | None, inp: Any, config: _native.LoopConfig, conv: Any = ()) -> Any:
    out = _native.transition(state, json.dumps(inp), config, json.dumps(list(conv)))
    return json.loads(out)


def response(*items: Any, usage: dict[str, int] | None = None) -> Any:
    return {
        "model_response": {"items": list(items), "usage": usage or ZERO, "finish_reason": "stop"}
    }


def assistant(text: str) -> dict[str, Any]:
    return {"type": "assistant_message", "content": [{"type": "text", "text": text}], "agent": "t"}


def call(call_id: str, name: str, args: Any = None) -> dict[str, Any]:
    return {"type": "tool_call", "call_id": call_id, "name": name, "args": args or {}}


def test_initial_state_and_start() -> None:
    assert json.loads(_native.initial_state()) == {
        "state": "CallingModel",
        "turn": 0,
        "usage": ZERO,
    }
    config = _native.LoopConfig(json.dumps({"tools": [{"name": "a"}]}))
    assert config.max_turns == 16
    out = step(None, "start", config)
    assert out["events"] == [{"type": "turn_started", "turn": 0}]
    assert out["next_action"]["request"]["tools"] == ["a"]
    assert out["next_action"]["request"]["response_format"] == "unchanged"


def test_tool_fan_out_then_results() -> None:
    config = _native.LoopConfig(json.dumps({"tools": [{"name": "a"}, {"name": "b"}]}))
    out = step(
        None,
        response(assistant("working"), call("1", "a", {"z": 1, "y": 2}), call("2", "b")),
        config,
    )
    assert out["next_state"]["state"] == "ExecutingTools"
    assert [e["type"] for e in out["events"]] == [
        "message_output",
        "tool_call_item",
        "tool_call_item",
    ]
    calls = out["next_action"]["calls"]
    assert [c["call_id"] for c in calls] == ["1", "2"]
    assert list(calls[0]["args"]) == ["z", "y"]  # key order survives the boundary

    results = {
        "tool_results": [
            {"call_id": "1", "ok": [{"type": "text", "text": "ok"}]},
            {"call_id": "2", "error": "unknown tool: b"},
        ]
    }
    out = step(json.dumps(out["next_state"]), results, config)
    assert out["next_state"] == {"state": "CallingModel", "turn": 1, "usage": ZERO}
    assert out["events"][1]["item"] == {
        "type": "tool_result",
        "call_id": "2",
        "content": [{"type": "text", "text": "unknown tool: b"}],
        "is_error": True,
    }
    assert out["events"][2] == {"type": "turn_started", "turn": 1}


def test_structured_output_finalizing_repair_and_done() -> None:
    schema = {
        "type": "object",
        "properties": {"value": {"type": "integer", "minimum": 0}},
        "required": ["value"],
    }
    config = _native.LoopConfig(json.dumps({"output_type": {"name": "Answer", "schema": schema}}))
    out = step(None, "start", config)
    assert out["next_state"]["state"] == "Finalizing"
    request = out["next_action"]["request"]
    assert request["tools"] == []
    assert request["clear_tool_choice"] is True
    assert request["response_format"] == {
        "type": "json_schema",
        "name": "Answer",
        "schema": schema,
        "strict": True,
    }

    out = step(json.dumps(out["next_state"]), response(assistant("{}")), config)
    assert out["next_state"]["state"] == "RepairingOutput"
    [repair] = out["conversation_appends"]
    assert repair == out["next_action"]["request"]["repair_message"]
    assert "missing field `value`" in repair["content"][0]["text"]

    usage = {**ZERO, "input_tokens": 3, "total_tokens": 3}
    out = step(
        json.dumps(out["next_state"]), response(assistant('{"value": 3}'), usage=usage), config
    )
    assert out["next_state"]["state"] == "Done"
    assert out["next_state"]["output"]["text"] == '{"value": 3}'
    assert out["events"][-1] == {"type": "run_completed", "usage": usage}


def test_handoff_builds_transcript_from_conversation() -> None:
    config = _native.LoopConfig(
        json.dumps(
            {
                "handoffs": [
                    {"tool_name": "transfer_to_x", "target": "X", "description": "Handles X."}
                ]
            }
        )
    )
    conv = [
        {"type": "system", "content": [{"type": "text", "text": "sys"}]},
        {"type": "user_message", "content": [{"type": "text", "text": "help"}]},
    ]
    out = step(None, response(call("c1", "transfer_to_x")), config, conv)
    assert out["next_action"] == {"action": "Handoff", "target": "X"}
    transcript = out["next_state"]["transcript"]
    assert transcript[0] == conv[1]
    assert "transferred" in transcript[1]["content"][0]["text"]


def test_bad_json_raises_config_error() -> None:
    with pytest.raises(ConfigError, match=r"^max_turns: must be at least 1"):
        _native.LoopConfig('{"max_turns": 0}')
    with pytest.raises(ConfigError, match=r"^tools\[0\]: missing field `name`"):
        _native.LoopConfig('{"tools": [{}]}')
    config = _native.LoopConfig("{}")
    with pytest.raises(ConfigError, match=r"^state: "):
        _native.transition("{", '"start"', config)
    with pytest.raises(ConfigError, match=r"^input: unknown variant `go`"):
        _native.transition(None, '"go"', config)
    # ConfigError is also a ValueError for callers who do not know helikon.
    with pytest.raises(ValueError, match="input"):
        _native.transition(None, "[]", config)


def test_invalid_transition_is_a_failed_outcome_not_an_exception() -> None:
    config = _native.LoopConfig("{}")
    out = step(json.dumps({"state": "Done"}), "start", config)
    assert out["next_state"]["state"] == "Failed"
    assert out["next_state"]["error"]["kind"] == "Other"
    assert out["next_state"]["error"]["message"].startswith("invalid transition:")
    assert out["next_action"] == {"action": "Terminate"}
