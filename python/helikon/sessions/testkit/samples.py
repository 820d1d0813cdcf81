"""Deterministic sample events covering every variant and the awkward values backends trip on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from helikon.core.items import (
    ImagePart,
    MediaSource,
    ReasoningPart,
    TextPart,
    ToolUsePart,
)
from helikon.sessions.events import (
    AssistantMessageEvent,
    Compacted,
    ConversationRepaired,
    HandoffOccurred,
    SessionEvent,
    ToolCalled,
    ToolReturned,
    UserMessageEvent,
)

__all__ = ["BASE_TS", "every_event_type", "numbered"]

BASE_TS = datetime(2025, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)
"""The first sample timestamp (microsecond precision, UTC)."""


def every_event_type(tag: str = "") -> list[SessionEvent]:
    """One or more events of every variant, with unicode, quotes, nesting and options.

    ``tag`` is mixed into the texts so logs of different checks differ. Timestamps are
    fixed (:data:`BASE_TS` plus one second per event), so a re-run builds equal events.

    Example:
        >>> sorted({e.type for e in every_event_type()})  # doctest: +NORMALIZE_WHITESPACE
        ['assistant_message', 'compacted', 'conversation_repaired', 'handoff_occurred',
         'tool_called', 'tool_returned', 'user_message']
    """
    events: list[SessionEvent] = [
        UserMessageEvent(
            content=[
                TextPart(text=f'héllo {tag} "quoted" \\ back\nslash 😀 日本語'),
                ImagePart(source=MediaSource(type="url", url="https://example.com/a.png")),
            ]
        ),
        AssistantMessageEvent(
            content=[
                ReasoningPart(text="thinking", signature="sig=="),
                TextPart(text=f"answer {tag}"),
                ToolUsePart(call_id="inline", name="calc", args={"x": [1, 2.5, None]}),
            ],
            agent="triage",
            provider_data={"response_id": "resp_1", "nested": {"k": [True, False]}},
        ),
        ToolCalled(
            call_id="c1",
            name="lookup",
            args={"query": f"über {tag}", "limit": 10, "deep": {"a": [{"b": None}]}},
            provider_data={"thought_signature": "abc"},
        ),
        ToolReturned(call_id="c1", content=[TextPart(text='{"ok": true}')]),
        ToolCalled(call_id="c2", name="fails", args="not json {"),
        ToolReturned(call_id="c2", content=[TextPart(text="boom")], is_error=True),
        HandoffOccurred(from_agent="triage", to_agent="billing"),
        AssistantMessageEvent(content=[TextPart(text="billing here")], agent=None),
        Compacted(summary=f"summary {tag}", original_count=3),
        ConversationRepaired(
            repair="tool_result_synthesized",
            call_id="c9",
            content=[TextPart(text="interrupted")],
            detail="tool call 'x' has no result",
        ),
        UserMessageEvent(content=[TextPart(text="")]),
    ]
    return [
        e.model_copy(update={"ts": BASE_TS + timedelta(seconds=i)}) for i, e in enumerate(events)
    ]


def numbered(prefix: str, count: int, *, start: int = 0) -> list[SessionEvent]:
    """``count`` user messages ``"{prefix} {i}"`` (used to tell writers apart).

    Example:
        >>> [e.content[0].text for e in numbered("w1", 2)]
        ['w1 0', 'w1 1']
    """
    return [
        UserMessageEvent(content=[TextPart(text=f"{prefix} {i}")])
        for i in range(start, start + count)
    ]
