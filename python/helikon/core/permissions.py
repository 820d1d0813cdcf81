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

import asyncio
import enum
import functools
import inspect
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, TypeVar, runtime_checkable

from helikon.errors import ConfigError

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

    def tighten(self, new: PermissionMode | str) -> PermissionMode:
        """The mode after a requested change: from BYPASS only DONT_ASK is accepted, and
        DONT_ASK is terminal; any other change is accepted.

        ``new`` may be a mode's value (``"plan"``); anything else raises :class:`ConfigError`.

        Example:
            >>> PermissionMode.BYPASS.tighten(PermissionMode.PLAN)
            <PermissionMode.BYPASS: 'bypass'>
        """
        new = coerce_mode("PermissionMode.tighten(...)", new)
        if self is PermissionMode.DONT_ASK:
            return self
        if self is PermissionMode.BYPASS:
            return new if new is PermissionMode.DONT_ASK else self
        return new


def coerce_mode(where: str, mode: object) -> PermissionMode:
    """``mode`` as a :class:`PermissionMode`; a mode's value (``"plan"``) is accepted.

    Raises:
        ConfigError: anything else; the message lists the valid modes.
    """
    if isinstance(mode, PermissionMode):
        return mode
    if isinstance(mode, str):
        try:
            return PermissionMode(mode)
        except ValueError:
            pass
    valid = ", ".join(f"PermissionMode.{m.name} ({m.value!r})" for m in PermissionMode)
    raise ConfigError(f"{where}: unknown permission mode {mode!r}; use one of {valid}")


_RuleKind = Literal["tool", "bash_command", "read", "edit"]
_RULE_KINDS = ("tool", "bash_command", "read", "edit")


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: _RuleKind
    value: str

    def __post_init__(self) -> None:
        if self.kind not in _RULE_KINDS:
            raise ConfigError(
                f"{type(self).__name__} kind must be one of {', '.join(map(repr, _RULE_KINDS))}, "
                f"got {self.kind!r}; build rules with {type(self).__name__}.tool(...), "
                ".bash_command(...), .read(...) or .edit(...)"
            )
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
    commands, stripping wrappers, following ``$(...)``, ``bash -c``, here-documents fed to a
    shell, ``find -exec``, shell escapes and command-valued variables such as ``PAGER``) runs
    ``rm``, a copy or link of it made in the same command, or an equivalent (``unlink``,
    ``rmdir``, ``shred -u``, ``find -delete``). A command that cannot be analysed counts as a
    match (fail closed): inline interpreter code (``python -c``) that does more than print, a
    program run from a workspace or ``/tmp`` path, anything after ``PATH`` is changed, a
    command over the analysis limits (:class:`helikon.shell.Limits`). A name-based rule cannot
    see what a program the model wrote does; the sandbox's
    ``SandboxPolicy(deny_delete=True, no_exec_in_workspace=True)`` is the kernel-enforced
    control for that.

    Raises:
        ConfigError: a ``bash_command`` value that is not one program name (letters, digits,
            ``.``, ``_``, ``+``, ``-``): a path (``"/usr/bin/curl"``: write ``"curl"``, which
            matches every spelling of the program, paths included), several words
            (``"rm -rf"``: deny the program, or write a :class:`GuardRule` for arguments),
            surrounding blanks, or a glob (``"curl*"``). Such a rule would never match, so it
            is refused rather than accepted as protecting nothing.

    Example:
        >>> DenyRule.bash_command("rm").value
        'rm'
    """

    def __post_init__(self) -> None:
        _Rule.__post_init__(self)
        if self.kind == "bash_command" and not _PROGRAM_NAME.fullmatch(self.value):
            v = self.value
            if "/" in v and v.strip() and " " not in v.strip():
                fix = f"write the program name {v.strip().rstrip('/').rsplit('/', 1)[-1]!r}"
                why = "is a path"
            elif v != v.strip():
                fix = f"write {v.strip()!r}"
                why = "has blanks around the name"
            elif any(c in v for c in "*?["):
                fix = "list each program by name"
                why = "is a glob"
            else:
                fix = "deny the program by name, or write a GuardRule for its arguments"
                why = "is not one program name"
            raise ConfigError(
                f"DenyRule.bash_command({v!r}) {why}, so it would never match; {fix} "
                "(a rule matches the program however the command spells it: "
                "/usr/bin/curl, \\curl, 'curl')"
            )


_PROGRAM_NAME = re.compile(r"[A-Za-z0-9._+][A-Za-z0-9._+-]*")


class AllowRule(_Rule):
    """A pre-approval evaluated after deny rules and guards, in every mode.

    ``bash_command`` takes a program or a prefix pattern of the command's parsed words:

    * ``"git"``: ``git`` with any arguments;
    * ``"git status"``: exactly ``git status`` (not ``git status --short``);
    * ``"git log *"``: ``git log`` and any further arguments;
    * ``"npm run test:*"``: the last word as a prefix (``test``, ``test:unit``), then any
      arguments; ``*`` inside a word matches within that word.

    A Bash call is allowed when EVERY sub-command (after splitting on ``;``, ``&&``, ``|``,
    following substitutions, ``bash -c`` and the like) is covered by SOME bash allow rule,
    without options that make it run other code. Patterns never match raw text: a prefix
    never reaches across an operator or into a substitution, and a multi-word pattern does
    not cover a command that redirects output to a file. An unanalysable command is never
    allowed; ``explain(...).uncovered`` names the part no rule covers.

    Raises:
        ConfigError: a ``bash_command`` pattern that is not one simple command of plain
            words (``"git log; rm"``, ``"git log > f"``, ``"git $(x)"``).
    """

    def __post_init__(self) -> None:
        _Rule.__post_init__(self)
        if self.kind == "bash_command":
            import json

            from helikon.shell import CommandPolicy

            try:
                CommandPolicy(json.dumps({"allow": [self.value]}))
            except ConfigError as exc:
                msg = str(exc).removeprefix("invalid command policy rules: ")
                raise ConfigError(f"AllowRule.bash_command({self.value!r}): {msg}") from None


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
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError(f"GuardRule name must be a non-empty string, got {self.name!r}")
        if self.action not in ("deny", "ask"):
            raise ConfigError(f"GuardRule.action must be 'deny' or 'ask', got {self.action!r}")
        if self.program is not None and (
            not isinstance(self.program, str) or not self.program.strip()
        ):
            raise ConfigError(
                f"GuardRule {self.name!r}: program must be one program name (a non-empty "
                f"string) or None, got {self.program!r}; use one GuardRule per program"
            )
        for attr in ("args_contain", "write_paths"):
            object.__setattr__(self, attr, self._strings(attr, getattr(self, attr)))
        if self.reason is not None and not isinstance(self.reason, str):
            raise ConfigError(
                f"GuardRule {self.name!r}: reason must be a string or None, got "
                f"{type(self.reason).__name__}"
            )
        if self.program is None and not self.write_paths:
            raise ConfigError(
                f"GuardRule {self.name!r} matches nothing: give program=... or write_paths=..."
            )

    def _strings(self, attr: str, value: object) -> tuple[str, ...]:
        """``value`` (a tuple or list of non-empty strings) as a tuple."""
        if isinstance(value, str):
            raise ConfigError(
                f"GuardRule {self.name!r}: {attr} must be a tuple of strings, got the string "
                f"{value!r} (a bare string never matches); use {attr}=({value!r},)"
            )
        if not isinstance(value, tuple | list):
            raise ConfigError(
                f"GuardRule {self.name!r}: {attr} must be a tuple of strings, got "
                f"{type(value).__name__}; use e.g. {attr}=('...',)"
            )
        for i, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                raise ConfigError(
                    f"GuardRule {self.name!r}: {attr}[{i}] must be a non-empty string, got {item!r}"
                )
        return tuple(value)


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
    """canUseTool: decide a call that no rule and no mode decided.

    ``ctx`` is the run's :class:`~helikon.RunContext` (annotate it so in your policy; this
    module sits below the context, which carries the policy, so it does not name the class).
    """

    async def check(self, ctx: Any, tool: str, args: Any) -> PermissionDecision:
        """Return Allow, Deny, AskUser or ReplaceArgs (``ctx``: the run's ``RunContext``)."""
        ...


@runtime_checkable
class ApprovalHandler(Protocol):
    """Resolves an AskUser decision or an Ask guard (a human prompt, a ticket, ...)."""

    async def decide(self, tool: str, prompt: str, args: Any) -> ApprovalOutcome:
        """Return :class:`ApprovalAllow` or :class:`ApprovalDeny`."""
        ...


@dataclass(frozen=True, slots=True)
class Permissions:
    """The permission settings a run carries (see :class:`~helikon.RunContext` setters).

    Raises:
        ConfigError: a field has the wrong type (a mode that is not a :class:`PermissionMode`
            or its value, a rule list holding something else, a policy or handler without its
            ``async`` method). The ``RunContext.with_*`` setters check the same, naming
            themselves.
    """

    mode: PermissionMode = PermissionMode.DEFAULT
    deny_rules: tuple[DenyRule, ...] = ()
    allow_rules: tuple[AllowRule, ...] = ()
    guard_rules: tuple[GuardRule, ...] = ()
    default_guards: bool = True
    policy: PermissionPolicy | None = None
    approval_handler: ApprovalHandler | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "mode", coerce_mode("Permissions(mode=...)", self.mode))
        set_(
            self,
            "deny_rules",
            check_rules("Permissions(deny_rules=...)", self.deny_rules, DenyRule),
        )
        set_(
            self,
            "allow_rules",
            check_rules("Permissions(allow_rules=...)", self.allow_rules, AllowRule),
        )
        set_(
            self,
            "guard_rules",
            check_rules("Permissions(guard_rules=...)", self.guard_rules, GuardRule),
        )
        if self.policy is not None:
            check_policy("Permissions(policy=...)", self.policy)
        if self.approval_handler is not None:
            check_approval_handler("Permissions(approval_handler=...)", self.approval_handler)


@dataclass(frozen=True, slots=True)
class RedactionSettings:
    """Secret redaction of tool output: on by default; ``extra_secrets`` are literal values.

    Raises:
        ConfigError: ``extra_secrets`` is a single string or holds a non-string (the message
            names the index, never a value).
    """

    enabled: bool = True
    extra_secrets: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "extra_secrets",
            check_secrets("RedactionSettings(extra_secrets=...)", self.extra_secrets),
        )


# ------------------------------------------------------------------------------ checks

_R = TypeVar("_R", DenyRule, AllowRule, GuardRule)


def _spelled(rule: object) -> str:
    """How a rule is written: ``DenyRule.tool('x')``, ``GuardRule('name', ...)``."""
    if isinstance(rule, _Rule):
        return f"{type(rule).__name__}.{rule.kind}({rule.value!r})"
    if isinstance(rule, GuardRule):
        return f"GuardRule({rule.name!r}, ...)"
    return repr(rule)


def _setter_for(cls: type) -> str:
    if cls is DenyRule:
        return "with_deny_rules"
    return "with_allow_rules" if cls is AllowRule else "with_guard_rules"


def _a(name: str) -> str:
    return f"an {name}" if name[:1] in "AEIOU" else f"a {name}"


def _rule_fix(cls: type, rule: object) -> str:
    """How to write ``rule`` (a wrong-typed item) as a ``cls``."""
    name = cls.__name__
    if isinstance(rule, _Rule | GuardRule) and not isinstance(rule, cls):
        other = type(rule).__name__
        where = f"{_a(other)} belongs in {_setter_for(type(rule))}"
        if cls is not GuardRule and isinstance(rule, _Rule):
            return f"{where}; for {_a(name)} use {name}.{rule.kind}({rule.value!r})"
        if cls is GuardRule:
            return f"{where}; build guards with GuardRule('name', program=..., args_contain=(...))"
        return f"{where}; build rules with {name}.tool(...), .bash_command(...), ..."
    if cls is GuardRule:
        return "build guards with GuardRule('name', program='git', args_contain=('push', '-f'))"
    if isinstance(rule, str):
        return (
            f"use {name}.tool({rule!r}) for a tool or {name}.bash_command({rule!r}) for a "
            "Bash program"
        )
    return f"build rules with {name}.tool(...), .bash_command(...), .read(...) or .edit(...)"


def check_rules(where: str, rules: object, cls: type[_R]) -> tuple[_R, ...]:
    """``rules`` as a tuple of ``cls`` (:class:`DenyRule`, :class:`AllowRule` or
    :class:`GuardRule`).

    Raises:
        ConfigError: ``rules`` is a single rule, a string or not a list, or an item is not a
            ``cls``; the message names ``where``, the index and the fix.
    """
    name = cls.__name__
    if isinstance(rules, _Rule | GuardRule):
        if isinstance(rules, cls):
            fix = f"pass [{_spelled(rules)}]"
        else:
            fix = f"pass a list of {name}s ({_rule_fix(cls, rules)})"
        raise ConfigError(f"{where} takes a list of {name}s, got a single {_spelled(rules)}: {fix}")
    if isinstance(rules, str):
        hint = (
            f"[{name}.tool({rules!r})] or [{name}.bash_command({rules!r})]"
            if cls is not GuardRule
            else "[GuardRule(...)]"
        )
        raise ConfigError(f"{where} takes a list of {name}s, got the string {rules!r}: pass {hint}")
    if isinstance(rules, bytes | dict) or not isinstance(rules, Iterable):
        raise ConfigError(
            f"{where} takes a list of {name}s, got {type(rules).__name__}; pass [] for none"
        )
    out: list[_R] = []
    for i, rule in enumerate(rules):
        if isinstance(rule, cls):
            out.append(rule)
            continue
        if isinstance(rule, str):
            got = f"the string {rule!r}"
        elif isinstance(rule, _Rule | GuardRule):
            got = _spelled(rule)
        else:
            got = _a(type(rule).__name__)
        raise ConfigError(f"{where}: rules[{i}] is {got}, not {_a(name)}; {_rule_fix(cls, rule)}")
    return tuple(out)


def _is_async(fn: object) -> bool:
    return inspect.iscoroutinefunction(fn) or asyncio.iscoroutinefunction(fn)


def require_async_method(where: str, obj: object, method: str, signature: str, what: str) -> None:
    """Raise :class:`ConfigError` unless ``obj`` has an ``async def`` method ``method``.

    Args:
        where: the argument being checked, e.g. ``"RunContext.with_permission_policy(...)"``.
        obj: the object given.
        method: the method it needs, e.g. ``"check"``.
        signature: its parameters for the message, e.g. ``"self, ctx, tool, args"``.
        what: what ``obj`` should be, e.g. ``"a permission policy"``.
    """
    need = f"an object with an `async def {method}({signature})` method"
    if isinstance(obj, type):
        raise ConfigError(
            f"{where}: got the class {obj.__name__}, not an instance; pass {obj.__name__}()"
        )
    fn = getattr(obj, method, None)
    if not callable(fn):
        if inspect.isroutine(obj) or isinstance(obj, functools.partial):
            got = f"the function {getattr(obj, '__name__', repr(obj))!r}"
        else:
            got = f"a {type(obj).__name__} with no {method}() method"
        raise ConfigError(f"{where}: got {got}; {what} is {need}")
    if not _is_async(fn):
        raise ConfigError(
            f"{where}: {type(obj).__name__}.{method} is not a coroutine function; {what} needs "
            f"`async def {method}({signature})` (a plain `def` cannot be awaited)"
        )


def check_policy(where: str, policy: object) -> None:
    """Raise :class:`ConfigError` unless ``policy`` has ``async def check(ctx, tool, args)``."""
    require_async_method(where, policy, "check", "self, ctx, tool, args", "a permission policy")


def check_approval_handler(where: str, handler: object) -> None:
    """Raise :class:`ConfigError` unless ``handler`` has ``async def decide(...)``."""
    require_async_method(
        where, handler, "decide", "self, tool, prompt, args", "an approval handler"
    )


def check_secrets(where: str, secrets: object) -> tuple[str, ...]:
    """``secrets`` as a tuple of strings.

    Raises:
        ConfigError: ``secrets`` is one string (``"pass a list: [secret]"``), not a list, or
            holds a non-string (named by index; a secret value never appears in a message).
    """
    if isinstance(secrets, str | bytes):
        raise ConfigError(
            f"{where} takes a list of secret strings, got a single "
            f"{type(secrets).__name__} (it would be split into characters); pass a list: [secret]"
        )
    if not isinstance(secrets, Iterable) or isinstance(secrets, dict):
        raise ConfigError(
            f"{where} takes a list of secret strings, got {type(secrets).__name__}; "
            "pass a list: [secret]"
        )
    out = tuple(secrets)
    for i, value in enumerate(out):
        if not isinstance(value, str):
            raise ConfigError(f"{where}: secrets[{i}] must be a str, got {type(value).__name__}")
    return out
