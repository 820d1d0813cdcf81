"""SessionEvent shapes: tags, aliases, timestamps, JSON round-trips."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from helikon.core.items import TextPart
from helikon.sessions import (
    Compacted,
    HandoffOccurred,
    SessionEvent,
    assistant_message,
    compacted,
    event_from_json,
    event_to_json,
    handoff_occurred,
    tool_called,
    tool_returned,
    user_message,
)
from helikon.sessions.testkit import every_event_type

TS = datetime(2025, 1, 2, 3, 4, 5, 6, tzinfo=UTC)


def test_every_variant_round_trips_through_json() -> None:
    for event in every_event_type("x"):
        text = event_to_json(event)
        assert json.loads(text)["type"] == event.type
        assert event_from_json(text) == event


def test_exact_json_shapes() -> None:
    shapes: list[tuple[SessionEvent, dict[str, Any]]] = [
        (
            user_message("hi", ts=TS),
            {"type": "user_message", "content": [{"type": "text", "text": "hi"}]},
        ),
        (
            assistant_message("yo", "triage", ts=TS),
            {
                "type": "assistant_message",
                "content": [{"type": "text", "text": "yo"}],
                "agent": "triage",
            },
        ),
        (
            tool_called("c1", "calc", {"x": 1}, ts=TS),
            {"type": "tool_called", "call_id": "c1", "name": "calc", "args": {"x": 1}},
        ),
        (
            tool_returned("c1", "2", is_error=True, ts=TS),
            {
                "type": "tool_returned",
                "call_id": "c1",
                "content": [{"type": "text", "text": "2"}],
                "is_error": True,
            },
        ),
        (handoff_occurred("a", "b", ts=TS), {"type": "handoff_occurred", "from": "a", "to": "b"}),
        (compacted("S", 3, ts=TS), {"type": "compacted", "summary": "S", "original_count": 3}),
    ]
    for event, shape in shapes:
        data = json.loads(event_to_json(event))
        assert data.pop("ts") == "2025-01-02T03:04:05.000006Z"
        assert data == shape


def test_handoff_uses_from_and_to_in_every_dump() -> None:
    ev = HandoffOccurred.model_validate({"from": "a", "to": "b"})
    assert (ev.from_agent, ev.to_agent) == ("a", "b")
    assert ev.model_dump(exclude={"ts"}) == {"type": "handoff_occurred", "from": "a", "to": "b"}
    assert ev.model_dump(by_alias=True, exclude={"ts"})["from"] == "a"
    assert HandoffOccurred(from_agent="x", to_agent="y").to_agent == "y"


def test_timestamps_default_to_now_utc() -> None:
    before = datetime.now(UTC)
    ev = user_message("x")
    assert before <= ev.ts <= datetime.now(UTC)
    assert ev.ts.tzinfo is not None


def test_events_are_frozen_and_reject_unknown_fields() -> None:
    ev = user_message("x")
    with pytest.raises(ValidationError):
        ev.content = []
    with pytest.raises(ValidationError):
        event_from_json('{"type": "user_message", "content": [], "surprise": 1}')
    with pytest.raises(ValidationError):
        event_from_json('{"type": "run_exploded"}')
    with pytest.raises(ValidationError):
        Compacted(summary="s", original_count=-1)


def test_string_content_becomes_a_text_part() -> None:
    assert user_message("hi").content == [TextPart(text="hi")]
    two = tool_returned("c", [TextPart(text="a"), TextPart(text="b")])
    assert two.content == [TextPart(text="a"), TextPart(text="b")]
