"""The evaluation harness's exceptions (to move into :mod:`helikon.errors` when wired up).

::

    HelikonError
    ├── DatasetError (also ValueError)   a JSONL dataset line is invalid
    ├── EvalError                        an evaluator could not score a case
    └── TraceSinkError                   a trace sink could not record a finished run
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from helikon.errors import HelikonError

if TYPE_CHECKING:
    from helikon.evals.report import EvalReport

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
        report: the run's complete report, so no result is lost.
        sink: the name of the sink's class.
    """

    def __init__(self, message: str, *, report: EvalReport, sink: str) -> None:
        super().__init__(f"{sink}: {message}")
        self.report = report
        self.sink = sink
