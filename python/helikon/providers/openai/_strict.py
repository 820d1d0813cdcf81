"""OpenAI strict mode for a schema: normalize it, or fall back to non-strict honestly."""

from __future__ import annotations

from typing import Any

from helikon import schema as schema_mod

__all__ = ["strict_schema"]


def strict_schema(schema: dict[str, Any], strict: bool) -> tuple[dict[str, Any], bool]:
    """Return ``(schema to send, strict flag to send)``.

    With ``strict`` the schema goes through :func:`helikon.schema.strict_report`. When a
    construct cannot be expressed in strict mode (a free-form ``dict`` field, say), the
    ORIGINAL schema is sent with ``strict: false`` rather than a silently tightened one.

    Raises:
        SchemaError: the schema is hostile (too large or too deep after ref expansion).
    """
    if not strict:
        return schema, False
    report = schema_mod.strict_report(schema)
    if report.non_strict:
        return schema, False
    return report.schema, True
