"""The event stream ``Runner.run_streamed`` returns: an async generator of
:data:`~helikon.AgentEvent`, which also answers the OpenAI Agents SDK's ``stream_events()``
with helikon's spelling."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Coroutine
from typing import TYPE_CHECKING, Any

from helikon.core.events import AgentEvent, RunCompleted, RunFailed, RunInterrupted
from helikon.core.items import Item
from helikon.core.result import RunResult, result_of_events
from helikon.core.spellings import peer_attribute
from helikon.core.usage import Usage
from helikon.errors import ConfigError

_TERMINAL = (RunCompleted, RunFailed, RunInterrupted)

__all__ = ["EventStream"]


class EventStream(AsyncGenerator[AgentEvent, None]):
    """A run's events, in order: iterate it (``async for e in stream``), close it early with
    ``await stream.aclose()`` (or ``contextlib.aclosing``). It is the stream itself: there is
    no ``stream_events()`` to call (that spelling raises a
    :class:`~helikon.errors.PeerSpellingError` saying so).

    Once iterated to its end, the stream holds the run's result, as the OpenAI Agents SDK's
    streamed result does: :attr:`final_output` (typed by the answering agent's
    ``output_type``), :attr:`last_agent`, :attr:`usage`, :attr:`new_items`,
    :meth:`to_input_list` and :attr:`result` (the :class:`~helikon.RunResult` itself).
    """

    __slots__ = ("_agent", "_events", "_gen", "_input", "_result")

    def __init__(
        self,
        gen: AsyncGenerator[AgentEvent, None],
        *,
        agent: Any = None,
        input: list[Item] | None = None,
    ) -> None:
        """Wrap ``gen``; ``agent`` (the run agent) and ``input`` (the run's input items) make
        the :attr:`result` once the run ends."""
        self._gen = gen
        self._agent = agent
        self._input = input
        self._events: list[AgentEvent] = []
        self._result: RunResult[Any] | None = None

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> AgentEvent:
        ev = await self._gen.__anext__()
        self._events.append(ev)
        return ev

    @property
    def result(self) -> RunResult[Any]:
        """The run's :class:`~helikon.RunResult`, once the stream ended (as ``Runner.run``
        returns it).

        Raises:
            ConfigError: the stream has not reached the run's end yet (iterate it fully).
            RunError: the run failed, or its answer does not validate as ``output_type``.
            RunInterruptedError: the run paused for approval (``.state`` resumes it).
        """
        if self._result is None:
            if not self._events or not isinstance(self._events[-1], _TERMINAL):
                raise ConfigError(
                    "the run's result is there once the stream ended: iterate it to the end "
                    "first (async for e in stream: ...), or use await Runner.run(agent, q)"
                )
            self._result = result_of_events(self._events, agent=self._agent, input=self._input)
        return self._result

    @property
    def final_output(self) -> Any:
        """:attr:`result`'s ``final_output`` (raises as :attr:`result`)."""
        return self.result.final_output

    @property
    def last_agent(self) -> Any:
        """:attr:`result`'s ``last_agent`` (raises as :attr:`result`)."""
        return self.result.last_agent

    @property
    def usage(self) -> Usage:
        """:attr:`result`'s ``usage`` (raises as :attr:`result`)."""
        return self.result.usage

    @property
    def new_items(self) -> list[Item]:
        """:attr:`result`'s ``new_items`` (raises as :attr:`result`)."""
        return self.result.new_items

    def to_input_list(self) -> list[Item]:
        """:attr:`result`'s ``to_input_list()`` (raises as :attr:`result`)."""
        return self.result.to_input_list()

    async def aclose(self) -> None:
        """Stop the run and record what it did so far (see ``Runner.run_streamed``)."""
        await self._gen.aclose()

    def asend(self, value: None) -> Coroutine[Any, Any, AgentEvent]:
        """As an async generator's ``asend``."""
        return self._gen.asend(value)

    def athrow(self, exc: BaseException) -> Coroutine[Any, Any, AgentEvent]:  # type: ignore[override]
        """As an async generator's ``athrow``."""
        return self._gen.athrow(exc)

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            raise peer_attribute("event stream", name, self)
