"""Every tool call's permission decision is in the session log (``permission_decided``).

One run per way a call gets decided, each recorded into a session; the test reads the log's
decision events back and checks every field, then checks that :mod:`helikon.audit` reports
who decided (not an inference from the result text).
"""

from __future__ import annotations

from typing import Any

from helikon import Agent, RunContext, tool
from helikon.audit import dry_run, recorded_calls
from helikon.cli.policy_cmd import table_lines
from helikon.core.hooks import Allow, PreToolUse
from helikon.core.hooks import Deny as HookDeny
from helikon.core.permissions import (
    ApprovalAllow,
    ApprovalDeny,
    AskUser,
    DenyRule,
    PermissionAllow,
    PermissionDecision,
)
from helikon.runtimes import Runner
from helikon.sessions import MemorySession, PermissionDecided
from helikon.testing import Call, MockModel, Text


@tool
def deploy(env: str) -> str:
    """Deploy to an environment."""
    return f"deployed {env}"


@tool
def status(env: str) -> str:
    """Read an environment's status."""
    return f"{env}: green"


class AsksForProd:
    async def check(self, ctx: Any, tool: str, args: Any) -> PermissionDecision:
        if args.get("env") == "prod":
            return AskUser("prod deploys need a second pair of eyes")
        return PermissionAllow()


class Approver:
    """Approves staging, refuses prod."""

    async def decide(self, tool: str, prompt: str, args: Any) -> Any:
        return ApprovalAllow() if args.get("env") != "prod" else ApprovalDeny("not on a Friday")


class NoProdHook:
    async def on_event(self, ctx: Any, event: Any) -> Any:
        if isinstance(event, PreToolUse) and event.args.get("env") == "prod":
            return HookDeny("prod is frozen")
        return Allow()


async def _decisions(ctx: RunContext[Any], calls: list[Call], **agent: Any) -> list[Any]:
    session = MemorySession()
    model = MockModel([calls, [Text("done")]])
    await Runner().run(
        Agent(name="ops", model=model, tools=[deploy, status], **agent),
        "go",
        session=session,
        ctx=ctx,
    )
    return [
        (e.call_id, e.tool, e.decision, e.stage, e.rule, e.reason, e.decided_by)
        for e in await session.events()
        if isinstance(e, PermissionDecided)
    ]


async def test_the_configuration_decides_rules_guards_modes_and_the_default() -> None:
    ctx = RunContext.ephemeral().with_deny_rules([DenyRule.tool("deploy")])
    got = await _decisions(
        ctx, [Call("c1", "deploy", {"env": "dev"}), Call("c2", "status", {"env": "dev"})]
    )
    assert got == [
        (
            "c1",
            "deploy",
            "deny",
            "deny_rule",
            "DenyRule.tool('deploy')",
            "DenyRule.tool('deploy') matched",
            "policy",
        ),
        ("c2", "status", "allow", "default", None, "no policy installed", "policy"),
    ]
    plan = RunContext.ephemeral().with_permission_mode("plan")
    got = await _decisions(plan, [Call("c1", "deploy", {"env": "dev"})])
    assert got == [
        (
            "c1",
            "deploy",
            "deny",
            "mode",
            "plan",
            "mode plan does not allow deploy (side_effect)",
            "policy",
        )
    ]


async def test_the_approval_handler_answers_are_recorded_as_its_own() -> None:
    ctx = (
        RunContext.ephemeral()
        .with_permission_policy(AsksForProd())
        .with_approval_handler(Approver())
    )
    got = await _decisions(
        ctx, [Call("c1", "deploy", {"env": "prod"}), Call("c2", "deploy", {"env": "staging"})]
    )
    assert got == [
        (
            "c1",
            "deploy",
            "deny",
            "policy",
            "AsksForProd",
            "prod deploys need a second pair of eyes: not on a Friday",
            "approval_handler",
        ),
        ("c2", "deploy", "allow", "policy", "AsksForProd", "allowed by policy", "policy"),
    ]


async def test_an_ask_without_a_handler_is_a_denial_by_the_configuration() -> None:
    ctx = RunContext.ephemeral().with_permission_policy(AsksForProd())
    got = await _decisions(ctx, [Call("c1", "deploy", {"env": "prod"})])
    assert got == [
        (
            "c1",
            "deploy",
            "deny",
            "policy",
            "AsksForProd",
            "prod deploys need a second pair of eyes "
            "(approval required; no approval handler installed)",
            "policy",
        )
    ]


async def test_a_hook_denial_is_recorded_as_the_hook_s() -> None:
    got = await _decisions(
        RunContext.ephemeral(), [Call("c1", "deploy", {"env": "prod"})], hooks=[NoProdHook()]
    )
    assert got == [("c1", "deploy", "deny", "hook", None, "prod is frozen", "hook")]


async def test_policy_check_says_who_allowed_a_call_the_candidate_refuses() -> None:
    class AsksAlways:
        async def check(self, ctx: Any, tool: str, args: Any) -> PermissionDecision:
            return AskUser("every deploy is checked")

    ctx = (
        RunContext.ephemeral()
        .with_permission_policy(AsksAlways())
        .with_approval_handler(Approver())
    )
    session = MemorySession()
    model = MockModel([[Call("c1", "deploy", {"env": "staging"})], [Text("done")]])
    await Runner().run(
        Agent(name="ops", model=model, tools=[deploy]), "go", session=session, ctx=ctx
    )
    events = await session.events()
    [call] = recorded_calls(events, session_id="s")
    assert (call.outcome, call.asked, call.decided_by) == ("allowed", True, "approval_handler")
    candidate = RunContext.ephemeral().with_deny_rules([DenyRule.tool("deploy")])
    changes = await dry_run(candidate, events, session_id="s")
    assert [(c.call_id, c.before, c.after, c.recorded_by) for c in changes] == [
        ("c1", "allowed", "deny", "approval_handler")
    ]
    assert changes[0].to_json()["recorded_by"] == "approval_handler"
    assert "  allowed (approval_handler)  deny  deny_rule: " in table_lines(changes)[1]


async def test_decisions_of_one_turn_are_logged_in_the_calls_order() -> None:
    import asyncio

    from helikon import ToolEffect

    @tool(effect=ToolEffect.READ_ONLY)
    def peek(env: str) -> str:
        """Read an environment."""
        return env

    class SlowFirst:
        """Decides the first environment last."""

        async def check(self, ctx: Any, tool: str, args: Any) -> PermissionDecision:
            await asyncio.sleep({"a": 0.05, "b": 0.0, "c": 0.02}[args["env"]])
            return PermissionAllow()

    session = MemorySession()
    turn = [Call(f"c{e}", "peek", {"env": e}) for e in "abc"]
    model = MockModel([turn, [Text("done")]])
    ctx = RunContext.ephemeral().with_permission_policy(SlowFirst())
    await Runner().run(Agent(name="ops", model=model, tools=[peek]), "go", session=session, ctx=ctx)
    kinds = [
        (e.type, getattr(e, "call_id", None))
        for e in await session.events()
        if e.type != "user_message"
    ]
    assert kinds[:9] == [
        ("tool_called", "ca"),
        ("tool_called", "cb"),
        ("tool_called", "cc"),
        ("permission_decided", "ca"),
        ("permission_decided", "cb"),
        ("permission_decided", "cc"),
        ("tool_returned", "ca"),
        ("tool_returned", "cb"),
        ("tool_returned", "cc"),
    ]
