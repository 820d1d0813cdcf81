"""Eval results: per-evaluator, per-case and the run's :class:`EvalReport`."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from helikon.evals.dataset import EvalCase
from helikon.evals.evaluator import CaseOutcome, Score, ScoreOutcome
from helikon.sessions.events import SessionEvent

__all__ = ["CaseResult", "EvalReport", "EvaluatorResult", "EvaluatorSummary"]


class EvaluatorResult(BaseModel):
    """One evaluator on one case: its ``score``, or the ``error`` it raised."""

    model_config = ConfigDict(frozen=True)

    evaluator: str
    score: Score | None = None
    error: str | None = None

    @property
    def failed(self) -> bool:
        """The evaluator failed the case or could not score it."""
        return self.error is not None or (
            self.score is not None and self.score.outcome is ScoreOutcome.FAILED
        )


class CaseResult(BaseModel):
    """One case: the agent's ``outcome`` and the evaluators' results, or the run ``error``.

    ``session_events`` is the run as a session stores it (also for a failed run; not part
    of the JSON form). A case **fails** when its run failed (``error``; no evaluator ran),
    when an evaluator returned ``FAILED``, or when an evaluator raised.
    """

    model_config = ConfigDict(frozen=True)

    index: int
    case: EvalCase
    outcome: CaseOutcome | None = None
    results: list[EvaluatorResult] = Field(default_factory=list)
    error: str | None = None
    duration_ms: float = 0.0
    session_events: list[SessionEvent] = Field(default_factory=list, exclude=True)

    @property
    def passed(self) -> bool:
        """No run error and no evaluator failed or errored."""
        return self.error is None and not any(r.failed for r in self.results)


class EvaluatorSummary(BaseModel):
    """One evaluator across the run. ``mean`` averages the passed and failed scores (skips
    and errors excluded); ``None`` when there is none."""

    model_config = ConfigDict(frozen=True)

    evaluator: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0
    mean: float | None = None


class EvalReport(BaseModel):
    """A finished eval run, cases in dataset order.

    ``model_dump_json()`` is the ``--json`` form (agent events are left out of it).
    """

    model_config = ConfigDict(frozen=True)

    run_id: str
    started_at: datetime
    finished_at: datetime
    evaluators: list[str]
    cases: list[CaseResult]

    def passed(self) -> bool:
        """True iff the run has at least one case and no case failed (see
        :class:`CaseResult`). A run with no case is not passed: an empty dataset must not
        turn a CI gate green."""
        return bool(self.cases) and all(c.passed for c in self.cases)

    @property
    def failed_cases(self) -> list[CaseResult]:
        """The cases that failed, in dataset order."""
        return [c for c in self.cases if not c.passed]

    def summary(self) -> list[EvaluatorSummary]:
        """Per-evaluator counts and mean, in evaluator order."""
        out = []
        for name in self.evaluators:
            counts = {o: 0 for o in ScoreOutcome}
            values: list[float] = []
            errors = 0
            for case in self.cases:
                for r in case.results:
                    if r.evaluator != name:
                        continue
                    if r.score is None:
                        errors += 1
                        continue
                    counts[r.score.outcome] += 1
                    if r.score.outcome is not ScoreOutcome.SKIPPED:
                        values.append(r.score.value)
            out.append(
                EvaluatorSummary(
                    evaluator=name,
                    passed=counts[ScoreOutcome.PASSED],
                    failed=counts[ScoreOutcome.FAILED],
                    skipped=counts[ScoreOutcome.SKIPPED],
                    errors=errors,
                    mean=sum(values) / len(values) if values else None,
                )
            )
        return out

    def mean_score(self) -> float | None:
        """The mean of every passed and failed score (``--fail-under`` compares it), or
        ``None`` when no evaluator scored anything."""
        values = [
            r.score.value
            for c in self.cases
            for r in c.results
            if r.score is not None and r.score.outcome is not ScoreOutcome.SKIPPED
        ]
        return sum(values) / len(values) if values else None

    def render_table(self) -> str:
        """A plain-text table for terminals: one row per case, then the summary."""
        names = self.evaluators
        header = ["case", "result", *names]
        rows = [header]
        for c in self.cases:
            cells = {r.evaluator: _cell(r) for r in c.results}
            status = "PASS" if c.passed else "FAIL"
            if c.error is not None:
                status = f"ERROR: {_cut(c.error, 60)}"
            rows.append([c.case.id, status, *(cells.get(n, "-") for n in names)])
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        lines = [
            "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
            for r in rows
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        failed = len(self.failed_cases)
        lines.append("")
        lines.append(f"{len(self.cases) - failed}/{len(self.cases)} cases passed")
        if not self.cases:
            lines.append("no cases were run, so the run does not pass")
        for s in self.summary():
            mean = "-" if s.mean is None else f"{s.mean:.3f}"
            lines.append(
                f"{s.evaluator}: {s.passed} passed, {s.failed} failed, {s.skipped} skipped, "
                f"{s.errors} errors, mean {mean}"
            )
        return "\n".join(lines)


def _cell(r: EvaluatorResult) -> str:
    if r.score is None:
        return "error"
    if r.score.outcome is ScoreOutcome.SKIPPED:
        return "skip"
    return f"{r.score.outcome.value} {r.score.value:.2f}"


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
