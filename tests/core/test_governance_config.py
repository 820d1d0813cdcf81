"""Governance settings of the wrong type fail at once (ConfigError); user code fails closed.

Covers new-user trial 2, findings 1, 2, 4, 5, 9, 10 and 11: permission modes given as
strings, rule lists holding the wrong things, extra secrets given as one string, GuardRule
fields given as a string, policies / approval handlers / hooks of the wrong shape, user code
that raises, and guardrails that return something other than a verdict.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from helikon import (
    Agent,
    AllowRule,
    DenyRule,
    GuardRule,
    PermissionMode,
    RunContext,
    RunError,
    ToolEffect,
    tool,
)
from helikon.core.guardrails import (
    GuardrailInput,
    GuardrailKind,
    Pass,
    Tripwire,
    check_guardrail,
    run_guardrails,
)
from helikon.core.hooks import (
    Allow,
    HookError,
    HookEvent,
    HookRegistry,
    OnTurnStart,
    PostToolUse,
    PreToolUse,
    check_hook,
    check_hooks,
    fire,
)
from helikon.core.permissions import Permissions, RedactionSettings
from helikon.errors import ConfigError, GuardrailTripwire
from helikon.permissions import (
    ApprovalAllow,
    AskUser,
    PermissionAllow,
    PermissionDecision,
    explain,
)
from helikon.testing import Call, MockModel, Text

ran: list[str] = []


@tool(effect=ToolEffect.WRITE)
def write_file(path: str) -> str:
    """Write a file."""
    ran.append(path)
    return "written"


@pytest.fixture(autouse=True)
def _reset() -> None:
    ran.clear()


def _outputs(ctx: RunContext[Any], **agent: Any) -> list[str]:
    model = MockModel([[Call("c1", "write_file", {"path": "x"})], [Text("end")]])
    result = Agent(name="a", model=model, tools=[write_file], **agent).run_sync("go", ctx)
    return [e.item.content[0].text for e in result.events if e.type == "tool_output_item"]


def _raises(match: str) -> Any:
    """``pytest.raises(ConfigError)`` whose message must equal ``match`` exactly."""
    import re

    return pytest.raises(ConfigError, match=f"^{re.escape(match)}$")


# ------------------------------------------------------------------ 1. permission modes

MODES = (
    "PermissionMode.DEFAULT ('default'), PermissionMode.ACCEPT_EDITS ('accept_edits'), "
    "PermissionMode.PLAN ('plan'), PermissionMode.BYPASS ('bypass'), "
    "PermissionMode.DONT_ASK ('dont_ask')"
)


@pytest.mark.parametrize("mode", [PermissionMode.PLAN, "plan"])
def test_plan_mode_given_as_enum_or_string_stops_a_write_tool(mode: Any) -> None:
    ctx = RunContext.ephemeral().with_permission_mode(mode)
    assert ctx.permissions.mode is PermissionMode.PLAN
    assert _outputs(ctx) == ["permission denied: mode plan does not allow write_file (write)"]
    assert ran == []


def test_dont_ask_string_is_the_enum_and_stays_terminal() -> None:
    ctx = RunContext.ephemeral().with_permission_mode("dont_ask")
    assert ctx.permissions.mode is PermissionMode.DONT_ASK
    assert ctx.with_permission_mode("default").permissions.mode is PermissionMode.DONT_ASK
    assert _outputs(ctx) == ["permission denied: mode dont_ask does not allow write_file (write)"]
    # from BYPASS only DONT_ASK is accepted, also when given as its value
    bypass = RunContext.ephemeral().with_permission_mode("bypass")
    assert bypass.with_permission_mode("dont_ask").permissions.mode is PermissionMode.DONT_ASK
    assert ran == []


@pytest.mark.parametrize("mode", ["yolo", "PLAN", None, 3])
def test_unknown_mode_is_a_config_error_listing_the_modes(mode: Any) -> None:
    with _raises(
        f"RunContext.with_permission_mode(...): unknown permission mode {mode!r}; use one of "
        f"{MODES}"
    ):
        RunContext.ephemeral().with_permission_mode(mode)


def test_permissions_built_directly_coerce_or_reject_the_mode() -> None:
    assert Permissions(mode="plan").mode is PermissionMode.PLAN  # type: ignore[arg-type]
    with _raises(f"Permissions(mode=...): unknown permission mode 'yolo'; use one of {MODES}"):
        Permissions(mode="yolo")  # type: ignore[arg-type]
    with _raises(
        f"PermissionMode.tighten(...): unknown permission mode 'yolo'; use one of {MODES}"
    ):
        PermissionMode.DEFAULT.tighten("yolo")


# ------------------------------------------------------------------ 2. rule lists


def test_a_deny_rule_in_the_allow_list_is_an_error_never_an_approval() -> None:
    with _raises(
        "RunContext.with_allow_rules(...): rules[0] is DenyRule.tool('write_file'), not an "
        "AllowRule; a DenyRule belongs in with_deny_rules; for an AllowRule use "
        "AllowRule.tool('write_file')"
    ):
        RunContext.ephemeral().with_allow_rules([DenyRule.tool("write_file")])


def test_an_allow_rule_in_the_deny_list_is_an_error() -> None:
    with _raises(
        "RunContext.with_deny_rules(...): rules[1] is AllowRule.bash_command('git'), not a "
        "DenyRule; an AllowRule belongs in with_allow_rules; for a DenyRule use "
        "DenyRule.bash_command('git')"
    ):
        RunContext.ephemeral().with_deny_rules([DenyRule.tool("a"), AllowRule.bash_command("git")])


def test_a_plain_string_rule_names_the_index_and_the_constructors() -> None:
    with _raises(
        "RunContext.with_deny_rules(...): rules[0] is the string 'curl', not a DenyRule; use "
        "DenyRule.tool('curl') for a tool or DenyRule.bash_command('curl') for a Bash program"
    ):
        RunContext.ephemeral().with_deny_rules(["curl"])


def test_a_single_rule_instead_of_a_list() -> None:
    with _raises(
        "RunContext.with_deny_rules(...) takes a list of DenyRules, got a single "
        "DenyRule.tool('x'): pass [DenyRule.tool('x')]"
    ):
        RunContext.ephemeral().with_deny_rules(DenyRule.tool("x"))  # type: ignore[arg-type]
    with _raises(
        "RunContext.with_allow_rules(...) takes a list of AllowRules, got a single "
        "DenyRule.tool('x'): pass a list of AllowRules (a DenyRule belongs in "
        "with_deny_rules; for an AllowRule use AllowRule.tool('x'))"
    ):
        RunContext.ephemeral().with_allow_rules(DenyRule.tool("x"))  # type: ignore[arg-type]


def test_a_bare_string_or_none_instead_of_a_list() -> None:
    with _raises(
        "RunContext.with_deny_rules(...) takes a list of DenyRules, got the string 'curl': "
        "pass [DenyRule.tool('curl')] or [DenyRule.bash_command('curl')]"
    ):
        RunContext.ephemeral().with_deny_rules("curl")  # type: ignore[arg-type]
    with _raises(
        "RunContext.with_allow_rules(...) takes a list of AllowRules, got NoneType; "
        "pass [] for none"
    ):
        RunContext.ephemeral().with_allow_rules(None)  # type: ignore[arg-type]


def test_guard_rule_lists_are_checked_too() -> None:
    with _raises(
        "RunContext.with_guard_rules(...): rules[0] is the string 'git', not a GuardRule; "
        "build guards with GuardRule('name', program='git', args_contain=('push', '-f'))"
    ):
        RunContext.ephemeral().with_guard_rules(["git"])  # type: ignore[list-item]
    with _raises(
        "RunContext.with_deny_rules(...): rules[0] is GuardRule('g', ...), not a DenyRule; "
        "a GuardRule belongs in with_guard_rules; build rules with DenyRule.tool(...), "
        ".bash_command(...), ..."
    ):
        RunContext.ephemeral().with_deny_rules([GuardRule("g", program="git")])  # type: ignore[list-item]


def test_rule_kinds_are_checked_and_permissions_built_directly_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"^DenyRule kind must be one of 'tool'"):
        DenyRule("Tool", "x")  # type: ignore[arg-type]
    with _raises(
        "Permissions(allow_rules=...): rules[0] is DenyRule.tool('x'), not an AllowRule; a "
        "DenyRule belongs in with_deny_rules; for an AllowRule use AllowRule.tool('x')"
    ):
        Permissions(allow_rules=(DenyRule.tool("x"),))  # type: ignore[arg-type]


async def test_rule_setters_replace_and_spreading_extends() -> None:
    ctx = RunContext.ephemeral().with_deny_rules([DenyRule.tool("a")])
    assert ctx.with_deny_rules([DenyRule.tool("b")]).permissions.deny_rules == (DenyRule.tool("b"),)
    both = ctx.with_deny_rules([*ctx.permissions.deny_rules, DenyRule.tool("b")])
    assert both.permissions.deny_rules == (DenyRule.tool("a"), DenyRule.tool("b"))
    assert (await explain(both, "a", {})).decision == "deny"
    assert (await explain(both, "b", {})).decision == "deny"


# ------------------------------------------------------------------ 4. extra secrets


def test_a_single_secret_string_is_a_config_error() -> None:
    with _raises(
        "RunContext.with_extra_secrets(...) takes a list of secret strings, got a single str "
        "(it would be split into characters); pass a list: [secret]"
    ):
        RunContext.ephemeral().with_extra_secrets("hunter2hunter2")
    with _raises("RunContext.with_extra_secrets(...): secrets[1] must be a str, got int"):
        RunContext.ephemeral().with_extra_secrets(["hunter2hunter2", 12345678])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match=r"^RedactionSettings\(extra_secrets=\.\.\.\) takes"):
        RedactionSettings(extra_secrets="hunter2hunter2")  # type: ignore[arg-type]


def test_a_listed_secret_is_redacted_in_a_run() -> None:
    @tool
    def leak() -> str:
        """Leak."""
        return "the code is hunter2hunter2"

    ctx = RunContext.ephemeral().with_extra_secrets(["hunter2hunter2"])
    model = MockModel([[Call("c1", "leak", {})], [Text("end")]])
    result = Agent(name="a", model=model, tools=[leak]).run_sync("go", ctx)
    out = [e.item.content[0].text for e in result.events if e.type == "tool_output_item"]
    assert out == ["the code is ***"]


def test_ignored_secrets_are_counted_in_a_warning_without_their_values(
    caplog: pytest.LogCaptureFixture,
) -> None:
    secrets = ["short7!", "123456789", "Password", "hunter2hunter2", " ab "]
    with caplog.at_level(logging.WARNING, logger="helikon.redaction"):
        ctx = RunContext.ephemeral().with_extra_secrets(secrets)
    assert ctx.redaction.extra_secrets == tuple(secrets)
    assert [r.getMessage() for r in caplog.records] == [
        "with_extra_secrets: 4 of 5 secrets will NOT be redacted: 2 shorter than 8 bytes "
        "(at index 0, 4); 1 all digits (at index 1); 1 a common word (at index 2)"
    ]
    for value in secrets:
        assert value.strip() not in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="helikon.redaction"):
        RunContext.ephemeral().with_extra_secrets(["hunter2hunter2", " padded-secret\n"])
    assert caplog.records == []


@pytest.mark.parametrize(
    "value",
    [
        "short7!",
        "123456789",
        "Password",
        "LOCALHOST",
        " ab ",
        "   ab   ",
        "hunter2hunter2",
        " padded-secret\n",
        "\u00e9\u00e9\u00e9\u00e9",
        "12345678x",
    ],
)
def test_the_warning_agrees_with_the_scanner(value: str, caplog: pytest.LogCaptureFixture) -> None:
    from helikon.redaction import Redactor

    with caplog.at_level(logging.WARNING, logger="helikon.redaction"):
        RunContext.ephemeral().with_extra_secrets([value])
    warned = bool(caplog.records)
    assert warned == (Redactor([value], env={}).known_secret_count == 0)


# ------------------------------------------------------------------ 5. GuardRule fields


def test_guard_rule_args_contain_as_a_string_is_a_config_error() -> None:
    with _raises(
        "GuardRule 'fp': args_contain must be a tuple of strings, got the string '--force' "
        "(a bare string never matches); use args_contain=('--force',)"
    ):
        GuardRule("fp", action="deny", program="git", args_contain="--force")  # type: ignore[arg-type]
    with _raises(
        "GuardRule 'w': write_paths must be a tuple of strings, got the string 'dist/**' "
        "(a bare string never matches); use write_paths=('dist/**',)"
    ):
        GuardRule("w", write_paths="dist/**")  # type: ignore[arg-type]
    with _raises(
        "GuardRule 'p': program must be one program name (a non-empty string) or None, got "
        "['git']; use one GuardRule per program"
    ):
        GuardRule("p", program=["git"])  # type: ignore[arg-type]
    with _raises("GuardRule 'e': args_contain[1] must be a non-empty string, got 3"):
        GuardRule("e", program="git", args_contain=("push", 3))  # type: ignore[arg-type]
    with _raises("GuardRule name must be a non-empty string, got ''"):
        GuardRule("", program="git")


async def test_guard_rule_lists_become_tuples_and_match() -> None:
    g = GuardRule("fp", action="deny", program="git", args_contain=["push", "--force"])  # type: ignore[arg-type]
    assert g.args_contain == ("push", "--force")
    ctx = RunContext.ephemeral().with_guard_rules([g])
    e = await explain(ctx, "Bash", {"command": "git push --force"})
    assert (e.decision, e.stage, e.rule) == ("deny", "guard", "fp")


# ------------------------------------------------------------------ 9. shapes


class SyncPolicy:
    def check(self, ctx: RunContext[Any], tool: str, args: Any) -> PermissionDecision:
        return PermissionAllow()


class SyncHandler:
    def decide(self, tool: str, prompt: str, args: Any) -> Any:
        return ApprovalAllow()


class SyncHook:
    def on_event(self, ctx: RunContext[Any], event: HookEvent) -> Any:
        return Allow()


def test_a_policy_must_have_an_async_check() -> None:
    ctx = RunContext.ephemeral()
    with _raises(
        "RunContext.with_permission_policy(...): got the function '<lambda>'; a permission "
        "policy is an object with an `async def check(self, ctx, tool, args)` method"
    ):
        ctx.with_permission_policy(lambda c, t, a: PermissionAllow())  # type: ignore[arg-type]
    with _raises(
        "RunContext.with_permission_policy(...): SyncPolicy.check is not a coroutine function; "
        "a permission policy needs `async def check(self, ctx, tool, args)` (a plain `def` "
        "cannot be awaited)"
    ):
        ctx.with_permission_policy(SyncPolicy())  # type: ignore[arg-type]
    with _raises(
        "RunContext.with_permission_policy(...): got the class SyncPolicy, not an instance; "
        "pass SyncPolicy()"
    ):
        ctx.with_permission_policy(SyncPolicy)  # type: ignore[arg-type]
    assert ctx.with_permission_policy(None).permissions.policy is None


def test_an_approval_handler_must_have_an_async_decide() -> None:
    ctx = RunContext.ephemeral()
    with _raises(
        "RunContext.with_approval_handler(...): got the function '<lambda>'; an approval "
        "handler is an object with an `async def decide(self, tool, prompt, args)` method"
    ):
        ctx.with_approval_handler(lambda t, p, a: True)  # type: ignore[arg-type]
    with _raises(
        "RunContext.with_approval_handler(...): SyncHandler.decide is not a coroutine "
        "function; an approval handler needs `async def decide(self, tool, prompt, args)` "
        "(a plain `def` cannot be awaited)"
    ):
        ctx.with_approval_handler(SyncHandler())  # type: ignore[arg-type]


def test_hooks_must_have_an_async_on_event() -> None:
    with _raises(
        "HookRegistry(...): hooks[0]: SyncHook.on_event is not a coroutine function; a hook "
        "needs `async def on_event(self, ctx, event)` (a plain `def` cannot be awaited)"
    ):
        HookRegistry([SyncHook()])  # type: ignore[list-item]
    with _raises("HookRegistry(...) takes a list of hooks, got a single SyncHook: pass [hook]"):
        HookRegistry(SyncHook())  # type: ignore[arg-type]
    with _raises(
        "HookRegistry.push(...): got the function '<lambda>'; a hook is an object with an "
        "`async def on_event(self, ctx, event)` method"
    ):
        HookRegistry().push(lambda c, e: Allow())  # type: ignore[arg-type]
    with _raises(
        "RunContext.with_hooks(...) takes a HookRegistry, got list; pass "
        "with_hooks(HookRegistry([hook, ...]))"
    ):
        RunContext.ephemeral().with_hooks([Recorder()])  # type: ignore[arg-type]
    # the reusable checks (Agent(hooks=...) calls them)
    with _raises(
        "Agent(hooks=...): hooks[0]: SyncHook.on_event is not a coroutine function; a hook "
        "needs `async def on_event(self, ctx, event)` (a plain `def` cannot be awaited)"
    ):
        check_hooks("Agent(hooks=...)", [SyncHook()])
    check_hook("x", Recorder())
    with _raises(
        "g: got a str with no check() method; a guardrail is an object with an "
        "`async def check(self, ctx, input)` method"
    ):
        check_guardrail("g", "nope")


def test_tripwire_kind_strings_are_coerced_or_rejected() -> None:
    assert Tripwire("input_policy").kind is GuardrailKind.INPUT_POLICY  # type: ignore[arg-type]
    with _raises(
        "Tripwire(kind=...): unknown kind 'bad'; use one of GuardrailKind.INPUT_POLICY "
        "('input_policy'), GuardrailKind.OUTPUT_POLICY ('output_policy'), GuardrailKind.OTHER "
        "('other')"
    ):
        Tripwire("bad")  # type: ignore[arg-type]


def test_a_string_kind_tripwire_ends_the_run_with_that_kind() -> None:
    class Flag:
        async def check(self, ctx: RunContext[Any], input: GuardrailInput) -> Tripwire:
            return Tripwire("input_policy", {"why": "x"})  # type: ignore[arg-type]

    agent = Agent(name="g", model=MockModel([[Text("ok")]]), input_guardrails=[Flag()])
    with pytest.raises(RunError) as info:
        agent.run_sync("hi")
    assert isinstance(info.value.error, GuardrailTripwire)
    assert info.value.error.guardrail_kind == "input_policy"


# ------------------------------------------------------------------ 6. user code that raises


class Recorder:
    async def on_event(self, ctx: RunContext[Any], event: HookEvent) -> Any:
        return Allow()


class RaisingPolicy:
    async def check(self, ctx: RunContext[Any], tool: str, args: Any) -> PermissionDecision:
        raise ValueError("db down")


class AskPolicy:
    async def check(self, ctx: RunContext[Any], tool: str, args: Any) -> PermissionDecision:
        return AskUser("write?")


class RaisingHandler:
    async def decide(self, tool: str, prompt: str, args: Any) -> Any:
        raise ValueError("db down")


class TrueHandler:
    async def decide(self, tool: str, prompt: str, args: Any) -> Any:
        return True


class RaisingHook:
    def __init__(self, on: type) -> None:
        self.on = on

    async def on_event(self, ctx: RunContext[Any], event: HookEvent) -> Any:
        if isinstance(event, self.on):
            raise ValueError("db down")
        return Allow()


def test_a_raising_policy_denies_the_call_and_names_itself() -> None:
    ctx = RunContext.ephemeral().with_permission_policy(RaisingPolicy())
    assert _outputs(ctx) == [
        "permission denied: permission policy RaisingPolicy raised ValueError: db down"
    ]
    assert ran == []


async def test_explain_reports_a_raising_policy_as_a_denial() -> None:
    ctx = RunContext.ephemeral().with_permission_policy(RaisingPolicy())
    e = await explain(ctx, "write_file", {"path": "x"}, ToolEffect.WRITE)
    assert (e.decision, e.stage, e.rule, e.reason) == (
        "deny",
        "policy",
        "RaisingPolicy",
        "permission policy RaisingPolicy raised ValueError: db down",
    )


def test_a_raising_approval_handler_denies_the_call() -> None:
    ctx = (
        RunContext.ephemeral()
        .with_permission_policy(AskPolicy())
        .with_approval_handler(RaisingHandler())
    )
    assert _outputs(ctx) == [
        "permission denied: write?: approval handler RaisingHandler raised ValueError: db down"
    ]
    assert ran == []


def test_an_approval_handler_returning_an_unknown_outcome_denies() -> None:
    ctx = RunContext.ephemeral().with_permission_policy(AskPolicy())
    ctx = ctx.with_approval_handler(TrueHandler())
    assert _outputs(ctx) == [
        "permission denied: write?: approval handler TrueHandler returned an unknown outcome "
        "True (return ApprovalAllow() or ApprovalDeny(reason))"
    ]
    assert ran == []


def test_a_raising_pre_tool_use_hook_denies_the_call() -> None:
    out = _outputs(RunContext.ephemeral(), hooks=[RaisingHook(PreToolUse)])
    assert out == ["denied by hook: hook RaisingHook raised ValueError: db down (on PreToolUse)"]
    assert ran == []


def test_a_raising_post_tool_use_hook_withholds_the_output() -> None:
    ctx = RunContext.ephemeral().with_hooks(HookRegistry([RaisingHook(PostToolUse)]))
    out = _outputs(ctx)
    assert out == [
        "tool output withheld: hook RaisingHook raised ValueError: db down (on PostToolUse)"
    ]
    assert ran == ["x"]


async def test_fire_wraps_a_raising_hook_in_a_hook_error() -> None:
    with pytest.raises(HookError) as info:
        await fire([Recorder(), RaisingHook(OnTurnStart)], RunContext.ephemeral(), OnTurnStart(0))
    assert str(info.value) == "hook RaisingHook raised ValueError: db down (on OnTurnStart)"
    assert isinstance(info.value.__cause__, ValueError)


def test_a_hook_raising_at_another_event_fails_the_run_naming_the_hook() -> None:
    with pytest.raises(RunError) as info:
        _outputs(RunContext.ephemeral(), hooks=[RaisingHook(OnTurnStart)])
    assert "hook RaisingHook raised ValueError: db down (on OnTurnStart)" in str(info.value)


def test_a_hook_failure_is_not_reported_as_an_internal_error() -> None:
    with pytest.raises(RunError) as info:
        _outputs(RunContext.ephemeral(), hooks=[RaisingHook(OnTurnStart)])
    assert str(info.value.error) == "hook RaisingHook raised ValueError: db down (on OnTurnStart)"


# ------------------------------------------------------------------ 10. guardrail returns


@pytest.mark.parametrize(
    ("value", "shown"),
    [(True, "True"), (None, "None"), ("flagged", "'flagged'"), (Pass, "<class '")],
)
async def test_a_guardrail_returning_a_non_verdict_trips(value: Any, shown: str) -> None:
    class Odd:
        async def check(self, ctx: RunContext[Any], input: GuardrailInput) -> Any:
            return value

    trip = await run_guardrails([Odd()], RunContext.ephemeral(), GuardrailInput("user_text", "q"))
    assert trip is not None
    assert trip.kind is GuardrailKind.OTHER
    assert trip.info["error"].startswith(f"guardrail Odd returned {shown}")
    assert trip.info["error"].endswith(", not Pass() or Tripwire(...)")


async def test_a_passing_guardrail_still_passes() -> None:
    class Ok:
        async def check(self, ctx: RunContext[Any], input: GuardrailInput) -> Pass:
            return Pass()

    assert (
        await run_guardrails([Ok()], RunContext.ephemeral(), GuardrailInput("user_text", "q"))
        is None
    )


def test_a_run_whose_guardrail_returns_true_fails_closed() -> None:
    class Flagged:
        async def check(self, ctx: RunContext[Any], input: GuardrailInput) -> Any:
            return True

    agent = Agent(name="g", model=MockModel([[Text("ok")]]), input_guardrails=[Flagged()])
    with pytest.raises(RunError) as info:
        agent.run_sync("q")
    assert isinstance(info.value.error, GuardrailTripwire)
    assert info.value.error.guardrail_kind == "other"
    assert info.value.error.info == {
        "error": "guardrail Flagged returned True, not Pass() or Tripwire(...)"
    }
