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

        In strict mode optional fields were sent as nullable (OpenAI strict mode has no
        optional properties), so a ``null`` the type itself rejects is read as "absent" and
        the field's default applies.

        Returns:
            ``(value, [])`` on success, ``(None, errors)`` on failure; a non-JSON answer gives
            one error containing ``"not valid JSON"``.
        """
        stripped = text.strip()
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            return None, [f"response was not valid JSON: {exc.msg} at position {exc.pos}"]
        dropped: dict[tuple[Any, ...], Any] = {}
        errors: list[Any] = []
        for _ in range(_MAX_NULL_PASSES):
            try:
                return self._adapter.validate_python(data), []
            except pydantic.ValidationError as exc:
                errors = exc.errors(include_url=False)
                if not (self.strict and _drop_rejected_nulls(data, errors, dropped)):
                    break
        # a required field whose null we dropped: report why the null was rejected
        errors = [dropped.get(tuple(e["loc"]), e) if e["type"] == "missing" else e for e in errors]
        return None, [
            f"{'.'.join(str(x) for x in e['loc']) or '<root>'}: {e['msg']}" for e in errors
        ]


_MAX_NULL_PASSES = 8


def _drop_rejected_nulls(data: Any, errors: list[Any], dropped: dict[tuple[Any, ...], Any]) -> bool:
    """Delete the object keys whose ``null`` value the type rejected; True if any went."""
    changed = False
    for e in errors:
        loc = e.get("loc", ())
        if e.get("input", 0) is not None or not loc:
            continue
        parent = data
        try:
            for step in loc[:-1]:
                parent = parent[step]
        except (KeyError, IndexError, TypeError):
            continue
        if isinstance(parent, dict) and loc[-1] in parent and parent[loc[-1]] is None:
            del parent[loc[-1]]
            dropped[tuple(loc)] = e
            changed = True
    return changed
