"""Runs paused for approval over HTTP: ``GET`` and ``POST /agents/{name}/runs/{id}/approvals``.

A run of an agent whose ``RunConfig`` has ``approval="defer"`` pauses when a call asks: its
status becomes ``needs_approval``, its log gets the ``approval_requested`` and
``run_interrupted`` events, and its SSE / WebSocket streams stay open. ``GET .../approvals``
lists the waiting calls; ``POST .../approvals`` answers them::

    {"decisions": {"call_1": {"decision": "approve"},
                   "call_2": {"decision": "deny", "reason": "not this account"},
                   "call_3": {"decision": "edit", "args": {"amount": 10}}}}

(``"remember": true`` on an approve or a deny answers that tool's later asks the same way
for the rest of the run.) The same run id then continues: its streams go on with the next
events. A run nobody answers within ``ServerConfig.approval_timeout`` seconds has every
waiting call denied ("approval timed out"): a wait that times out is never an approval.
The wait counts from the pause (``RunState.paused_at``), also for a run restored from the
paused-run store after a restart (see :mod:`helikon.runtimes.server.paused`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from helikon.core.decisions import Approve, Decision, Deny, Edit
from helikon.errors import ResumeRefused, ServerError
from helikon.runtimes.server.body import bad_request, read_body
from helikon.runtimes.server.host import ServerHost
from helikon.runtimes.server.runs import Run

__all__ = ["TIMED_OUT", "approval_routes", "deny_after", "parse_decisions"]

TIMED_OUT = "approval timed out: nobody answered in time"
"""The denial reason of calls whose wait ran past ``ServerConfig.approval_timeout``."""

log = logging.getLogger("helikon.server")

_EXAMPLE = '{"decisions": {"<call_id>": {"decision": "approve"}}}'


def parse_decisions(raw: bytes) -> dict[str, Decision]:
    """The decisions of a ``POST .../approvals`` body.

    Raises:
        ServerError: 400 ``invalid_request`` naming the field that is wrong.
    """
    try:
        body: Any = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise bad_request(
            f"request body is not valid JSON ({exc}); send {_EXAMPLE}", None
        ) from None
    if not isinstance(body, dict) or set(body) != {"decisions"}:
        raise bad_request(f"the body must be exactly {_EXAMPLE}", None)
    decisions = body["decisions"]
    if not isinstance(decisions, dict) or not decisions:
        raise bad_request(
            "decisions must be a non-empty object of call id -> decision", "decisions"
        )
    out: dict[str, Decision] = {}
    for call_id, d in decisions.items():
        field = f"decisions.{call_id}"
        if not isinstance(d, dict):
            raise bad_request(f'{field} must be an object like {{"decision": "approve"}}', field)
        kind, remember = d.get("decision"), d.get("remember", False)
        allowed = {
            "approve": {"decision", "remember"},
            "deny": {"decision", "reason", "remember"},
            "edit": {"decision", "args"},
        }
        if kind not in allowed:
            raise bad_request(
                f"{field}.decision must be 'approve', 'deny' or 'edit', got {kind!r}",
                f"{field}.decision",
            )
        extra = sorted(set(d) - allowed[kind])
        if extra:
            raise bad_request(
                f"{field}: unknown key {extra[0]!r} for {kind}", f"{field}.{extra[0]}"
            )
        if not isinstance(remember, bool):
            raise bad_request(f"{field}.remember must be true or false", f"{field}.remember")
        try:
            if kind == "approve":
                out[call_id] = Approve(remember=remember)
            elif kind == "deny":
                out[call_id] = Deny(d.get("reason", ""), remember=remember)
            else:
                out[call_id] = Edit(d.get("args"))  # type: ignore[arg-type]
        except ResumeRefused as exc:
            key = "reason" if kind == "deny" else "args"
            raise bad_request(f"{field}.{key}: {exc}", f"{field}.{key}") from None
    return out


def deny_after(server: ServerHost, run: Run) -> None:
    """Deny every waiting call of ``run`` when ``approval_timeout`` passes unanswered."""
    timeout = server.config.approval_timeout
    state = run.paused
    if timeout is None or state is None:
        return
    name, run_id = run.agent, run.id
    decisions: dict[str, Decision] = {p.call_id: Deny(TIMED_OUT) for p in state.pending}
    waited = (datetime.now(UTC) - state.paused_at).total_seconds()  # > 0 after a restart

    async def deny() -> None:
        try:
            await server.answer_approvals(name, run_id, decisions)
        except ServerError as exc:  # answered meanwhile (here or by another server)
            log.info("approval timeout of run %s: %s", run_id, exc.message)

    def expire() -> None:
        if run.paused is state:  # still this pause: nobody answered
            task = asyncio.ensure_future(deny())
            _EXPIRING.add(task)
            task.add_done_callback(_EXPIRING.discard)

    delay = max(timeout - max(waited, 0.0), 0.0)
    run.approval_timer = asyncio.get_running_loop().call_later(delay, expire)


_EXPIRING: set[asyncio.Future[None]] = set()
"""Denials under way (kept referenced until done)."""


def approval_routes(server: ServerHost) -> list[BaseRoute]:
    """``GET`` and ``POST /agents/{name}/runs/{run_id}/approvals``."""

    async def list_approvals(request: Request) -> Response:
        try:
            await server.authenticate(request)
            server.agent(request.path_params["name"])
            run = await server.run(request.path_params["name"], request.path_params["run_id"])
        except ServerError as exc:
            return _error(exc)
        pending = run.paused.pending if run.paused is not None else []
        return JSONResponse(
            {
                "run_id": run.id,
                "status": run.status,
                "pending": [p.model_dump(mode="json") for p in pending],
            }
        )

    async def answer(request: Request) -> Response:
        name, run_id = request.path_params["name"], request.path_params["run_id"]
        try:
            await server.authenticate(request)
            server.agent(name)
            await server.run(name, run_id)
            decisions = parse_decisions(await read_body(request, server.config.max_body_bytes))
            run = await server.answer_approvals(name, run_id, decisions, request)
        except ServerError as exc:
            return _error(exc)
        events_url = request.url_for("run_events", name=name, run_id=run.id).path
        return JSONResponse(
            {"run_id": run.id, "status": run.status, "events_url": events_url}, status_code=202
        )

    path = "/agents/{name}/runs/{run_id}/approvals"
    return [
        Route(path, list_approvals, methods=["GET"], name="run_approvals"),
        Route(path, answer, methods=["POST"], name="answer_approvals"),
    ]


def _error(exc: ServerError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status)
