"""An agent's system prompt, from parts: text and (sync or async) functions of the run.

``Agent(instructions=...)`` gives the first part; each ``@agent.instructions`` function adds
one more, in the order they are decorated. At the start of a run (and when a handoff reaches
the agent) every part is rendered and the non-empty ones are joined with a blank line.

A function part takes the :class:`~helikon.RunContext` or nothing (``fn(ctx)`` or ``fn()``)
and returns ``str`` (``None`` counts as empty); an ``async def`` is awaited.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias, cast

from helikon.core.context import RunContext
from helikon.errors import ConfigError

__all__ = ["InstructionPart", "check_part", "render_parts"]

InstructionPart: TypeAlias = (
    str
    | Callable[[RunContext[Any]], str | Awaitable[str | None] | None]
    | Callable[[], str | Awaitable[str | None] | None]
)
"""Text, or a function ``fn(ctx)`` / ``fn()`` returning (or awaiting to) text."""


def _arity(fn: Callable[..., Any]) -> int | None:
    """How many arguments ``fn`` is called with: 1 (the ctx) or 0; ``None`` when it needs
    more than one, or a keyword-only one."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: call it with the ctx
        return 1
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 1
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    if len(required) > 1 or any(p.kind is p.KEYWORD_ONLY and p.default is p.empty for p in params):
        return None
    return 1 if positional else 0


def check_part(where: str, part: Any) -> InstructionPart:
    """``part`` if it is text or a function of zero or one argument.

    Raises:
        ConfigError: anything else, naming ``where`` and the two accepted forms.
    """
    if isinstance(part, str):
        return part
    if not callable(part):
        raise ConfigError(
            f"{where} must be a str or a function fn(ctx) -> str (sync or async), got "
            f"{type(part).__name__} {part!r}"
        )
    if _arity(part) is None:
        name = getattr(part, "__name__", type(part).__name__)
        raise ConfigError(
            f"{where}: the function {name!r} must take the run context or nothing "
            "(def fn(ctx) -> str or def fn() -> str)"
        )
    return cast(InstructionPart, part)


async def render_parts(agent: str, parts: list[InstructionPart], ctx: RunContext[Any]) -> str:
    """Every part rendered for this run, the non-empty ones joined with a blank line.

    Raises:
        ConfigError: a function returned something other than ``str`` or ``None``.
    """
    texts: list[str] = []
    for part in parts:
        if isinstance(part, str):
            text: Any = part
        else:
            text = part(ctx) if _arity(part) == 1 else part()  # type: ignore[call-arg]
            if inspect.isawaitable(text):
                text = await text
        if text is None:
            continue
        if not isinstance(text, str):
            name = getattr(part, "__name__", type(part).__name__)
            raise ConfigError(
                f"agent {agent!r}: the instructions function {name!r} returned "
                f"{type(text).__name__}, not str"
            )
        if text.strip():
            texts.append(text)
    return "\n\n".join(texts)
