"""Permissions: the types of the tool-call authorization pipeline.

A tool call is authorized by ``deny rules › guard rules › allow rules › mode › policy ›
AskUser``, in that order (see :mod:`helikon.core.authorize` for the evaluation):

* :class:`DenyRule` — by tool name, Bash program, or read/edit path glob; beats every mode.
* :class:`GuardRule` — higher-level Bash/write guards with action Deny or Ask; the built-in
  destructive defaults (recursive removes of ``/`` or ``~``, writes to system paths, the
  ``.git`` / ``.ssh`` / ``.env`` write breaker) are always on unless
  ``RunContext.without_default_guards()``. Ask with no approval handler is Deny.
* :class:`AllowRule` — a pre-approval in every mode (the policy is not consulted).
* :class:`PermissionMode` — DEFAULT, ACCEPT_EDITS, PLAN, BYPASS, DONT_ASK; tighten-only.
* :class:`PermissionPolicy` — canUseTool: Allow / Deny / AskUser / Replace.
* :class:`ApprovalHandler` — resolves AskUser (and Ask guards) out of band.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

from helikon.errors import ConfigError

if TYPE_CHECKING:
    from helikon.core.context import RunContext

__all__ = [
    "AllowRule",
    "ApprovalAllow",
    "ApprovalDeny",
    "ApprovalHandler",
    "ApprovalOutcome",
    "AskUser",
    "DenyRule",
    "GuardRule",
    "PermissionAllow",
    "PermissionDecision",
    "PermissionDeny",
    "PermissionMode",
    "PermissionPolicy",
    "Permissions",
    "RedactionSettings",
    "ReplaceArgs",
]


class PermissionMode(enum.StrEnum):
    """How tool calls are approved when no rule decides.

    * ``DEFAULT`` — defer to the policy (permissive when there is none).
    * ``ACCEPT_EDITS`` — auto-approve tools whose effect is ``WRITE``.
    * ``PLAN`` — deny every tool whose effect is not ``READ_ONLY``.
    * ``BYPASS`` — allow everything (deny rules and guards still apply).
    * ``DONT_ASK`` — headless lockdown: deny unless an allow rule permits; the policy is
      never invoked.
    """

    DEFAULT = "default"
    ACCEPT_EDITS = "accept_edits"
    PLAN = "plan"
    BYPASS = "bypass"
    DONT_ASK = "dont_ask"

    def tighten(self, new: PermissionMode) -> PermissionMode:
        """The mode after a requested change: from BYPASS only DONT_ASK is accepted, and
        DONT_ASK is terminal; any other change is accepted.

        Example:
            >>> PermissionMode.BYPASS.tighten(PermissionMode.PLAN)
            <PermissionMode.BYPASS: 'bypass'>
        """
        if self is PermissionMode.DONT_ASK:
            return self
        if self is PermissionMode.BYPASS:
            return new if new is PermissionMode.DONT_ASK else self
        return new


_RuleKind = Literal["tool", "bash_command", "read", "edit"]


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: _RuleKind
    value: str

    def __post_init__(self) -> None:
        if not isinstance(self.value, str) or not self.value.strip():
            raise ConfigError(f"{type(self).__name__}.{self.kind}(...) needs a non-empty string")

    @classmethod
    def tool(cls, name: str) -> Any:
        """Match calls to the tool named ``name`` (exact, case-sensitive)."""
        return cls("tool", name)

    @classmethod
    def bash_command(cls, program: str) -> Any:
        """Match ``Bash`` calls by the program of their sub-commands (see the class doc)."""
        return cls("bash_command", program)

    @classmethod
    def read(cls, glob: str) -> Any:
        """Match ``Read`` calls whose path matches a gitignore-style glob."""
        return cls("read", glob)

    @classmethod
    def edit(cls, glob: str) -> Any:
        """Match ``Write`` / ``Edit`` calls whose path matches a gitignore-style glob."""
        return cls("edit", glob)


class DenyRule(_Rule):
    """A rule that denies matching calls before anything else, in every mode.

    ``bash_command("rm")`` denies a Bash call when ANY sub-command (after splitting compound
    commands, stripping wrappers, following ``$(...)``, ``bash -c`` and the like) runs
    ``rm``; a command that cannot be analysed counts as a match (fail closed).

    Example:
        >>> DenyRule.bash_command("rm").value
        'rm'
    """


class AllowRule(_Rule):
    """A pre-approval evaluated after deny rules and guards, in every mode.

    ``bash_command("git")`` allows a Bash call only when EVERY sub-command runs ``git``
    without options that make it run arbitrary code; an unanalysable command is not allowed.
    """


@dataclass(frozen=True, slots=True)
class GuardRule:
    """A user guard on Bash commands or write paths, evaluated after the built-in guards.

    Args:
        name: the guard's name (shown by ``explain``).
        action: ``"deny"`` or ``"ask"`` (ask resolves to deny without an approval handler).
        program: match sub-commands running this program...
        args_contain: ...whose arguments include each of these (globs allowed).
        write_paths: or match writes (Write/Edit paths, Bash redirections, tee, dd of=) to
            these gitignore-style globs.
        reason: text shown to the model when the guard blocks a call.
    """

    name: str
    action: Literal["deny", "ask"] = "ask"
    program: str | None = None
    args_contain: tuple[str, ...] = ()
    write_paths: tuple[str, ...] = ()
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.action not in ("deny", "ask"):
            raise ConfigError(f"GuardRule.action must be 'deny' or 'ask', got {self.action!r}")
        if self.program is None and not self.write_paths:
            raise ConfigError(
                f"GuardRule {self.name!r} matches nothing: give program=... or write_paths=..."
            )


# ------------------------------------------------------------------------------ decisions


@dataclass(frozen=True, slots=True)
class PermissionAllow:
    """Let the call run."""


@dataclass(frozen=True, slots=True)
class PermissionDeny:
    """Refuse the call; ``reason`` is shown to the model."""

    reason: str


@dataclass(frozen=True, slots=True)
class AskUser:
    """Ask the approval handler (deny when there is none)."""

    prompt: str


@dataclass(frozen=True, slots=True)
class ReplaceArgs:
    """Run the call with these (sanitized) arguments instead."""

    args: Any


PermissionDecision: TypeAlias = PermissionAllow | PermissionDeny | AskUser | ReplaceArgs


@dataclass(frozen=True, slots=True)
class ApprovalAllow:
    """The approver allowed the call."""


@dataclass(frozen=True, slots=True)
class ApprovalDeny:
    """The approver refused the call."""

    reason: str = "denied by the approver"


ApprovalOutcome: TypeAlias = ApprovalAllow | ApprovalDeny


@runtime_checkable
class PermissionPolicy(Protocol):
    """canUseTool: decide a call that no rule and no mode decided."""

    async def check(self, ctx: RunContext[Any], tool: str, args: Any) -> PermissionDecision:
        """Return Allow, Deny, AskUser or ReplaceArgs."""
        ...


@runtime_checkable
class ApprovalHandler(Protocol):
    """Resolves an AskUser decision or an Ask guard (a human prompt, a ticket, ...)."""

    async def decide(self, tool: str, prompt: str, args: Any) -> ApprovalOutcome:
        """Return :class:`ApprovalAllow` or :class:`ApprovalDeny`."""
        ...


@dataclass(frozen=True, slots=True)
class Permissions:
    """The permission settings a run carries (see :class:`~helikon.RunContext` setters)."""

    mode: PermissionMode = PermissionMode.DEFAULT
    deny_rules: tuple[DenyRule, ...] = ()
    allow_rules: tuple[AllowRule, ...] = ()
    guard_rules: tuple[GuardRule, ...] = ()
    default_guards: bool = True
    policy: PermissionPolicy | None = None
    approval_handler: ApprovalHandler | None = None


@dataclass(frozen=True, slots=True)
class RedactionSettings:
    """Secret redaction of tool output: on by default; ``extra_secrets`` are literal values."""

    enabled: bool = True
    extra_secrets: tuple[str, ...] = field(default_factory=tuple)
