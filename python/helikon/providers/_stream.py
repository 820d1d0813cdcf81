"""Cancellation racing shared by every streaming provider adapter.

A provider call awaits the network; the run's :class:`~helikon.CancellationToken` must be able
to end that wait at once. :func:`race` awaits one step (the request, the next chunk) against
the token's waiter; :func:`next_item` turns an async iterator's ``__anext__`` into a value that
can be raced.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from contextlib import suppress
from typing import Any, TypeVar

__all__ = ["CANCELLED", "Cancelled", "next_item", "race"]

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
