"""A tool's arguments model: its JSON Schema as the model sees it, and raw-argument validation.

One rule for :class:`~helikon.core.tool.FunctionTool` and the ready-made tools.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

import pydantic
from pydantic import BaseModel

from helikon.errors import InvalidArgs

__all__ = ["arguments_object", "schema_of", "validate_args"]

M = TypeVar("M", bound=BaseModel)


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema the model sees: pydantic's, without the generated titles."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    schema.setdefault("properties", {})
    return schema


def arguments_object(args: Any) -> dict[str, Any]:
    """Raw tool arguments as a JSON object: a dict as it is, JSON text parsed, ``None`` and
    blank text as ``{}``.

    Example:
        >>> arguments_object('{"path": "a.txt"}'), arguments_object(None)
        ({'path': 'a.txt'}, {})

    Raises:
        InvalidArgs: the text is not valid JSON, or the value is not an object.
    """
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            raise InvalidArgs([f"arguments are not valid JSON: {exc.msg}"]) from None
    if args is None:
        return {}
    if not isinstance(args, dict):
        raise InvalidArgs([f"arguments must be a JSON object, got {type(args).__name__}"])
    return args


def validate_args(model: type[M], args: Any) -> M:
    """Validate raw arguments (a dict, JSON text or ``None``).

    Raises:
        InvalidArgs: one message per problem (``field: reason``).
    """
    try:
        return model.model_validate(arguments_object(args))
    except pydantic.ValidationError as exc:
        raise InvalidArgs(
            [
                f"{'.'.join(str(x) for x in e['loc']) or '<root>'}: {e['msg']}"
                for e in exc.errors(include_url=False)
            ]
        ) from None
