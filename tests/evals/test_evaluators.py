"""The four built-in evaluators: pass, fail, skip and edge cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pydantic
import pytest

from helikon.core.items import ToolCall
from helikon.errors import ConfigError
from helikon.evals import (
    CaseOutcome,
    EvalCase,
    EvalError,
    ExactMatch,
    JsonSchema,
    LlmJudge,
    Score,
    ScoreOutcome,
    ToolUseTrajectory,
)
from helikon.testing import MockModel, Text

P, F, S = ScoreOutcome.PASSED, ScoreOutcome.FAILED, ScoreOutcome.SKIPPED


def case(**kw: Any) -> EvalCase:
    return EvalCase(id="c", input="q", **kw)


def out(text: str = "", tools: tuple[str, ...] = ()) -> CaseOutcome:
    calls = [ToolCall(call_id=f"c{i}", name=n) for i, n in enumerate(tools)]
    return CaseOutcome(final_response=text, tool_calls=calls)


def test_score_is_bounded() -> None:
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(pydantic.ValidationError, match="value"):
            Score.passed(bad)


# --------------------------------------------------------------------------- exact_match


@pytest.mark.parametrize(
    ("expected", "response", "outcome", "value"),
    [
        ("Paris", "Paris", P, 1.0),
        ("Paris", "  Paris\n", P, 1.0),  # surrounding whitespace is trimmed
        ("Paris", "paris", F, 0.0),  # case counts
        ("Paris", "Paris, France", F, 0.0),
        ("a  b", "a b", F, 0.0),  # inner whitespace counts
        ({"a": 1, "b": [True]}, '{"b": [true], "a": 1.0}', P, 1.0),
        ({"a": 1}, '```json\n{"a": 1}\n```', P, 1.0),
        ({"a": 1}, '{"a": true}', F, 0.0),  # true is not 1
        ([1, 2], "[2, 1]", F, 0.0),
        (4, "4", P, 1.0),
        (4, "four", F, 0.0),
        (False, "false", P, 1.0),
        ("", "", P, 1.0),
    ],
)
async def test_exact_match(
    expected: Any, response: str, outcome: ScoreOutcome, value: float
) -> None:
    score = await ExactMatch().evaluate(case(expected=expected), out(response))
    assert (score.outcome, score.value) == (outcome, value)


async def test_exact_match_details_and_skip() -> None:
    score = await ExactMatch().evaluate(case(expected="Paris"), out("Rome"))
    assert score.detail == "expected 'Paris', got 'Rome'"
    score = await ExactMatch().evaluate(case(expected={"a": 1}), out("nope"))
    assert score.detail.startswith("final response is not JSON (Expecting value): 'nope'")
    assert await ExactMatch().evaluate(case(), out("x")) == Score.skipped("case has no 'expected'")


async def test_exact_match_without_trim() -> None:
    score = await ExactMatch(trim=False).evaluate(case(expected="Paris"), out("Paris\n"))
    assert score.outcome is F


# --------------------------------------------------------------------------- tool_trajectory


@pytest.mark.parametrize(
    ("mode", "expected", "calls", "outcome", "value"),
    [
        ("exact", ["a", "b"], ("a", "b"), P, 1.0),
        ("exact", ["a", "b"], ("b", "a"), F, 0.0),
        ("exact", ["a", "b"], ("a", "b", "c"), F, 0.0),
        ("exact", [], (), P, 1.0),
        ("exact", [], ("a",), F, 0.0),
        ("in_order", ["a", "b"], ("x", "a", "y", "b", "z"), P, 1.0),
        ("in_order", ["a", "b", "c", "d"], ("b", "a", "c"), F, 0.5),
        ("in_order", ["a", "a"], ("a",), F, 0.5),
        ("in_order", [], ("a",), P, 1.0),
        ("any_order", ["a", "b"], ("b", "x", "a"), P, 1.0),
        ("any_order", ["a", "a", "b", "c"], ("a", "b"), F, 0.5),
        ("any_order", ["a"], (), F, 0.0),
        ("any_order", [], (), P, 1.0),
    ],
)
async def test_trajectory(
    mode: str, expected: list[str], calls: tuple[str, ...], outcome: ScoreOutcome, value: float
) -> None:
    ev = getattr(ToolUseTrajectory, mode)()
    score = await ev.evaluate(case(expected_tools=expected), out(tools=calls))
    assert (score.outcome, score.value) == (outcome, value)
    if outcome is F:
        assert score.detail == f"expected {expected}, got {list(calls)}"


async def test_trajectory_skips_without_expected_tools() -> None:
    score = await ToolUseTrajectory().evaluate(case(expected="x"), out(tools=("a",)))
    assert (score.outcome, score.value, score.detail) == (S, 0.0, "case has no 'expected_tools'")


# --------------------------------------------------------------------------- json_schema

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}, "tags": {"type": "array"}},
    "required": ["answer"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("response", "outcome", "detail"),
    [
        ('{"answer": 4}', P, ""),
        ('```json\n{"answer": 4, "tags": []}\n```', P, ""),
        ('{"answer": "4"}', F, "/answer: '4' is not of type 'integer'"),
        (
            '{"tags": 1, "x": 2}',
            F,
            "/: 'answer' is a required property; "
            "/: Additional properties are not allowed ('x' was unexpected); "
            "/tags: 1 is not of type 'array'",
        ),
        ("four", F, "final response is not JSON (Expecting value): 'four'"),
    ],
)
async def test_json_schema(response: str, outcome: ScoreOutcome, detail: str) -> None:
    score = await JsonSchema(SCHEMA).evaluate(case(), out(response))
    assert (score.outcome, score.value, score.detail) == (
        outcome,
        1.0 if outcome is P else 0.0,
        detail,
    )


async def test_json_schema_lists_three_errors_then_counts(tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"type": "array", "items": {"type": "string"}}))
    score = await JsonSchema(path).evaluate(case(), out("[1, 2, 3, 4, 5]"))
    assert score.detail == (
        "/0: 1 is not of type 'string'; /1: 2 is not of type 'string'; "
        "/2: 3 is not of type 'string'; ... and 2 more"
    )


def test_json_schema_rejects_bad_schemas(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="invalid JSON Schema"):
        JsonSchema({"type": "nonsense"})
    with pytest.raises(ConfigError, match="cannot read JSON Schema"):
        JsonSchema(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ConfigError, match="is not valid JSON"):
        JsonSchema(tmp_path / "bad.json")


# --------------------------------------------------------------------------- llm_judge


def judge(*replies: str, threshold: float = 0.7) -> tuple[LlmJudge, MockModel]:
    model = MockModel([[Text(r)] for r in replies])
    return LlmJudge(model, rubric="Mentions the 30-day window.", threshold=threshold), model


async def test_llm_judge_passes_at_threshold_and_fails_below() -> None:
    ev, model = judge('{"score": 0.7, "reason": "ok"}', '{"score": 0.69, "reason": "meh"}')
    c = case(expected="Within 30 days.")
    assert await ev.evaluate(c, out("30 days")) == Score.passed(0.7, "ok")
    assert await ev.evaluate(c, out("soon")) == Score.failed(0.69, "meh")
    model.assert_exhausted()
    system, user = model.requests[0].messages
    assert "Mentions the 30-day window." in system.content[0].text
    assert user.content[0].text == (
        "Question:\nq\n\nReference answer:\nWithin 30 days.\n\nAnswer to grade:\n30 days"
    )


async def test_llm_judge_bad_verdicts_are_eval_errors() -> None:
    ev, _ = judge('{"score": 1.5, "reason": "x"}')
    with pytest.raises(EvalError, match=r"judge score 1.5 is outside \[0, 1\]"):
        await ev.evaluate(case(), out("a"))
    ev, _ = judge("not json", "still not json")  # the loop's repair turn gets a second try
    with pytest.raises(EvalError, match="judge run failed"):
        await ev.evaluate(case(), out("a"))


def test_llm_judge_config_is_checked() -> None:
    with pytest.raises(ConfigError, match="rubric"):
        LlmJudge(MockModel(), rubric=" ")
    with pytest.raises(ConfigError, match="threshold"):
        LlmJudge(MockModel(), rubric="r", threshold=1.1)


def test_names_are_the_cli_names() -> None:
    names = [
        ExactMatch().name,
        ToolUseTrajectory().name,
        JsonSchema({}).name,
        LlmJudge(MockModel(), rubric="r").name,
    ]
    assert names == ["exact_match", "tool_trajectory", "json_schema", "llm_judge"]
