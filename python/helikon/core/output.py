"""Structured output: the :class:`OutputType` carrier behind ``Agent(output_type=...)``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import pydantic
from pydantic import TypeAdapter

from helikon.errors import ConfigError, SchemaError

__all__ = ["OutputType"]

T = TypeVar("T")


@dataclass(frozen=True)
class OutputType(Generic[T]):
    """The type an agent's final answer must validate against.

    Holds the schema name (the schema title, else ``"StructuredOutput"``), the JSON Schema
    pydantic derives for ``type_``, and a validator. With ``strict=True`` (the default) the
    schema must be expressible in OpenAI strict mode; construction fails otherwise, naming the
    field, so nothing is silently loosened. Pass ``strict=False`` to send the schema as-is.

    Args:
        type_: a pydantic model, dataclass, TypedDict or any type pydantic can validate.
        strict: request provider-enforced strict structured output.
        name: overrides the schema name.

    Raises:
        ConfigError: ``type_`` has no JSON Schema, or ``strict`` and a field cannot be strict.

    Example:
        >>> from pydantic import BaseModel
        >>> class Answer(BaseModel):
        ...     value: int
        >>> OutputType(Answer).name
        'Answer'
    """

    type_: Any
    strict: bool = True
    name: str = ""
    schema: dict[str, Any] = field(default_factory=dict, init=False)
    _adapter: TypeAdapter[Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        adapter: TypeAdapter[Any] = TypeAdapter(self.type_)
        try:
            schema = adapter.json_schema()
        except pydantic.PydanticUserError as exc:
            raise ConfigError(f"output_type {self.type_!r} has no JSON Schema: {exc}") from exc
        name = self.name or str(schema.get("title") or "StructuredOutput")
        object.__setattr__(self, "_adapter", adapter)
        object.__setattr__(self, "schema", schema)
        object.__setattr__(self, "name", name)
        if self.strict:
            self._check_strict()

    def _check_strict(self) -> None:
        from helikon import schema as schema_mod

        try:
            report = schema_mod.strict_report(self.schema)
        except SchemaError as exc:
            raise ConfigError(
                f"output_type {self.name}: {exc}; pass OutputType({self.name}, strict=False) "
                "to send the schema without strict mode"
            ) from exc
        if report.non_strict:
            problems = "; ".join(f"{self._field(i.path)}: {i.reason}" for i in report.non_strict)
            raise ConfigError(
                f"output_type {self.name} cannot use OpenAI strict mode: {problems}. Give the "
                f"field a fixed shape, or pass output_type=OutputType({self.name}, strict=False) "
                "to send the schema without strict mode"
            )

    def _field(self, pointer: str) -> str:
        parts = [p for p in pointer.split("/") if p and p not in ("properties", "#")]
        return ".".join([self.name, *parts]) if parts else self.name

    def validate_text(self, text: str) -> tuple[Any, list[str]]:
        """Parse and validate the final answer text.

        Returns:
            ``(value, [])`` on success, ``(None, errors)`` on failure; a non-JSON answer gives
            one error containing ``"not valid JSON"``.
        """
        stripped = text.strip()
        try:
            json.loads(stripped)
        except json.JSONDecodeError as exc:
            return None, [f"response was not valid JSON: {exc.msg} at position {exc.pos}"]
        try:
            return self._adapter.validate_json(stripped), []
        except pydantic.ValidationError as exc:
            return None, [
                f"{'.'.join(str(x) for x in e['loc']) or '<root>'}: {e['msg']}"
                for e in exc.errors(include_url=False)
            ]
