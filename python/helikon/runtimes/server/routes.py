"""The HTTP routes of :class:`AgentServer` (see :mod:`helikon.runtimes.server.app`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.types import Receive, Scope, Send

from helikon.errors import ServerError
from helikon.runtimes.server.approvals import approval_routes
from helikon.runtimes.server.body import last_event_id, parse_run_body, parse_transport, read_body
from helikon.runtimes.server.host import ServerHost
from helikon.runtimes.server.metrics import CONTENT_TYPE
from helikon.runtimes.server.openapi import openapi_schema
from helikon.runtimes.server.runs import Run
from helikon.runtimes.server.sse import SSE_HEADERS, sse_stream
from helikon.runtimes.server.ui import ui_routes
from helikon.runtimes.server.ws import run_events_ws

__all__ = ["RUN_ID_HEADER", "RunStream", "build_routes", "error_response", "start_failure"]

RUN_ID_HEADER = "X-Run-Id"


def error_response(exc: ServerError, headers: dict[str, str] | None = None) -> JSONResponse:
    """The JSON error body ``{"error": code, "message": ..., **details}`` with its status."""
    headers = dict(headers or {})
    if exc.status == 503:
        headers["Retry-After"] = "1"
    return JSONResponse(exc.body(), status_code=exc.status, headers=headers)


class _RunStream(StreamingResponse):
    """An SSE response that calls ``on_close`` however it ends (done, disconnect, error)."""

    def __init__(
        self, content: AsyncIterator[bytes], headers: dict[str, str], on_close: Callable[[], None]
    ) -> None:
        super().__init__(
            content, headers={**SSE_HEADERS, **headers}, media_type="text/event-stream"
        )
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._on_close()


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _wait_or_disconnect(run: Run, receive: Receive) -> bool:
    """Wait for the run to end (or pause for approval); False when the client went away
    first."""
    done = asyncio.ensure_future(run.wait_done())
    gone = asyncio.ensure_future(_until_disconnect(receive))
    try:
        await asyncio.wait([done, gone], return_when=asyncio.FIRST_COMPLETED)
    finally:
        done.cancel()
        gone.cancel()
    return run.done or run.status == "needs_approval"


async def _unless_disconnect(start: Awaitable[Run], request: Request) -> Run | None:
    """Await ``start`` (which may wait in the run queue); ``None`` when the client went
    away first (``start`` is then cancelled and gives its queue place or slot back)."""
    starting = asyncio.ensure_future(start)
    gone = asyncio.ensure_future(_until_disconnect(request.receive))
    try:
        await asyncio.wait([starting, gone], return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        starting.cancel()
        raise
    finally:
        gone.cancel()
    if not starting.done():
        starting.cancel()
    try:
        return await starting  # a run that started anyway goes on as if the client had left
    except asyncio.CancelledError:
        if not starting.cancelled():
            raise
        return None


def _start_failure(run: Run) -> ServerError:
    """Why ``run`` ended before its first event: 503 ``session_unavailable`` when its
    session backend could not be reached (kind ``Unavailable``), else 500
    ``run_start_failed``."""
    error = run.start_error or {}
    message = error.get("message", "unknown")
    if error.get("kind") == "Unavailable":
        return ServerError(
            f"the run's session is unavailable: {message}",
            status=503,
            code="session_unavailable",
            details={"run_id": run.id},
        )
    return ServerError(
        f"the run could not start: {message}", code="run_start_failed", details={"run_id": run.id}
    )


def build_routes(server: ServerHost) -> list[BaseRoute]:
    """The server's routes."""

    async def create_run(request: Request) -> Response:
        name = request.path_params["name"]
        try:
            await server.authenticate(request)
            server.agent(name)
            transport = parse_transport(request.query_params)
            items = parse_run_body(await read_body(request, server.config.max_body_bytes))
            run = await _unless_disconnect(server.start_run(request, name, items), request)
        except ServerError as exc:
            return error_response(exc)
        if run is None:  # left while queued for a run slot: nothing started
            return Response(status_code=499)
        headers = {RUN_ID_HEADER: run.id}
        if transport == "async":
            run_url = request.url_for("run", name=name, run_id=run.id).path
            events_url = request.url_for("run_events", name=name, run_id=run.id).path
            body = {
                "run_id": run.id,
                "agent": name,
                "session_id": run.session_id,
                "status": run.status,
                "run_url": run_url,
                "events_url": events_url,
            }
            return JSONResponse(body, status_code=202, headers={**headers, "Location": run_url})
        if transport == "sse":

            def drop_guard() -> None:
                server.runs.cancel(run, "client disconnected")

            await run.wait_opened()
            if run.done and not run.events:
                return error_response(_start_failure(run), headers)
            stream = sse_stream(run, keepalive=server.config.keepalive)
            return _RunStream(stream, headers, drop_guard)
        if not await _wait_or_disconnect(run, request.receive):
            server.runs.cancel(run, "client disconnected")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run.wait_done(), server.config.cancel_grace * 2)
            return Response(status_code=499, headers=headers)  # nobody is listening
        if not run.events:
            return error_response(_start_failure(run), headers)
        return JSONResponse(run.summary(), headers=headers)

    async def get_run(request: Request) -> Response:
        try:
            await server.authenticate(request)
            server.agent(request.path_params["name"])
            run = await server.run(request.path_params["name"], request.path_params["run_id"])
        except ServerError as exc:
            return error_response(exc)
        return JSONResponse(run.summary(), headers={RUN_ID_HEADER: run.id})

    async def run_events_sse(request: Request) -> Response:
        try:
            await server.authenticate(request)
            server.agent(request.path_params["name"])
            run = await server.run(request.path_params["name"], request.path_params["run_id"])
            after = last_event_id(request)
        except ServerError as exc:
            return error_response(exc)
        stream = sse_stream(run, after=after, keepalive=server.config.keepalive)
        return _RunStream(stream, {RUN_ID_HEADER: run.id}, lambda: None)  # observers never cancel

    async def openapi(request: Request) -> Response:
        try:
            await server.authenticate(request)
        except ServerError as exc:
            return error_response(exc)
        return JSONResponse(openapi_schema(sorted(server.agents)))

    async def metrics(request: Request) -> Response:
        try:
            await server.authenticate(request)
        except ServerError as exc:
            return error_response(exc)
        return Response(server.metrics_text(), media_type=CONTENT_TYPE)

    async def health(request: Request) -> Response:
        return PlainTextResponse("ok")

    routes: list[BaseRoute] = [
        Route("/agents/{name}/runs", create_run, methods=["POST"], name="create_run"),
        Route("/agents/{name}/runs/{run_id}", get_run, methods=["GET"], name="run"),
        Route(
            "/agents/{name}/runs/{run_id}/events",
            run_events_sse,
            methods=["GET"],
            name="run_events",
        ),
        WebSocketRoute(
            "/agents/{name}/runs/{run_id}/events",
            lambda ws: run_events_ws(server, ws),
            name="run_events_ws",
        ),
    ]
    routes.extend(approval_routes(server))
    if server.config.ui:
        routes.extend(ui_routes(server))
    if server.config.openapi:
        routes.append(Route("/openapi.json", openapi, methods=["GET"], name="openapi"))
    if server.config.metrics_path is not None:
        routes.append(Route(server.config.metrics_path, metrics, methods=["GET"], name="metrics"))
    if server.config.health_path is not None:
        routes.append(Route(server.config.health_path, health, methods=["GET"], name="health"))
    return routes


RunStream = _RunStream
"""An SSE response that calls ``on_close`` however it ends (for other streaming routes)."""
start_failure = _start_failure
