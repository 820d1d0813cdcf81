"""The WebSocket protocol of ``GET /agents/{name}/runs/{run_id}/events``.

After the upgrade the server sends every event of the run as one text frame holding the
event's JSON (the same text as an SSE ``data:`` line): first the events already emitted,
then live ones. After the terminal event (``run_completed`` or ``run_failed``; a synthetic
``run_failed`` when the run ended without one) it closes with code 1000.
``?last_event_id=N`` resumes after event ``N`` (frame ``k`` is event ``N + 1 + k``).

The client may send one message: ``{"type": "cancel"}`` cancels the run (its
``run_failed`` frame follows). Anything else (a binary frame too) is answered with
``{"type": "error", "message": ...}`` and otherwise ignored. Closing the socket only stops
the frames: an observer never cancels the run.

A refused handshake (auth, unknown agent or run, bad ``last_event_id``) is answered with
the HTTP status and JSON error body the HTTP routes use, when the server supports the ASGI
``websocket.http.response`` extension (uvicorn does), else by closing with code 1008.
"""

from __future__ import annotations

import asyncio
import json

from starlette.responses import JSONResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from helikon.errors import ServerError
from helikon.runtimes.server.body import last_event_id
from helikon.runtimes.server.host import ServerHost
from helikon.runtimes.server.runs import Run

__all__ = ["run_events_ws"]

_POLICY_VIOLATION = 1008


async def _deny(ws: WebSocket, exc: ServerError) -> None:
    if "websocket.http.response" in ws.scope.get("extensions", {}):
        await ws.send_denial_response(JSONResponse(exc.body(), status_code=exc.status))
    else:
        await ws.close(code=_POLICY_VIOLATION, reason=exc.message[:120])


async def run_events_ws(server: ServerHost, ws: WebSocket) -> None:
    """Serve one WebSocket observer of a run (see the module doc)."""

    name = ws.path_params["name"]
    try:
        await server.authenticate(ws)
        server.agent(name)
        run = await server.run(name, ws.path_params["run_id"])
        after = last_event_id(ws)
    except ServerError as exc:
        await _deny(ws, exc)
        return
    await ws.accept(headers=[(b"x-run-id", run.id.encode())])
    sender = asyncio.ensure_future(_send_events(ws, run, after))
    receiver = asyncio.ensure_future(_receive_commands(server, ws, run))
    try:
        await asyncio.wait([sender, receiver], return_when=asyncio.FIRST_COMPLETED)
    finally:
        receiver.cancel()
        if not sender.done():
            sender.cancel()  # the client went away
    if sender.done() and not sender.cancelled() and sender.exception() is None:
        await ws.close(code=1000)


async def _send_events(ws: WebSocket, run: Run, after: int) -> None:
    async for event in run.subscribe(after):
        await ws.send_text(event.text)


async def _receive_commands(server: ServerHost, ws: WebSocket, run: Run) -> None:
    try:
        while True:
            received = await ws.receive()
            if received["type"] == "websocket.disconnect":
                return
            raw = received.get("text")
            try:
                message = json.loads(raw) if raw is not None else None
            except ValueError:
                message = None
            if isinstance(message, dict) and message.get("type") == "cancel":
                server.runs.cancel(run, "cancelled by a WebSocket client")
                continue
            error = {"type": "error", "message": 'unknown message; send {"type": "cancel"}'}
            await ws.send_text(json.dumps(error))
    except (WebSocketDisconnect, RuntimeError):
        return  # disconnected
