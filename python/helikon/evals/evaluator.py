"""The :class:`Evaluator` protocol, what it scores (:class:`CaseOutcome`) and its
:class:`Score`.

An evaluator turns one case and the agent's outcome for it into a :class:`Score`: a value in
``[0, 1]`` and a :class:`ScoreOutcome`. ``SKIPPED`` is not a failure: an evaluator whose
required case field is absent (``expected``, ``expected_tools``) skips, and skips count
toward neither pass/fail nor the mean, so a dataset without the field shows up as a visible
skip count. An evaluator that cannot score raises (ideally :class:`EvalError`); the run
records that as the evaluator's error for the case.
"""

from __future__ import annotations

import enum
import math
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from helikon.core.events import AgentEvent
from helikon.core.items import ToolCall
from helikon.core.usage import Usage
from helikon.evals.dataset import EvalCase

__all__ = ["CaseOutcome", "Evaluator", "Score", "ScoreOutcome"]


class ScoreOutcome(enum.StrEnum):
    """The verdict of one evaluator on one case."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


class Score(BaseModel):
    """A value in ``[0, 1]`` plus an outcome and a human-readable ``detail``.

    Example:
        >>> Score.passed().value, Score.failed(0.25, "1 of 4").outcome.value
        (1.0, 'failed')
        >>> Score.skipped("no expected").value
        0.0
    """

    model_config = ConfigDict(frozen=True)

    value: float = Field(ge=0.0, le=1.0)
    outcome: ScoreOutcome
    detail: str = ""

    @field_validator("value")
    @classmethod
    def _finite(cls, v: float) -> float:
        if math.isnan(v):
            raise ValueError("a score value is a number in [0, 1], not NaN")
        return v

    @classmethod
    def passed(cls, value: float = 1.0, detail: str = "") -> Score:
        """A passing score."""
        return cls(value=value, outcome=ScoreOutcome.PASSED, detail=detail)

    @classmethod
    def failed(cls, value: float = 0.0, detail: str = "") -> Score:
        """A failing score."""
        return cls(value=value, outcome=ScoreOutcome.FAILED, detail=detail)

    @classmethod
    def skipped(cls, detail: str = "") -> Score:
        """A skip (value 0, counted nowhere)."""
        return cls(value=0.0, outcome=ScoreOutcome.SKIPPED, detail=detail)


class CaseOutcome(BaseModel):
    """What the agent did on one case (only built for runs that completed).

    Attributes:
        final_response: the text of the last assistant message.
        tool_calls: every tool call the run made, in order (handoffs included, as their
            ``transfer_to_<agent>`` calls).
        agent: the agent that gave the final response.
        usage: the run's token usage.
        events: the run's agent events (not part of the JSON form).
    """

    model_config = ConfigDict(frozen=True)

    final_response: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    agent: str = ""
    usage: Usage = Field(default_factory=Usage)
    events: list[AgentEvent] = Field(default_factory=list, exclude=True)

    @property
    def tool_names(self) -> list[str]:
        """The tool calls' names, in order (the trajectory)."""
        return [c.name for c in self.tool_calls]


@runtime_checkable
class Evaluator(Protocol):
    """Scores one case's outcome.

    ``name`` identifies the evaluator in reports and sinks (unique within a run).
    """

    @property
    def name(self) -> str: ...

    async def evaluate(self, case: EvalCase, outcome: CaseOutcome) -> Score:
        """Score ``outcome``; raise (e.g. :class:`EvalError`) when it cannot be scored."""
        ...
