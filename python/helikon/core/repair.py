"""Keep a conversation valid for providers: the repair rules.

Providers reject a conversation in which a tool call has no result, a result has no call,
a call's arguments are not a JSON object, or a text part is blank. A crash or a cancel in
the middle of a tool leaves exactly such a log behind (field case BR-12), a model cut off
mid-call leaves truncated argument JSON, and a hand-edited history can hold anything. The
loop checks the conversation before every model call (:class:`ConversationCheck`) and a
session is checked when it is loaded (:func:`helikon.sessions.load_conversation`); each fix
is a :class:`~helikon.core.events.ConversationRepaired` event.

The rules (a *call block* is a run of consecutive tool calls; the results that answer it
must follow it directly, before any other item):

1. ``empty_text_dropped``: blank text parts are removed from every message and tool result;
   a message left without content is removed (an assistant message carrying provider
   state is kept).
2. ``tool_args_replaced``: a call whose arguments are not a JSON object gets the object a
   JSON string decodes to, or ``{}`` when it does not decode (truncated JSON).
3. ``tool_result_dropped``: a result that does not answer a call of the block right before
   it (no call, a duplicate, or out of place) is removed.
4. ``tool_result_synthesized``: a call of a block without a result gets an error result
   saying the call was interrupted, placed after the block's results.

Applying the repairs one by one with :func:`apply_repair`, in order, gives the same items
as :func:`repair_conversation`; that is how a session log replays them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from helikon.core.events import ConversationRepaired, RepairKind
from helikon.core.items import (
    AssistantMessage,
    ContentPart,
    Item,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)

__all__ = [
    "INTERRUPTED_RESULT",
    "ConversationCheck",
    "Entry",
    "RepairRecord",
    "apply_repair",
    "find_repairs",
    "repair_conversation",
]

INTERRUPTED_RESULT = (
    "Tool call interrupted or never run: the run stopped before this call returned a "
    "result, or went on without running it. The call may or may not have taken effect."
)
"""Text of a synthesized result for a call that never returned."""

Entry = tuple[int, Item]
"""An item with the index of the log event it belongs to (projection bookkeeping)."""


class RepairRecord(Protocol):
    """What :func:`apply_repair` reads: an agent or a session ``ConversationRepaired``."""

    @property
    def repair(self) -> RepairKind: ...
    @property
    def call_id(self) -> str | None: ...
    @property
    def content(self) -> list[ContentPart] | None: ...
    @property
    def args(self) -> Any: ...


# --------------------------------------------------------------------------- applying


def apply_repair(entries: list[Entry], repair: RepairRecord) -> None:
    """Apply one recorded repair to ``entries`` in place.

    A repair whose target is gone (compacted away, already fixed) changes nothing.
    Inserted items belong to the event of the item before them.
    """
    kind = repair.repair
    if kind == "empty_text_dropped":
        _drop_empty_text(entries)
    elif kind == "tool_args_replaced":
        for i, (owner, item) in enumerate(entries):
            if (
                isinstance(item, ToolCall)
                and item.call_id == repair.call_id
                and not isinstance(item.args, dict)
            ):
                entries[i] = (owner, item.model_copy(update={"args": repair.args}))
                return
    elif kind == "tool_result_dropped":
        for i in _orphan_results(entries):
            item = entries[i][1]
            if isinstance(item, ToolResult) and item.call_id == repair.call_id:
                del entries[i]
                return
    elif kind == "tool_result_synthesized" and repair.call_id is not None:
        _insert_result(entries, repair.call_id, repair.content or _interrupted())


def _interrupted() -> list[ContentPart]:
    return [TextPart(text=INTERRUPTED_RESULT)]


def _is_blank(part: ContentPart) -> bool:
    return isinstance(part, TextPart) and not part.text.strip()


def _needs_text_fix(item: Item) -> bool:
    if isinstance(item, ToolCall):
        return False
    if any(_is_blank(p) for p in item.content):
        return True
    return not item.content and _droppable(item)


def _droppable(item: Item) -> bool:
    """A message with no content providers reject (not a tool result, not provider state)."""
    if isinstance(item, AssistantMessage):
        return item.provider_data is None
    return isinstance(item, SystemMessage | UserMessage)


def _drop_empty_text(entries: list[Entry]) -> None:
    kept: list[Entry] = []
    for owner, item in entries:
        if not isinstance(item, ToolCall) and _needs_text_fix(item):
            content = [p for p in item.content if not _is_blank(p)]
            item = item.model_copy(update={"content": content})
            if not content and _droppable(item):
                continue
        kept.append((owner, item))
    entries[:] = kept


def _blocks(entries: Sequence[Entry]) -> list[tuple[int, int, int]]:
    """Each call block as (first call, end of calls, end of the results after it)."""
    out: list[tuple[int, int, int]] = []
    i, n = 0, len(entries)
    while i < n:
        if isinstance(entries[i][1], ToolCall):
            start = i
            while i < n and isinstance(entries[i][1], ToolCall):
                i += 1
            calls_end = i
            while i < n and isinstance(entries[i][1], ToolResult):
                i += 1
            out.append((start, calls_end, i))
        else:
            i += 1
    return out


def _orphan_results(entries: Sequence[Entry]) -> list[int]:
    """Indices of results that do not answer a call of the block right before them.

    Orphans are judged as if the orphans before them were already gone, so dropping them
    all at once equals dropping the first one again and again.
    """
    orphans: list[int] = []
    answered: set[str] = set()
    open_calls: set[str] = set()
    previous_was_call = False
    for i, (_, item) in enumerate(entries):
        if isinstance(item, ToolCall):
            if not previous_was_call:
                open_calls, answered = set(), set()
            open_calls.add(item.call_id)
            previous_was_call = True
        elif isinstance(item, ToolResult):
            if item.call_id in open_calls and item.call_id not in answered:
                answered.add(item.call_id)
                previous_was_call = False
            else:
                orphans.append(i)  # skipped: previous_was_call stays as it was
        else:
            open_calls, answered = set(), set()
            previous_was_call = False
    return orphans


def _insert_result(entries: list[Entry], call_id: str, content: list[ContentPart]) -> None:
    """Answer the first block holding an unanswered ``call_id`` (no-op when none does)."""
    i, n = 0, len(entries)
    while i < n:
        item = entries[i][1]
        if not (isinstance(item, ToolCall) and item.call_id == call_id):
            i += 1
            continue
        end = i
        while end < n and isinstance(entries[end][1], ToolCall):
            end += 1
        answered = False
        while end < n:
            answer = entries[end][1]
            if not isinstance(answer, ToolResult):
                break
            answered = answered or answer.call_id == call_id
            end += 1
        if not answered:
            owner = entries[end - 1][0]
            result = ToolResult(call_id=call_id, content=content, is_error=True)
            entries.insert(end, (owner, result))
            return
        i = end


# --------------------------------------------------------------------------- finding


def _args_fix(args: Any) -> tuple[dict[str, Any], str]:
    if isinstance(args, str):
        try:
            decoded = json.loads(args)
        except json.JSONDecodeError:
            snippet = args if len(args) <= 200 else args[:200] + "..."
            return {}, f"arguments were not valid JSON (truncated?): {snippet!r}"
        if isinstance(decoded, dict):
            return decoded, "arguments were a JSON string; decoded to an object"
        return {}, "arguments were a JSON string that is not an object"
    return {}, f"arguments were {_json_kind(args)}, not a JSON object"


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "an array"
    return f"a {type(value).__name__}"


def _repair(items: Sequence[Item]) -> tuple[list[Entry], list[ConversationRepaired]]:
    """One linear pass per rule; the result equals applying the repairs one by one."""
    entries: list[Entry] = [(0, item) for item in items]
    repairs: list[ConversationRepaired] = []
    blank = sum(1 for _, item in entries if _needs_text_fix(item))
    if blank:
        repair = ConversationRepaired(
            repair="empty_text_dropped",
            detail=f"{blank} item(s) had blank text parts or no content",
        )
        apply_repair(entries, repair)
        repairs.append(repair)
    for i, (owner, item) in enumerate(entries):
        if isinstance(item, ToolCall) and not isinstance(item.args, dict):
            args, detail = _args_fix(item.args)
            repairs.append(
                ConversationRepaired(
                    repair="tool_args_replaced", call_id=item.call_id, args=args, detail=detail
                )
            )
            entries[i] = (owner, item.model_copy(update={"args": args}))
    orphans = _orphan_results(entries)
    for i in orphans:
        orphan = entries[i][1]
        assert isinstance(orphan, ToolResult)
        repairs.append(
            ConversationRepaired(
                repair="tool_result_dropped",
                call_id=orphan.call_id,
                detail="result without a matching call right before it",
            )
        )
    if orphans:
        gone = set(orphans)
        entries = [e for i, e in enumerate(entries) if i not in gone]
    out: list[Entry] = []
    cursor = 0
    for start, calls_end, end in _blocks(entries):
        answered = {e[1].call_id for e in entries[calls_end:end] if isinstance(e[1], ToolResult)}
        out.extend(entries[cursor:end])
        cursor = end
        for _, call in entries[start:calls_end]:
            if isinstance(call, ToolCall) and call.call_id not in answered:
                answered.add(call.call_id)
                repair = ConversationRepaired(
                    repair="tool_result_synthesized",
                    call_id=call.call_id,
                    content=_interrupted(),
                    detail=f"tool call {call.name!r} has no result",
                )
                repairs.append(repair)
                out.append(
                    (
                        out[-1][0],
                        ToolResult(call_id=call.call_id, content=_interrupted(), is_error=True),
                    )
                )
    out.extend(entries[cursor:])
    return out, repairs


def _is_valid(items: Sequence[Item], start: int) -> bool:
    """Whether ``items[start:]`` needs no repair (one pass, no copies)."""
    calls: set[str] = set()  # the current block's calls without a result yet
    previous_was_call = False
    for i in range(start, len(items)):
        item = items[i]
        if isinstance(item, ToolCall):
            if not isinstance(item.args, dict):
                return False
            if not previous_was_call and calls:
                return False  # the block before has a call without a result
            calls.add(item.call_id)
            previous_was_call = True
            continue
        for part in item.content:
            if isinstance(part, TextPart) and not part.text.strip():
                return False
        if isinstance(item, ToolResult):
            if item.call_id not in calls:
                return False  # no call, a duplicate, or out of place
            calls.discard(item.call_id)
            previous_was_call = False
            continue
        if calls or (not item.content and _droppable(item)):
            return False
        previous_was_call = False
    return not calls


def find_repairs(items: Sequence[Item]) -> list[ConversationRepaired]:
    """The repairs ``items`` needs, in the order they apply (empty when it is valid).

    Example:
        >>> from helikon.core.items import ToolCall, UserMessage
        >>> convo = [UserMessage.text("clean up"), ToolCall(call_id="tu_9", name="Bash")]
        >>> [(r.repair, r.call_id) for r in find_repairs(convo)]
        [('tool_result_synthesized', 'tu_9')]
    """
    if _is_valid(items, 0):
        return []
    return _repair(items)[1]


def repair_conversation(
    items: Sequence[Item],
) -> tuple[list[Item], list[ConversationRepaired]]:
    """``items`` made provider-valid, and the repairs that did it (in the order they apply).

    Invariant: applying the repairs with :func:`apply_repair` to ``items`` gives the
    repaired list, so recording them after the items makes the fix permanent.

    Example:
        >>> from helikon.core.items import ToolCall, UserMessage
        >>> convo = [UserMessage.text("clean up"), ToolCall(call_id="tu_9", name="Bash")]
        >>> fixed, repairs = repair_conversation(convo)
        >>> [i.type for i in fixed], fixed[2].is_error
        (['user_message', 'tool_call', 'tool_result'], True)
    """
    if _is_valid(items, 0):
        return list(items), []
    entries, repairs = _repair(items)
    return [item for _, item in entries], repairs


class ConversationCheck:
    """Keeps one growing conversation provider-valid, checking only what is new.

    The loop calls :meth:`repair` before every model call. Everything checked before is
    valid (repaired in place), so every call block in it is complete: a new result can only
    be a duplicate there, and a new call starts a new block. The rules therefore judge the
    new items alone exactly as they would judge the whole list, and each call checks only
    the items added since the last one: O(new items), not O(conversation), per turn.

    Example:
        >>> from helikon.core.items import AssistantMessage, TextPart, ToolCall, UserMessage
        >>> check = ConversationCheck()
        >>> convo = [UserMessage.text("hi")]
        >>> check.repair(convo)
        []
        >>> blank = AssistantMessage(content=[TextPart(text=" ")])
        >>> convo += [blank, ToolCall(call_id="c1", name="ls")]
        >>> [r.repair for r in check.repair(convo)]
        ['empty_text_dropped', 'tool_result_synthesized']
        >>> [i.type for i in convo]
        ['user_message', 'tool_call', 'tool_result']
    """

    __slots__ = ("checked",)

    def __init__(self) -> None:
        self.checked = 0
        """How many leading items are known valid."""

    def repair(self, conversation: list[Item]) -> list[ConversationRepaired]:
        """Repair ``conversation`` in place; returns the repairs made (usually none).

        Items before :attr:`checked` must not have changed since the last call.
        """
        n = len(conversation)
        start = self.checked
        if start >= n or _is_valid(conversation, start):
            self.checked = n
            return []
        entries, repairs = _repair(conversation[start:])
        conversation[start:] = [item for _, item in entries]
        self.checked = len(conversation)
        return repairs
