"""Per-run state: :class:`RunConfig` knobs, :class:`RunContext` and the tools' narrower view."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, TypeVar

from helikon.core.cancel import CancellationToken
from helikon.core.compaction import Compaction
from helikon.core.hooks import HookRegistry
from helikon.core.permissions import (
    AllowRule,
    ApprovalHandler,
    DenyRule,
    GuardRule,
    PermissionMode,
    PermissionPolicy,
    Permissions,
    RedactionSettings,
    check_approval_handler,
    check_policy,
    check_rules,
    check_secrets,
    coerce_mode,
)
from helikon.core.usage_limits import UsageLimits
from helikon.errors import ConfigError
from helikon.redaction import unusable_secret_reason
from helikon.tracing import TracerHandle

__all__ = ["RunConfig", "RunContext", "ToolContext"]

C = TypeVar("C")

_log = logging.getLogger("helikon.redaction")


def _unusable_reason(value: str) -> str | None:
    """Why the scanner would ignore ``value`` (checked as given and trimmed), or ``None``.

    The scanner registers a value and its trimmed form; it is ignored only when both are.
    The reasons come from the scanner itself (``helikon_redact::unusable_reason``).
    """
    reasons = []
    for candidate in (value, value.strip()):
        reason = unusable_secret_reason(candidate)
        if reason is None:
            return None
        reasons.append(reason)
    return reasons[-1]


def _warn_ignored_secrets(secrets: tuple[str, ...]) -> None:
    """Log how many of ``secrets`` the scanner will ignore, and why (never the values)."""
    ignored: dict[str, list[int]] = {}
    for i, value in enumerate(secrets):
        reason = _unusable_reason(value)
        if reason is not None:
            ignored.setdefault(reason, []).append(i)
    if not ignored:
        return
    total = sum(len(v) for v in ignored.values())
    parts = "; ".join(
        f"{len(idx)} {reason} (at index {', '.join(map(str, idx[:10]))}"
        f"{', ...' if len(idx) > 10 else ''})"
        for reason, idx in ignored.items()
    )
    _log.warning(
        "with_extra_secrets: %d of %d secrets will NOT be redacted: %s",
        total,
        len(secrets),
        parts,
    )


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Per-run knobs.

    Args:
        max_turns: model turns before the run fails with ``MaxTurnsExceeded`` (default 16).
        parallel_tool_call_limit: cap on concurrently running tool calls; ``None`` = no cap.
        max_agent_depth: nesting limit across handoffs and agent-as-tool runs (default 8).
        timeout: wall-clock deadline for the whole run, in seconds; ``None`` = none.
        approval: what a call that asks for approval does. ``"inline"`` (default): the
            approval handler answers while the run waits (no handler = deny). ``"defer"``:
            the run pauses and ends with ``RunInterrupted`` carrying a ``RunState``; the
            handler is not consulted. See ``Runner.resume``.
        usage_limits: request and token budgets shared with the run's handoff targets and
            agent-as-tool sub-runs (:class:`~helikon.UsageLimits`); past one the run fails
            with ``UsageLimitExceeded``. ``None`` (default) = no budget.
        max_handoffs: handoffs one run may make (across its handoff chain, a triage <->
            specialist cycle included); the next one fails the run with
            ``MaxHandoffsExceeded``. ``None`` (default): only ``max_agent_depth`` bounds them
            (each handoff nests one level).

    Raises:
        ConfigError: a value is out of range (the message names the field).

    Example:
        >>> RunConfig(max_turns=4).max_turns
        4
    """

    max_turns: int = 16
    parallel_tool_call_limit: int | None = None
    max_agent_depth: int = 8
    timeout: float | None = None
    approval: Literal["inline", "defer"] = "inline"
    usage_limits: UsageLimits | None = None
    max_handoffs: int | None = None

    def __post_init__(self) -> None:
        if self.max_handoffs is not None and (
            isinstance(self.max_handoffs, bool)
            or not isinstance(self.max_handoffs, int)
            or self.max_handoffs < 0
        ):
            raise ConfigError(
                f"RunConfig.max_handoffs must be an int >= 0 or None, got {self.max_handoffs!r}"
            )
        if self.usage_limits is not None and not isinstance(self.usage_limits, UsageLimits):
            raise ConfigError(
                "RunConfig.usage_limits must be a UsageLimits(request_limit=..., "
                f"total_tokens_limit=...) or None, got {type(self.usage_limits).__name__}"
            )
        if self.approval not in ("inline", "defer"):
            raise ConfigError(
                f"RunConfig.approval must be 'inline' or 'defer', got {self.approval!r}"
            )
        if self.max_turns < 1:
            raise ConfigError(f"RunConfig.max_turns must be >= 1, got {self.max_turns}")
        if self.parallel_tool_call_limit is not None and self.parallel_tool_call_limit < 1:
            raise ConfigError(
                "RunConfig.parallel_tool_call_limit must be >= 1 or None (no cap), got "
                f"{self.parallel_tool_call_limit}"
            )
        if self.max_agent_depth < 1:
            raise ConfigError(f"RunConfig.max_agent_depth must be >= 1, got {self.max_agent_depth}")
        if self.timeout is not None and self.timeout <= 0:
            raise ConfigError(f"RunConfig.timeout must be > 0 seconds or None, got {self.timeout}")


@dataclass(frozen=True, slots=True)
class RunContext(Generic[C]):
    """The state one run shares across the loop, tools, hooks and sub-agents.

    Build with :meth:`ephemeral` for the all-defaults case and override parts with the
    ``with_*`` setters, which return a new context (the context itself is immutable; ``state``
    is the one shared mutable dict).

    Attributes:
        user_ctx: your application context (any object; ``None`` when you need none).
        cancel: the run's cancellation token.
        state: run-scoped key/value state shared with sub-agents.
        agent_depth: how deep in an agent nesting chain this run is (0 = root).
        tracer: trace attributes (session id, user id, tags) for the run's spans.
        hooks: the run-level :class:`~helikon.HookRegistry` (after agent-level hooks).
        permissions: the permission pipeline's settings (mode, rules, policy, approval).
        redaction: secret redaction of tool output (on by default).
        compaction: live compaction of the conversation before model calls (``None``: off;
            see :mod:`helikon.core.compaction`).

    Example:
        >>> ctx = RunContext.ephemeral({"user": "u-1"})
        >>> ctx.user_ctx["user"]
        'u-1'
    """

    user_ctx: C
    cancel: CancellationToken = field(default_factory=CancellationToken)
    state: dict[str, Any] = field(default_factory=dict)
    agent_depth: int = 0
    tracer: TracerHandle = field(default_factory=TracerHandle)
    hooks: HookRegistry = field(default_factory=HookRegistry)
    permissions: Permissions = field(default_factory=Permissions)
    redaction: RedactionSettings = field(default_factory=RedactionSettings)
    compaction: Compaction | None = None
    decision_log: Callable[[dict[str, Any]], None] | None = field(
        default=None, repr=False, compare=False
    )
    """Internal: where the tool pipeline reports each permission decision, as the fields of a
    ``permission_decided`` session event (the runner sets it to record them in the session)."""
    remembered_answers: dict[str, str] | None = field(default=None, repr=False, compare=False)
    """Internal: tool name -> ``"approve"`` / ``"deny"`` answered with ``remember=True``, for
    the whole run: a pattern sets one dict for all its steps (and nested patterns), so an
    answer remembered in one step holds in the later ones (``None``: each agent run keeps its
    own)."""

    @classmethod
    def ephemeral(cls, user_ctx: C = None) -> RunContext[C]:  # type: ignore[assignment]
        """A context with a fresh token, empty state and hooks, default permissions."""
        return cls(user_ctx=user_ctx)

    def with_cancel(self, cancel: CancellationToken) -> RunContext[C]:
        """A copy using ``cancel`` as the run's token."""
        return replace(self, cancel=cancel)

    def with_compaction(self, compaction: Compaction | None) -> RunContext[C]:
        """A copy that compacts the conversation before a model call once it counts more
        than ``compaction.threshold`` tokens (``None`` turns it off).

        Raises:
            ConfigError: ``compaction`` is not a :class:`~helikon.core.compaction.Compaction`.
        """
        if compaction is not None and not isinstance(compaction, Compaction):
            raise ConfigError(
                "RunContext.with_compaction(...) takes a Compaction(model, threshold, counter), "
                f"got {type(compaction).__name__}"
            )
        return replace(self, compaction=compaction)

    def with_user_ctx(self, user_ctx: C) -> RunContext[C]:
        """A copy carrying ``user_ctx``."""
        return replace(self, user_ctx=user_ctx)

    def with_tracer(self, tracer: TracerHandle) -> RunContext[C]:
        """A copy whose spans carry ``tracer``'s session id, user id and tags."""
        return replace(self, tracer=tracer)

    def with_hooks(self, hooks: HookRegistry) -> RunContext[C]:
        """A copy with ``hooks`` as the run-level hook registry.

        Raises:
            ConfigError: ``hooks`` is not a :class:`HookRegistry` (pass
                ``HookRegistry([hook, ...])``).
        """
        if not isinstance(hooks, HookRegistry):
            raise ConfigError(
                f"RunContext.with_hooks(...) takes a HookRegistry, got {type(hooks).__name__}; "
                "pass with_hooks(HookRegistry([hook, ...]))"
            )
        return replace(self, hooks=hooks)

    def with_permission_mode(self, mode: PermissionMode | str) -> RunContext[C]:
        """A copy with ``mode``, if the change tightens (see :meth:`PermissionMode.tighten`).

        A refused loosening keeps the current mode: from ``BYPASS`` only ``DONT_ASK`` is
        accepted, and ``DONT_ASK`` is terminal. A mode's value (``"plan"``) is accepted.

        Raises:
            ConfigError: ``mode`` is neither a :class:`PermissionMode` nor one's value.
        """
        new = coerce_mode("RunContext.with_permission_mode(...)", mode)
        p = self.permissions
        return replace(self, permissions=replace(p, mode=p.mode.tighten(new)))

    def with_deny_rules(self, rules: Sequence[DenyRule]) -> RunContext[C]:
        """A copy with ``rules`` as the deny rules (evaluated first, even under Bypass).

        The list REPLACES the current deny rules; to extend them pass
        ``[*ctx.permissions.deny_rules, DenyRule...]``.

        Raises:
            ConfigError: ``rules`` is not a list of :class:`DenyRule` (the message names the
                index and the fix).
        """
        checked = check_rules("RunContext.with_deny_rules(...)", rules, DenyRule)
        return replace(self, permissions=replace(self.permissions, deny_rules=checked))

    def with_allow_rules(self, rules: Sequence[AllowRule]) -> RunContext[C]:
        """A copy with ``rules`` as the allow rules (pre-approvals in every mode).

        The list REPLACES the current allow rules; to extend them pass
        ``[*ctx.permissions.allow_rules, AllowRule...]``.

        Raises:
            ConfigError: ``rules`` is not a list of :class:`AllowRule` (a :class:`DenyRule`
                here is an error, never an approval).
        """
        checked = check_rules("RunContext.with_allow_rules(...)", rules, AllowRule)
        return replace(self, permissions=replace(self.permissions, allow_rules=checked))

    def with_guard_rules(self, rules: Sequence[GuardRule]) -> RunContext[C]:
        """A copy with ``rules`` as the user guard rules (after the built-in guards).

        The list REPLACES the current guard rules; to extend them pass
        ``[*ctx.permissions.guard_rules, GuardRule(...)]``.

        Raises:
            ConfigError: ``rules`` is not a list of :class:`GuardRule`.
        """
        checked = check_rules("RunContext.with_guard_rules(...)", rules, GuardRule)
        return replace(self, permissions=replace(self.permissions, guard_rules=checked))

    def without_default_guards(self) -> RunContext[C]:
        """A copy without the built-in destructive-command guards."""
        return replace(self, permissions=replace(self.permissions, default_guards=False))

    def with_permission_policy(self, policy: PermissionPolicy | None) -> RunContext[C]:
        """A copy consulting ``policy`` (canUseTool) after the mode.

        A policy whose ``check`` raises denies that call (the model reads the error).

        Raises:
            ConfigError: ``policy`` has no ``async def check(self, ctx, tool, args)``.
        """
        if policy is not None:
            check_policy("RunContext.with_permission_policy(...)", policy)
        return replace(self, permissions=replace(self.permissions, policy=policy))

    def with_approval_handler(self, handler: ApprovalHandler | None) -> RunContext[C]:
        """A copy resolving AskUser decisions with ``handler`` (none = deny).

        A handler whose ``decide`` raises, or returns anything but :class:`ApprovalAllow`,
        denies that call.

        Raises:
            ConfigError: ``handler`` has no ``async def decide(self, tool, prompt, args)``.
        """
        if handler is not None:
            check_approval_handler("RunContext.with_approval_handler(...)", handler)
        return replace(self, permissions=replace(self.permissions, approval_handler=handler))

    def with_extra_secrets(self, secrets: Sequence[str]) -> RunContext[C]:
        """A copy that also redacts these literal values from tool output (appends).

        Values the scanner ignores (shorter than 8 bytes, all digits, blank or a common word
        such as ``"password"``) are logged as a warning on the ``helikon.redaction`` logger,
        by count and index only.

        Raises:
            ConfigError: ``secrets`` is a single string (pass a list: ``[secret]``) or holds
                a non-string.
        """
        added = check_secrets("RunContext.with_extra_secrets(...)", secrets)
        _warn_ignored_secrets(added)
        r = self.redaction
        return replace(self, redaction=replace(r, extra_secrets=(*r.extra_secrets, *added)))

    def without_output_redaction(self) -> RunContext[C]:
        """A copy that does not redact tool output."""
        return replace(self, redaction=replace(self.redaction, enabled=False))

    def nested(self) -> RunContext[C]:
        """The context for a sub-agent: same token, state, hooks and permissions; depth + 1.

        ``BYPASS`` and ``DONT_ASK`` propagate as they are, like every other setting.
        """
        return replace(self, agent_depth=self.agent_depth + 1)


@dataclass(frozen=True, slots=True)
class ToolContext(Generic[C]):
    """A tool's view of the run: no session handle, so tools cannot bypass persistence.

    Attributes:
        user_ctx: the run's application context.
        state: run-scoped state shared across sub-agents.
        cancel: the run's cancellation token; long tools should honour it.
        call_id: the id of the tool call being served.
        agent_name: the agent that made the call.
        agent_depth: nesting depth of that agent.
        max_agent_depth: the run's nesting limit.
        permission_mode: the run's permission mode (a tool may branch on it).
    """

    user_ctx: C
    state: dict[str, Any]
    cancel: CancellationToken
    call_id: str
    agent_name: str
    agent_depth: int = 0
    max_agent_depth: int = 8
    permission_mode: PermissionMode = PermissionMode.DEFAULT
