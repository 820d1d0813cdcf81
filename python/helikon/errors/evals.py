"""Evaluation errors: datasets, evaluators and trace sinks.

Part of the one tree of :mod:`helikon.errors` (import from there).
"""

from __future__ import annotations

from typing import Any

from helikon.errors.base import HelikonError

__all__ = ["DatasetError", "EvalError", "TraceSinkError"]


class DatasetError(HelikonError, ValueError):
    """A dataset could not be loaded.

    Attributes:
        source: the file (or ``"<string>"``) the dataset came from.
        line: the 1-based line at fault, or ``None`` for a whole-file problem.
        field: the case field at fault (``"input"``, ``"expected_tools[1]"``...), or ``None``.
    """

    def __init__(
        self, message: str, *, source: str, line: int | None = None, field: str | None = None
    ) -> None:
        where = source if line is None else f"{source}:{line}"
        if field is not None:
            where = f"{where}: field {field!r}"
        super().__init__(f"{where}: {message}")
        self.source = source
        self.line = line
        self.field = field


class EvalError(HelikonError):
    """An evaluator could not score a case (e.g. a judge model's reply was not a verdict).

    The run records it as that evaluator's error for that case; the other evaluators and
    cases are unaffected.
    """


class TraceSinkError(HelikonError):
    """A trace sink could not record a finished run.

    Attributes:
        report: the run's complete :class:`~helikon.evals.EvalReport`, so no result is lost.
        sink: the name of the sink's class.
    """

    def __init__(self, message: str, *, report: Any, sink: str) -> None:
        super().__init__(f"{sink}: {message}")
        self.report = report
        self.sink = sink
