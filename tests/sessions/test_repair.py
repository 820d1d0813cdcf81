"""Provider-validity repairs (beyond the spec; field case BR-12)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from helikon.core.items import (
    AssistantMessage,
    Item,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from helikon.sessions import (
    INTERRUPTED_RESULT,
    ConversationRepaired,
    MemorySession,
    SessionEvent,
    assistant_message,
    compacted,
    find_repairs,
    handoff_occurred,
    load_conversation,
    project,
    repair_conversation,
    tool_called,
    tool_returned,
    user_message,
)
from tests.sessions.util import first_text


def _kinds(items: list[Item]) -> list[str]:
    out = []
    for i in items:
        if isinstance(i, ToolCall | ToolResult):
            out.append(f"{i.type}:{i.call_id}")
        else:
            out.append(i.type)
    return out


def _valid(items: list[Item]) -> bool:
    return find_repairs(items) == []


def call(cid: str, args: Any = None) -> ToolCall:
    return ToolCall(call_id=cid, name="t", args={} if args is None else args)


def result(cid: str, text: str = "ok") -> ToolResult:
    return ToolResult(call_id=cid, content=[TextPart(text=text)])


def test_valid_conversation_needs_nothing() -> None:
    convo: list[Item] = [
        SystemMessage(content=[TextPart(text="s")]),
        UserMessage.text("q"),
        AssistantMessage(content=[TextPart(text="thinking")], agent="a"),
        call("c1"),
        call("c2"),
        result("c2"),
        result("c1"),
        AssistantMessage(content=[TextPart(text="done")], agent="a"),
    ]
    fixed, repairs = repair_conversation(convo)
    assert repairs == [] and fixed == convo


def test_missing_result_is_synthesized_after_the_block() -> None:
    convo: list[Item] = [UserMessage.text("q"), call("c1"), call("c2"), result("c2")]
    fixed, repairs = repair_conversation(convo)
    assert _kinds(fixed) == [
        "user_message",
        "tool_call:c1",
        "tool_call:c2",
        "tool_result:c2",
        "tool_result:c1",
    ]
    synthesized = fixed[-1]
    assert isinstance(synthesized, ToolResult) and synthesized.is_error
    assert first_text(synthesized) == INTERRUPTED_RESULT
    assert [(r.repair, r.call_id) for r in repairs] == [("tool_result_synthesized", "c1")]
    assert _valid(fixed)


def test_missing_result_in_the_middle_goes_before_the_next_message() -> None:
    convo: list[Item] = [call("c1"), UserMessage.text("continue"), call("c2"), result("c2")]
    fixed, _ = repair_conversation(convo)
    assert _kinds(fixed) == [
        "tool_call:c1",
        "tool_result:c1",
        "user_message",
        "tool_call:c2",
        "tool_result:c2",
    ]


def test_orphan_and_duplicate_results_are_dropped() -> None:
    convo: list[Item] = [
        UserMessage.text("q"),
        result("ghost"),
        call("c1"),
        result("c1"),
        result("c1", "again"),
        AssistantMessage(content=[TextPart(text="x")]),
        result("late"),
    ]
    fixed, repairs = repair_conversation(convo)
    assert _kinds(fixed) == ["user_message", "tool_call:c1", "tool_result:c1", "assistant_message"]
    assert fixed[2] == result("c1")
    assert [(r.repair, r.call_id) for r in repairs] == [
        ("tool_result_dropped", "ghost"),
        ("tool_result_dropped", "c1"),
        ("tool_result_dropped", "late"),
    ]


def test_out_of_place_result_is_dropped_and_the_call_answered() -> None:
    convo: list[Item] = [call("c1"), UserMessage.text("u"), result("c1")]
    fixed, _ = repair_conversation(convo)
    assert _kinds(fixed) == ["tool_call:c1", "tool_result:c1", "user_message"]
    assert isinstance(fixed[1], ToolResult) and fixed[1].is_error


@pytest.mark.parametrize(
    ("args", "expect"),
    [('{"city": "Par', {}), ('{"a": 1}', {"a": 1}), ("[1, 2]", {}), (None, {}), (3, {})],
)
def test_truncated_or_non_object_args_are_replaced(args: Any, expect: Any) -> None:
    convo: list[Item] = [ToolCall(call_id="c1", name="t", args=args), result("c1")]
    fixed, repairs = repair_conversation(convo)
    assert isinstance(fixed[0], ToolCall) and fixed[0].args == expect
    assert [r.repair for r in repairs] == ["tool_args_replaced"]
    assert repairs[0].args == expect


def test_blank_text_parts_and_empty_messages_are_dropped() -> None:
    keep_state = AssistantMessage(content=[], provider_data={"response_id": "r1"})
    convo: list[Item] = [
        SystemMessage(content=[TextPart(text="  ")]),
        UserMessage(content=[TextPart(text=""), TextPart(text="q")]),
        AssistantMessage(content=[TextPart(text="\n")], agent="a"),
        keep_state,
        call("c1"),
        ToolResult(call_id="c1", content=[TextPart(text=" "), TextPart(text="r")]),
        AssistantMessage(content=[], agent="a"),
    ]
    fixed, repairs = repair_conversation(convo)
    assert fixed == [
        UserMessage(content=[TextPart(text="q")]),
        keep_state,
        call("c1"),
        ToolResult(call_id="c1", content=[TextPart(text="r")]),
    ]
    assert [r.repair for r in repairs] == ["empty_text_dropped"]


def test_dropping_an_empty_message_can_merge_call_blocks() -> None:
    convo: list[Item] = [
        call("c1"),
        AssistantMessage(content=[TextPart(text="")]),
        call("c2"),
        result("c1"),
        result("c2"),
    ]
    fixed, repairs = repair_conversation(convo)
    assert [r.repair for r in repairs] == ["empty_text_dropped"]
    assert _valid(fixed)


LOGS: list[list[SessionEvent]] = [
    [user_message("clean up"), tool_called("tu_9", "Bash", {"command": "sleep 600"})],
    [tool_called("a", "t", '{"x": 1'), user_message(""), tool_returned("zz", "orphan")],
    [
        user_message("u1"),
        tool_called("c1", "t", {}),
        compacted("S", 1),
        tool_returned("c1", "r"),
        assistant_message(" ", "x"),
        tool_called("c2", "t", {}),
    ],
]


@pytest.mark.parametrize("log", LOGS)
def test_recorded_repairs_reproduce_the_repaired_projection(log: list[SessionEvent]) -> None:
    fixed, repairs = repair_conversation(project(log))
    assert repairs, "each sample log needs a repair"
    assert project([*log, *repairs]) == fixed
    assert _valid(fixed)
    # once recorded, a repair holds: later events project valid without new repairs
    later = [*log, *repairs, user_message("next")]
    assert find_repairs(project(later)) == []


def test_a_repair_whose_target_was_compacted_is_a_no_op() -> None:
    log: list[SessionEvent] = [
        user_message("u"),
        tool_called("c1", "t", {}),
        ConversationRepaired(repair="tool_result_synthesized", call_id="c1"),
    ]
    assert _kinds(project(log)) == ["user_message", "tool_call:c1", "tool_result:c1"]
    assert _kinds(project([*log[:2], compacted("S", 2), log[2]])) == ["system"]


def test_compaction_removes_a_synthesized_result_with_its_call() -> None:
    log: list[SessionEvent] = [
        user_message("u"),
        tool_called("c1", "t", {}),
        ConversationRepaired(repair="tool_result_synthesized", call_id="c1"),
        user_message("v"),
        compacted("S", 3),  # u is kept; the call, the repair and v are summarised
    ]
    assert _kinds(project(log)) == ["user_message", "system"]


async def test_load_conversation_records_repairs_once() -> None:
    session = MemorySession()
    await session.append(
        [user_message("clean up"), tool_called("tu_9", "Bash", {"command": "sleep 600"})]
    )
    first = await load_conversation(session)
    assert _kinds(first) == ["user_message", "tool_call:tu_9", "tool_result:tu_9"]
    log = await session.events()
    assert [e.type for e in log][-1] == "conversation_repaired"
    assert await session.snapshot() == first
    again = await load_conversation(session)
    assert again == first
    assert len(await session.events()) == len(log), "a second load must not repair again"


def test_orphans_are_judged_as_if_earlier_orphans_were_gone() -> None:
    convo: list[Item] = [call("c1"), result("x"), call("c2"), result("c1")]
    fixed, repairs = repair_conversation(convo)
    assert [(r.repair, r.call_id) for r in repairs] == [
        ("tool_result_dropped", "x"),
        ("tool_result_synthesized", "c2"),
    ]
    assert _kinds(fixed) == ["tool_call:c1", "tool_call:c2", "tool_result:c1", "tool_result:c2"]


def _random_log(rng: random.Random) -> list[SessionEvent]:
    log: list[SessionEvent] = []
    ids = [f"c{i}" for i in range(5)]
    for _ in range(rng.randint(0, 25)):
        roll = rng.random()
        if roll < 0.25:
            log.append(tool_called(rng.choice(ids), "t", rng.choice([{}, {"a": 1}, '{"x', None])))
        elif roll < 0.5:
            log.append(tool_returned(rng.choice(ids), rng.choice(["r", " ", ""])))
        elif roll < 0.65:
            log.append(user_message(rng.choice(["u", "", "  "])))
        elif roll < 0.8:
            log.append(assistant_message(rng.choice(["a", ""]), "x"))
        elif roll < 0.9:
            log.append(compacted("S", rng.randint(0, 4)))
        else:
            log.append(handoff_occurred("x", "y"))
    return log


@pytest.mark.parametrize("seed", range(300))
def test_random_logs_repair_to_valid_and_recorded_repairs_replay(seed: int) -> None:
    rng = random.Random(seed)
    log = _random_log(rng)
    fixed, repairs = repair_conversation(project(log))
    assert find_repairs(fixed) == [], "a repaired conversation must need no repair"
    assert project([*log, *repairs]) == fixed, "recorded repairs must replay to the same items"
    for item in fixed:
        if isinstance(item, ToolCall):
            assert isinstance(item.args, dict)
