"""CompactingSession beyond the vectors: failure handling, resume, counters, requests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from helikon.core.items import Item, SystemMessage, TextPart, UserMessage
from helikon.core.model import ModelSettings
from helikon.errors import ConfigError, SessionBackendError
from helikon.sessions import (
    DEFAULT_COMPACTION_PROMPT,
    CompactingSession,
    HeuristicTokenCounter,
    MemorySession,
    SequenceId,
    SessionEvent,
    compacted,
    user_message,
)
from helikon.testing import Fail, MockModel, Text


class FlakyInner(MemorySession):
    """A memory session whose reads or non-first appends can be made to fail."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_reads = False
        self.fail_marker = False

    async def append(self, events: Sequence[SessionEvent]) -> list[SequenceId]:
        if self.fail_marker and any(e.type == "compacted" for e in events):
            raise SessionBackendError("marker write failed")
        return await super().append(events)

    async def events(self, since: SequenceId | None = None) -> list[SessionEvent]:
        if self.fail_reads:
            raise SessionBackendError("read failed")
        return await super().events(since)


@pytest.mark.parametrize("threshold", [0, -5, True, 2.5])
def test_threshold_must_be_a_positive_int(threshold: Any) -> None:
    with pytest.raises(ConfigError, match="threshold"):
        CompactingSession(MemorySession(), MockModel([]), threshold=threshold)


async def test_user_events_persist_even_when_compaction_read_fails() -> None:
    inner = FlakyInner()
    session = CompactingSession(inner, MockModel([]), threshold=1)
    inner.fail_reads = True
    with pytest.raises(SessionBackendError, match="read failed"):
        await session.append([user_message("persist me")])
    inner.fail_reads = False
    assert [e.type for e in await inner.events()] == ["user_message"]


async def test_marker_write_failure_propagates() -> None:
    inner = FlakyInner()
    inner.fail_marker = True
    session = CompactingSession(inner, MockModel([[Text("S")]]), threshold=1)
    with pytest.raises(SessionBackendError, match="marker"):
        await session.append([user_message("long enough")])
    assert len(await inner.events()) == 1


async def test_model_error_is_swallowed_and_retried_on_the_next_append() -> None:
    model = MockModel([[Fail("Unavailable", "down")], [Text("S")]])
    inner = MemorySession()
    session = CompactingSession(inner, model, threshold=2)
    assert await session.append([user_message("0123456789")]) == [0]
    assert session.compactions == 0
    assert await session.append([user_message("x")]) == [1]
    assert session.compactions == 1
    log = await inner.events()
    # the marker names what it replaced: the chain hash of the last replaced event
    replaced = (await inner.chain_records())[1][2]
    assert replaced is not None
    expected = compacted("S", 2).model_copy(
        update={"ts": log[-1].ts, "replaced_hash": replaced.hex()}
    )
    assert log[-1] == expected


async def test_resume_compacts_an_existing_backlog_on_the_first_append() -> None:
    inner = MemorySession()
    await inner.append([user_message("x" * 400) for _ in range(10)])  # 1000 tokens
    model = MockModel([[Text("the summary")]])
    session = CompactingSession(inner, model, threshold=500)
    await session.append([user_message("hi")])
    snapshot = await session.snapshot()
    assert snapshot == [SystemMessage(content=[TextPart(text="the summary")])]
    request = model.requests[0]
    assert len(request.messages) == 12  # 11 projected messages + the instruction
    assert request.messages[-1] == UserMessage.text(DEFAULT_COMPACTION_PROMPT)


async def test_estimate_skips_reads_under_the_threshold() -> None:
    reads = 0

    class Counting(MemorySession):
        async def events(self, since: SequenceId | None = None) -> list[SessionEvent]:
            nonlocal reads
            reads += 1
            return await super().events(since)

    session = CompactingSession(Counting(), MockModel([]), threshold=100)
    for _ in range(10):
        await session.append([user_message("abcd")])  # 1 token each
    assert reads == 1, "only the first append (unknown estimate) reads the log"


async def test_summary_over_threshold_is_guarded_against_looping() -> None:
    long = "x" * 400
    model = MockModel([[Text(long)]])
    session = CompactingSession(MemorySession(), model, threshold=10)
    await session.append([user_message("y" * 80)])
    await session.append([compacted("z" * 400, 5)])  # a lone system summary, over budget
    assert model.remaining == 0
    assert session.compactions == 1


async def test_custom_prompt_settings_and_counter() -> None:
    class Fixed:
        def count(self, items: Sequence[Item]) -> int:
            return 3 * len(items)

    model = MockModel([[Text("S")]])
    settings = ModelSettings(temperature=0.0)
    session = CompactingSession(
        MemorySession(),
        model,
        threshold=5,
        token_counter=Fixed(),
        prompt="Summarise!",
        model_settings=settings,
    )
    await session.append([user_message("a")])
    assert session.compactions == 0
    await session.append([user_message("b")])
    assert session.compactions == 1
    assert model.requests[0].messages[-1] == UserMessage.text("Summarise!")
    assert model.requests[0].settings == settings
    assert isinstance(
        CompactingSession(MemorySession(), model, threshold=1).token_counter, HeuristicTokenCounter
    )


async def test_empty_append_does_nothing() -> None:
    model = MockModel([])
    session = CompactingSession(MemorySession(), model, threshold=1)
    assert await session.append([]) == []
    assert model.requests == []
