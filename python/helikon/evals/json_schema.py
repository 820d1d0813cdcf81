"""The ``json_schema`` evaluator: the final response is JSON valid against a schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helikon.errors import ConfigError, EvalError
from helikon.evals._deps import require
from helikon.evals._json import parse_response
from helikon.evals.dataset import EvalCase
from helikon.evals.evaluator import CaseOutcome, Score

__all__ = ["JsonSchema"]

_MAX_ERRORS = 3


class JsonSchema:
    """Passes iff the final response parses as JSON and validates against ``schema``.

    The response may be one fenced code block (it is unwrapped). The schema's ``$schema``
    picks the draft (2020-12 when absent). Needs no case field, so it never skips. The value
    is 1.0 when passed and 0.0 when failed; ``detail`` lists up to three violations as
    ``/json/pointer: message``.

    Args:
        schema: a JSON Schema object, or the path of a JSON file holding one.

    Raises:
        ConfigError: the schema file cannot be read or parsed, or the schema is invalid.
        ImportError: the ``jsonschema`` package is missing (``pip install 'helikon[evals]'``).

    Example:
        >>> import asyncio
        >>> from helikon.evals import CaseOutcome, EvalCase
        >>> ev = JsonSchema({"type": "object", "required": ["answer"]})
        >>> asyncio.run(ev.evaluate(EvalCase(id="c", input="x"),
        ...                         CaseOutcome(final_response='{"other": 1}'))).detail
        "/: 'answer' is a required property"
    """

    def __init__(self, schema: dict[str, Any] | str | Path) -> None:
        jsonschema = require("jsonschema", feature="JsonSchema")
        if isinstance(schema, str | Path):
            try:
                schema = json.loads(Path(schema).read_text(encoding="utf-8"))
            except OSError as exc:
                raise ConfigError(f"cannot read JSON Schema {schema}: {exc.strerror}") from None
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"JSON Schema {schema} is not valid JSON: {exc}") from None
        if not isinstance(schema, dict):
            raise ConfigError(f"a JSON Schema is an object, got {type(schema).__name__}")
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ConfigError(f"invalid JSON Schema: {exc.message}") from None
        self.schema = schema
        self._validator = cls(schema)

    @property
    def name(self) -> str:
        return "json_schema"

    async def evaluate(self, case: EvalCase, outcome: CaseOutcome) -> Score:
        try:
            value = parse_response(outcome.final_response)
        except EvalError as exc:
            return Score.failed(detail=str(exc))
        errors = sorted(
            self._validator.iter_errors(value),
            key=lambda e: ([str(p) for p in e.absolute_path], e.message),
        )
        if not errors:
            return Score.passed()
        shown = [f"{_pointer(e.absolute_path)}: {e.message}" for e in errors[:_MAX_ERRORS]]
        more = len(errors) - _MAX_ERRORS
        if more > 0:
            shown.append(f"... and {more} more")
        return Score.failed(detail="; ".join(shown))


def _pointer(path: Any) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)
