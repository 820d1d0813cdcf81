"""The ``tool_trajectory`` evaluator: the run's tool calls against ``expected_tools``."""

from __future__ import annotations

import enum
from collections import Counter

from helikon.evals.dataset import EvalCase
from helikon.evals.evaluator import CaseOutcome, Score

__all__ = ["ToolUseTrajectory", "TrajectoryMode"]


class TrajectoryMode(enum.StrEnum):
    """How :class:`ToolUseTrajectory` compares the calls with the expected names."""

    EXACT = "exact"
    IN_ORDER = "in_order"
    ANY_ORDER = "any_order"


class ToolUseTrajectory:
    """Compares the names of the run's tool calls with the case's ``expected_tools``.

    ``expected_tools`` absent: **skipped**. ``[]`` is a real expectation (see below).

    * ``exact()`` (the default): the call names equal ``expected_tools``, same order, no
      extra calls. Value 1.0 or 0.0; ``[]`` passes only when no tool was called.
    * ``in_order()``: ``expected_tools`` appears in order within the calls; other calls may
      come before, between and after. Value = longest common subsequence / expected length.
    * ``any_order()``: every expected name is called at least as often as it is listed, in
      any order; extra calls are allowed. Value = matched names / expected length.

    Passes iff the value is 1.0 (an empty expectation is 1.0 for the last two). Handoffs
    count as their ``transfer_to_<agent>`` calls.

    Example:
        >>> import asyncio
        >>> from helikon.core.items import ToolCall
        >>> from helikon.evals import CaseOutcome, EvalCase
        >>> case = EvalCase(id="c", input="x", expected_tools=["a", "b"])
        >>> out = CaseOutcome(final_response="", tool_calls=[
        ...     ToolCall(call_id=i, name=n) for i, n in (("1", "a"), ("2", "z"), ("3", "b"))])
        >>> asyncio.run(ToolUseTrajectory.in_order().evaluate(case, out)).outcome.value
        'passed'
        >>> asyncio.run(ToolUseTrajectory.exact().evaluate(case, out)).detail
        "expected ['a', 'b'], got ['a', 'z', 'b']"
    """

    def __init__(self, mode: TrajectoryMode = TrajectoryMode.EXACT) -> None:
        self.mode = TrajectoryMode(mode)

    @classmethod
    def exact(cls) -> ToolUseTrajectory:
        """Same names, same order, nothing else."""
        return cls(TrajectoryMode.EXACT)

    @classmethod
    def in_order(cls) -> ToolUseTrajectory:
        """The expected names as a subsequence of the calls."""
        return cls(TrajectoryMode.IN_ORDER)

    @classmethod
    def any_order(cls) -> ToolUseTrajectory:
        """The expected names among the calls, in any order."""
        return cls(TrajectoryMode.ANY_ORDER)

    @property
    def name(self) -> str:
        return "tool_trajectory"

    async def evaluate(self, case: EvalCase, outcome: CaseOutcome) -> Score:
        expected = case.expected_tools
        if expected is None:
            return Score.skipped("case has no 'expected_tools'")
        got = outcome.tool_names
        if self.mode is TrajectoryMode.EXACT:
            value = 1.0 if got == expected else 0.0
        elif not expected:
            value = 1.0
        elif self.mode is TrajectoryMode.IN_ORDER:
            value = _lcs(expected, got) / len(expected)
        else:
            value = sum((Counter(expected) & Counter(got)).values()) / len(expected)
        if value == 1.0:
            return Score.passed()
        return Score.failed(value, f"expected {expected}, got {got}")


def _lcs(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of ``a`` and ``b``."""
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, start=1):
            cur = row[j]
            row[j] = prev + 1 if x == y else max(row[j], row[j - 1])
            prev = cur
    return row[-1]
