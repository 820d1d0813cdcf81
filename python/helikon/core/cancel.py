"""Cooperative cancellation shared by a run, its tools and its model calls."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["CancellationToken"]


class CancellationToken:
    """A one-shot cancel signal. Cheap to create; safe to cancel more than once.

    Cancellation is best-effort: a terminal event that already happened wins over a late
    cancel. Child tokens are cancelled with their parent.

    Example:
        >>> tok = CancellationToken()
        >>> child = tok.child()
        >>> tok.cancel()
        >>> child.cancelled
        True
    """

    __slots__ = ("_callbacks", "_children", "_event", "_reason")

    def __init__(self) -> None:
        self._event: asyncio.Event | None = None
        self._reason: str | None = None
        self._children: list[CancellationToken] = []
        self._callbacks: list[Callable[[str], None]] = []

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` was called (here or on a parent)."""
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        """The reason given to :meth:`cancel`, if any."""
        return self._reason

    def cancel(self, reason: str = "cancelled") -> None:
        """Fire the token (and every child). Idempotent."""
        if self._reason is not None:
            return
        self._reason = reason
        if self._event is not None:
            self._event.set()
        for child in self._children:
            child.cancel(reason)
        for cb in self._callbacks:
            cb(reason)

    def on_cancel(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(reason)`` when the token fires (at once if it already has)."""
        if self._reason is not None:
            callback(self._reason)
        else:
            self._callbacks.append(callback)

    def off_cancel(self, callback: Callable[[str], None]) -> None:
        """Forget a callback registered with :meth:`on_cancel` (no-op when it is not there)."""
        if callback in self._callbacks:
            self._callbacks.remove(callback)

    def child(self) -> CancellationToken:
        """A token cancelled whenever this one is."""
        tok = CancellationToken()
        if self._reason is not None:
            tok.cancel(self._reason)
        else:
            self._children.append(tok)
        return tok

    async def wait(self) -> None:
        """Return when the token fires."""
        if self._reason is not None:
            return
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()
