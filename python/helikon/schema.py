"""JSON-Schema normalizers for provider schemas (OpenAI strict mode, Bedrock, Gemini).

The work happens in the Rust core (``helikon-schema``). :func:`strict` and :func:`strict_report`
hand it the dict itself (the Rust side walks the Python objects and builds the new dict, reusing
the immutable strings); a value that is not a plain JSON tree (a tuple, a ``dict`` subclass, a
non-finite float, ...) and the other normalizers go through JSON text instead. Every function
returns a new dict and never modifies its argument.

* :func:`strict` / :func:`strict_report`: OpenAI strict structured outputs and strict tools.
  Every object is closed (``additionalProperties: false``) with all properties required;
  optional properties become nullable (``null`` stands for "absent"). ``$defs``/``$ref``
  (recursive types included), unions, ``allOf``, arrays and tuples are walked. A construct strict
  mode cannot express (a free-form ``dict``, ``dict[str, T]``, ``Any``) is never closed
  silently: :func:`strict` raises, :func:`strict_report` lists it.
* :func:`bedrock`: Bedrock Converse tool input schemas (refs inlined, unions collapsed).
* :func:`gemini`: Gemini ``responseSchema`` or, with ``for_function=True``, function
  declaration ``parameters``.

Hostile schemas (a ``$ref`` fan-out bomb, nesting past 64 levels) raise
:class:`~helikon.errors.SchemaError` instead of exhausting memory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from helikon import _native
from helikon.errors import SchemaError

__all__ = ["Issue", "Rewrite", "StrictReport", "bedrock", "gemini", "strict", "strict_report"]


@dataclass(frozen=True)
class Rewrite:
    """One lossy rewrite: the normalized schema accepts different values than the input.

    Attributes:
        path: JSON pointer into the input schema, e.g. ``/$defs/Addr/properties/zip``.
        field: Dotted field name, e.g. ``Addr.zip`` (empty for an untitled root).
        kind: Machine-readable kind: ``optional_to_nullable``, ``optional_to_required``,
            ``keyword_removed``, ``format_removed``, ``one_of_to_any_of``,
            ``tuple_to_array`` or ``type_inferred``.
        what: What was done, in words.
    """

    path: str
    field: str
    kind: str
    what: str


@dataclass(frozen=True)
class Issue:
    """One construct OpenAI strict mode cannot express.

    Attributes:
        path: JSON pointer into the input schema, e.g. ``/properties/meta``.
        field: Dotted field name, e.g. ``Ticket.meta`` (empty for an untitled root).
        kind: Machine-readable kind: ``free_form_object``, ``map_object``,
            ``extra_properties``, ``pattern_properties``, ``unconstrained``,
            ``array_without_items``, ``unresolvable_ref``, ``recursive_ref_siblings``,
            ``all_of``, ``root_not_object`` or ``invalid``.
        reason: Why it cannot be strict.
    """

    path: str
    field: str
    kind: str
    reason: str


@dataclass(frozen=True)
class StrictReport:
    """The result of :func:`strict_report`.

    Attributes:
        schema: The normalized schema. Only send it with ``strict: true`` when
            :attr:`is_strict`; otherwise it closes the offending objects, so send the original
            schema with ``strict: false`` instead.
        lossy: Every lossy rewrite, in schema order.
        non_strict: Every construct strict mode cannot express, in schema order.
    """

    schema: dict[str, Any]
    lossy: tuple[Rewrite, ...]
    non_strict: tuple[Issue, ...]

    @property
    def is_strict(self) -> bool:
        """True when :attr:`schema` can be sent with ``strict: true``."""
        return not self.non_strict

    def nullable_fields(self) -> tuple[str, ...]:
        """JSON pointers of the optional properties whose ``null`` means "absent"."""
        return tuple(r.path for r in self.lossy if r.kind == "optional_to_nullable")


def _dumps(schema: Mapping[str, Any] | Any) -> str:
    try:
        return json.dumps(schema, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"schema is not JSON-serializable: {exc}") from exc


def _loads_dict(text: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise SchemaError(f"the schema is not a JSON object: {text[:80]}")
    return value


def strict(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Normalize a JSON Schema for OpenAI strict mode, or fail naming the offending field.

    Every object gets ``additionalProperties: false`` and lists all its properties in
    ``required``; optional properties become nullable. Refs with sibling keywords are inlined,
    ``oneOf`` becomes ``anyOf``, ``allOf`` is merged, ``default`` and other unsupported keywords
    are removed; ``$defs`` stay, so recursive models keep working.

    Args:
        schema: A JSON Schema object, e.g. ``Model.model_json_schema()``.

    Returns:
        A new, normalized schema dict.

    Raises:
        helikon.errors.SchemaError: A construct cannot be strict (the message names the field,
            e.g. ``Ticket.meta: free-form object (dict) ...; set strict=False or give the field
            a fixed shape``), the schema is not JSON, or it exceeds the node/depth budget.

    Example:
        >>> from helikon.schema import strict
        >>> out = strict({"type": "object", "title": "Q",
        ...               "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
        ...               "required": ["q"]})
        >>> out["required"], out["additionalProperties"], out["properties"]["n"]
        (['q', 'n'], False, {'type': ['integer', 'null']})
        >>> strict({"type": "object", "title": "Ticket",
        ...         "properties": {"meta": {"type": "object"}}})
        Traceback (most recent call last):
        ...
        helikon.errors.SchemaError: Ticket.meta: free-form object (dict) cannot be expressed...
    """
    out = _native.schema_strict_dict(schema)
    if out is None:  # not a plain JSON tree: JSON text decides (and converts or refuses)
        return _loads_dict(_native.schema_strict(_dumps(schema)))
    return out


def strict_report(schema: Mapping[str, Any]) -> StrictReport:
    """Normalize for OpenAI strict mode and report every lossy or non-strict construct.

    Unlike :func:`strict` this does not raise for constructs strict mode cannot express; it
    lists them in :attr:`StrictReport.non_strict` so that the caller can send ``strict: false``
    (with the original schema) instead.

    Args:
        schema: A JSON Schema object.

    Returns:
        A :class:`StrictReport` with the normalized schema, the lossy rewrites (each with a
        JSON pointer, the field name and a kind) and the non-strict constructs.

    Raises:
        helikon.errors.SchemaError: The schema is not JSON, is not an object, or exceeds the
            node/depth budget.

    Example:
        >>> from helikon.schema import strict_report
        >>> report = strict_report({"type": "object", "title": "Ticket",
        ...     "properties": {"title": {"type": "string"},
        ...                    "meta": {"type": "object", "additionalProperties": True}},
        ...     "required": ["title", "meta"]})
        >>> report.is_strict
        False
        >>> [(i.field, i.kind) for i in report.non_strict]
        [('Ticket.meta', 'free_form_object')]
    """
    fast = _native.schema_strict_report_dict(schema)
    if fast is None:  # not a plain JSON tree: JSON text decides (and converts or refuses)
        raw = json.loads(_native.schema_strict_report(_dumps(schema)))
        out, lossy, non_strict = raw["schema"], raw["lossy"], raw["non_strict"]
        rewrites = tuple(Rewrite(**r) for r in lossy)
        issues = tuple(Issue(**i) for i in non_strict)
    else:
        out, lossy_rows, issue_rows = fast
        rewrites = tuple(Rewrite(*r) for r in lossy_rows)
        issues = tuple(Issue(*i) for i in issue_rows)
    if not isinstance(out, dict):
        raise SchemaError(f"the schema is not a JSON object: {json.dumps(out)[:80]}")
    return StrictReport(schema=out, lossy=rewrites, non_strict=issues)


def bedrock(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Rewrite a tool input schema for Bedrock Converse.

    ``$ref`` is inlined (a cycle or unknown ref becomes ``{"type": "object"}``),
    ``oneOf``/``anyOf``/``allOf`` collapse into one object whose shared tag property becomes a
    string enum, and ``$schema``, ``$id``, ``format``, ``examples``, ``default``, ``$comment``
    and ``$defs`` are stripped. Nesting past 64 levels becomes ``{"type": "object"}``.

    Args:
        schema: A JSON Schema object.

    Returns:
        A new dict Converse's validator accepts.

    Raises:
        helikon.errors.SchemaError: The schema is not JSON or ref expansion exceeds the node
            budget.

    Example:
        >>> from helikon.schema import bedrock
        >>> bedrock({"oneOf": [
        ...     {"type": "object", "properties": {"t": {"const": "a"}, "x": {"type": "string"}}},
        ...     {"type": "object", "properties": {"t": {"const": "b"}}}]})
        {'type': 'object', 'properties': {'t': {'type': 'string', 'enum': ['a', 'b']}, 'x': {'type': 'string'}}}
    """  # noqa: E501
    return _loads_dict(_native.schema_bedrock(_dumps(schema)))


def gemini(schema: Mapping[str, Any], *, for_function: bool = False) -> dict[str, Any]:
    """Sanitize a schema for Gemini (OpenAPI 3.0 subset).

    Refs are inlined, ``["T", "null"]`` becomes ``nullable: true``, ``const`` becomes a one-item
    ``enum``, ``oneOf`` becomes ``anyOf`` (``null`` members fold into ``nullable``), and
    ``additionalProperties``, ``$schema``, ``$defs``, ``default``, ``examples`` and formats
    Gemini does not know are dropped.

    Args:
        schema: A JSON Schema object.
        for_function: Sanitize for a function declaration's ``parameters``: additionally keep
            only the fields Gemini's ``Schema`` accepts, keep a ``$ref``'s own description,
            merge ``allOf`` and turn tuples into arrays.

    Returns:
        A new dict for ``responseSchema`` (or ``parameters`` when ``for_function``).

    Raises:
        helikon.errors.SchemaError: The schema is not JSON or ref expansion exceeds the node
            budget.

    Example:
        >>> from helikon.schema import gemini
        >>> gemini({"type": "object", "additionalProperties": False,
        ...         "properties": {"limit": {"anyOf": [{"type": "integer"}, {"type": "null"}],
        ...                                  "default": None}}}, for_function=True)
        {'properties': {'limit': {'nullable': True, 'type': 'integer'}}, 'type': 'object'}
    """
    return _loads_dict(_native.schema_gemini(_dumps(schema), for_function=for_function))
