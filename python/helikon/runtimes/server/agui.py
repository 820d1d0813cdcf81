"""``POST /agents/{name}/ag-ui``: a run as an AG-UI event stream (extra ``ag-ui``).

The body is AG-UI's ``RunAgentInput`` (``threadId``, ``runId``, ``messages``, ...); the answer
is ``text/event-stream`` with one AG-UI event per ``data:`` frame (see
:mod:`helikon.runtimes.server.agui_events` for the mapping). The run goes through the
server like any other (auth, run slots, context factory, ``X-Run-Id``), on the conversation
the client sends: AG-UI clients hold the history, so an ``X-Session-Id`` header is refused
(400) rather than replaying a stored session under it. A client that disconnects cancels
the run. Without the extra the route answers 501 ``extra_missing``.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from helikon.core.runnable import input_items
from helikon.errors import ConfigError, ServerError
from helikon.runtimes.server.body import bad_request, read_body
from helikon.runtimes.server.host import ServerHost
from helikon.runtimes.server.routes import RUN_ID_HEADER, RunStream, error_response, start_failure
from helikon.runtimes.server.runs import Run
from helikon.runtimes.server.sessions import SESSION_HEADER

__all__ = ["agui_routes"]

_EXTRA = "the AG-UI endpoint needs the 'ag-ui' extra: pip install 'helikon[ag-ui]'"


def _parse(raw: bytes) -> tuple[Any, list[dict[str, Any]]]:
    """The ``RunAgentInput`` and its messages as helikon items (JSON form).

    Raises:
        ServerError: 400 ``invalid_request`` naming the field.
    """
    from ag_ui.core import RunAgentInput
    from pydantic import ValidationError

    from helikon.runtimes.server.agui_events import InputProblem, input_messages

    try:
        body = RunAgentInput.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise bad_request(
            f"the body is not an AG-UI RunAgentInput: {field or 'body'}: {first['msg']}", field
        ) from None
    try:
        items = input_messages(body)
    except InputProblem as exc:
        raise bad_request(str(exc), exc.field) from None
    if not items or all(item["type"] == "tool_result" for item in items):
        raise bad_request(
            "'messages' holds no message for the agent to answer; add a user message, e.g. "
            '{"id": "m1", "role": "user", "content": "hi"}',
            "messages",
        )
    return body, items


async def _events(run: Run, translator: Any, keepalive: float) -> AsyncIterator[bytes]:
    from ag_ui.encoder import EventEncoder

    encoder = EventEncoder()
    events = run.subscribe(-1)
    pending: asyncio.Future[Any] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(events))
            done, _ = await asyncio.wait([pending], timeout=keepalive)
            if not done:
                yield b": keepalive\n\n"
                continue
            try:
                recorded = pending.result()
            except StopAsyncIteration:
                return
            pending = None
            for event in translator.translate(recorded.data):
                yield encoder.encode(event).encode()
    finally:
        if pending is not None:
            pending.cancel()


def agui_routes(server: ServerHost) -> list[BaseRoute]:
    """The AG-UI route of ``server``."""

    async def agui_run(request: Request) -> Response:
        name = request.path_params["name"]
        try:
            await server.authenticate(request)
            server.agent(name)
            if importlib.util.find_spec("ag_ui") is None:
                raise ServerError(_EXTRA, status=501, code="extra_missing")
            if SESSION_HEADER in request.headers:
                raise bad_request(
                    "the AG-UI endpoint runs on the messages the client sends; drop the "
                    "X-Session-Id header (or use POST /agents/{name}/runs for a stored session)",
                    "X-Session-Id",
                )
            body, raw_items = _parse(await read_body(request, server.config.max_body_bytes))
            try:
                items = input_items(raw_items)
            except ConfigError as exc:
                raise bad_request(
                    str(exc).replace("agent input[", "messages["), "messages"
                ) from None
            run = await server.start_run(request, name, items)
        except ServerError as exc:
            return error_response(exc)
        from helikon.runtimes.server.agui_events import AguiTranslator

        headers = {RUN_ID_HEADER: run.id}
        await run.wait_opened()
        if run.done and not run.events:
            return error_response(start_failure(run), headers)
        translator = AguiTranslator(body.thread_id, body.run_id, run.id)
        stream = _events(run, translator, server.config.keepalive)
        return RunStream(stream, headers, lambda: server.runs.cancel(run, "client disconnected"))

    return [Route("/agents/{name}/ag-ui", agui_run, methods=["POST"], name="agui_run")]
