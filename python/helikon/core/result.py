"""Run results: :class:`RunResult` and the streaming collector :class:`RunResultStreaming`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter, ValidationError

from helikon.core.events import (
    AgentEvent,
    MessageOutput,
    ReasoningDelta,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    TokenDelta,
    ToolCallDelta,
    ToolCallItem,
    ToolOutputItem,
)
from helikon.core.items import AssistantMessage, ToolCall, ToolResult, text_of
from helikon.core.output import answer_json
from helikon.core.usage import Usage
from helikon.errors import (
    AgentError,
    AgentOther,
    Cancelled,
    GuardrailTripwire,
    InvalidStructuredOutput,
    MaxAgentDepthExceeded,
    MaxHandoffsExceeded,
    MaxIterationsExceeded,
    MaxTurnsExceeded,
    NotImplementedPhase,
    RunError,
    RunInterruptedError,
    RunTimeout,
)

__all__ = ["RunResult", "RunResultStreaming", "agent_error_from_dict"]

T = TypeVar("T")


class RunResult(Generic[T]):
    """A finished run.

    Attributes:
        final_output: the text of the last assistant message, or the validated
            ``output_type`` value when the agent has one.
        events: every event of the run, in order.
        usage: total token usage.
    """

    __slots__ = ("_events", "final_output", "usage")
    __match_args__ = ("final_output", "events", "usage")

    def __init__(
        self,
        final_output: T,
        events: list[AgentEvent] | _Recorded | None = None,
        usage: Usage | None = None,
    ) -> None:
        self.final_output = final_output
        self._events: list[AgentEvent] | _Recorded = [] if events is None else events
        self.usage = Usage() if usage is None else usage

    @property
    def events(self) -> list[AgentEvent]:
        """Every event of the run, in order (built on first access after :meth:`collect`)."""
        events = self._events
        if isinstance(events, _Recorded):
            events = self._events = events.events()
        return events

    @events.setter
    def events(self, value: list[AgentEvent]) -> None:
        self._events = value

    @property
    def final_text(self) -> str:
        """The last assistant message's text (also for typed runs)."""
        events = self._events
        if isinstance(events, _Recorded):
            return events.final_text()
        return _final_text(events)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, RunResult)
        return (self.final_output, self.events, self.usage) == (
            other.final_output,
            other.events,
            other.usage,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(final_output={self.final_output!r}, "
            f"events={self.events!r}, usage={self.usage!r})"
        )


def _final_text(events: list[AgentEvent]) -> str:
    for ev in reversed(events):
        if isinstance(ev, MessageOutput):
            return text_of(ev.item.content)
    return ""


# Item events are recorded as their item (the conversation holds it anyway), raw deltas (the
# model's own objects, often many) as a tuple of their fields; reading a recorded run's
# events rebuilds equal events. Exact types only: a subclass instance is kept as it is.
_EVENT_OF_ITEM: dict[type[Any], type[Any]] = {
    AssistantMessage: MessageOutput,
    ToolCall: ToolCallItem,
    ToolResult: ToolOutputItem,
}
_ITEM_OF_EVENT = {event: item for item, event in _EVENT_OF_ITEM.items()}


class _Recorded:
    """A run's events as :meth:`RunResultStreaming.collect` keeps them: compact records."""

    __slots__ = ("records",)

    def __init__(self) -> None:
        self.records: list[Any] = []

    async def record(self, stream: AsyncIterator[Any]) -> None:
        append = self.records.append
        item_of = _ITEM_OF_EVENT
        async for ev in stream:
            cls = type(ev)
            if cls is TokenDelta:
                append((cls, ev.text))
            elif cls is ToolCallDelta:
                append((cls, ev.call_id, ev.name, ev.args_delta))
            elif cls is ReasoningDelta:
                append((cls, ev.text, ev.signature, ev.redacted))
            elif cls in item_of and type(ev.item) is item_of[cls]:
                append(ev.item)
            else:
                append(ev)

    def last(self) -> Any:
        return self.records[-1] if self.records else None

    def events(self) -> list[AgentEvent]:
        out: list[AgentEvent] = []
        event_of = _EVENT_OF_ITEM
        for r in self.records:
            cls = type(r)
            if cls is tuple:
                kind = r[0]
                if kind is TokenDelta:
                    out.append(TokenDelta(text=r[1]))
                elif kind is ToolCallDelta:
                    out.append(ToolCallDelta(call_id=r[1], name=r[2], args_delta=r[3]))
                else:
                    out.append(ReasoningDelta(text=r[1], signature=r[2], redacted=r[3]))
            elif cls in event_of:
                out.append(event_of[cls](item=r))
            else:
                out.append(r)
        return out

    def final_text(self) -> str:
        for r in reversed(self.records):
            if type(r) is AssistantMessage:
                return text_of(r.content)
            if isinstance(r, MessageOutput):
                return text_of(r.item.content)
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
    if kind == "MaxHandoffsExceeded":
        return MaxHandoffsExceeded(int(error.get("limit", 0)))
    if kind == "MaxIterationsExceeded":
        return MaxIterationsExceeded(int(error.get("max_iterations", 0)))
    return AgentOther(message)


class RunResultStreaming:
    """Drains an event stream into a :class:`RunResult`.

    Example:
        >>> # result = await RunResultStreaming(agent.stream("hi")).collect()
    """

    def __init__(self, stream: AsyncIterator[AgentEvent]) -> None:
        self.stream = stream

    async def _drain(self) -> tuple[_Recorded, Usage]:
        recorded = _Recorded()
        await recorded.record(self.stream)
        terminal = recorded.last()
        if isinstance(terminal, RunCompleted):
            return recorded, terminal.usage
        if isinstance(terminal, RunFailed):
            raise RunError(
                agent_error_from_dict(terminal.error),
                events=recorded.events(),
                usage=terminal.usage,
            )
        if isinstance(terminal, RunInterrupted):
            raise RunInterruptedError(
                terminal.state, events=recorded.events(), usage=terminal.usage
            )
        raise RunError(
            AgentOther("the event stream ended without a terminal event"), events=recorded.events()
        )

    async def collect(self) -> RunResult[str]:
        """Drain the stream; ``final_output`` is the last assistant message's text.

        Raises:
            RunError: the run ended with ``RunFailed`` (``.error`` holds the cause).
            RunInterruptedError: the run paused for approval (``.state`` resumes it).
        """
        recorded, usage = await self._drain()
        return RunResult(recorded.final_text(), recorded, usage)

    async def collect_typed(self, type_: type[T]) -> RunResult[T]:
        """Drain the stream and parse the final text as ``type_`` (pydantic validation).

        An answer that is one Markdown code block is read as the block's content
        (:func:`helikon.core.output.answer_json`).

        Raises:
            RunError: the run failed, or the final text does not parse as ``type_``
                (``.error`` is an ``AgentOther`` naming the problem).
        """
        recorded, usage = await self._drain()
        text = recorded.final_text()
        try:
            value = TypeAdapter(type_).validate_json(answer_json(text))
        except ValidationError as exc:
            raise RunError(
                AgentOther(f"final output does not parse as {type_!r}: {exc}"),
                events=recorded.events(),
                usage=usage,
            ) from exc
        return RunResult(value, recorded, usage)
