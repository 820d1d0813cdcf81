"""``EvalRun(on_case=...)`` sees each case as soon as it is scored."""

from __future__ import annotations

import pytest

from helikon import Agent
from helikon.errors import ConfigError
from helikon.evals import EvalCase, EvalRun, ExactMatch
from helikon.evals.report import CaseResult
from helikon.testing import Delay, MockModel, Text


async def test_on_case_gets_every_result_in_finishing_order() -> None:
    delays = {"slow": 0.3, "fast": 0.0}  # seconds
    seen: list[CaseResult] = []

    def build(case: EvalCase) -> Agent:
        return Agent(name="a", model=MockModel([[Delay(delays[case.id]), Text(case.id)]]))

    report = await EvalRun(
        dataset=[EvalCase(id="slow", input="q", expected="slow"), EvalCase(id="fast", input="q")],
        evaluators=[ExactMatch()],
        agent_factory=build,
        concurrency=2,
        on_case=seen.append,
    ).run()
    assert [r.case.id for r in seen] == ["fast", "slow"]
    assert [r.case.id for r in report.cases] == ["slow", "fast"]
    assert seen[1] is report.cases[0]


def test_on_case_must_be_callable() -> None:
    with pytest.raises(ConfigError, match=r"EvalRun\(on_case=...\) must be a function"):
        EvalRun(
            dataset=[EvalCase(id="x", input="q")],
            evaluators=[ExactMatch()],
            agent_factory=lambda c: Agent(name="a", model=MockModel([])),
            on_case=3,  # type: ignore[arg-type]
        )
