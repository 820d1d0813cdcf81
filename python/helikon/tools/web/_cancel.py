"""Run a coroutine until it finishes or the run's cancellation token fires."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any, TypeVar

from helikon.core.cancel import CancellationToken
from helikon.errors import ToolOther

__all__ = ["until_cancelled"]

T = TypeVar("T")


async def until_cancelled(coro: Coroutine[Any, Any, T], cancel: CancellationToken, what: str) -> T:
    """Await ``coro``; if ``cancel`` fires first, stop it and raise.

    Raises:
        ToolOther: ``cancel`` fired (the message names ``what`` and the reason).
    """
    if cancel.cancelled:
        coro.close()
        raise ToolOther(f"{what} cancelled ({cancel.reason})")
    work = asyncio.ensure_future(coro)
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait({work, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (work, waiter):
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    if work.cancelled():
        raise ToolOther(f"{what} cancelled ({cancel.reason})")
    return work.result()
