"""The heuristic token count's rule as a plain Python walk: the reference for the native one.

``helikon.sessions.HeuristicTokenCounter`` counts through ``helikon._native``; this module
keeps the Python walk it replaced, for the tests (native == reference on random
conversations) and for ``benches/bench_tokens.py``. It reads item models and their dict form
the way the spec's rule describes (shared/conformance/token_counter.json) and is imported by
file path from the bench, so it depends only on ``helikon``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from helikon.core.items import (
    AudioPart,
    ImagePart,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolUsePart,
)

__all__ = ["reference_chars", "reference_count"]


def _compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _part_chars(part: Any) -> int:
    if isinstance(part, TextPart | ReasoningPart):
        return len(part.text)
    if isinstance(part, ImagePart | AudioPart):
        return 0
    if isinstance(part, ToolUsePart):
        return len(part.name) + len(_compact_json(part.args))
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
        return len(str(part.get("name") or "")) + len(_compact_json(part.get("args")))
    if kind == "tool_result":
        return sum(_part_chars(p) for p in part.get("content") or ())
    return 0


def _item_chars(item: Any) -> int:
    if isinstance(item, ToolCall):
        return len(item.name) + len(_compact_json(item.args))
    if isinstance(item, Mapping):
        if item.get("type") == "tool_call":
            return len(str(item.get("name") or "")) + len(_compact_json(item.get("args")))
        return sum(_part_chars(p) for p in item.get("content") or ())
    return sum(_part_chars(p) for p in getattr(item, "content", ()))


def reference_chars(items: Sequence[Any]) -> int:
    """``total_chars`` of the spec's rule over items or their dict form."""
    return sum(_item_chars(item) for item in items)


def reference_count(items: Sequence[Any]) -> int:
    """``ceil(reference_chars(items) / 4)``."""
    return -(-reference_chars(items) // 4)
