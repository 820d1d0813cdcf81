"""Hooks: lifecycle interceptors that observe a run and may steer it.

A :class:`Hook` receives each :data:`HookEvent` and returns a :data:`HookDecision`. When
several hooks fire for one event, :func:`fold_decisions` combines them: the first ``Deny``
short-circuits, ``ReplaceInput`` / ``ReplaceOutput`` are last-writer-wins, and
``InjectSystemMessage`` accumulates in fire order. Agent-level hooks fire before run-level
hooks (the :class:`HookRegistry` on the :class:`~helikon.RunContext`).

Hooks are observation and side effects; authorization is the permission pipeline's job and
content checks are guardrails'.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias, runtime_checkable

from helikon.core.permissions import require_async_method
from helikon.errors import ConfigError, HookError

_log = logging.getLogger("helikon.hooks")

__all__ = [
    "Allow",
    "Deny",
    "FoldedDecision",
    "Hook",
    "HookDecision",
    "HookError",
    "HookEvent",
    "HookRegistry",
    "InjectSystemMessage",
    "OnHandoff",
    "OnRunComplete",
    "OnRunFailed",
    "OnRunStart",
    "OnSubagentStop",
    "OnTurnStart",
    "PostToolUse",
    "PreToolUse",
    "ReplaceInput",
    "ReplaceOutput",
    "check_hook",
    "check_hooks",
    "fire",
    "fire_quietly",
    "fold_decisions",
]


# ------------------------------------------------------------------------------ events


@dataclass(frozen=True, slots=True)
class OnRunStart:
    """A run is starting (``agent`` is the root agent's name)."""

    agent: str


@dataclass(frozen=True, slots=True)
class OnTurnStart:
    """A model turn is starting (0-based)."""

    turn: int


@dataclass(frozen=True, slots=True)
class PreToolUse:
    """A tool is about to run with ``args``; ``ReplaceInput`` rewrites them."""

    tool: str
    args: Any
    call_id: str = ""


@dataclass(frozen=True, slots=True)
class PostToolUse:
    """A tool returned ``output`` (its text); ``ReplaceOutput`` rewrites it."""

    tool: str
    output: str
    call_id: str = ""
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class OnHandoff:
    """Control passes from one agent to another."""

    from_agent: str
    to_agent: str


@dataclass(frozen=True, slots=True)
class OnRunComplete:
    """The run completed successfully (best effort under cancellation)."""

    agent: str


@dataclass(frozen=True, slots=True)
class OnRunFailed:
    """The run ended without an answer: it failed or was cancelled (the terminal hook of a
    run that does not complete). ``kind`` is the error's kind (``Cancelled``,
    ``MaxTurnsExceeded``, ...), ``message`` its text. Decisions are ignored, and a hook
    that raises is logged: the run's own failure is what the caller gets."""

    agent: str
    kind: str
    message: str


@dataclass(frozen=True, slots=True)
class OnSubagentStop:
    """A sub-agent (handoff target) finished."""

    agent: str


HookEvent: TypeAlias = (
    OnRunStart
    | OnTurnStart
    | PreToolUse
    | PostToolUse
    | OnHandoff
    | OnRunComplete
    | OnRunFailed
    | OnSubagentStop
)


# ------------------------------------------------------------------------------ decisions


@dataclass(frozen=True, slots=True)
class Allow:
    """Proceed unchanged."""


@dataclass(frozen=True, slots=True)
class Deny:
    """Block the event; ``reason`` is surfaced to the agent."""

    reason: str


@dataclass(frozen=True, slots=True)
class ReplaceInput:
    """Rewrite the value the runner is about to use (e.g. PreToolUse args)."""

    value: Any


@dataclass(frozen=True, slots=True)
class ReplaceOutput:
    """Rewrite the value the runner just observed (e.g. PostToolUse output text)."""

    value: Any


@dataclass(frozen=True, slots=True)
class InjectSystemMessage:
    """Add a system message to the next model call."""

    text: str


HookDecision: TypeAlias = Allow | Deny | ReplaceInput | ReplaceOutput | InjectSystemMessage


@dataclass(slots=True)
class FoldedDecision:
    """The combined decision of every hook that fired for one event."""

    deny: str | None = None
    replace_input: tuple[Any] | None = None
    replace_output: tuple[Any] | None = None
    inject: list[str] = field(default_factory=list)


def fold_decisions(decisions: Iterable[HookDecision]) -> FoldedDecision:
    """Fold decisions in fire order: first Deny wins, Replace* last-writer-wins.

    Example:
        >>> f = fold_decisions([ReplaceInput(1), InjectSystemMessage("a"), ReplaceInput(2)])
        >>> (f.replace_input, f.inject, f.deny)
        ((2,), ['a'], None)
    """
    out = FoldedDecision()
    for d in decisions:
        if isinstance(d, Deny):
            out.deny = d.reason
            return out
        if isinstance(d, ReplaceInput):
            out.replace_input = (d.value,)
        elif isinstance(d, ReplaceOutput):
            out.replace_output = (d.value,)
        elif isinstance(d, InjectSystemMessage):
            out.inject.append(d.text)
    return out


@runtime_checkable
class Hook(Protocol):
    """A lifecycle interceptor.

    ``ctx`` is the run's :class:`~helikon.RunContext` (annotate it so in your hook; this
    module sits below the context, which carries the hooks, so it does not name the class).
    """

    async def on_event(self, ctx: Any, event: HookEvent) -> HookDecision:
        """Observe ``event`` (``ctx``: the run's ``RunContext``); return :class:`Allow` to
        proceed unchanged."""
        ...


class HookRegistry:
    """The run-level hook list carried by a :class:`~helikon.RunContext`.

    Shared (not copied) across handed-off and sub-agent contexts.

    Example:
        >>> reg = HookRegistry()
        >>> reg.is_empty()
        True
    """

    def __init__(self, hooks: Iterable[Hook] = ()) -> None:
        self._hooks: list[Hook] = check_hooks("HookRegistry(...)", hooks)

    def push(self, hook: Hook) -> None:
        """Append a hook (fires after those already registered).

        Raises:
            ConfigError: ``hook`` has no ``async def on_event(self, ctx, event)``.
        """
        check_hook("HookRegistry.push(...)", hook)
        self._hooks.append(hook)

    def is_empty(self) -> bool:
        """True when no hook is registered."""
        return not self._hooks

    def __iter__(self) -> Iterator[Hook]:
        return iter(self._hooks)

    def __len__(self) -> int:
        return len(self._hooks)


def check_hook(where: str, hook: object) -> None:
    """Raise :class:`ConfigError` unless ``hook`` has ``async def on_event(self, ctx, event)``.

    ``where`` names the argument in the message, e.g. ``"Agent(hooks=...): hooks[0]"``.

    Example:
        >>> check_hook("Agent(hooks=...): hooks[0]", lambda ctx, event: None)
        Traceback (most recent call last):
        ...
        helikon.errors.ConfigError: Agent(hooks=...): hooks[0]: got the function '<lambda>'; ...
    """
    require_async_method(where, hook, "on_event", "self, ctx, event", "a hook")


def check_hooks(where: str, hooks: object) -> list[Hook]:
    """``hooks`` as a list, each checked by :func:`check_hook` (named ``hooks[i]``).

    Raises:
        ConfigError: ``hooks`` is a single hook (pass ``[hook]``) or not a list, or an item is
            not a hook.
    """
    if callable(getattr(hooks, "on_event", None)):
        raise ConfigError(
            f"{where} takes a list of hooks, got a single {type(hooks).__name__}: pass [hook]"
        )
    if isinstance(hooks, str | bytes | dict) or not isinstance(hooks, Iterable):
        raise ConfigError(f"{where} takes a list of hooks, got {type(hooks).__name__}")
    out = list(hooks)
    for i, hook in enumerate(out):
        check_hook(f"{where}: hooks[{i}]", hook)
    return out


async def fire(hooks: Iterable[Hook], ctx: Any, event: HookEvent) -> FoldedDecision:
    """Fire ``event`` at each hook in order and fold the decisions (stops at a Deny).

    ``ctx`` is the run's ``RunContext``, handed to each hook as it is.

    Raises:
        HookError: a hook raised (wrapping its exception).
    """
    decisions: list[HookDecision] = []
    for hook in hooks:
        try:
            decision = await hook.on_event(ctx, event)
        except Exception as exc:
            raise HookError(hook, event, exc) from exc
        decisions.append(decision)
        if isinstance(decision, Deny):
            break
    return fold_decisions(decisions)


async def fire_quietly(hooks: Iterable[Hook], ctx: Any, event: HookEvent) -> None:
    """Fire ``event`` at every hook, logging (not raising) what a hook raises."""
    for hook in hooks:
        try:
            await hook.on_event(ctx, event)
        except Exception:
            _log.warning(
                "hook %s raised on %s", type(hook).__name__, type(event).__name__, exc_info=True
            )
