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


# ----------------------------------------------------------------------------- LoopRun


def _expand(step_: Any, items: list[Any], results: list[Any]) -> dict[str, Any]:
    """A ``LoopRun`` step in ``transition``'s JSON outcome shape (items resolved)."""
    kind, refs, payload, appends = step_
    events: list[Any] = []
    for tag, value in refs:
        if tag == "turn_started":
            events.append({"type": "turn_started", "turn": value})
        elif tag in ("message_output", "tool_call_item"):
            events.append({"type": tag, "item": items[value]})
        elif tag == "tool_output_item":
            call_id, is_error, body = results[value]
            content = (
                [{"type": "text", "text": body}] if is_error or isinstance(body, str) else body
            )
            item = {"type": "tool_result", "call_id": call_id, "content": content}
            events.append(
                {"type": tag, "item": {**item, **({"is_error": True} if is_error else {})}}
            )
        elif tag == "run_completed":
            names = [*ZERO, "cache_write_input_tokens"]
            usage = {k: v for k, v in zip(names, value, strict=True) if v or k in ZERO}
            events.append({"type": "run_completed", "usage": usage})
        else:
            assert tag == "event"
            events.append(json.loads(value))
    action: dict[str, Any] = {"action": kind}
    if kind == "CallModel":
        action["request"] = json.loads(payload)
    elif kind == "ExecuteTools":
        action["calls"] = [items[c] if isinstance(c, int) else json.loads(c) for c in payload]
    elif kind == "Handoff":
        action["target"] = payload
    return {
        "events": events,
        "next_action": action,
        "conversation_appends": json.loads(appends) if appends else [],
    }


def _normalized(outcome: dict[str, Any]) -> Any:
    """Events and items through the pydantic models, so absent defaults compare equal."""
    from helikon.core.events import event_adapter
    from helikon.core.items import item_adapter

    action = dict(outcome["next_action"])
    if "calls" in action:
        action["calls"] = [
            item_adapter.validate_python({"type": "tool_call", **c}) for c in action["calls"]
        ]
    return (
        [event_adapter.validate_python(e) for e in outcome["events"]],
        action,
        [item_adapter.validate_python(i) for i in outcome["conversation_appends"]],
    )


def _usage_tuple(usage: dict[str, int]) -> tuple[int, ...]:
    names = [*ZERO, "cache_write_input_tokens"]
    return tuple(usage.get(k, 0) for k in names)


def _typed_step(run: Any, inp: Any, conv: list[Any]) -> tuple[Any, list[Any], list[Any]]:
    if inp == "start":
        return run.start(), [], []
    if "model_response" in inp:
        r = inp["model_response"]
        validation = (r.get("validation") or {}).get("errors")
        out = run.model_response(
            r["items"],
            _usage_tuple(r.get("usage") or {}),
            r.get("finish_reason", ""),
            validation,
            json.dumps(conv),
        )
        return out, r["items"], []
    results = [
        (o["call_id"], True, o["error"]) if "error" in o else (o["call_id"], False, o["ok"])
        for o in inp["tool_results"]
    ]
    return run.tool_results(results), [], results


def _agree(config: Any, state: str | None, inputs: list[Any], conv: Any = ()) -> None:
    """Feed ``inputs`` through ``LoopRun`` (typed and JSON inputs) and through
    ``transition``: the same outcomes and states."""
    run = _native.LoopRun(config, state)
    text_run = _native.LoopRun(config, state)
    for inp in inputs:
        expected = step(state, inp, config, conv)
        got, items, results = _typed_step(run, inp, list(conv))
        assert _normalized(_expand(got, items, results)) == _normalized(expected), inp
        text = text_run.step_json(json.dumps(inp), json.dumps(list(conv)))
        assert all(tag != "message_output" and tag[-5:] != "_item" for tag, _ in text[1])
        assert _normalized(_expand(text, [], [])) == _normalized(expected), inp
        for r in (run, text_run):
            assert json.loads(r.state_json()) == expected["next_state"]
            assert r.state == expected["next_state"]["state"]
        state = json.dumps(expected["next_state"])


SCHEMA = {
    "type": "object",
    "properties": {"value": {"type": "integer", "minimum": 0}},
    "required": ["value"],
}
TOOL_RUN = [
    "start",
    response(
        assistant("working"),
        call("1", "a", {"z": 1, "y": [1.5, None, True]}),
        call("2", "b"),
        usage={**ZERO, "input_tokens": 4, "total_tokens": 4},
    ),
    {
        "tool_results": [
            {"call_id": "1", "ok": [{"type": "text", "text": "ok"}]},
            {"call_id": "2", "error": "unknown tool: b"},
        ]
    },
    response(call("3", "a", "not json")),
    {
        "tool_results": [
            {
                "call_id": "3",
                "ok": [
                    {"type": "reasoning", "text": "r", "redacted": "xx"},
                    {"type": "image", "source": {"type": "url", "url": "https://x"}},
                ],
            }
        ]
    },
    response(assistant("done"), usage={**ZERO, "output_tokens": 2, "total_tokens": 2}),
]


@pytest.mark.parametrize(
    ("config", "inputs", "conv"),
    [
        ({"tools": [{"name": "a"}, {"name": "b"}]}, TOOL_RUN, ()),
        ({"tools": [{"name": "a"}], "max_turns": 2}, TOOL_RUN[:5], ()),
        (
            {"output_type": {"name": "Answer", "schema": SCHEMA}},
            [
                "start",
                response(assistant("{}")),
                response(assistant('{"value": 3}'), usage={**ZERO, "input_tokens": 3}),
            ],
            (),
        ),
        (
            {"output_type": {"name": "Answer", "schema": SCHEMA}, "tools": [{"name": "a"}]},
            [
                "start",
                response(assistant("plain answer")),
                {"model_response": {"items": [assistant("{}")], "validation": {"errors": ["e"]}}},
                response(assistant("no")),
            ],
            (),
        ),
        (
            {"handoffs": [{"tool_name": "transfer_to_x", "target": "X", "description": "X."}]},
            ["start", response(assistant("moving"), call("c1", "transfer_to_x"))],
            [
                {"type": "system", "content": [{"type": "text", "text": "sys"}]},
                {"type": "user_message", "content": [{"type": "text", "text": "help"}]},
            ],
        ),
        ({}, ["start", {"tool_results": []}], ()),
    ],
    ids=["tools", "max_turns", "structured", "structured_after_tools", "handoff", "invalid"],
)
def test_loop_run_agrees_with_transition(config: Any, inputs: list[Any], conv: Any) -> None:
    _agree(_native.LoopConfig(json.dumps(config)), None, inputs, conv)


def test_loop_run_resumes_from_state_json_and_reports_state() -> None:
    config = _native.LoopConfig(json.dumps({"tools": [{"name": "a"}]}))
    run = _native.LoopRun(config)
    assert (run.state, run.usage, run.output_text, run.transcript_json()) == (
        "CallingModel",
        (0, 0, 0, 0, 0, 0),
        None,
        None,
    )
    run.start()
    kind, events, payload, appends = run.model_response(
        [call("1", "a")], (5, 1, 0, 0, 6, 2), "tool_calls"
    )
    assert (kind, events, payload, appends) == (
        "ExecuteTools",
        [("tool_call_item", 0)],
        [0],
        None,
    )
    assert run.usage == (5, 1, 0, 0, 6, 2)
    resumed = _native.LoopRun(config, run.state_json())
    assert resumed.state == "ExecutingTools"
    kind, events, payload, _ = resumed.tool_results([("1", False, "ok")])
    assert (kind, events) == ("CallModel", [("tool_output_item", 0), ("turn_started", 1)])
    assert json.loads(payload)["tools"] == ["a"]
    kind, events, payload, _ = resumed.model_response([assistant("fine")], None, "stop")
    assert (kind, events, payload) == (
        "Terminate",
        [("message_output", 0), ("run_completed", (5, 1, 0, 0, 6, 2))],
        None,
    )
    assert (resumed.state, resumed.output_text) == ("Done", "fine")
    with pytest.raises(ConfigError, match=r"^state: "):
        _native.LoopRun(config, "{")


class _Str(str):
    """A str subclass: JSON would write it as a plain str."""


@pytest.mark.parametrize(
    "args",
    [float("nan"), float("inf"), 2**64, {1: "x"}, {"k": object()}, b"x", (1, 2), _Str("s")],
    ids=["nan", "inf", "bigint", "int_key", "object", "bytes", "tuple", "str_subclass"],
)
def test_values_without_an_exact_json_form_are_type_errors(args: Any) -> None:
    config = _native.LoopConfig(json.dumps({"tools": [{"name": "a"}]}))
    run = _native.LoopRun(config)
    run.start()
    with pytest.raises(TypeError, match="step_json"):
        run.model_response([call("1", "a", {"v": args})], None, "tool_calls")
    assert run.state == "CallingModel"  # nothing happened
    with pytest.raises(TypeError):
        run.model_response([call("1", "a")], (-1, 0, 0, 0, 0, 0), "tool_calls")
    # step_json returns every item event and call as JSON: what the machine holds
    kind, events, calls, _ = run.step_json(json.dumps(response(call("1", "a", {"v": 2**64}))))
    assert kind == "ExecuteTools"
    [(tag, text)] = events
    assert tag == "event" and json.loads(text)["item"]["args"] == {"v": 2.0**64}
    assert [json.loads(c)["args"] for c in calls] == [{"v": 2.0**64}]
    # step_json fails exactly as transition() does
    with pytest.raises(ConfigError, match=r"^input: "):
        run.step_json('{"tool_results": [{"call_id": "1"}]}')


def test_items_not_in_the_input_verbatim_come_back_as_json() -> None:
    # Items the machine passes through match their position; only its own events are JSON.
    config = _native.LoopConfig(json.dumps({"output_type": {"name": "A", "schema": SCHEMA}}))
    run = _native.LoopRun(config)
    run.start()
    kind, events, payload, appends = run.model_response([assistant("nope")], None, "stop")
    assert kind == "CallModel"
    assert events[0] == ("message_output", 0)
    assert events[1][0] == "event"
    assert json.loads(events[1][1]) == {"type": "repair_started", "attempt": 1}
    assert appends is not None and json.loads(appends)[0]["type"] == "user_message"
    assert json.loads(payload)["repair_message"] == json.loads(appends)[0]
