"""Run results: :class:`RunResult` and the streaming collector :class:`RunResultStreaming`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter, ValidationError

from helikon.core.events import AgentEvent, MessageOutput, RunCompleted, RunFailed
from helikon.core.items import text_of
from helikon.core.usage import Usage
from helikon.errors import (
    AgentError,
    AgentOther,
    Cancelled,
    GuardrailTripwire,
    InvalidStructuredOutput,
    MaxAgentDepthExceeded,
    MaxTurnsExceeded,
    NotImplementedPhase,
    RunError,
    RunTimeout,
)

__all__ = ["RunResult", "RunResultStreaming", "agent_error_from_dict"]

T = TypeVar("T")


@dataclass(slots=True)
class RunResult(Generic[T]):
    """A finished run.

    Attributes:
        final_output: the text of the last assistant message, or the validated
            ``output_type`` value when the agent has one.
        events: every event of the run, in order.
        usage: total token usage.
    """

    final_output: T
    events: list[AgentEvent] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    @property
    def final_text(self) -> str:
        """The last assistant message's text (also for typed runs)."""
        return _final_text(self.events)


def _final_text(events: list[AgentEvent]) -> str:
    for ev in reversed(events):
        if isinstance(ev, MessageOutput):
            return text_of(ev.item.content)
    return ""


def agent_error_from_dict(error: dict[str, Any]) -> AgentError:
    """Rebuild the :class:`AgentError` subclass from a ``RunFailed.error`` dict."""
    kind = error.get("kind")
    message = str(error.get("message", ""))
    if kind == "MaxTurnsExceeded":
        return MaxTurnsExceeded(int(error.get("max_turns", 0)))
    if kind == "MaxAgentDepthExceeded":
        return MaxAgentDepthExceeded(int(error.get("max_depth", 0)))
    if kind == "InvalidStructuredOutput":
        return InvalidStructuredOutput(
            list(error.get("schema_errors", [])), str(error.get("final_text", ""))
        )
    if kind == "Cancelled":
        return Cancelled(message or "run cancelled")
    if kind == "Timeout":
        return RunTimeout(float(error.get("seconds", 0.0)))
    if kind == "NotImplemented":
        return NotImplementedPhase(message)
    if kind == "GuardrailTriggered":
        return GuardrailTripwire(str(error.get("guardrail_kind", "other")), error.get("info"))
    return AgentOther(message)


class RunResultStreaming:
    """Drains an event stream into a :class:`RunResult`.

    Example:
        >>> # result = await RunResultStreaming(agent.stream("hi")).collect()
    """

    def __init__(self, stream: AsyncIterator[AgentEvent]) -> None:
        self.stream = stream

    async def _drain(self) -> tuple[list[AgentEvent], Usage]:
        events: list[AgentEvent] = []
        async for ev in self.stream:
            events.append(ev)
        terminal = events[-1] if events else None
        if isinstance(terminal, RunCompleted):
            return events, terminal.usage
        if isinstance(terminal, RunFailed):
            raise RunError(
                agent_error_from_dict(terminal.error), events=events, usage=terminal.usage
            )
        raise RunError(AgentOther("the event stream ended without a terminal event"), events=events)

    async def collect(self) -> RunResult[str]:
        """Drain the stream; ``final_output`` is the last assistant message's text.

        Raises:
            RunError: the run ended with ``RunFailed`` (``.error`` holds the cause).
        """
        events, usage = await self._drain()
        return RunResult(_final_text(events), events, usage)

    async def collect_typed(self, type_: type[T]) -> RunResult[T]:
        """Drain the stream and parse the final text as ``type_`` (pydantic validation).

        Raises:
            RunError: the run failed, or the final text does not parse as ``type_``
                (``.error`` is an ``AgentOther`` naming the problem).
        """
        events, usage = await self._drain()
        text = _final_text(events)
        try:
            value = TypeAdapter(type_).validate_json(text.strip())
        except ValidationError as exc:
            raise RunError(
                AgentOther(f"final output does not parse as {type_!r}: {exc}"),
                events=events,
                usage=usage,
            ) from exc
        return RunResult(value, events, usage)
