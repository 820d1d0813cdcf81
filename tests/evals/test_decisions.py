"""Eval cases may script the answers a person gives when a call asks for approval."""

from __future__ import annotations

from typing import Any

import pytest

from helikon import Agent, RunContext, tool
from helikon.core.permissions import AskUser, PermissionAllow, PermissionDecision
from helikon.errors import DatasetError
from helikon.evals import EvalDataset, EvalRun
from helikon.testing import Call, MockModel, Text

RAN: list[int] = []


@tool
def refund(amount: int) -> str:
    """Refund an amount."""
    RAN.append(amount)
    return f"refunded {amount}"


class _AsksForRefunds:
    async def check(self, ctx: RunContext[Any], tool: str, args: Any) -> PermissionDecision:
        return AskUser("refunds need approval") if tool == "refund" else PermissionAllow()


def _factory(case: Any) -> Agent:
    scripts = {
        "approve": [[Call("c1", "refund", {"amount": 40})], [Text("Refunded 40.")]],
        "deny": [[Call("c1", "refund", {"amount": 40})], [Text("Not refunded.")]],
        "edit": [[Call("c1", "refund", {"amount": 400})], [Text("Refunded 40 instead.")]],
        "two": [
            [Call("c1", "refund", {"amount": 1})],
            [Call("c2", "refund", {"amount": 2})],
            [Text("Two refunds.")],
        ],
        "missing": [[Call("c1", "refund", {"amount": 5})], [Text("unused")]],
        "plain": [[Call("c1", "refund", {"amount": 7})], [Text("Denied inline.")]],
    }[case.id]
    return Agent(name="support", model=MockModel(scripts), tools=[refund])


def _ctx(case: Any) -> RunContext[Any]:
    return RunContext.ephemeral().with_permission_policy(_AsksForRefunds())


JSONL = "\n".join(
    [
        '{"id": "approve", "input": "refund", "decisions": {"c1": {"decision": "approve"}}}',
        '{"id": "deny", "input": "refund", "decisions": {"c1": {"decision": "deny", '
        '"reason": "too much"}}}',
        '{"id": "edit", "input": "refund", "decisions": {"c1": {"decision": "edit", '
        '"args": {"amount": 40}}}}',
        '{"id": "two", "input": "refund", "decisions": {"c1": {"decision": "approve"}, '
        '"c2": {"decision": "approve"}}}',
        '{"id": "missing", "input": "refund", "decisions": {"c9": {"decision": "approve"}}}',
        '{"id": "plain", "input": "refund"}',
    ]
)


async def test_scripted_decisions_answer_each_pause_and_the_case_goes_on() -> None:
    RAN.clear()
    run = EvalRun(
        dataset=EvalDataset.from_jsonl_str(JSONL),
        agent_factory=_factory,
        ctx_factory=_ctx,
        evaluators=[],
    )
    report = await run.run()
    by_id = {r.case.id: r for r in report.cases}
    assert by_id["approve"].outcome.final_response == "Refunded 40."  # type: ignore[union-attr]
    assert by_id["deny"].outcome.final_response == "Not refunded."  # type: ignore[union-attr]
    assert by_id["edit"].outcome.final_response == "Refunded 40 instead."  # type: ignore[union-attr]
    assert by_id["two"].outcome.final_response == "Two refunds."  # type: ignore[union-attr]
    # every leg's tool calls count for the case (trajectory evaluators see them all)
    assert [c.call_id for c in by_id["two"].outcome.tool_calls] == ["c1", "c2"]  # type: ignore[union-attr]
    denied = [
        e.item.content[0].text  # type: ignore[union-attr]
        for e in by_id["deny"].outcome.events  # type: ignore[union-attr]
        if e.type == "tool_output_item"
    ]
    assert denied == ["approval denied: too much"]
    # a call that asks without a scripted answer fails the case; it never runs
    assert by_id["missing"].error is not None
    assert "call(s) c1 wait for approval" in by_id["missing"].error
    # without decisions the case runs as before: no handler, the ask is a denial
    assert by_id["plain"].outcome.final_response == "Denied inline."  # type: ignore[union-attr]
    assert RAN == [40, 40, 1, 2]


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        ('["approve"]', "must map call ids to answers"),
        ('{"c1": "approve"}', "a decision is an object"),
        ('{"c1": {"decision": "allow"}}', "must be 'approve', 'deny' or 'edit'"),
        ('{"c1": {"decision": "approve", "remember": "yes"}}', "remember must be true or false"),
        ('{"c1": {"decision": "edit", "args": 3}}', "c1"),
    ],
)
def test_bad_decisions_are_refused_at_load_naming_the_field(decisions: str, message: str) -> None:
    with pytest.raises(DatasetError) as err:
        EvalDataset.from_jsonl_str('{"input": "x", "decisions": ' + decisions + "}")
    assert message in str(err.value)
    assert err.value.field is not None and err.value.field.startswith("decisions")
