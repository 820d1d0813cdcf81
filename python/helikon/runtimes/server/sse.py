"""Server-Sent Events framing of run events.

Each event is one frame::

    id: 3
    event: tool_call_item
    data: {"type": "tool_call_item", "item": {...}}

``id`` is the event's position in the run (0 for ``run_started``): send it back as
``Last-Event-ID`` to ``GET /agents/{name}/runs/{id}/events`` to resume after it. ``event`` is
the event's ``type``; ``data`` is the event's JSON on one line. An idle stream gets a
``: keepalive`` comment every ``ServerConfig.keepalive`` seconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from helikon.runtimes.server.runs import RecordedEvent, Run

__all__ = ["KEEPALIVE", "SSE_HEADERS", "encode_event", "sse_stream"]

KEEPALIVE = b": keepalive\n\n"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def encode_event(event: RecordedEvent) -> bytes:
    """One SSE frame. The JSON text has no raw newline (``json.dumps`` escapes them).

    Example:
        >>> from helikon.runtimes.server.runs import RecordedEvent
        >>> encode_event(RecordedEvent(0, "run_started", {}, '{"type":"run_started"}'))
        b'id: 0\\nevent: run_started\\ndata: {"type":"run_started"}\\n\\n'
    """
    return f"id: {event.id}\nevent: {event.type}\ndata: {event.text}\n\n".encode()


async def sse_stream(run: Run, *, after: int = -1, keepalive: float) -> AsyncIterator[bytes]:
    """The run's events after ``after`` as SSE frames, ending after the terminal frame."""
    events = run.subscribe(after)
    next_event: asyncio.Future[RecordedEvent] | None = None
    try:
        while True:
            if next_event is None:
                next_event = asyncio.ensure_future(anext(events))
            done, _ = await asyncio.wait([next_event], timeout=keepalive)
            if not done:
                yield KEEPALIVE
                continue
            try:
                event = next_event.result()
            except StopAsyncIteration:
                return
            next_event = None
            yield encode_event(event)
    finally:
        # no await here: under a cancelled scope it would raise again at once
        if next_event is not None:
            next_event.cancel()
