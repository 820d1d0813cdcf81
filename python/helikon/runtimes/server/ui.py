"""The run inspector: a browser page at ``/ui`` (``ServerConfig.ui``).

The page is three static files shipped in the wheel (``inspector/``: HTML, plain JavaScript,
CSS; no build step, nothing fetched from the network). They hold no data, so they are served
to anyone; every call the page makes for data goes through the server's ``auth``, the page
sending the token it was given (a prompt, or ``#token=...`` in the URL) as
``Authorization: Bearer ...``. The page drives the ordinary run routes (``POST
/agents/{name}/runs?mode=async``, then the run's SSE event stream with ``Last-Event-ID``) and
two listing routes added here:

* ``GET /ui/api/agents``: ``{"agents": [{"name", "description"}, ...]}``, sorted by name.
* ``GET /ui/api/runs``: ``{"runs": [{"run_id", "agent", "session_id", "status", "events"},
  ...]}``, newest first (``events`` is how many the run has so far); ``?session_id=ID``
  keeps the runs of that session only.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from helikon.errors import ServerError
from helikon.runtimes.server.host import ServerHost

__all__ = ["ui_routes"]


def _refused(exc: ServerError) -> Response:
    return JSONResponse(exc.body(), status_code=exc.status)


_FILES = {
    "index.html": "text/html; charset=utf-8",
    "inspector.js": "text/javascript; charset=utf-8",
    "inspector.css": "text/css; charset=utf-8",
}

# The page loads only its own files and talks only to this server: no inline script, no
# other origin, no plugin, no framing.
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_HEADERS = {
    "Content-Security-Policy": _CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def _asset(name: str) -> bytes:
    """One of the page's files, read from the installed package."""
    return resources.files("helikon.runtimes.server").joinpath("inspector", name).read_bytes()


def _agent_info(name: str, agent: Any) -> dict[str, Any]:
    description = getattr(agent, "description", None)
    return {"name": name, "description": description if isinstance(description, str) else ""}


def ui_routes(server: ServerHost) -> list[BaseRoute]:
    """The inspector's routes: the page, its two files, and the listing API."""

    async def index(request: Request) -> Response:
        return Response(_asset("index.html"), media_type=_FILES["index.html"], headers=_HEADERS)

    async def bare(request: Request) -> Response:
        return RedirectResponse(request.url_for("ui_index").path, status_code=307)

    async def asset(request: Request) -> Response:
        name = request.path_params["file"]
        media = _FILES.get(name)
        if media is None or name == "index.html":
            return _refused(
                ServerError(f"no inspector file {name!r}", status=404, code="not_found")
            )
        return Response(_asset(name), media_type=media, headers=_HEADERS)

    async def agents(request: Request) -> Response:
        try:
            await server.authenticate(request)
        except ServerError as exc:
            return _refused(exc)
        listed = [_agent_info(n, a) for n, a in sorted(server.agents.items())]
        return JSONResponse({"agents": listed})

    async def runs(request: Request) -> Response:
        try:
            await server.authenticate(request)
        except ServerError as exc:
            return _refused(exc)
        session = request.query_params.get("session_id")
        listed = [
            {
                "run_id": run.id,
                "agent": run.agent,
                "session_id": run.session_id,
                "status": run.status,
                "events": len(run.events),
            }
            for run in reversed(server.runs.listed())
            if session is None or run.session_id == session
        ]
        return JSONResponse({"runs": listed})

    return [
        Route("/ui", bare, methods=["GET"], name="ui_bare"),
        Route("/ui/", index, methods=["GET"], name="ui_index"),
        Route("/ui/api/agents", agents, methods=["GET"], name="ui_agents"),
        Route("/ui/api/runs", runs, methods=["GET"], name="ui_runs"),
        Route("/ui/{file}", asset, methods=["GET"], name="ui_asset"),
    ]
