"""Guardrails: content checks on the text entering and leaving an agent.

Input guardrails see the user's text and run concurrently with the first model call; output
guardrails see the final answer before it is returned. A ``Tripwire`` halts the run with a
``GuardrailTriggered`` event and a ``RunFailed``; a guardrail that raises, or returns anything
but ``Pass``/``Tripwire``, counts as a tripwire of kind ``other``.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

from helikon.core.permissions import require_async_method
from helikon.errors import ConfigError

if TYPE_CHECKING:
    from helikon.core.context import RunContext

__all__ = [
    "Guardrail",
    "GuardrailInput",
    "GuardrailKind",
    "GuardrailVerdict",
    "Pass",
    "Tripwire",
    "check_guardrail",
    "run_guardrails",
]


class GuardrailKind(enum.StrEnum):
    """What kind of policy a tripwire enforces."""

    INPUT_POLICY = "input_policy"
    OUTPUT_POLICY = "output_policy"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class GuardrailInput:
    """The text under check: ``user_text`` (entering) or ``model_output`` (leaving)."""

    source: Literal["user_text", "model_output"]
    text: str


@dataclass(frozen=True, slots=True)
class Pass:
    """All clear."""


@dataclass(frozen=True, slots=True)
class Tripwire:
    """Halt the run. ``info`` is free-form JSON-serializable data.

    ``kind`` may be given as a :class:`GuardrailKind` value (``"input_policy"``).

    Raises:
        ConfigError: ``kind`` is neither a :class:`GuardrailKind` nor one's value.

    Example:
        >>> Tripwire("input_policy").kind
        <GuardrailKind.INPUT_POLICY: 'input_policy'>
    """

    kind: GuardrailKind = GuardrailKind.OTHER
    info: Any = None

    def __post_init__(self) -> None:
        kind = self.kind
        if isinstance(kind, GuardrailKind):
            return
        if isinstance(kind, str):
            try:
                object.__setattr__(self, "kind", GuardrailKind(kind))
                return
            except ValueError:
                pass
        valid = ", ".join(f"GuardrailKind.{k.name} ({k.value!r})" for k in GuardrailKind)
        raise ConfigError(f"Tripwire(kind=...): unknown kind {kind!r}; use one of {valid}")


GuardrailVerdict: TypeAlias = Pass | Tripwire


@runtime_checkable
class Guardrail(Protocol):
    """A content check. Raise to report a failure of the guardrail itself."""

    async def check(self, ctx: RunContext[Any], input: GuardrailInput) -> GuardrailVerdict:
        """Return :class:`Pass` or a :class:`Tripwire`."""
        ...


def check_guardrail(where: str, guardrail: object) -> None:
    """Raise :class:`ConfigError` unless ``guardrail`` has ``async def check(self, ctx, input)``.

    ``where`` names the argument in the message, e.g. ``"Agent(input_guardrails=...)[0]"``.
    """
    require_async_method(where, guardrail, "check", "self, ctx, input", "a guardrail")


async def run_guardrails(
    guards: Sequence[Guardrail],
    ctx: RunContext[Any],
    input: GuardrailInput,
) -> Tripwire | None:
    """Run ``guards`` concurrently; the first tripwire (in list order) or ``None``.

    A guardrail that raises is a tripwire of kind ``other`` whose ``info`` names the error;
    so is one that returns anything but :class:`Pass` or :class:`Tripwire` (``True``,
    ``None``, a string): ``info["error"]`` names the guardrail and the value (fail closed).
    """
    import asyncio

    async def one(g: Guardrail) -> Tripwire | None:
        try:
            verdict = await g.check(ctx, input)
        except Exception as exc:
            return Tripwire(GuardrailKind.OTHER, {"error": f"{type(exc).__name__}: {exc}"})
        if isinstance(verdict, Tripwire):
            return verdict
        if isinstance(verdict, Pass):
            return None
        shown = repr(verdict)
        if len(shown) > 200:
            shown = shown[:200] + "..."
        return Tripwire(
            GuardrailKind.OTHER,
            {
                "error": f"guardrail {type(g).__name__} returned {shown}, not Pass() or "
                "Tripwire(...)"
            },
        )

    results = await asyncio.gather(*(one(g) for g in guards))
    return next((r for r in results if r is not None), None)
