"""Permissions and hooks propagate from a run to the agents it hands off to.

The spec's permissions chapter: "Bypass and DontAsk both propagate to sub-agents", and the hook
registry "is shared (cloned) across handed-off and sub-agent contexts". helikon propagates the
whole permission set (mode, rules, guards, policy, approval handler) and the hooks.
"""

from __future__ import annotations

from typing import Any

from helikon import Agent, RunContext, ToolResult, tool
from helikon.core.hooks import Allow, HookEvent, HookRegistry, PreToolUse
from helikon.core.permissions import (
    AllowRule,
    DenyRule,
    PermissionDecision,
    PermissionDeny,
    PermissionMode,
)
from helikon.core.tool import ToolEffect
from helikon.testing import Call, MockModel, Text

ran: list[str] = []


@tool(effect=ToolEffect.WRITE)
def save_note(text: str) -> str:
    """Save a note."""
    ran.append(text)
    return "saved"


def _pair(worker_steps: list[list[Any]]) -> tuple[Agent[Any], MockModel]:
    worker_model = MockModel(worker_steps)
    worker = Agent(
        name="Notes desk",
        description="Saves notes.",
        model=worker_model,
        tools=[save_note],
    )
    front = Agent(
        name="front",
        model=MockModel([[Call("h1", "transfer_to_notes_desk", {})]]),
        handoffs=[worker],
    )
    return front, worker_model


def _worker_steps() -> list[list[Any]]:
    return [[Call("c1", "save_note", {"text": "hello"})], [Text("ok")]]


def _tool_reply(model: MockModel) -> str:
    """The text the worker's model got back for call c1."""
    (result,) = [
        m for m in model.requests[1].messages if isinstance(m, ToolResult) and m.call_id == "c1"
    ]
    return str(result.content[0].text)  # type: ignore[union-attr]


class DenyAll:
    def __init__(self) -> None:
        self.calls = 0

    async def check(self, ctx: RunContext[Any], tool: str, args: Any) -> PermissionDecision:
        self.calls += 1
        return PermissionDeny("policy says no")


async def test_dont_ask_reaches_the_handoff_target() -> None:
    ran.clear()
    front, worker_model = _pair(_worker_steps())
    ctx: RunContext[None] = RunContext.ephemeral().with_permission_mode(PermissionMode.DONT_ASK)
    result = await front.run("save hello", ctx=ctx)
    assert result.final_output == "ok"
    assert ran == []
    denied = [e for e in result.events if e.type == "permission_denied"]
    assert [e.tool for e in denied] == ["save_note"]  # type: ignore[attr-defined]
    assert "denied" in _tool_reply(worker_model).lower()


async def test_an_allow_rule_still_permits_under_dont_ask_in_the_target() -> None:
    ran.clear()
    front, _ = _pair(_worker_steps())
    ctx: RunContext[None] = (
        RunContext.ephemeral()
        .with_permission_mode(PermissionMode.DONT_ASK)
        .with_allow_rules([AllowRule.tool("save_note")])
    )
    result = await front.run("save hello", ctx=ctx)
    assert result.final_output == "ok"
    assert ran == ["hello"]


async def test_bypass_reaches_the_handoff_target_but_deny_rules_still_apply() -> None:
    ran.clear()
    policy = DenyAll()
    front, _ = _pair(_worker_steps())
    ctx: RunContext[None] = (
        RunContext.ephemeral()
        .with_permission_policy(policy)
        .with_permission_mode(PermissionMode.BYPASS)
    )
    result = await front.run("save hello", ctx=ctx)
    assert result.final_output == "ok"
    assert ran == ["hello"]
    assert policy.calls == 0  # Bypass decides before the policy

    ran.clear()
    front, worker_model = _pair(_worker_steps())
    result = await front.run("save hello", ctx=ctx.with_deny_rules([DenyRule.tool("save_note")]))
    assert ran == []
    assert [e.type for e in result.events].count("permission_denied") == 1
    assert "denied" in _tool_reply(worker_model).lower()


async def test_the_policy_decides_in_the_target_in_default_mode() -> None:
    ran.clear()
    policy = DenyAll()
    front, worker_model = _pair(_worker_steps())
    await front.run("save hello", ctx=RunContext.ephemeral().with_permission_policy(policy))
    assert ran == []
    assert policy.calls == 1
    assert "policy says no" in _tool_reply(worker_model)


async def test_run_level_hooks_see_the_targets_tool_calls() -> None:
    ran.clear()
    seen: list[tuple[str, str]] = []

    class Watch:
        name = "watch"

        async def on_event(self, ctx: RunContext[Any], event: HookEvent) -> Any:
            if isinstance(event, PreToolUse):
                seen.append((event.tool, "nested" if ctx.agent_depth else "top"))
            return Allow()

    hooks = HookRegistry()
    hooks.push(Watch())
    front, _ = _pair(_worker_steps())
    result = await front.run("save hello", ctx=RunContext.ephemeral().with_hooks(hooks))
    assert result.final_output == "ok"
    assert seen == [("save_note", "nested")]
