"""JSON as the adapters send it: compact text without ASCII escapes, tool input as an object.

Tool text must reach a model as the user wrote it, so non-ASCII characters are never escaped
(``ensure_ascii=False``); and the APIs that take tool-call input as a JSON object (Anthropic
``tool_use.input``, Bedrock ``toolUse.input``) get one even when the history holds raw text.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["json_text", "tool_input"]


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
