"""The ``llm_judge`` evaluator: a model grades the final response against a rubric."""

from __future__ import annotations

import json

from pydantic import BaseModel

from helikon.core.agent import Agent
from helikon.core.model import Model
from helikon.errors import ConfigError, EvalError, RunError
from helikon.evals.dataset import EvalCase
from helikon.evals.evaluator import CaseOutcome, Score

__all__ = ["JudgeVerdict", "LlmJudge"]

_INSTRUCTIONS = """\
You grade an AI assistant's answer against a rubric.
Rubric:
{rubric}

Reply with only a JSON object {{"score": <number from 0 to 1>, "reason": "<one sentence>"}}.
1 means the answer fully meets the rubric, 0 that it does not meet it at all."""


class JudgeVerdict(BaseModel):
    """The judge model's reply: a ``score`` in ``[0, 1]`` and its ``reason``."""

    score: float
    reason: str = ""


class LlmJudge:
    """Asks a model to grade the final response against ``rubric``.

    The judge runs as a helikon :class:`~helikon.Agent` with the rubric as its instructions
    and :class:`JudgeVerdict` as its output type; the user turn holds the case input, the
    expected answer (when the case has one) and the response. The score is the verdict's;
    the case passes iff ``score >= threshold``. Needs no case field, so it never skips.

    The judge model is shared by every case: with a stateful
    :class:`~helikon.testing.MockModel` keep the run's concurrency at 1 so the verdicts
    line up with the dataset order.

    Args:
        model: the judge model.
        rubric: what a good answer is.
        threshold: the passing score, in ``[0, 1]`` (default 0.7).

    Raises:
        ConfigError: an empty rubric or a threshold outside ``[0, 1]``.

    Example:
        >>> import asyncio
        >>> from helikon.evals import CaseOutcome, EvalCase
        >>> from helikon.testing import MockModel, Text
        >>> judge = LlmJudge(MockModel([[Text('{"score": 0.5, "reason": "vague"}')]]),
        ...                  rubric="Names the refund window.")
        >>> score = asyncio.run(judge.evaluate(EvalCase(id="c", input="Refund?"),
        ...                                    CaseOutcome(final_response="Maybe.")))
        >>> score.value, score.outcome.value, score.detail
        (0.5, 'failed', 'vague')
    """

    def __init__(self, model: Model, *, rubric: str, threshold: float = 0.7) -> None:
        if not isinstance(rubric, str) or not rubric.strip():
            raise ConfigError("LlmJudge(rubric=...) must be a non-empty string")
        if isinstance(threshold, bool) or not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"LlmJudge(threshold=...) must be in [0, 1], got {threshold!r}")
        self.model = model
        self.rubric = rubric
        self.threshold = float(threshold)
        self._agent = Agent(
            name="llm_judge",
            model=model,
            instructions=_INSTRUCTIONS.format(rubric=rubric),
            output_type=JudgeVerdict,
        )

    @property
    def name(self) -> str:
        return "llm_judge"

    def prompt(self, case: EvalCase, outcome: CaseOutcome) -> str:
        """The user turn sent to the judge."""
        parts = [f"Question:\n{case.input}"]
        if case.expected is not None:
            exp = case.expected
            shown = exp if isinstance(exp, str) else json.dumps(exp, ensure_ascii=False)
            parts.append(f"Reference answer:\n{shown}")
        parts.append(f"Answer to grade:\n{outcome.final_response}")
        return "\n\n".join(parts)

    async def evaluate(self, case: EvalCase, outcome: CaseOutcome) -> Score:
        """Raises:
        EvalError: the judge run failed or its score is outside ``[0, 1]``.
        """
        try:
            result = await self._agent.run(self.prompt(case, outcome))
        except RunError as exc:
            raise EvalError(f"judge run failed: {exc}") from exc
        verdict = result.final_output
        assert isinstance(verdict, JudgeVerdict)
        if not 0.0 <= verdict.score <= 1.0:
            raise EvalError(f"judge score {verdict.score!r} is outside [0, 1]")
        if verdict.score >= self.threshold:
            return Score.passed(verdict.score, verdict.reason)
        return Score.failed(verdict.score, verdict.reason)
