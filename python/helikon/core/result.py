"""Run results: :class:`RunResult` and the streaming collector :class:`RunResultStreaming`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar, get_origin

from pydantic import TypeAdapter, ValidationError

from helikon.core.events import (
    AgentEvent,
    AgentUpdated,
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
from helikon.core.items import AssistantMessage, Item, ToolCall, ToolResult, text_of
from helikon.core.output import answer_json
from helikon.core.run_state import RunState
from helikon.core.spellings import peer_attribute
from helikon.core.usage import Usage
from helikon.errors import (
    AgentError,
    AgentOther,
    Cancelled,
    GuardrailTripwire,
    InputGuardrailTripwire,
    InvalidStructuredOutput,
    MaxAgentDepthExceeded,
    MaxHandoffsExceeded,
    MaxIterationsExceeded,
    MaxTurnsExceeded,
    NotImplementedPhase,
    OutputGuardrailTripwire,
    OutputRetriesExceeded,
    OutputTypeError,
    RunError,
    RunInterruptedError,
    RunTimeout,
    ToolRetriesExceeded,
    UsageLimitExceeded,
)

__all__ = [
    "RunResult",
    "RunResultStreaming",
    "agent_error_from_dict",
    "result_of_events",
    "typed_by_agent",
]

_TRIPWIRES: dict[str, type[GuardrailTripwire]] = {
    "input": InputGuardrailTripwire,
    "output": OutputGuardrailTripwire,
}

T = TypeVar("T")
U = TypeVar("U")


class RunResult(Generic[T]):
    """A finished run.

    Attributes:
        final_output: the text of the last assistant message, or the validated
            ``output_type`` value when the agent has one.
        events: every event of the run, in order.
        usage: total token usage.

    A result carries the conversation on: :attr:`new_items` are the items the run added,
    :meth:`to_input_list` the whole input for the next turn, :attr:`last_agent` the agent
    that answered last.
    """

    __slots__ = ("_agent", "_before", "_events", "_input", "final_output", "usage")
    __match_args__ = ("final_output", "events", "usage")

    def __init__(
        self,
        final_output: T,
        events: list[AgentEvent] | _Recorded | None = None,
        usage: Usage | None = None,
        *,
        input: list[Item] | None = None,
        agent: Any = None,
        before: list[Item] | None = None,
    ) -> None:
        self.final_output = final_output
        self._events: list[AgentEvent] | _Recorded = [] if events is None else events
        self.usage = Usage() if usage is None else usage
        self._input: list[Item] = [] if input is None else input
        self._agent = agent
        #: a resumed run's items from before its pause (its events are the resumed part's)
        self._before: list[Item] = [] if before is None else before

    @property
    def new_items(self) -> list[Item]:
        """The items the run added, in order: assistant messages, tool calls and their
        results (handoff calls included); the run's input is not among them. For a resumed
        run, the items from before the pause come first (as in a run that never paused)."""
        events = self._events
        if isinstance(events, _Recorded):
            return [*self._before, *events.items()]
        return [*self._before, *(ev.item for ev in events if isinstance(ev, _ITEM_EVENTS))]

    def to_input_list(self) -> list[Item]:
        """The whole conversation as the next turn's input: the run's input items, then
        :attr:`new_items`. Append the next user message and pass it to ``agent.run``::

            history = result.to_input_list() + [UserMessage.text("and then?")]
            result = await agent.run(history)

        Returns:
            A new list (changing it does not change the result); empty input when the
            result was not made by ``agent.run`` / ``Runner.run``.
        """
        return [*self._input, *self.new_items]

    @property
    def last_agent(self) -> Any:
        """The agent object that answered last: after a handoff, the target.

        Found by name among the run agent and its handoffs (transitively); ``None`` when
        the result was not made by a run (built by hand). When the answering agent is not
        reachable that way (a pattern's inner agent), the agent the run was started on.
        """
        start = self._agent
        if start is None:
            return None
        name = _last_agent_name(self._events)
        if name is None:
            return start
        return _find_agent(start, name) or start

    @property
    def output(self) -> T:
        """``final_output`` under Pydantic AI's name: the same value (one object, two names,
        so ported code reads unchanged)."""
        return self.final_output

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            raise peer_attribute("RunResult", name, self)

    def final_output_as(self, type_: type[U]) -> U:
        """``final_output``, checked to be a ``type_`` (for type checkers and at run time).

        Args:
            type_: the expected type; for a generic alias (``list[int]``) its origin
                (``list``) is checked.

        Raises:
            OutputTypeError: ``final_output`` is not a ``type_`` (the message names both).
        """
        value = self.final_output
        check = get_origin(type_) or type_
        if not isinstance(value, check):
            raise OutputTypeError(type_, type(value))
        return value

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


def _last_agent_name(events: list[AgentEvent] | _Recorded) -> str | None:
    records = events.records if isinstance(events, _Recorded) else events
    for ev in reversed(records):
        if isinstance(ev, AgentUpdated):
            return ev.agent
    return None


def _find_agent(start: Any, name: str) -> Any:
    """The agent called ``name`` among ``start`` and its handoffs, breadth first."""
    seen: set[int] = set()
    queue = [start]
    while queue:
        agent = queue.pop(0)
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        if getattr(agent, "name", None) == name:
            return agent
        queue.extend(getattr(agent, "handoffs", None) or ())
    return None


def _final_text(events: list[AgentEvent]) -> str:
    for ev in reversed(events):
        if isinstance(ev, MessageOutput):
            return text_of(ev.item.content)
    return ""


# Item events are recorded as their item (the conversation holds it anyway) unless they name
# the answering model or response id, raw deltas (the model's own objects, often many) as a
# tuple of their fields; reading a recorded run's events rebuilds equal events. Exact types
# only: a subclass instance is kept as it is.
_EVENT_OF_ITEM: dict[type[Any], type[Any]] = {
    AssistantMessage: MessageOutput,
    ToolCall: ToolCallItem,
    ToolResult: ToolOutputItem,
}
_ITEM_OF_EVENT = {event: item for item, event in _EVENT_OF_ITEM.items()}
_ITEM_EVENTS = (MessageOutput, ToolCallItem, ToolOutputItem)


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
            elif (
                cls in item_of
                and type(ev.item) is item_of[cls]
                and (cls is ToolOutputItem or (ev.model is None and ev.response_id is None))
            ):
                append(ev.item)  # nothing but the item: rebuilt equal by events()
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

    def items(self) -> list[Item]:
        out: list[Item] = []
        for r in self.records:
            if type(r) in _EVENT_OF_ITEM:
                out.append(r)
            elif isinstance(r, _ITEM_EVENTS):
                out.append(r.item)
        return out

    def final_text(self) -> str:
        for r in reversed(self.records):
            if type(r) is AssistantMessage:
                return text_of(r.content)
            if isinstance(r, MessageOutput):
                return text_of(r.item.content)
        return ""


def _terminal_usage(recorded: _Recorded) -> Usage:
    """The usage of a completed run's records; raise for a failed, paused or cut-off one."""
    terminal = recorded.last()
    if isinstance(terminal, RunCompleted):
        return terminal.usage
    if isinstance(terminal, RunFailed):
        raise RunError(
            agent_error_from_dict(terminal.error), events=recorded.events(), usage=terminal.usage
        )
    if isinstance(terminal, RunInterrupted):
        raise RunInterruptedError(terminal.state, events=recorded.events(), usage=terminal.usage)
    raise RunError(
        AgentOther("the event stream ended without a terminal event"), events=recorded.events()
    )


def typed_by_agent(result: RunResult[Any]) -> RunResult[Any]:
    """``result`` typed by its run agent's ``typed_result`` (an ``Agent`` validates the
    answering agent's ``output_type``; a pattern leaves the text); unchanged without one.

    Raises:
        RunError: the final text does not validate.
    """
    typed = getattr(result._agent, "typed_result", None)
    return typed(result) if typed is not None else result


def result_of_events(
    events: list[AgentEvent], *, agent: Any = None, input: list[Item] | None = None
) -> RunResult[Any]:
    """The :class:`RunResult` of a finished run's ``events`` (as ``collect`` builds it).

    Raises:
        RunError, RunInterruptedError: as :meth:`RunResultStreaming.collect`.
    """
    recorded = _Recorded()
    recorded.records = list(events)
    usage = _terminal_usage(recorded)
    result: RunResult[Any] = RunResult(
        recorded.final_text(), recorded, usage, input=input, agent=agent
    )
    return typed_by_agent(result)


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
            list(error.get("schema_errors", [])),
            str(error.get("final_text", "")),
            int(error.get("attempts", 1)),
        )
    if kind == "OutputRetriesExceeded":
        return OutputRetriesExceeded(
            str(error.get("validator", "")),
            str(error.get("reason", "")),
            str(error.get("final_text", "")),
            int(error.get("retries", 1)),
        )
    if kind == "ToolRetriesExceeded":
        return ToolRetriesExceeded(
            str(error.get("tool", "")),
            str(error.get("reason", "")),
            int(error.get("retries", 1)),
            invalid_args=bool(error.get("invalid_args", False)),
        )
    if kind == "Cancelled":
        return Cancelled(message or "run cancelled")
    if kind == "Timeout":
        return RunTimeout(float(error.get("seconds", 0.0)))
    if kind == "NotImplemented":
        return NotImplementedPhase(message)
    if kind == "GuardrailTriggered":
        cls = _TRIPWIRES.get(str(error.get("stage")), GuardrailTripwire)
        return cls(str(error.get("guardrail_kind", "other")), error.get("info"))
    if kind == "MaxHandoffsExceeded":
        return MaxHandoffsExceeded(int(error.get("limit", 0)))
    if kind == "MaxIterationsExceeded":
        return MaxIterationsExceeded(int(error.get("max_iterations", 0)))
    if kind == "UsageLimitExceeded":
        return UsageLimitExceeded(
            str(error.get("limit_name", "")), int(error.get("limit", 0)), int(error.get("used", 0))
        )
    return AgentOther(message)


class RunResultStreaming:
    """Drains an event stream into a :class:`RunResult`.

    Example:
        >>> # result = await RunResultStreaming(agent.stream("hi")).collect()
    """

    def __init__(
        self,
        stream: AsyncIterator[AgentEvent],
        *,
        input: list[Item] | None = None,
        agent: Any = None,
        resumed: RunState | None = None,
    ) -> None:
        """Collect ``stream``.

        Args:
            stream: the run's events.
            input: the run's input items, for :meth:`RunResult.to_input_list`.
            agent: the agent the run started on, for :attr:`RunResult.last_agent`.
            resumed: the paused run's state when ``stream`` resumes it
                (``Runner.resume_streamed``): its input (unless ``input`` is given) and the
                items added before the pause start the result's ``to_input_list()`` and
                ``new_items``, as for a run that never paused.
        """
        self.stream = stream
        self.input = input
        self.agent = agent
        self.resumed = resumed
        if input is None and resumed is not None:
            self.input = resumed.run_input
        self._before = list(resumed.run_items or []) if resumed is not None else None

    async def _drain(self) -> tuple[_Recorded, Usage]:
        recorded = _Recorded()
        await recorded.record(self.stream)
        return recorded, _terminal_usage(recorded)

    async def collect(self) -> RunResult[Any]:
        """Drain the stream; ``final_output`` is the last assistant message's text, validated
        as the answering agent's ``output_type`` when it has one (after a handoff, the
        target's), as ``Runner.run`` gives it.

        Raises:
            RunError: the run ended with ``RunFailed`` (``.error`` holds the cause), or the
                final text does not validate as the ``output_type``.
            RunInterruptedError: the run paused for approval (``.state`` resumes it).
        """
        recorded, usage = await self._drain()
        result: RunResult[Any] = RunResult(
            recorded.final_text(),
            recorded,
            usage,
            input=self.input,
            agent=self.agent,
            before=self._before,
        )
        return typed_by_agent(result)

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
        return RunResult(
            value, recorded, usage, input=self.input, agent=self.agent, before=self._before
        )
