"""A tool's arguments model: its JSON Schema as the model sees it, and raw-argument validation.

One rule for :class:`~helikon.core.tool.FunctionTool` and the ready-made tools.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

import pydantic
from pydantic import BaseModel

from helikon.errors import InvalidArgs

__all__ = ["schema_of", "validate_args"]

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


def validate_args(model: type[M], args: Any) -> M:
    """Validate raw arguments (a dict, JSON text or ``None``).

    Raises:
        InvalidArgs: one message per problem (``field: reason``).
    """
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            raise InvalidArgs([f"arguments are not valid JSON: {exc.msg}"]) from None
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise InvalidArgs([f"arguments must be a JSON object, got {type(args).__name__}"])
    try:
        return model.model_validate(args)
    except pydantic.ValidationError as exc:
        raise InvalidArgs(
            [
                f"{'.'.join(str(x) for x in e['loc']) or '<root>'}: {e['msg']}"
                for e in exc.errors(include_url=False)
            ]
        ) from None
