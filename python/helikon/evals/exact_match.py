"""The ``exact_match`` evaluator: the final response equals the case's ``expected``."""

from __future__ import annotations

from helikon.errors import EvalError
from helikon.evals._json import json_equal, parse_response, short
from helikon.evals.dataset import EvalCase
from helikon.evals.evaluator import CaseOutcome, Score

__all__ = ["ExactMatch"]


class ExactMatch:
    """Compares the final response with the case's ``expected`` value.

    * ``expected`` absent (or ``null``): **skipped**.
    * ``expected`` a string: passes iff the response equals it; with ``trim=True`` (the
      default) surrounding whitespace on both sides is ignored, nothing else is (case and
      inner whitespace count).
    * ``expected`` any other JSON value: the response is parsed as JSON (a response that is
      one fenced code block is unwrapped) and compared structurally: object key order does
      not matter, ``1`` equals ``1.0``, ``true`` does not equal ``1``. A response that is not
      JSON fails.

    The value is 1.0 when passed and 0.0 when failed.

    Example:
        >>> import asyncio
        >>> from helikon.evals import CaseOutcome, EvalCase
        >>> case = EvalCase(id="c", input="2+2?", expected={"answer": 4})
        >>> asyncio.run(ExactMatch().evaluate(case, CaseOutcome(final_response='{"answer": 4.0}')))
        Score(value=1.0, outcome=<ScoreOutcome.PASSED: 'passed'>, detail='')
    """

    def __init__(self, *, trim: bool = True) -> None:
        self.trim = trim

    @property
    def name(self) -> str:
        return "exact_match"

    async def evaluate(self, case: EvalCase, outcome: CaseOutcome) -> Score:
        expected = case.expected
        if expected is None:
            return Score.skipped("case has no 'expected'")
        got = outcome.final_response
        if isinstance(expected, str):
            same = expected.strip() == got.strip() if self.trim else expected == got
            if same:
                return Score.passed()
            return Score.failed(detail=f"expected {short(expected)}, got {short(got)}")
        try:
            value = parse_response(got)
        except EvalError as exc:
            return Score.failed(detail=str(exc))
        if json_equal(expected, value):
            return Score.passed()
        return Score.failed(detail=f"expected {short(expected)}, got {short(value)}")
