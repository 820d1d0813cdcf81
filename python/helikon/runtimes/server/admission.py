"""Admission of new runs: a cap on runs in flight and a bounded FIFO queue before it.

A request over ``ServerConfig.max_concurrent_runs`` waits (its response is held back) in a
queue of at most ``ServerConfig.max_queued_runs`` requests, for at most
``ServerConfig.queue_timeout`` seconds; a request finding the queue full, or waiting too
long, is refused with 503 ``too_many_runs`` (``Retry-After``). Slots are handed to waiters
in arrival order, so a request arriving while others wait queues behind them even if a
slot is momentarily free.
"""

from __future__ import annotations

import asyncio
import collections

from helikon.errors import ServerError

__all__ = ["RunSlots"]


class RunSlots:
    """The run cap and its queue (one per server; used from one event loop).

    Args:
        limit: runs in flight at most (``None``: no cap, nothing ever queues).
        queue: requests waiting for a slot at most (0: refuse at once when full).
        timeout: seconds a request may wait in the queue (``None``: as long as it takes).
    """

    def __init__(self, limit: int | None, queue: int, timeout: float | None) -> None:
        self.limit = limit
        self.queue = queue
        self.timeout = timeout
        self.running = 0
        """Slots held (runs started and not over)."""
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    @property
    def queued(self) -> int:
        """Requests waiting for a slot."""
        return len(self._waiters)

    async def acquire(self) -> None:
        """Take a slot, waiting in the queue when all are held.

        Raises:
            ServerError: 503 ``too_many_runs`` when the queue is full or the wait reached
                ``timeout`` (``details``: ``limit``, ``queued``).
        """
        if self.limit is None or (self.running < self.limit and not self._waiters):
            self.running += 1
            return
        if len(self._waiters) >= self.queue:
            raise self._refusal(f"and {self.queue} more wait, the queue's limit")
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await asyncio.wait_for(asyncio.shield(waiter), self.timeout)
        except TimeoutError:
            if waiter.done():  # granted just as the wait ended: keep it
                return
            raise self._refusal(f"and none was free within {self.timeout:g}s") from None
        except BaseException:
            if waiter.done() and not waiter.cancelled():  # granted, but nobody takes it
                self.release()
            raise
        finally:
            if not waiter.done():
                waiter.cancel()
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def release(self) -> None:
        """Give a slot back: to the oldest waiter, or to the pool."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes on; ``running`` is unchanged
                return
        self.running = max(self.running - 1, 0)

    def _refusal(self, why: str) -> ServerError:
        return ServerError(
            f"the server is running {self.limit} runs, its limit, {why}; retry later",
            status=503,
            code="too_many_runs",
            details={"limit": self.limit, "queued": len(self._waiters)},
        )
