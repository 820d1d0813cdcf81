"""Cancellation racing shared by every streaming provider adapter.

A provider call awaits the network; the run's :class:`~helikon.CancellationToken` must be able
to end that wait at once. :func:`race` awaits one step (the request, the next chunk) against
the token's waiter; :func:`next_item` turns an async iterator's ``__anext__`` into a value that
can be raced. :class:`CancelRace` holds one call's waiter: :meth:`CancelRace.step` races a
step, :meth:`CancelRace.items` pulls a stream until it ends or the token fires, and
:meth:`CancelRace.close` releases the waiter. An adapter's ``invoke`` is then::

    calls = CancelRace(cancel)
    try:
        started = await calls.step(send())
        if isinstance(started, Cancelled):
            return
        async for chunk in calls.items(pull):
            ...  # fold the chunk in, yield its model events
        if cancel.cancelled:
            return  # ended by the token: no Finish
        ...  # the closing events
    finally:
        await calls.close()
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

if TYPE_CHECKING:
    from helikon.core.cancel import CancellationToken

__all__ = ["CANCELLED", "CancelRace", "Cancelled", "next_item", "race"]

_T = TypeVar("_T")


class Cancelled:
    """Marker: the cancellation token won the race."""


CANCELLED = Cancelled()


async def race(awaitable: Awaitable[_T], waiter: asyncio.Future[None]) -> _T | Cancelled:
    """Await ``awaitable`` unless ``waiter`` (the cancel signal) completes first.

    A step that finished together with the cancel still counts (its result is returned);
    otherwise the step is cancelled and awaited, and :data:`CANCELLED` is returned. The
    step's own exception propagates unchanged.

    Example:
        >>> async def demo() -> object:
        ...     waiter = asyncio.get_running_loop().create_future()
        ...     return await race(asyncio.sleep(0, "chunk"), waiter)
        >>> asyncio.run(demo())
        'chunk'
    """
    task = asyncio.ensure_future(awaitable)
    pending: set[asyncio.Future[Any]] = {task, waiter}
    try:
        await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done():
            task.cancel()
            with suppress(BaseException):
                await task
    if task.done() and not task.cancelled():
        return task.result()
    return CANCELLED


async def next_item(iterator: AsyncIterator[_T]) -> tuple[bool, _T | None]:
    """``(True, item)`` for the iterator's next item, ``(False, None)`` at its end."""
    try:
        return True, await iterator.__anext__()
    except StopAsyncIteration:
        return False, None


Pull = Callable[[], Awaitable[tuple[bool, _T | None]]]
"""Fetches a stream's next item: ``(True, item)``, or ``(False, None)`` at its end."""


class CancelRace:
    """One model call's races against the run's cancellation token.

    Create it inside the call (it starts waiting on the token at once) and :meth:`close` it in
    a ``finally``.

    Example:
        >>> from helikon.core.cancel import CancellationToken
        >>> async def demo() -> list[int]:
        ...     calls = CancelRace(CancellationToken())
        ...     chunks = iter([1, 2, 3])
        ...     async def pull() -> tuple[bool, int | None]:
        ...         item = next(chunks, None)
        ...         return item is not None, item
        ...     try:
        ...         return [chunk async for chunk in calls.items(pull)]
        ...     finally:
        ...         await calls.close()
        >>> asyncio.run(demo())
        [1, 2, 3]
    """

    def __init__(self, cancel: CancellationToken) -> None:
        self._cancel = cancel
        self._waiter: asyncio.Future[None] = asyncio.ensure_future(cancel.wait())

    async def step(self, awaitable: Awaitable[_T]) -> _T | Cancelled:
        """``awaitable``'s result, or :data:`CANCELLED` when the token fired first."""
        return await race(awaitable, self._waiter)

    def items(self, pull: Pull[_T]) -> AsyncIterator[_T]:
        """The items ``pull`` fetches, each raced against the token.

        The iteration ends at the stream's end, and as soon as the token fires: checked before
        each pull and raced during it.
        """
        return _Items(self, pull)

    async def close(self) -> None:
        """Stop waiting on the token."""
        self._waiter.cancel()
        with suppress(BaseException):
            await self._waiter

    @property
    def cancelled(self) -> bool:
        """Whether the token has fired."""
        return self._cancel.cancelled


class _Items(Generic[_T]):
    """The async iterator behind :meth:`CancelRace.items` (a class, not a generator, so an
    iteration left early leaves nothing to finalize)."""

    def __init__(self, calls: CancelRace, pull: Pull[_T]) -> None:
        self._calls = calls
        self._pull = pull

    def __aiter__(self) -> _Items[_T]:
        return self

    async def __anext__(self) -> _T:
        if self._calls.cancelled:
            raise StopAsyncIteration
        pulled = await self._calls.step(self._pull())
        if isinstance(pulled, Cancelled):
            raise StopAsyncIteration
        more, item = pulled
        if not more:
            raise StopAsyncIteration
        return cast("_T", item)
