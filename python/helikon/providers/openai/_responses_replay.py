"""Sending earlier Responses turns back: replayed items and server-state chaining.

A turn this adapter produced carries its Responses state in the ``provider_data`` of its
first item (key :data:`PROVIDER_DATA_KEY`; written by ``_responses_events``):
``{"id": ..., "model": ..., "output": [...]}``, one output entry per output item, in order.

Replay (:func:`replay_turn`): the turn is sent back exactly as the API returned it, in output
order: reasoning items (``id``, ``summary`` and, when the request asked for
``include=["reasoning.encrypted_content"]``, the encrypted content), message items (``id``,
``phase``) and function calls (``id``), rebuilt from the turn's state plus the turn's items.
With ``store=False`` nothing on the server can be referenced, so item ids are left out and
reasoning items without encrypted content are dropped. Output items of types this adapter
does not model (hosted tools) go back verbatim.

Chaining (:func:`chain_point`): ``previous_response_id`` comes from
``ModelSettings.previous_response_id`` or, with ``server_state=True``, from the last
assistant turn in the conversation; then only the items after that turn are sent. If the
conversation does not contain that response, the request's items are sent as given. A later
assistant turn from another source stops automatic chaining.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from helikon.core.items import AssistantMessage, Item, ToolCall, text_of
from helikon.providers.openai._encode import arguments

__all__ = ["PROVIDER_DATA_KEY", "chain_point", "function_call", "replay_turn", "turn_data"]

PROVIDER_DATA_KEY = "openai_response"
"""The ``provider_data`` key under which a turn's Responses state travels."""


def function_call(call_id: str, name: str, args: Any) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": arguments(args),
    }


def turn_data(item: Item) -> dict[str, Any] | None:
    """The Responses state a turn's carrier item holds (``None`` when it has none)."""
    data = getattr(item, "provider_data", None)
    if not isinstance(data, dict):
        return None
    turn = data.get(PROVIDER_DATA_KEY)
    if isinstance(turn, dict) and isinstance(turn.get("output"), list):
        return turn
    return None


def _turn_call_ids(turn: Mapping[str, Any]) -> set[str]:
    return {
        str(e.get("call_id"))
        for e in turn["output"]
        if isinstance(e, dict) and e.get("type") == "function_call"
    }


def chain_point(items: Sequence[Item], wanted: str | None) -> tuple[str, int] | None:
    """``(response id, index of the first item after that response's turn)``.

    With ``wanted`` ``None`` this is the latest response, provided no assistant output from
    another source follows it; otherwise the turn of response ``wanted``.
    """
    for index in range(len(items) - 1, -1, -1):
        turn = turn_data(items[index])
        response_id = turn.get("id") if turn is not None else None
        if turn is None or not isinstance(response_id, str) or not response_id:
            continue
        if wanted is not None and response_id != wanted:
            continue
        ids = _turn_call_ids(turn)
        end = index + 1
        while end < len(items):
            nxt = items[end]
            if not (isinstance(nxt, ToolCall) and nxt.call_id in ids):
                break
            end += 1
        if wanted is None and any(
            isinstance(later, (AssistantMessage, ToolCall)) for later in items[end:]
        ):
            return None
        return response_id, end
    return None


def _reasoning_input(entry: Mapping[str, Any], keep_ids: bool) -> dict[str, Any] | None:
    item_id = entry.get("id")
    encrypted = entry.get("encrypted_content")
    if not isinstance(item_id, str) or not item_id:
        return None
    if not keep_ids and not encrypted:
        return None  # a bare reference to an item the server did not store
    out: dict[str, Any] = {
        "type": "reasoning",
        "id": item_id,
        "summary": entry.get("summary") or [],
    }
    if encrypted:
        out["encrypted_content"] = encrypted
    return out


def _message_input(entry: Mapping[str, Any], text: str, keep_ids: bool) -> dict[str, Any] | None:
    item_id = entry.get("id")
    phase = entry.get("phase")
    refusal = entry.get("refusal")
    if keep_ids and isinstance(item_id, str) and item_id:
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "output_text", "text": text, "annotations": []})
        if isinstance(refusal, str) and refusal:
            content.append({"type": "refusal", "refusal": refusal})
        if not content:
            return None
        message: dict[str, Any] = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "completed",
            "content": content,
        }
    else:
        if not text:
            return None
        message = {"role": "assistant", "content": text}
    if isinstance(phase, str) and phase:
        message["phase"] = phase
    return message


def replay_turn(
    items: Sequence[Item],
    pos: int,
    turn: Mapping[str, Any],
    consumed: set[int],
    keep_ids: bool,
) -> list[dict[str, Any]]:
    """The input items of one earlier turn, in the order the API produced them."""
    carrier = items[pos]
    calls: dict[str, tuple[int, ToolCall]] = {}
    j = pos if isinstance(carrier, ToolCall) else pos + 1
    while j < len(items):
        candidate = items[j]
        if not isinstance(candidate, ToolCall):
            break
        calls.setdefault(candidate.call_id, (j, candidate))
        j += 1
    text = text_of(carrier.content) if isinstance(carrier, AssistantMessage) else ""
    entries = [e for e in turn["output"] if isinstance(e, dict)]
    messages = [e for e in entries if e.get("type") == "message"]
    own_texts = [e.get("text") for e in messages]
    if (
        len(messages) > 1
        and all(isinstance(t, str) for t in own_texts)
        and "".join(cast("list[str]", own_texts)) == text
    ):
        texts = cast("list[str]", own_texts)
    else:
        texts = [text] + [""] * max(len(messages) - 1, 0)
    out: list[dict[str, Any]] = []
    placed = not text
    message_index = 0
    for entry in entries:
        kind = entry.get("type")
        if kind == "reasoning":
            reasoning = _reasoning_input(entry, keep_ids)
            if reasoning is not None:
                out.append(reasoning)
        elif kind == "message":
            piece = texts[message_index]
            message_index += 1
            message = _message_input(entry, piece, keep_ids)
            if message is not None:
                out.append(message)
                placed = placed or bool(piece)
        elif kind == "function_call":
            found = calls.get(str(entry.get("call_id")))
            if found is None:
                continue  # the call was removed from the history
            index, call = found
            consumed.add(index)
            fc = function_call(call.call_id, call.name, call.args)
            item_id = entry.get("id")
            if keep_ids and isinstance(item_id, str) and item_id:
                fc["id"] = item_id
            out.append(fc)
        elif isinstance(kind, str):
            out.append(dict(entry))  # an item type this adapter does not model: verbatim
    if not placed:
        first_call = next((k for k, e in enumerate(out) if e.get("type") == "function_call"), None)
        plain = {"role": "assistant", "content": text}
        out.insert(len(out) if first_call is None else first_call, plain)
    consumed.add(pos)
    return out
