"""Progress of a served run: a run-level hook that sends MCP ``notifications/progress``.

A client that puts ``_meta.progressToken`` on its ``tools/call`` asks for progress
(MCP "Progress" utility). While the agent runs, each model turn, tool call and tool result
becomes one notification: ``progress`` counts them (1, 2, ...; no ``total``, since a run's
length is not known in advance) and ``message`` says what happened (``"turn 1"``,
``"calling tool lookup"``, ``"tool lookup done"`` or ``"... failed"``, ``"handoff to X"``).
A notification that cannot be sent (the client went away) is dropped: progress never fails
the run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from helikon.core.hooks import (
    Allow,
    HookDecision,
    HookEvent,
    OnHandoff,
    OnTurnStart,
    PostToolUse,
    PreToolUse,
)

__all__ = ["ProgressHook", "describe"]

Send = Callable[[float, str], Awaitable[None]]


def describe(event: HookEvent) -> str | None:
    """The progress message for ``event``, or ``None`` when it is not reported."""
    if isinstance(event, OnTurnStart):
        return f"turn {event.turn + 1}"
    if isinstance(event, PreToolUse):
        return f"calling tool {event.tool}"
    if isinstance(event, PostToolUse):
        return f"tool {event.tool} {'failed' if event.is_error else 'done'}"
    if isinstance(event, OnHandoff):
        return f"handoff to {event.to_agent}"
    return None


class ProgressHook:
    """Sends one progress notification per reported hook event (see the module docstring)."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.sent = 0

    async def on_event(self, ctx: Any, event: HookEvent) -> HookDecision:
        """Report ``event`` (if it is reported); always ``Allow``."""
        message = describe(event)
        if message is not None:
            self.sent += 1
            with contextlib.suppress(Exception):
                await self._send(float(self.sent), message)
        return Allow()
