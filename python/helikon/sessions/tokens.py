"""Token counting for compaction: the :class:`TokenCounter` protocol and its default.

:class:`HeuristicTokenCounter` is the spec's rule: ``ceil(total_chars / 4)``, where
``total_chars`` counts Unicode scalar values across text and reasoning parts (recursing
into nested tool results), system summaries, and the name plus compact-JSON arguments of
every tool call (item or inline ``tool_use`` part). Media parts, call ids and agent names
count zero. Deterministic and dependency-free; pass a model-specific tokenizer for more
accuracy.

The rule is the pure Rust crate ``helikon-tokens`` (tested there on the conformance vectors);
the walk is native (``helikon._native.heuristic_token_chars``) and has no JSON copy: it
reads the caller's objects in place, item models by attribute and their dict form by key.
Text lengths are CPython's O(1) ``len(str)``; tool arguments are measured as the length
their compact JSON would have, without writing it (``json.dumps`` runs only for values the
native walk cannot measure exactly, such as custom objects). An earlier native version took
the conversation as JSON text and lost to the Python walk because of that copy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from helikon._native import heuristic_token_chars
from helikon.core.items import Item

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
        """The estimated token count of ``items`` (0 for no text).

        Raises:
            TypeError: ``items`` is not a sequence (a ``str`` or ``bytes`` does not count).
            ValueError: tool results nested deeper than 256 levels, or arguments that
                ``json.dumps`` rejects (a circular reference).
        """
        total = heuristic_token_chars(items)
        return -(-total // 4)

    def __repr__(self) -> str:
        return "HeuristicTokenCounter()"
