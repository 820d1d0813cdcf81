"""Tool errors: a tool call failed (the error is fed back to the model), and ``ModelRetry``,
which a tool or an output validator raises to send the model back.

Part of the one tree of :mod:`helikon.errors` (import from there).
"""

from __future__ import annotations

from helikon.errors.base import HelikonError

__all__ = ["InvalidArgs", "ModelRetry", "ToolDenied", "ToolError", "ToolOther"]


class ToolError(HelikonError):
    """A tool call failed. The text is fed back to the model as the call's result."""

    kind: str = "Other"


class InvalidArgs(ToolError, ValueError):
    """Arguments did not match the tool's schema. ``schema_errors`` lists each problem."""

    kind = "InvalidArgs"

    def __init__(self, schema_errors: list[str]) -> None:
        self.schema_errors = list(schema_errors)
        super().__init__("invalid arguments: " + "; ".join(self.schema_errors))


class ToolDenied(ToolError, PermissionError):
    """The tool refused: a safety boundary or an unsatisfiable precondition."""

    kind = "Denied"

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"denied: {reason}")


class ToolOther(ToolError):
    """Any other tool failure."""

    kind = "Other"


class ModelRetry(HelikonError):
    """Raise from a tool or an output validator to send the model back with ``reason``.

    From a tool, the reason is the call's (error) result and the model may call again; from
    an output validator, the reason is listed in the repair message and the model answers
    again. Bounded by ``retries`` (per tool, else per agent; default one), after which the run
    fails with :class:`ToolRetriesExceeded` or :class:`OutputRetriesExceeded`.

    Example:
        >>> raise ModelRetry("the date must be in the future")  # doctest: +SKIP
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
