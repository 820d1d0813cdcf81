"""The :class:`TraceSink` protocol and the flat rows every sink writes.

A sink records a finished run once, after every case is done, cases in dataset order. The
rows are the same for every backend (SQLite tables, Parquet files):

* run: ``run_id, started_at, finished_at, case_count, passed_count, passed, mean_score,
  evaluators_json, summary_json``
* case: ``run_id, case_index, case_id, line, input, expected_json, expected_tools_json,
  metadata_json, passed, error, final_response, tool_calls_json, agent, input_tokens,
  output_tokens, duration_ms``
* score (one per case and evaluator): ``run_id, case_index, case_id, evaluator, outcome,
  value, detail, error``
* event (the case's run in the canonical session-event form, as a session stores it):
  ``run_id, case_index, case_id, seq, type, ts, event_json``
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from helikon.sessions.events import event_to_json

if TYPE_CHECKING:
    from helikon.evals.report import EvalReport

__all__ = ["TraceSink", "case_rows", "event_rows", "run_row", "score_rows"]


@runtime_checkable
class TraceSink(Protocol):
    """Records a finished eval run."""

    async def record(self, report: EvalReport) -> None:
        """Write ``report``; raise on failure (the run wraps it in ``TraceSinkError``)."""
        ...


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def run_row(report: EvalReport) -> dict[str, Any]:
    """The run's row."""
    return {
        "run_id": report.run_id,
        "started_at": report.started_at,
        "finished_at": report.finished_at,
        "case_count": len(report.cases),
        "passed_count": sum(1 for c in report.cases if c.passed),
        "passed": report.passed(),
        "mean_score": report.mean_score(),
        "evaluators_json": _json(report.evaluators),
        "summary_json": _json([s.model_dump(mode="json") for s in report.summary()]),
    }


def case_rows(report: EvalReport) -> list[dict[str, Any]]:
    """One row per case, in dataset order."""
    rows = []
    for c in report.cases:
        out = c.outcome
        rows.append(
            {
                "run_id": report.run_id,
                "case_index": c.index,
                "case_id": c.case.id,
                "line": c.case.line,
                "input": c.case.input,
                "expected_json": None if c.case.expected is None else _json(c.case.expected),
                "expected_tools_json": None
                if c.case.expected_tools is None
                else _json(c.case.expected_tools),
                "metadata_json": _json(c.case.metadata),
                "passed": c.passed,
                "error": c.error,
                "final_response": None if out is None else out.final_response,
                "tool_calls_json": None if out is None else _json(out.tool_names),
                "agent": None if out is None else out.agent,
                "input_tokens": None if out is None else out.usage.input_tokens,
                "output_tokens": None if out is None else out.usage.output_tokens,
                "duration_ms": c.duration_ms,
            }
        )
    return rows


def score_rows(report: EvalReport) -> list[dict[str, Any]]:
    """One row per case and evaluator, in dataset then evaluator order (none for a case
    whose run failed: no evaluator ran; its case row has the error)."""
    return [
        {
            "run_id": report.run_id,
            "case_index": c.index,
            "case_id": c.case.id,
            "evaluator": r.evaluator,
            "outcome": None if r.score is None else r.score.outcome.value,
            "value": None if r.score is None else r.score.value,
            "detail": None if r.score is None else r.score.detail,
            "error": r.error,
        }
        for c in report.cases
        for r in c.results
    ]


def event_rows(report: EvalReport) -> list[dict[str, Any]]:
    """One row per session event, by case then position (``seq`` from 0 per case)."""
    return [
        {
            "run_id": report.run_id,
            "case_index": c.index,
            "case_id": c.case.id,
            "seq": seq,
            "type": ev.type,
            "ts": ev.ts,
            "event_json": event_to_json(ev),
        }
        for c in report.cases
        for seq, ev in enumerate(c.session_events)
    ]
