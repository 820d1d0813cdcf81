"""Guardrails: content checks on what enters and leaves an agent.

Input guardrails see the run's input (its items and the user's text) and run concurrently
with the first model call; output guardrails see the final answer (the typed value on an
agent with an ``output_type``) before it is returned. A ``Tripwire`` halts the run with a
``GuardrailTriggered`` event and a ``RunFailed`` whose error is an
``InputGuardrailTripwire`` or an ``OutputGuardrailTripwire`` (both ``GuardrailTripwire``); a
guardrail that raises, or returns anything but ``Pass``/``Tripwire``, counts as a tripwire
of kind ``other``.

A guardrail is an object with ``async def check(self, ctx, input)``, or a plain function,
sync or async, taking ``(input)`` or ``(ctx, input)`` (see :func:`as_guardrail`). A sync
function runs on the event loop: keep it quick and give I/O an ``async def``.
"""

from __future__ import annotations

import enum
import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

from helikon.core.permissions import require_async_method
from helikon.errors import ConfigError

if TYPE_CHECKING:
    from helikon.core.context import RunContext

__all__ = [
    "FunctionGuardrail",
    "Guardrail",
    "GuardrailInput",
    "GuardrailKind",
    "GuardrailVerdict",
    "Pass",
    "Tripwire",
    "as_guardrail",
    "check_guardrail",
    "output_input",
    "run_guardrails",
]


class GuardrailKind(enum.StrEnum):
    """What kind of policy a tripwire enforces."""

    INPUT_POLICY = "input_policy"
    OUTPUT_POLICY = "output_policy"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class GuardrailInput:
    """What is under check: the run's input (``user_text``) or its answer (``model_output``).

    Attributes:
        source: ``"user_text"`` (an input guardrail) or ``"model_output"`` (an output one).
        text: the user messages' text joined by ``"\\n"``, or the answer's text (JSON on an
            agent with an ``output_type``).
        items: the input items as the run got them (user messages, earlier turns' items,
            tool results: ``RunResult.to_input_list()`` included); ``()`` for an answer.
        value: the answer as the run returns it: the validated ``output_type`` value, else
            the text (``None`` for input). After a handoff each agent's output guardrails
            get the answer validated against *that* agent's ``output_type``, or the text when
            it has none or the answer does not validate against it.
    """

    source: Literal["user_text", "model_output"]
    text: str
    items: tuple[Any, ...] = ()
    value: Any = None


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


class FunctionGuardrail:
    """A plain function as a :class:`Guardrail`: ``fn(input)`` or ``fn(ctx, input)``, sync or
    async, returning :class:`Pass` or a :class:`Tripwire`. Built by :func:`as_guardrail`.

    Attributes:
        fn: the function.
        name: its ``__qualname__`` (named in a fail-closed tripwire's ``info``).
    """

    __slots__ = ("fn", "name", "takes_ctx")

    def __init__(self, fn: Callable[..., Any], takes_ctx: bool) -> None:
        self.fn = fn
        self.name: str = getattr(fn, "__qualname__", None) or repr(fn)
        self.takes_ctx = takes_ctx

    async def check(self, ctx: RunContext[Any], input: GuardrailInput) -> GuardrailVerdict:
        """Call the function; await its result when it is awaitable."""
        out = self.fn(ctx, input) if self.takes_ctx else self.fn(input)
        if inspect.isawaitable(out):
            out = await out
        verdict: GuardrailVerdict = out
        return verdict

    def __repr__(self) -> str:
        return f"FunctionGuardrail({self.name})"


def as_guardrail(where: str, guardrail: object) -> Guardrail:
    """``guardrail`` as a :class:`Guardrail`: an object with ``async def check`` as it is, a
    plain function (sync or async; ``(input)`` or ``(ctx, input)``) wrapped in a
    :class:`FunctionGuardrail`.

    Raises:
        ConfigError: neither, a class instead of an instance, a sync ``check`` method, or a
            function taking another number of parameters (``where`` names the argument).
    """
    plain = inspect.isroutine(guardrail) or isinstance(guardrail, functools.partial)
    if plain and getattr(guardrail, "check", None) is None:
        assert callable(guardrail)
        return FunctionGuardrail(guardrail, _takes_ctx(where, guardrail))
    check_guardrail(where, guardrail)
    return guardrail  # type: ignore[return-value]


def _takes_ctx(where: str, fn: Callable[..., Any]) -> bool:
    name = getattr(fn, "__name__", "guardrail")
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: give it (ctx, input)
        return True
    positional = [
        p
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    if any(p.kind is p.VAR_POSITIONAL for p in params) or len(positional) == 2:
        return True
    if len(positional) == 1:
        return False
    raise ConfigError(
        f"{where}: the guardrail function {name!r} takes {len(positional)} required "
        f"parameters; write `def {name}(input)` or `def {name}(ctx, input)` (async or not), "
        "returning Pass() or Tripwire(...)"
    )


def check_guardrail(where: str, guardrail: object) -> None:
    """Raise :class:`ConfigError` unless ``guardrail`` has ``async def check(self, ctx, input)``
    (what an object guardrail needs; :func:`as_guardrail` also takes plain functions).

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
            {"error": f"guardrail {_name(g)} returned {shown}, not Pass() or Tripwire(...)"},
        )

    results = await asyncio.gather(*(one(g) for g in guards))
    return next((r for r in results if r is not None), None)


def _name(g: object) -> str:
    return g.name if isinstance(g, FunctionGuardrail) else type(g).__name__


def output_input(agent: Any, text: str) -> GuardrailInput:
    """The :class:`GuardrailInput` of ``agent``'s output guardrails for the answer ``text``:
    ``value`` is the answer validated against ``agent.output_type`` when it has one and the
    answer validates, else ``text``."""
    value: Any = text
    output_type = getattr(agent, "output_type", None)
    if output_type is not None:
        validated, errors = output_type.validate_text(text)
        if not errors:
            value = validated
    return GuardrailInput("model_output", text, (), value)
