"""Progress of ``helikon eval run`` on stderr: a rich progress bar on a terminal, one line
per finished case otherwise (``[3/40] groceries PASS 0.21s``), so stdout keeps only the report.
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from helikon.evals.report import CaseResult

__all__ = ["CaseProgress"]


class CaseProgress:
    """Shows each finished case; use as a context manager around the run.

    Args:
        err: the stderr console (its ``is_terminal`` picks the bar or the lines).
        total: the number of cases.
    """

    def __init__(self, err: Console, total: int) -> None:
        self.err = err
        self.total = total
        self.done = 0
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        if err.is_terminal:
            self._bar = Progress(
                TextColumn("eval"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                console=err,
                transient=True,
            )

    def __enter__(self) -> CaseProgress:
        if self._bar is not None:
            self._bar.start()
            self._task = self._bar.add_task("", total=self.total)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()

    def case_done(self, result: CaseResult) -> None:
        """Record one finished case (called by ``EvalRun(on_case=...)``)."""
        self.done += 1
        label = result.case.id or f"#{result.index}"
        verdict = "PASS" if result.passed else ("ERROR" if result.error else "FAIL")
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, advance=1, description=f"{label} {verdict}")
            return
        line = f"[{self.done}/{self.total}] {label} {verdict} {result.duration_ms / 1000:.2f}s"
        if result.error:
            line += f": {result.error}"
        color = "green" if verdict == "PASS" else "red"
        self.err.print(f"[{color}]{escape(line)}[/{color}]", highlight=False, soft_wrap=True)
