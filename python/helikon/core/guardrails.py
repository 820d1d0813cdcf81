"""Guardrails: content checks on the text entering and leaving an agent.

Input guardrails see the user's text and run concurrently with the first model call; output
guardrails see the final answer before it is returned. A ``Tripwire`` halts the run with a
``GuardrailTriggered`` event and a ``RunFailed``; a guardrail that raises counts as a tripwire
of kind ``other``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    from helikon.core.context import RunContext

__all__ = [
    "Guardrail",
    "GuardrailInput",
    "GuardrailKind",
    "GuardrailVerdict",
    "Pass",
    "Tripwire",
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
    """Halt the run. ``info`` is free-form JSON-serializable data."""

    kind: GuardrailKind = GuardrailKind.OTHER
    info: Any = None


GuardrailVerdict: TypeAlias = Pass | Tripwire


@runtime_checkable
class Guardrail(Protocol):
    """A content check. Raise to report a failure of the guardrail itself."""

    async def check(self, ctx: RunContext[Any], input: GuardrailInput) -> GuardrailVerdict:
        """Return :class:`Pass` or a :class:`Tripwire`."""
        ...


async def run_guardrails(
    guards: list[Guardrail],
    ctx: RunContext[Any],
    input: GuardrailInput,
) -> Tripwire | None:
    """Run ``guards`` concurrently; the first tripwire (in list order) or ``None``.

    A guardrail that raises is a tripwire of kind ``other`` whose ``info`` names the error.
    """
    import asyncio

    async def one(g: Guardrail) -> Tripwire | None:
        try:
            verdict = await g.check(ctx, input)
        except Exception as exc:
            return Tripwire(GuardrailKind.OTHER, {"error": f"{type(exc).__name__}: {exc}"})
        return verdict if isinstance(verdict, Tripwire) else None

    results = await asyncio.gather(*(one(g) for g in guards))
    return next((r for r in results if r is not None), None)
