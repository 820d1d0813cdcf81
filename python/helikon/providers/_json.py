"""JSON as the adapters send it: compact text without ASCII escapes, tool input as an object.

Tool text must reach a model as the user wrote it, so non-ASCII characters are never escaped
(``ensure_ascii=False``); and the APIs that take tool-call input as a JSON object (Anthropic
``tool_use.input``, Bedrock ``toolUse.input``) get one even when the history holds raw text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from helikon.core.model import ModelSettings

__all__ = ["json_text", "merge_extra", "sampling", "tool_input"]


def json_text(value: Any) -> str:
    """Compact JSON text with non-ASCII characters kept (never ``\\u`` escapes).

    Example:
        >>> json_text({"city": "Zürich", "days": [1, 2]})
        '{"city":"Zürich","days":[1,2]}'
    """
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def tool_input(args: Any) -> dict[str, Any]:
    """Tool-call arguments as an object: raw JSON text parsed, anything else wrapped.

    Example:
        >>> tool_input('{"city": "Paris"}'), tool_input("not json"), tool_input(None)
        ({'city': 'Paris'}, {'value': 'not json'}, {})
    """
    if args is None:
        return {}
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return {"value": args}
    if isinstance(args, dict):
        return args
    return {"value": args}


def sampling(settings: ModelSettings, *, top_p: str, max_tokens: str) -> dict[str, Any]:
    """The sampling settings that are set (``temperature``, ``top_p``, ``max_output_tokens``),
    under the API's field names (``temperature`` is that everywhere).

    Example:
        >>> sampling(ModelSettings(top_p=0.5), top_p="topP", max_tokens="maxOutputTokens")
        {'topP': 0.5}
    """
    fields: dict[str, Any] = {}
    if settings.temperature is not None:
        fields["temperature"] = settings.temperature
    if settings.top_p is not None:
        fields[top_p] = settings.top_p
    if settings.max_output_tokens is not None:
        fields[max_tokens] = settings.max_output_tokens
    return fields


def merge_extra(body: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """Merge ``ModelSettings.extra`` into a request ``body``, last: a key of ``extra`` replaces
    the body's, except where both sides hold an object, which are merged one level deep.

    Example:
        >>> body = {"metadata": {"a": 1}, "top_p": 0.5}
        >>> merge_extra(body, {"metadata": {"b": 2}, "top_p": 0.9})
        >>> body
        {'metadata': {'a': 1, 'b': 2}, 'top_p': 0.9}
    """
    for key, value in extra.items():
        current = body.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            body[key] = {**current, **value}
        else:
            body[key] = value
