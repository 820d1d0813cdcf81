"""One SDK client per event loop, shared by the adapters that speak async HTTP.

An async HTTP client (``AsyncOpenAI``, ``AsyncAnthropic``, ``httpx.AsyncClient``) keeps
connections bound to the event loop that opened them; reusing it from another loop fails. A
:class:`LoopClient` makes the client lazily on first use, makes a fresh one when the running
loop changes (a second ``asyncio.run``, say), and closes only the client it made: a client
handed in by the caller is used on every loop and left open.

:class:`ClosingModel` gives an adapter ``async with model:``, which closes the model's own
client on exit.

Limitations: a client made for a loop that has ended is replaced without being closed (closing
it would need that loop); :meth:`LoopClient.aclose` closes the latest one.

Test strategy: the adapters' wire tests run each test in its own loop with a model created
inside it, and ``aclose`` / ``async with`` after the calls.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Generic, Self, TypeVar

__all__ = ["ClosingModel", "LoopClient"]

_C = TypeVar("_C")


class LoopClient(Generic[_C]):
    """The client for the running event loop.

    Args:
        make: builds a new client (called inside the loop that will use it).
        close: closes a client this object made.
        given: a ready client to use instead on every loop (never closed here).

    Example:
        >>> clients = LoopClient(object, close=lambda client: asyncio.sleep(0))
        >>> async def current() -> object:
        ...     return clients.get()
        >>> first = asyncio.run(current())
        >>> first is asyncio.run(current())  # another loop, another client
        False
    """

    def __init__(
        self,
        make: Callable[[], _C],
        close: Callable[[_C], Awaitable[object]],
        given: _C | None = None,
    ) -> None:
        self._make = make
        self._close = close
        self._given = given
        self._client: _C | None = None
        self._loop: weakref.ref[asyncio.AbstractEventLoop] | None = None

    def get(self) -> _C:
        """The given client, else the one made for the running loop (made now if needed)."""
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        current = self._loop() if self._loop is not None else None
        if self._client is None or current is not loop:
            self._client = self._make()
            self._loop = weakref.ref(loop)
        return self._client

    async def aclose(self) -> None:
        """Close the client this object made, if any (a given client is left open)."""
        client, self._client = self._client, None
        self._loop = None
        if client is not None:
            await self._close(client)


class ClosingModel:
    """``async with`` for a model: the body runs, then :meth:`aclose`."""

    async def aclose(self) -> None:
        """Release what the model holds (overridden by each adapter)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
