"""Structured output: the :class:`OutputType` carrier behind ``Agent(output_type=...)``."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import pydantic
from pydantic import BaseModel, TypeAdapter

from helikon.errors import ConfigError, SchemaError

__all__ = ["OutputType", "answer_json"]

T = TypeVar("T")


@dataclass(frozen=True)
class OutputType(Generic[T]):
    """The type an agent's final answer must validate against.

    Holds the schema name (the schema title, else ``"StructuredOutput"``), the JSON Schema
    pydantic derives for ``type_``, and a validator. With ``strict=True`` (the default) the
    schema must be expressible in OpenAI strict mode; construction fails otherwise, naming the
    field, so nothing is silently loosened. Pass ``strict=False`` to send the schema as-is.

    A type whose schema is not an object (a list, a union, a ``Literal``, a scalar) is sent
    wrapped, in strict mode only: the schema becomes ``{"value": <the type's schema>}`` (one
    required property; ``$defs`` kept at the root), because OpenAI strict mode and tool
    parameters need an object at the root. The answer ``{"value": ...}`` is unwrapped before
    validation, so ``final_output`` is the list or union member itself; a bare value (a model
    that ignored the wrapper) is accepted too. :attr:`wrapped` says whether this happened.

    A derived name has every character outside ``[a-zA-Z0-9_-]`` replaced by ``_`` and is cut
    to 64 characters (a generic model's title ``Page[int]`` becomes ``Page_int``), because
    providers reject other response-format names.

    Args:
        type_: a pydantic model, dataclass, TypedDict or any type pydantic can validate (the
            type itself, ``output_type=M``, not an instance ``M(...)``).
        strict: request provider-enforced strict structured output.
        name: overrides the schema name; must match ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI's rule
            for response-format names).

    Raises:
        ConfigError: ``type_`` is an instance rather than a type, or has no JSON Schema;
            ``name`` breaks the ``^[a-zA-Z0-9_-]{1,64}$`` rule; or ``strict`` and a field
            cannot be strict.

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
    wrapped: bool = field(default=False, init=False)
    _adapter: TypeAdapter[Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_is_type(self.type_)
        if self.name and not _NAME.fullmatch(self.name):
            raise ConfigError(
                f"OutputType(name={self.name!r}): a response-format name must match "
                "^[a-zA-Z0-9_-]{1,64}$ (letters, digits, '_' and '-', at most 64 characters)"
            )
        try:
            adapter: TypeAdapter[Any] = TypeAdapter(self.type_)
            schema = adapter.json_schema()
        except pydantic.PydanticUserError as exc:
            raise ConfigError(f"output_type {self.type_!r} has no JSON Schema: {exc}") from exc
        name = self.name or _derived_name(schema.get("title"))
        if self.strict and not _is_object_schema(schema):
            schema = _wrapped_schema(schema)
            object.__setattr__(self, "wrapped", True)
        object.__setattr__(self, "_adapter", adapter)
        object.__setattr__(self, "schema", schema)
        object.__setattr__(self, "name", name)
        if self.strict:
            self._check_strict()

    def _check_strict(self) -> None:
        from helikon import schema as schema_mod

        label = _type_label(self.type_)
        try:
            report = schema_mod.strict_report(self.schema)
        except SchemaError as exc:
            raise ConfigError(
                f"output_type {label}: {exc}; pass output_type=OutputType({label}, "
                "strict=False) to send the schema without strict mode"
            ) from exc
        if report.non_strict:
            problems = "; ".join(
                f"{self._field(i.path, label)}: {i.reason}" for i in report.non_strict
            )
            at_root = any(not self._field_parts(i.path) for i in report.non_strict)
            fix = (
                "Wrap the value in a pydantic model (e.g. a field `items: ...`)"
                if at_root
                else "Give the field a fixed shape"
            )
            raise ConfigError(
                f"output_type {label} cannot use OpenAI strict mode: {problems}. {fix}, or "
                f"pass output_type=OutputType({label}, strict=False) to send the schema "
                "without strict mode"
            )

    @staticmethod
    def _field_parts(pointer: str) -> list[str]:
        return [p for p in pointer.split("/") if p and p not in ("properties", "#")]

    def _field(self, pointer: str, label: str) -> str:
        parts = self._field_parts(pointer)
        return ".".join([self.name, *parts]) if parts else label

    def validate_text(self, text: str) -> tuple[Any, list[str]]:
        """Parse and validate the final answer text.

        In strict mode optional fields were sent as nullable (OpenAI strict mode has no
        optional properties), so a ``null`` the type itself rejects is read as "absent" and
        the field's default applies.

        An answer that is exactly one Markdown code block (```` ```json ... ``` ````) is read
        as the block's content: models answering in plain text (no native structured output)
        often fence their JSON, and a repair turn for that would be wasted.

        A :attr:`wrapped` type's answer ``{"value": X}`` is validated as ``X``; error paths
        then start at ``value``.

        Returns:
            ``(value, [])`` on success, ``(None, errors)`` on failure; a non-JSON answer gives
            one error containing ``"not valid JSON"``.
        """
        try:
            data = json.loads(answer_json(text))
        except json.JSONDecodeError as exc:
            return None, [f"response was not valid JSON: {exc.msg} at position {exc.pos}"]
        if not self.wrapped:
            return self._validate(data)
        if isinstance(data, dict) and set(data) == {_WRAP_KEY}:
            value, errors = self._validate(data[_WRAP_KEY])
            if not errors:
                return value, errors
            bare, bare_errors = self._validate(data)  # a type whose own object has `value`
            if not bare_errors:
                return bare, bare_errors
            return None, [_under_wrap_key(e) for e in errors]
        return self._validate(data)

    def _validate(self, data: Any) -> tuple[Any, list[str]]:
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
_WRAP_KEY = "value"


def _under_wrap_key(error: str) -> str:
    """An error on the unwrapped value, its path under the wrapper's key."""
    root = "<root>"
    return _WRAP_KEY + error[len(root) :] if error.startswith(root) else f"{_WRAP_KEY}.{error}"


def _is_object_schema(schema: dict[str, Any]) -> bool:
    """True when ``schema``'s root is an object (what strict mode and tool parameters need)."""
    return schema.get("type") == "object"


def _wrapped_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``{"value": schema}`` as a strict object, ``$defs`` hoisted so ``#/$defs/..`` refs
    still resolve from the root."""
    inner = {k: v for k, v in schema.items() if k != "$defs"}
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {_WRAP_KEY: inner},
        "required": [_WRAP_KEY],
        "additionalProperties": False,
    }
    if "$defs" in schema:
        wrapper["$defs"] = schema["$defs"]
    return wrapper


_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
# one Markdown code block, optionally tagged (```json), holding the whole answer
_FENCED = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\r?\n(.*?)\r?\n?```", re.DOTALL)


def answer_json(text: str) -> str:
    """The JSON text of a final answer: ``text`` stripped, or, when the whole answer is one
    Markdown code block (```` ```json ... ``` ````, any or no language tag), the block's content.

    Example:
        >>> answer_json('```json\\n{"a": 1}\\n```')
        '{"a": 1}'
    """
    stripped = text.strip()
    fenced = _FENCED.fullmatch(stripped)
    return fenced.group(1).strip() if fenced else stripped


def _type_label(type_: Any) -> str:
    """How the user wrote ``type_``: ``Ticket`` for a class, ``list[int]`` for an alias."""
    if isinstance(type_, type) and not getattr(type_, "__args__", None):
        return type_.__name__
    return repr(type_).replace("typing.", "")


def _derived_name(title: Any) -> str:
    """The schema title made a valid response-format name (``"StructuredOutput"`` if none)."""
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", str(title or ""))[:64].strip("_")
    return name or "StructuredOutput"


def _check_is_type(value: Any) -> None:
    """Reject the usual not-a-type mistakes before pydantic reports them obscurely.

    Raises:
        ConfigError: ``value`` is an instance of a model or dataclass, a string or a number.
    """
    if isinstance(value, BaseModel) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    ):
        cls = type(value).__name__
        raise ConfigError(
            f"output_type must be a type, e.g. output_type={cls}, not an instance ({value!r})"
        )
    if isinstance(value, str | bytes | int | float | dict | list | tuple | set):
        raise ConfigError(
            "output_type must be a type (a pydantic model, dataclass, TypedDict, list[int], "
            f"...), not the {type(value).__name__} value {value!r}"
        )


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
