"""JSON helpers shared by the built-in evaluators."""

from __future__ import annotations

import json
from typing import Any

from helikon.core.output import answer_json
from helikon.errors import EvalError

__all__ = ["json_equal", "parse_response", "short"]


def json_equal(a: Any, b: Any) -> bool:
    """Structural JSON equality: ``true`` is not ``1`` (unlike Python's ``==``), ``1`` is
    ``1.0``, object key order does not matter.

    Example:
        >>> json_equal({"a": [1, True]}, {"a": [1.0, True]}), json_equal(True, 1)
        (True, False)
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def parse_response(text: str) -> Any:
    """The final response as a JSON value (a lone fenced code block is unwrapped).

    Raises:
        EvalError: the response is not JSON.
    """
    try:
        return json.loads(answer_json(text))
    except json.JSONDecodeError as exc:
        raise EvalError(f"final response is not JSON ({exc.msg}): {short(text)}") from None


def short(value: Any, limit: int = 80) -> str:
    """``repr`` of ``value`` (JSON for non-strings), cut to ``limit`` characters."""
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."
