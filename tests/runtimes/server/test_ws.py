"""The WebSocket protocol over Starlette's TestClient."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from starlette.requests import HTTPConnection
from starlette.testclient import TestClient, WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect

from helikon.runtimes.server import AgentServer, AuthRejection, MemorySessions

from .conftest import BOUND, TOOL_RUN_TYPES, calc_agent, slow_agent


def frames_until_close(ws: Any) -> tuple[list[dict[str, Any]], int]:
    """Every text frame until the server closes, and the close code."""
    frames: list[dict[str, Any]] = []
    while True:
        message = ws.receive()
        if message["type"] == "websocket.close":
            return frames, message["code"]
        frames.append(json.loads(message["text"]))


def test_websocket_replays_a_finished_run_then_closes_normally() -> None:
    with TestClient(AgentServer([calc_agent()]).app) as c:
        run_id = c.post("/agents/calc/runs", json={"input": "x"}).headers["x-run-id"]
        with c.websocket_connect(f"/agents/calc/runs/{run_id}/events") as ws:
            frames, code = frames_until_close(ws)
        with c.websocket_connect(f"/agents/calc/runs/{run_id}/events?last_event_id=6") as ws:
            tail, _ = frames_until_close(ws)
    assert [f["type"] for f in frames] == TOOL_RUN_TYPES and code == 1000
    assert [f["type"] for f in tail] == ["message_output", "run_completed"]


def test_websocket_round_trip_cancel_records_the_run() -> None:
    sessions = MemorySessions()
    server = AgentServer([slow_agent()], session_factory=sessions)
    with TestClient(server.app) as c:
        r = c.post(
            "/agents/slow/runs?mode=async", json={"input": "x"}, headers={"X-Session-Id": "s"}
        )
        with c.websocket_connect(r.json()["events_url"]) as ws:
            seen: list[dict[str, Any]] = []
            while not seen or seen[-1]["type"] != "token_delta":
                seen.append(json.loads(ws.receive_text()))
            ws.send_text("hello")
            error = {"type": "error", "message": 'unknown message; send {"type": "cancel"}'}
            assert json.loads(ws.receive_text()) == error
            ws.send_bytes(b'{"type": "cancel"}')  # binary: answered, not taken as a command
            assert json.loads(ws.receive_text()) == error
            ws.send_json({"type": "cancel"})
            rest, code = frames_until_close(ws)
    assert code == 1000
    assert rest[-1]["type"] == "run_failed" and rest[-1]["error"]["kind"] == "Cancelled"
    kinds = [e.type for e in asyncio.run(sessions.sessions["s"].events())]
    assert kinds == ["user_message", "tool_called", "permission_decided", "tool_returned"]


def test_closing_a_websocket_does_not_cancel_the_run() -> None:
    server = AgentServer([slow_agent(0.2)])
    with TestClient(server.app) as c:
        run_id = c.post("/agents/slow/runs?mode=async", json={"input": "x"}).headers["x-run-id"]
        with c.websocket_connect(f"/agents/slow/runs/{run_id}/events") as ws:
            assert json.loads(ws.receive_text())["type"] == "run_started"
        deadline = time.monotonic() + BOUND
        while (summary := c.get(f"/agents/slow/runs/{run_id}").json())["status"] == "running":
            assert time.monotonic() < deadline
            time.sleep(0.02)
    assert summary["status"] == "completed" and summary["output"] == "thinking."


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/agents/nope/runs/x/events", 404, "unknown_agent"),
        ("/agents/calc/runs/x/events", 404, "unknown_run"),
    ],
)
def test_refused_handshake_answers_the_http_error(path: str, status: int, code: str) -> None:
    with (
        TestClient(AgentServer([calc_agent()]).app) as c,
        pytest.raises(WebSocketDenialResponse) as denied,
        c.websocket_connect(path),
    ):
        pass
    assert denied.value.status_code == status and denied.value.json()["error"] == code


def test_websocket_auth_rejection_is_a_401_denial() -> None:
    def auth(conn: HTTPConnection) -> None:
        if conn.query_params.get("token") != "t":
            raise AuthRejection("bad token")

    server = AgentServer([calc_agent()], auth=auth)
    with TestClient(server.app) as c:
        run_id = c.post("/agents/calc/runs?token=t", json={"input": "x"}).headers["x-run-id"]
        with (
            pytest.raises(WebSocketDenialResponse) as denied,
            c.websocket_connect(f"/agents/calc/runs/{run_id}/events"),
        ):
            pass
        with c.websocket_connect(f"/agents/calc/runs/{run_id}/events?token=t") as ws:
            frames, _ = frames_until_close(ws)
    assert denied.value.status_code == 401 and denied.value.json()["message"] == "bad token"
    assert len(frames) == len(TOOL_RUN_TYPES)


def test_websocket_without_the_denial_extension_closes_with_1008() -> None:
    server = AgentServer([calc_agent()])
    app = server.app

    async def no_extension(scope: Any, receive: Any, send: Any) -> None:
        scope = {**scope, "extensions": {}}
        await app(scope, receive, send)

    with (
        TestClient(no_extension) as c,
        pytest.raises(WebSocketDisconnect) as closed,
        c.websocket_connect("/agents/calc/runs/x/events"),
    ):
        pass
    assert closed.value.code == 1008 and "has no run 'x'" in closed.value.reason
