"""Token counting for compaction: the :class:`TokenCounter` protocol and its default.

:class:`HeuristicTokenCounter` is the spec's rule: ``ceil(total_chars / 4)``, where
``total_chars`` counts Unicode scalar values across text and reasoning parts (recursing
into nested tool results), system summaries, and the name plus compact-JSON arguments of
every tool call (item or inline ``tool_use`` part). Media parts, call ids and agent names
count zero. Deterministic and dependency-free; pass a model-specific tokenizer for more
accuracy.

It runs in Python on purpose: the items are Python objects, and ``len(str)`` already
counts code points in O(1), so sending the conversation across the native boundary as
JSON would cost more than the count itself.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from helikon.core.items import (
    AudioPart,
    ImagePart,
    Item,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolUsePart,
)

__all__ = ["HeuristicTokenCounter", "TokenCounter", "compact_json"]


@runtime_checkable
class TokenCounter(Protocol):
    """Estimates how many tokens a conversation costs."""

    def count(self, items: Sequence[Item]) -> int:
        """The token count of ``items``."""
        ...


def compact_json(value: Any) -> str:
    """``value`` as compact JSON (no whitespace, non-ASCII kept), like serde_json's.

    Example:
        >>> compact_json({"s": "é", "n": None})
        '{"s":"é","n":null}'
    """
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _part_chars(part: Any) -> int:
    if isinstance(part, TextPart | ReasoningPart):
        return len(part.text)
    if isinstance(part, ImagePart | AudioPart):
        return 0
    if isinstance(part, ToolUsePart):
        return len(part.name) + len(compact_json(part.args))
    if isinstance(part, Mapping):
        return _json_part_chars(part)
    content = getattr(part, "content", None)  # a nested tool-result part model
    if isinstance(content, list):
        return sum(_part_chars(p) for p in content)
    return 0


def _json_part_chars(part: Mapping[str, Any]) -> int:
    kind = part.get("type")
    if kind in ("text", "reasoning"):
        return len(str(part.get("text") or ""))
    if kind == "tool_use":
        return len(str(part.get("name") or "")) + len(compact_json(part.get("args")))
    if kind == "tool_result":
        return sum(_part_chars(p) for p in part.get("content") or ())
    return 0


def _item_chars(item: Any) -> int:
    if isinstance(item, ToolCall):
        return len(item.name) + len(compact_json(item.args))
    if isinstance(item, Mapping):
        if item.get("type") == "tool_call":
            return len(str(item.get("name") or "")) + len(compact_json(item.get("args")))
        return sum(_part_chars(p) for p in item.get("content") or ())
    return sum(_part_chars(p) for p in getattr(item, "content", ()))


class HeuristicTokenCounter:
    """``ceil(chars / 4)`` over the text-bearing fields (the spec's default counter).

    Accepts items or their JSON (dict) form.

    Example:
        >>> from helikon.core.items import ToolCall, UserMessage
        >>> HeuristicTokenCounter().count([UserMessage.text("hello")])
        2
        >>> HeuristicTokenCounter().count([ToolCall(call_id="c", name="f", args={"b": 1, "a": 2})])
        4
    """

    def count(self, items: Sequence[Item | Mapping[str, Any]]) -> int:
        """The estimated token count of ``items`` (0 for no text)."""
        total = sum(_item_chars(item) for item in items)
        return -(-total // 4)

    def __repr__(self) -> str:
        return "HeuristicTokenCounter()"
