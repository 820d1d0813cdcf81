"""shared/conformance/projection.json: projection, compaction and recorder vectors."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from helikon.core.cancel import CancellationToken
from helikon.core.events import TokenDelta, event_adapter
from helikon.core.items import Item, SystemMessage, TextPart, UserMessage, item_adapter
from helikon.core.model import ModelCapabilities, ModelRequest
from helikon.errors import ConfigError, ModelUnavailable
from helikon.sessions import (
    CompactingSession,
    HeuristicTokenCounter,
    MemorySession,
    SessionEvent,
    SessionRecorder,
    project,
    session_event_adapter,
)
from tests.conftest import load_shared_json
from tests.sessions.util import first_text

VECTORS = load_shared_json("conformance/projection.json")


def _cases(kind: str) -> list[Any]:
    return [
        pytest.param(c, id=f"{kind}-{i}")
        for i, c in enumerate(VECTORS["cases"])
        if c["kind"] == kind
    ]


def _events(raw: list[dict[str, Any]]) -> list[SessionEvent]:
    return [session_event_adapter.validate_python(e) for e in raw]


def _items_json(items: Sequence[Item]) -> list[dict[str, Any]]:
    return [i.model_dump(mode="json", exclude_none=True) for i in items]


def _norm_items(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return _items_json([item_adapter.validate_python(i) for i in raw])


def _events_json(events: Sequence[SessionEvent]) -> list[dict[str, Any]]:
    return [e.model_dump(mode="json", exclude_none=True, exclude={"ts"}) for e in events]


class CharsCounter:
    """The vectors' 'chars' counter: one token per character of user/assistant/system text."""

    def count(self, items: Sequence[Item]) -> int:
        return sum(
            len(p.text)
            for i in items
            if i.type in ("user_message", "assistant_message", "system")
            for p in i.content
            if isinstance(p, TextPart)
        )


class SummaryModel:
    """Answers each call with the next scripted summary, or fails when told to."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.summaries = list(spec.get("summaries", []))
        self.error = bool(spec.get("error"))
        self.requests: list[ModelRequest] = []

    @property
    def provider(self) -> str:
        return "test"

    @property
    def model(self) -> str:
        return "summary"

    def capabilities(self) -> ModelCapabilities:
        return ModelCapabilities(streaming=True)

    async def invoke(self, request: ModelRequest, cancel: CancellationToken) -> AsyncIterator[Any]:
        self.requests.append(request)
        if self.error:
            raise ModelUnavailable("scripted failure")
        # the last scripted summary repeats once the list runs out
        yield TokenDelta(text=self.summaries[min(len(self.requests), len(self.summaries)) - 1])


@pytest.mark.parametrize("case", _cases("project"))
def test_project(case: dict[str, Any]) -> None:
    got = project(_events(case["events"]))
    assert _items_json(got) == _norm_items(case["expect_messages"])


@pytest.mark.parametrize("case", _cases("compaction"))
async def test_compaction(case: dict[str, Any]) -> None:
    model = SummaryModel(case["model"])
    counter = CharsCounter() if case["counter"] == "chars" else HeuristicTokenCounter()
    inner = MemorySession()
    if case.get("expect_build_error"):
        with pytest.raises(ConfigError, match="threshold"):
            CompactingSession(inner, model, threshold=case["threshold"], token_counter=counter)
        return
    await inner.append(_events(case.get("pre_existing", [])))
    session = CompactingSession(inner, model, threshold=case["threshold"], token_counter=counter)
    compacted_after: list[bool] = []
    for batch in case["appends"]:
        before = session.compactions
        ids = await session.append(_events(batch))
        assert len(ids) == len(batch)
        compacted_after.append(session.compactions > before)
    raw = _events_json(await inner.events())
    for event in raw:  # helikon's own field, not the spec's: the chain hash it replaced
        replaced = event.pop("replaced_hash", None)
        assert replaced is None or re.fullmatch(r"[0-9a-f]{64}", replaced)
    assert raw == _events_json(_events(case["expect_raw_log"]))
    assert _items_json(await session.snapshot()) == _norm_items(case["expect_snapshot"])
    assert len(model.requests) == case["expect_model_calls"]
    assert compacted_after == case["expect_compacted_after_append"]
    for request in model.requests:  # the projection plus one trailing user instruction
        assert isinstance(request.messages[-1], UserMessage)
        assert first_text(request.messages[-1]) == session.prompt


def _observed(raw: dict[str, Any]) -> Any:
    kinds = {
        "MessageOutput": "message_output",
        "ToolCallItem": "tool_call_item",
        "ToolOutputItem": "tool_output_item",
        "HandoffItem": "handoff_item",
        "RunStarted": "run_started",
        "AgentUpdated": "agent_updated",
    }
    body = {k: v for k, v in raw.items() if k != "event"}
    return event_adapter.validate_python({"type": kinds[raw["event"]], **body})


def _matches(expected: Any, actual: Any) -> bool:
    """Exact match, except ``text_contains`` and helikon's extra ``is_error`` flag."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if "text_contains" in expected:
            rest = {k: v for k, v in expected.items() if k != "text_contains"}
            return (
                expected["text_contains"] in actual.get("text", "")
                and all(_matches(v, actual.get(k)) for k, v in rest.items())
                and set(actual) - {"text"} == set(rest)
            )
        extra = set(actual) - set(expected)
        if extra - {"is_error"}:
            return False
        return all(k in actual and _matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            _matches(e, a) for e, a in zip(expected, actual, strict=True)
        )
    return bool(expected == actual)


@pytest.mark.parametrize("case", _cases("recorder"))
def test_recorder(case: dict[str, Any]) -> None:
    recorder = SessionRecorder(case["root_agent"])
    recorder.record_input([item_adapter.validate_python(i) for i in case["record_input"]])
    for raw in case["observe"]:
        recorder.observe(_observed(raw))
    drained = recorder.drain()
    actual = _events_json(drained)
    assert _matches(case["expect_drained"], actual), actual
    for event in drained:  # only synthesized results may carry is_error (helikon's extension)
        if getattr(event, "is_error", False):
            assert "did not complete" in first_text(event)
    if "expect_projected_len" in case:
        assert len(project(drained)) == case["expect_projected_len"]
    assert recorder.drain() == [], "drain clears the recorder"


def test_compacted_summary_is_a_system_item() -> None:
    (item,) = project(_events([{"type": "compacted", "summary": "S", "original_count": 0}]))
    assert isinstance(item, SystemMessage)
