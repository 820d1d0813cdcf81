"""Keep a conversation valid for providers, and record every fix in the log.

Providers reject a conversation in which a tool call has no result, a result has no call,
a call's arguments are not a JSON object, or a text part is blank. A crash or a cancel in
the middle of a tool leaves exactly such a log behind, and every later request would fail
(field case BR-12). helikon checks the projected conversation when a session is loaded (the
Runner does so before every run), repairs it, and records each repair as a
:class:`~helikon.sessions.events.ConversationRepaired` event. :func:`project` applies those
events at their place in the log, so once recorded a repair holds for every later load.

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
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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
from helikon.sessions.events import ConversationRepaired

if TYPE_CHECKING:
    from helikon.sessions.protocol import Session

__all__ = [
    "INTERRUPTED_RESULT",
    "apply_repair",
    "find_repairs",
    "load_conversation",
    "repair_conversation",
]

INTERRUPTED_RESULT = (
    "Tool call interrupted: the run stopped before this call returned a result. "
    "The call may or may not have taken effect."
)
"""Text of a synthesized result for a call that never returned."""

Entry = tuple[int, Item]
"""An item with the index of the log event it belongs to (``project`` bookkeeping)."""


# --------------------------------------------------------------------------- applying


def apply_repair(entries: list[Entry], repair: ConversationRepaired) -> None:
    """Apply one recorded repair to ``entries`` in place (used by :func:`project`).

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
    return {}, f"arguments were {type(args).__name__}, not a JSON object"


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


def find_repairs(items: Sequence[Item]) -> list[ConversationRepaired]:
    """The repairs ``items`` needs, in the order they apply (empty when it is valid).

    Example:
        >>> from helikon.core.items import ToolCall, UserMessage
        >>> convo = [UserMessage.text("clean up"), ToolCall(call_id="tu_9", name="Bash")]
        >>> [(r.repair, r.call_id) for r in find_repairs(convo)]
        [('tool_result_synthesized', 'tu_9')]
    """
    return _repair(items)[1]


def repair_conversation(
    items: Sequence[Item],
) -> tuple[list[Item], list[ConversationRepaired]]:
    """``items`` made provider-valid, and the repairs that did it.

    Invariant: ``project(log + repairs) == repaired`` for any log projecting to ``items``,
    so appending the repairs to the session makes the fix permanent.

    Example:
        >>> from helikon.core.items import ToolCall, UserMessage
        >>> convo = [UserMessage.text("clean up"), ToolCall(call_id="tu_9", name="Bash")]
        >>> fixed, repairs = repair_conversation(convo)
        >>> [i.type for i in fixed], fixed[2].is_error
        (['user_message', 'tool_call', 'tool_result'], True)
    """
    entries, repairs = _repair(items)
    if not repairs:
        return list(items), []
    return [item for _, item in entries], repairs


async def load_conversation(session: Session) -> list[Item]:
    """The session's conversation, repaired; repairs are appended to the session first.

    Use this instead of ``session.snapshot()`` before a run. A conversation that needs no
    repair costs one ``snapshot()`` and writes nothing.

    Raises:
        SessionError: reading the session or recording a repair failed.

    Example:
        >>> import asyncio
        >>> from helikon.sessions import MemorySession, tool_called, user_message
        >>> s = MemorySession()
        >>> _ = asyncio.run(s.append([user_message("go"), tool_called("c1", "Bash", {})]))
        >>> [i.type for i in asyncio.run(load_conversation(s))]
        ['user_message', 'tool_call', 'tool_result']
    """
    items = await session.snapshot()
    fixed, repairs = repair_conversation(items)
    if repairs:
        await session.append(repairs)
    return fixed
