"""Evaluation: run an agent over a JSONL dataset, score each case, report and record.

* :class:`EvalDataset` / :class:`EvalCase`: JSONL cases (``input``, ``expected``,
  ``expected_tools``, ``metadata``).
* :class:`Evaluator`: the scoring protocol; built-ins :class:`ExactMatch`
  (``exact_match``), :class:`ToolUseTrajectory` (``tool_trajectory``),
  :class:`JsonSchema` (``json_schema``) and :class:`LlmJudge` (``llm_judge``).
* :class:`EvalRun`: runs the cases (fresh agent per case with ``agent_factory``, bounded
  concurrency, dataset order) into an :class:`EvalReport`.
* Trace sinks: :class:`SqliteTraceSink`, :class:`ParquetTraceSink`.

Deterministic replay: build each case's agent on a :class:`helikon.testing.MockModel`
loaded with ``MockModel.from_script_file(path, case=case.id)``.
"""

from helikon.errors import DatasetError, EvalError, TraceSinkError
from helikon.evals.dataset import EvalCase, EvalDataset
from helikon.evals.evaluator import CaseOutcome, Evaluator, Score, ScoreOutcome
from helikon.evals.exact_match import ExactMatch
from helikon.evals.json_schema import JsonSchema
from helikon.evals.llm_judge import JudgeVerdict, LlmJudge
from helikon.evals.report import CaseResult, EvalReport, EvaluatorResult, EvaluatorSummary
from helikon.evals.runner import EvalRun
from helikon.evals.sinks import ParquetTraceSink, SqliteTraceSink, TraceSink
from helikon.evals.trajectory import ToolUseTrajectory, TrajectoryMode

__all__ = [
    "CaseOutcome",
    "CaseResult",
    "DatasetError",
    "EvalCase",
    "EvalDataset",
    "EvalError",
    "EvalReport",
    "EvalRun",
    "Evaluator",
    "EvaluatorResult",
    "EvaluatorSummary",
    "ExactMatch",
    "JsonSchema",
    "JudgeVerdict",
    "LlmJudge",
    "ParquetTraceSink",
    "Score",
    "ScoreOutcome",
    "SqliteTraceSink",
    "ToolUseTrajectory",
    "TraceSink",
    "TraceSinkError",
    "TrajectoryMode",
]
