"""Run a write to completion even when the caller is cancelled (session backends and the
runners that record runs use it)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["complete"]

T = TypeVar("T")

log = logging.getLogger("helikon.sessions")

_BACKGROUND: set[asyncio.Task[Any]] = set()


def _finished(task: asyncio.Task[Any]) -> None:
    _BACKGROUND.discard(task)
    if task.cancelled():
        log.warning("a session write cancelled by the caller was itself cancelled")
        return
    exc = task.exception()
    if exc is not None:
        log.warning("a session write cancelled by the caller failed: %s", exc)


async def complete(write: Coroutine[Any, Any, T]) -> T:
    """Await ``write``; if the caller is cancelled meanwhile, let the write finish anyway.

    A transaction that was started then commits (or rolls back) as a whole instead of
    being torn down mid-flight, so the caller's cancellation never loses an acknowledged
    turn half-way; the caller still sees ``CancelledError``.
    """
    task = asyncio.ensure_future(write)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if not task.done():
            _BACKGROUND.add(task)
            task.add_done_callback(_finished)
        raise
