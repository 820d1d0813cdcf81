"""The permission pipeline: ``deny › guard › allow › mode › policy › AskUser``.

:func:`authorize` decides one tool call; :func:`explain` returns the same decision together
with the rule that made it. The Bash and path matching is Rust (through
:mod:`helikon.shell`): deny rules match when ANY sub-command runs the program (an
unanalysable command counts as a match), allow rules only when EVERY sub-command does, and
guards see every write target.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from helikon.core._unicode import scrub_text
from helikon.core.permissions import (
    AllowRule,
    ApprovalAllow,
    ApprovalDeny,
    AskUser,
    DenyRule,
    GuardRule,
    PermissionAllow,
    PermissionDecision,
    PermissionDeny,
    PermissionMode,
    ReplaceArgs,
)
from helikon.core.tool import ToolEffect
from helikon.shell import CommandPolicy, path_rule_matches

if TYPE_CHECKING:
    from helikon.core.context import RunContext

__all__ = [
    "AskAnswer",
    "Containment",
    "DecisionTrace",
    "Deferred",
    "Explanation",
    "authorize",
    "explain",
]

_log = logging.getLogger("helikon.permissions")

_BASH = "Bash"
_READ_TOOLS = ("Read",)
_EDIT_TOOLS = ("Write", "Edit")


@dataclass(frozen=True, slots=True)
class Deferred:
    """The call asks and waits for a person (``RunConfig(approval="defer")``); ``reason`` is
    the prompt the approval handler would have been given."""

    reason: str


AskAnswer: TypeAlias = Callable[[str, str], PermissionDecision | Deferred | None]
"""``(tool, prompt) -> decision``: answers an ask before the approval handler is consulted
(a remembered or given approval, a remembered denial, or :class:`Deferred`); ``None`` lets
the handler decide."""


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why a call was decided the way it was.

    Attributes:
        decision: ``"allow"``, ``"deny"`` or ``"ask"`` (before any approval handler).
        stage: ``"deny_rule"``, ``"guard"``, ``"allow_rule"``, ``"mode"``, ``"policy"`` or
            ``"default"``.
        rule: the rule or guard that decided (its name or ``kind(value)``), if any.
        reason: a sentence for humans (and the model, on a denial).
        command: for Bash, the sub-command that matched.
        line: for Bash, the 1-based line of that sub-command.
        uncovered: for Bash when ``AllowRule.bash_command`` rules exist but together do not
            cover the command: the first part no allow rule covers and why (``command `rm`
            is not in the allow list, in sub-command `rm -rf x` on line 1``).
        containment: when :func:`explain` was given a ``sandbox``: what it enforces for this
            call whatever the decision, one sentence each (the network: denied, open, or the
            egress policy with a verdict per URL in the command; deletion refused by the
            kernel under ``deny_delete``; no executing from the workspace under
            ``no_exec_in_workspace``; or that the command is not contained at all).
    """

    decision: str
    stage: str
    rule: str | None = None
    reason: str = ""
    command: str | None = None
    line: int | None = None
    uncovered: str | None = None
    containment: tuple[str, ...] = ()


@dataclass(slots=True)
class DecisionTrace:
    """Who decided a call in :func:`authorize`, and under which rule (filled in by it).

    Attributes:
        stage: the pipeline stage that settled the call: ``deny_rule``, ``guard``,
            ``allow_rule``, ``mode``, ``policy`` or ``default`` (as :class:`Explanation`).
        rule: the rule, guard, mode or policy class that decided, if any.
        decided_by: ``"policy"`` (the configuration decided without asking),
            ``"approval_handler"`` (an ask the run's approval handler answered),
            ``"human"`` (an ask answered by a person's decision on a resume, or a remembered
            one) or ``"pending"`` (the call waits for a person).
        prompt: the ask's prompt when the call asked.
    """

    stage: str = "default"
    rule: str | None = None
    decided_by: str = "policy"
    prompt: str | None = None

    def at(self, stage: str, rule: str | None) -> None:
        """Record the stage and rule that settled (or asked about) the call."""
        self.stage, self.rule = stage, rule

    def allow_reason(self) -> str:
        """Why an allowed call was allowed, worded as :func:`explain` words it (the ask's
        prompt when a person or the approval handler allowed it)."""
        if self.prompt is not None:
            return self.prompt
        if self.stage == "mode":
            return f"mode {self.rule}"
        if self.stage == "policy":
            return "allowed by policy"
        if self.stage == "default":
            return "no policy installed"
        return self.rule or self.stage


class Containment(Protocol):
    """What :func:`explain`'s ``sandbox`` must offer (an ``OsSandboxBackend`` or a
    ``BashTool`` does)."""

    def containment_notes(self, tool: str, args: Any) -> tuple[str, ...]:
        """Sentences on what is enforced for ``tool`` called with ``args``."""
        ...


def _command(args: Any) -> str | None:
    if isinstance(args, dict) and isinstance(args.get("command"), str):
        return str(args["command"])
    return None


def _path(args: Any) -> str | None:
    for key in ("path", "file_path"):
        if isinstance(args, dict) and isinstance(args.get(key), str):
            return str(args[key])
    return None


@lru_cache(maxsize=256)
def _policy(rules_json: str) -> Any:
    return CommandPolicy(rules_json)


def _check_bash(rules: dict[str, Any], command: str) -> dict[str, Any]:
    policy = _policy(json.dumps(rules, sort_keys=True))
    result: dict[str, Any] = json.loads(policy.check(scrub_text(command)))
    return result


def _path_matches(pattern: str, path: str) -> bool:
    return path_rule_matches(pattern, scrub_text(path))


def unanalysed_shell_of(tool: object) -> str | None:
    """Why a tool's shell is not the one the matcher models (``BashTool.unanalysed_shell``
    of a backend built on another shell), or ``None``."""
    reason = getattr(tool, "unanalysed_shell", None)
    return reason if isinstance(reason, str) and reason else None


def _not_analysable(shell: str) -> str:
    return f"the command is not analysable: {shell}"


def _bash_allow(
    rules: tuple[AllowRule, ...], tool: str, args: Any, shell: str | None = None
) -> tuple[str | None, str | None]:
    """The union of the ``bash_command`` allow rules applied to a Bash call.

    Returns ``(rule, None)`` when every sub-command is covered by some rule (``rule`` names
    the rules that covered it), ``(None, uncovered)`` when some part is not (``uncovered``
    says which and why), ``(None, None)`` when no Bash allow rule applies.
    """
    bash = [r for r in rules if r.kind == "bash_command"]
    command = _command(args) if tool == _BASH else None
    if not bash or command is None:
        return None, None
    if shell is not None:
        return None, _not_analysable(shell)
    verdict = _check_bash({"allow": [r.value for r in bash], "default_guards": False}, command)
    if verdict.get("verdict") == "allow":
        used = verdict.get("allowed_by") or [r.value for r in bash]
        names = [_rule_name(r) for r in bash if r.value in used]
        return " + ".join(names or [_rule_name(bash[0])]), None
    return None, str(verdict.get("explain") or verdict.get("reason") or "not covered")


def _rule_matches(
    rule: DenyRule | AllowRule, tool: str, args: Any, *, allow: bool, shell: str | None = None
) -> bool:
    if rule.kind == "tool":
        return tool == rule.value
    if rule.kind == "bash_command":
        command = _command(args) if tool == _BASH else None
        if command is None:
            return False
        if shell is not None:  # worst case: a deny rule matches, an allow rule does not
            return not allow
        if allow:
            verdict = _check_bash({"allow": [rule.value], "default_guards": False}, command)
            return verdict.get("verdict") == "allow"
        verdict = _check_bash({"deny": [rule.value], "default_guards": False}, command)
        return verdict.get("verdict") in ("deny", "ask")
    path = _path(args)
    if path is None:
        return False
    if rule.kind == "read":
        return tool in _READ_TOOLS and _path_matches(rule.value, path)
    return tool in _EDIT_TOOLS and _path_matches(rule.value, path)


def _guard_hits(
    guards: tuple[GuardRule, ...],
    default_guards: bool,
    tool: str,
    args: Any,
    shell: str | None = None,
) -> list[dict[str, Any]]:
    """Every tripping guard, built-in first, in evaluation order."""
    if tool != _BASH and tool not in _EDIT_TOOLS:
        return []  # guards see only Bash commands and edit paths
    rules: dict[str, Any] = {
        "default_guards": default_guards,
        "guards": [_guard_spec(g) for g in guards],
    }
    if tool == _BASH:
        command = _command(args)
        if command is None:
            return []
        if shell is not None and (default_guards or guards):
            reason = _not_analysable(shell)
            return [{"rule": "unanalysable", "verdict": "ask", "reason": reason}]
        hits: list[dict[str, Any]] = _check_bash(rules, command).get("matches", [])
        return hits
    if tool in _EDIT_TOOLS:
        path = _path(args)
        if path is None:
            return []
        out: list[dict[str, Any]] = json.loads(
            _policy(json.dumps(rules, sort_keys=True)).check_write(scrub_text(path))
        ).get("matches", [])
        return out
    return []


def _hit_denies(hit: dict[str, Any]) -> bool:
    """A guard hit whose action is Deny (the matcher reports it as ``verdict``).

    Anything but an explicit ``ask`` denies: a hit of unknown shape fails closed.
    """
    return hit.get("verdict", hit.get("action")) != "ask"


def _guard_spec(g: GuardRule) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": g.name, "action": g.action}
    if g.program is not None:
        spec["program"] = g.program
    if g.args_contain:
        spec["args_contain"] = list(g.args_contain)
    if g.write_paths:
        spec["write_paths"] = list(g.write_paths)
    if g.reason is not None:
        spec["reason"] = g.reason
    return spec


def _rule_name(rule: DenyRule | AllowRule) -> str:
    return f"{type(rule).__name__}.{rule.kind}({rule.value!r})"


async def explain(
    ctx: RunContext[Any],
    tool: str,
    args: Any,
    effect: ToolEffect = ToolEffect.SIDE_EFFECT,
    *,
    sandbox: Containment | None = None,
) -> Explanation:
    """The decision for a call and the rule that made it, without asking anyone.

    Approval handlers are not consulted: an ``ask`` here is what a handler would be asked
    (and what resolves to deny without one). The policy IS consulted when the pipeline
    reaches it.

    ``sandbox`` (the ``OsSandboxBackend`` or the ``BashTool`` the call would run on) adds
    :attr:`Explanation.containment`: what the kernel and the egress proxy refuse for this
    call whatever the decision; when it runs a shell other than bash (its
    ``unanalysed_shell``), every Bash call is explained as not analysable (worst case).

    Example:
        >>> import asyncio
        >>> from helikon import RunContext
        >>> e = asyncio.run(explain(RunContext.ephemeral(), "Bash", {"command": "rm -rf /"}))
        >>> (e.decision, e.stage)
        ('ask', 'guard')
    """
    decided = await _explain(ctx, tool, args, effect, unanalysed_shell_of(sandbox))
    if sandbox is None:
        return decided
    return replace(decided, containment=tuple(sandbox.containment_notes(tool, args)))


async def _explain(
    ctx: RunContext[Any], tool: str, args: Any, effect: ToolEffect, shell: str | None
) -> Explanation:
    p = ctx.permissions
    for rule in p.deny_rules:
        if _rule_matches(rule, tool, args, allow=False, shell=shell):
            return Explanation("deny", "deny_rule", _rule_name(rule), f"{_rule_name(rule)}")
    for hit in _guard_hits(p.guard_rules, p.default_guards, tool, args, shell):
        return Explanation(
            "deny" if _hit_denies(hit) else "ask",
            "guard",
            str(hit.get("rule") or hit.get("name") or "guard"),
            str(hit.get("reason") or ""),
            hit.get("command"),
            hit.get("line"),
        )
    for allow_rule in p.allow_rules:
        if allow_rule.kind != "bash_command" and _rule_matches(allow_rule, tool, args, allow=True):
            name = _rule_name(allow_rule)
            return Explanation("allow", "allow_rule", name, name)
    covered, uncovered = _bash_allow(p.allow_rules, tool, args, shell)
    if covered is not None:
        return Explanation("allow", "allow_rule", covered, covered)
    mode_decision = _mode(p.mode, effect)
    if mode_decision is not None:
        return Explanation(
            mode_decision, "mode", p.mode.value, f"mode {p.mode.value}", uncovered=uncovered
        )
    if p.policy is None:
        return Explanation("allow", "default", None, "no policy installed", uncovered=uncovered)
    try:
        d = await p.policy.check(ctx, tool, args)
    except Exception as exc:
        why = _raised("permission policy", p.policy, exc)
        return Explanation("deny", "policy", type(p.policy).__name__, why, uncovered=uncovered)
    name = type(p.policy).__name__
    if isinstance(d, PermissionDeny):
        return Explanation("deny", "policy", name, d.reason, uncovered=uncovered)
    if isinstance(d, AskUser):
        return Explanation("ask", "policy", name, d.prompt, uncovered=uncovered)
    return Explanation("allow", "policy", name, "allowed by policy", uncovered=uncovered)


def _mode(mode: PermissionMode, effect: ToolEffect) -> str | None:
    if mode is PermissionMode.BYPASS:
        return "allow"
    if mode is PermissionMode.PLAN:
        return None if effect is ToolEffect.READ_ONLY else "deny"
    if mode is PermissionMode.ACCEPT_EDITS:
        return "allow" if effect is ToolEffect.WRITE else None
    if mode is PermissionMode.DONT_ASK:
        return "deny"
    return None


async def authorize(
    ctx: RunContext[Any],
    tool: str,
    effect: ToolEffect,
    args: Any,
    *,
    on_ask: Callable[[str], None] | None = None,
    answer: AskAnswer | None = None,
    unanalysed_shell: str | None = None,
    trace: DecisionTrace | None = None,
    needs_approval: Any = False,
) -> PermissionDecision | Deferred:
    """Decide one call: Allow, Deny (with the reason), ReplaceArgs, or Deferred.

    ``needs_approval`` (the tool's ``@tool(needs_approval=...)``: ``True`` or a function
    ``(ctx, args) -> bool``, sync or async) asks like an ask guard, after the guards and
    before the allow rules (stage ``tool``, rule ``needs_approval``); a function that raises
    denies the call.

    Ask guards and AskUser go first to ``answer`` (when given; a non-``None`` answer
    decides), then to the approval handler (``on_ask`` is told first, so the driver can
    emit ``ApprovalRequested``); without a handler they are Deny. An approval clears only
    that ask and evaluation continues with the next stage, so a later deny still denies.
    :class:`Deferred` stops evaluation: the call waits for a person.

    Fail closed: a policy or handler that raises denies the call, and so does a handler that
    returns anything but ``ApprovalAllow``/``ApprovalDeny``; the reason names the object
    (``permission policy MyPolicy raised ValueError: db down``).

    ``unanalysed_shell`` (the tool's ``unanalysed_shell``: its backend runs a shell other
    than bash) makes every Bash call the worst case: a ``bash_command`` deny rule matches,
    guards ask, no ``bash_command`` allow rule covers it.

    ``trace``, when given, is filled in with the stage and rule that settled the call and who
    decided it (see :class:`DecisionTrace`).
    """
    shell = unanalysed_shell
    p = ctx.permissions
    t = trace if trace is not None else DecisionTrace()
    for rule in p.deny_rules:
        if _rule_matches(rule, tool, args, allow=False, shell=shell):
            t.at("deny_rule", _rule_name(rule))
            return PermissionDeny(f"{_rule_name(rule)} matched")
    for hit in _guard_hits(p.guard_rules, p.default_guards, tool, args, shell):
        name = str(hit.get("rule") or hit.get("name") or "guard")
        reason = str(hit.get("reason") or name)
        where = f" ({hit['command']})" if hit.get("command") else ""
        t.at("guard", name)
        if _hit_denies(hit):
            return PermissionDeny(f"guard {name}: {reason}{where}")
        prompt = f"guard {name}: {reason}{where}"
        outcome = await _ask(ctx, tool, prompt, args, on_ask, answer, t)
        if isinstance(outcome, PermissionDeny | Deferred):
            return outcome
    if needs_approval is not False:
        asks = await _tool_asks(ctx, tool, args, needs_approval)
        if isinstance(asks, PermissionDeny):
            t.at("tool", "needs_approval")
            t.decided_by = "policy"
            return asks
        if asks:
            t.at("tool", "needs_approval")
            prompt = f"tool {tool} needs approval"
            outcome = await _ask(ctx, tool, prompt, args, on_ask, answer, t)
            if isinstance(outcome, PermissionDeny | Deferred):
                return outcome
    for allow_rule in p.allow_rules:
        if allow_rule.kind != "bash_command" and _rule_matches(allow_rule, tool, args, allow=True):
            _settled(t, "allow_rule", _rule_name(allow_rule))
            return PermissionAllow()
    covered = _bash_allow(p.allow_rules, tool, args, shell)[0]
    if covered is not None:
        _settled(t, "allow_rule", covered)
        return PermissionAllow()
    mode_decision = _mode(p.mode, effect)
    if mode_decision == "allow":
        _settled(t, "mode", p.mode.value)
        return PermissionAllow()
    if mode_decision == "deny":
        _denied(t, "mode", p.mode.value)
        return PermissionDeny(f"mode {p.mode.value} does not allow {tool} ({effect.value})")
    if p.policy is None:
        _settled(t, "default", None)
        return PermissionAllow()
    name = type(p.policy).__name__
    try:
        d = await p.policy.check(ctx, tool, args)
    except Exception as exc:  # fail closed: a policy that cannot decide denies the call
        _log.warning("permission policy %s raised on %s", name, tool, exc_info=True)
        _denied(t, "policy", name)
        return PermissionDeny(_raised("permission policy", p.policy, exc))
    if isinstance(d, AskUser):
        t.at("policy", name)
        return await _ask(ctx, tool, d.prompt, args, on_ask, answer, t)
    if isinstance(d, PermissionAllow | ReplaceArgs):
        _settled(t, "policy", name)
        return d
    _denied(t, "policy", name)
    if isinstance(d, PermissionDeny):
        return d
    return PermissionDeny(f"policy returned an unknown decision {d!r}")


async def _tool_asks(
    ctx: RunContext[Any], tool: str, args: Any, needs_approval: Any
) -> bool | PermissionDeny:
    """Whether the tool's ``needs_approval`` asks for this call (a deny when its function
    raised or returned something other than a bool: fail closed)."""
    if needs_approval is True:
        return True
    if not callable(needs_approval):
        return bool(needs_approval)
    try:
        verdict = needs_approval(ctx, args)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Exception as exc:  # fail closed: a check that cannot decide denies the call
        _log.warning("needs_approval of %s raised", tool, exc_info=True)
        name = getattr(needs_approval, "__qualname__", type(needs_approval).__name__)
        return PermissionDeny(
            f"needs_approval {name} of tool {tool} raised {type(exc).__name__}: {exc}"
        )
    if not isinstance(verdict, bool):
        return PermissionDeny(
            f"needs_approval of tool {tool} returned {type(verdict).__name__} "
            f"{verdict!r}; it must return True (ask) or False"
        )
    return verdict


async def _ask(
    ctx: RunContext[Any],
    tool: str,
    prompt: str,
    args: Any,
    on_ask: Callable[[str], None] | None,
    answer: AskAnswer | None = None,
    trace: DecisionTrace | None = None,
) -> PermissionDecision | Deferred:
    t = trace if trace is not None else DecisionTrace()
    t.prompt = prompt
    if answer is not None:
        given = answer(tool, prompt)
        if given is not None:
            t.decided_by = "pending" if isinstance(given, Deferred) else "human"
            return given
    handler = ctx.permissions.approval_handler
    if handler is None:
        t.decided_by = "policy"
        return PermissionDeny(f"{prompt} (approval required; no approval handler installed)")
    t.decided_by = "approval_handler"
    if on_ask is not None:
        on_ask(prompt)
    try:
        outcome = await handler.decide(tool, prompt, args)
    except Exception as exc:  # fail closed: no answer is no approval
        _log.warning(
            "approval handler %s raised on %s", type(handler).__name__, tool, exc_info=True
        )
        return PermissionDeny(f"{prompt}: {_raised('approval handler', handler, exc)}")
    if isinstance(outcome, ApprovalDeny):
        return PermissionDeny(f"{prompt}: {outcome.reason}")
    if isinstance(outcome, ApprovalAllow):
        return PermissionAllow()
    return PermissionDeny(
        f"{prompt}: approval handler {type(handler).__name__} returned an unknown outcome "
        f"{outcome!r} (return ApprovalAllow() or ApprovalDeny(reason))"
    )


def _settled(trace: DecisionTrace, stage: str, rule: str | None) -> None:
    """Record a later stage that settled a call, unless an ask was answered before it (the
    answer is then what let the call through, with its stage and rule)."""
    if trace.prompt is None:
        trace.at(stage, rule)


def _denied(trace: DecisionTrace, stage: str, rule: str | None) -> None:
    """Record a stage that refused a call (after an approved ask too: the refusal decides)."""
    trace.at(stage, rule)
    trace.decided_by = "policy"


def _raised(what: str, obj: object, exc: BaseException) -> str:
    """``permission policy MyPolicy raised ValueError: db down``."""
    return f"{what} {type(obj).__name__} raised {type(exc).__name__}: {exc}"
