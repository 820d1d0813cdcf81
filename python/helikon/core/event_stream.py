"""The event stream ``Runner.run_streamed`` returns: an async generator of
:data:`~helikon.AgentEvent`, which also answers the OpenAI Agents SDK's ``stream_events()``
with helikon's spelling."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Coroutine
from typing import TYPE_CHECKING, Any

from helikon.core.events import AgentEvent
from helikon.core.spellings import peer_attribute

__all__ = ["EventStream"]


class EventStream(AsyncGenerator[AgentEvent, None]):
    """A run's events, in order: iterate it (``async for e in stream``), close it early with
    ``await stream.aclose()`` (or ``contextlib.aclosing``). It is the stream itself: there is
    no ``stream_events()`` to call (that spelling raises a
    :class:`~helikon.errors.PeerSpellingError` saying so).
    """

    __slots__ = ("_gen",)

    def __init__(self, gen: AsyncGenerator[AgentEvent, None]) -> None:
        self._gen = gen

    def __aiter__(self) -> EventStream:
        return self

    def __anext__(self) -> Coroutine[Any, Any, AgentEvent]:
        return self._gen.__anext__()

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
