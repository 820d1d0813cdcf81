"""The shared permission-pipeline vectors (guard_rules.json pipeline and mode cases)."""

from __future__ import annotations

from typing import Any

import pytest

from helikon import RunContext, ToolEffect
from helikon.permissions import (
    AllowRule,
    ApprovalAllow,
    ApprovalDeny,
    AskUser,
    DenyRule,
    PermissionAllow,
    PermissionDeny,
    PermissionMode,
    authorize,
)
from tests.conftest import load_shared_json

VECTORS = load_shared_json("conformance/guard_rules.json")


class _Policy:
    def __init__(self, kind: str) -> None:
        self.kind = kind

    async def check(self, ctx: RunContext[Any], tool: str, args: Any) -> Any:
        if self.kind == "must_not_be_called":
            raise AssertionError("the policy must not be consulted here")
        if self.kind == "ask":
            return AskUser(f"Allow {tool}?")
        if self.kind == "deny":
            return PermissionDeny("policy says no")
        return PermissionAllow()


class _Approver:
    def __init__(self, kind: str) -> None:
        self.kind = kind

    async def decide(self, tool: str, prompt: str, args: Any) -> Any:
        return ApprovalAllow() if self.kind == "allow" else ApprovalDeny("approver says no")


def _rule(cls: Any, spec: dict[str, str]) -> Any:
    ((kind, value),) = spec.items()
    return getattr(cls, kind)(value)


def _ctx(spec: dict[str, Any]) -> RunContext[Any]:
    ctx: RunContext[Any] = RunContext.ephemeral(None)
    ctx = ctx.with_permission_mode(PermissionMode(spec.get("mode", "default")))
    ctx = ctx.with_deny_rules([_rule(DenyRule, r) for r in spec.get("deny_rules", [])])
    ctx = ctx.with_allow_rules([_rule(AllowRule, r) for r in spec.get("allow_rules", [])])
    if "policy" in spec:
        ctx = ctx.with_permission_policy(_Policy(spec["policy"]))
    if "approval" in spec:
        ctx = ctx.with_approval_handler(_Approver(spec["approval"]))
    if spec.get("default_guards") is False:
        ctx = ctx.without_default_guards()
    return ctx


@pytest.mark.parametrize("case", VECTORS["pipeline_cases"], ids=lambda c: f"{c['tool']}-{c['ctx']}")
async def test_pipeline(case: dict[str, Any]) -> None:
    decision = await authorize(
        _ctx(case["ctx"]), case["tool"], ToolEffect(case["effect"]), case["args"]
    )
    got = "allow" if isinstance(decision, PermissionAllow) else "deny"
    assert got == case["expect_decision"], decision


@pytest.mark.parametrize(
    "case", VECTORS["mode_transition_cases"], ids=lambda c: "-".join(c["steps"])
)
def test_mode_changes_tighten_only(case: dict[str, Any]) -> None:
    ctx: RunContext[Any] = RunContext.ephemeral(None)
    for step in case["steps"]:
        ctx = ctx.with_permission_mode(PermissionMode(step))
    assert ctx.permissions.mode.value == case["expect_mode"]
