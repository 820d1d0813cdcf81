"""Against a real uvicorn on 127.0.0.1: disconnects, concurrency, SSE and WebSocket wires."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
from httpx_ws import aconnect_ws

from helikon import Agent
from helikon.runtimes.server import AgentServer, MemorySessions, ServerConfig
from helikon.runtimes.server.runs import Run
from helikon.testing import Delay, MockModel, Text

from .conftest import BOUND, TOOL_RUN_TYPES, Live, calc_agent, slow_agent, sse_frames


async def wait_for_run(server: AgentServer, *, events: int = 1) -> Run:
    """The server's only run, once it has at least ``events`` events."""
    async with asyncio.timeout(BOUND):
        while True:
            runs = list(server.runs._runs.values())
            if runs and len(runs[0].events) >= events:
                return runs[0]
            await asyncio.sleep(0.01)


async def test_sse_over_http_arrives_event_by_event(live: type[Live]) -> None:
    async with Live(AgentServer([calc_agent()])) as srv, httpx.AsyncClient(base_url=srv.url) as c:
        async with asyncio.timeout(BOUND):
            async with c.stream("POST", "/agents/calc/runs?stream=sse", json={"input": "x"}) as r:
                assert r.status_code == 200 and r.headers["x-run-id"]
                frames = [f async for f in sse_frames(r.aiter_lines())]
    assert [f["event"] for f in frames] == TOOL_RUN_TYPES


async def test_sse_client_disconnect_cancels_the_run_and_records_it(live: type[Live]) -> None:
    sessions = MemorySessions()
    server = AgentServer([slow_agent()], session_factory=sessions)
    async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url) as c:
        async with asyncio.timeout(BOUND):
            headers = {"X-Session-Id": "s1"}
            async with c.stream(
                "POST", "/agents/slow/runs?stream=sse", json={"input": "x"}, headers=headers
            ) as r:
                async for frame in sse_frames(r.aiter_lines()):
                    if frame["event"] == "token_delta":
                        break  # leaving the block closes the connection mid-stream
            run = await wait_for_run(server)
            await run.wait_done()
    assert run.status == "failed"
    assert run.events[-1].data["error"]["kind"] == "Cancelled"
    assert run.cancel.reason == "client disconnected"
    kinds = [e.type for e in await sessions.sessions["s1"].events()]
    assert kinds == ["user_message", "tool_called", "permission_decided", "tool_returned"]


async def test_one_shot_client_disconnect_cancels_the_run_and_records_it(
    live: type[Live],
) -> None:
    sessions = MemorySessions()
    server = AgentServer([slow_agent()], session_factory=sessions)
    async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url) as c:
        request = asyncio.create_task(
            c.post("/agents/slow/runs", json={"input": "x"}, headers={"X-Session-Id": "s1"})
        )
        run = await wait_for_run(server, events=7)  # ... token_delta: waiting in the model
        request.cancel()  # the client gives up: its connection closes
        async with asyncio.timeout(BOUND):
            await run.wait_done()
    assert run.status == "failed" and run.events[-1].data["error"]["kind"] == "Cancelled"
    kinds = [e.type for e in await sessions.sessions["s1"].events()]
    assert kinds == ["user_message", "tool_called", "permission_decided", "tool_returned"]


async def test_async_run_outlives_its_connection(live: type[Live]) -> None:
    server = AgentServer([slow_agent(0.3)])
    async with Live(server) as srv:
        async with httpx.AsyncClient(base_url=srv.url) as c:
            r = await c.post("/agents/slow/runs?mode=async", json={"input": "x"})
            assert r.status_code == 202
        run = await wait_for_run(server)
        async with asyncio.timeout(BOUND):
            await run.wait_done()
    assert run.status == "completed" and run.summary()["output"] == "thinking."


async def test_different_sessions_run_concurrently_one_session_runs_in_turn(
    live: type[Live],
) -> None:
    def agent() -> Agent:
        return Agent(name="a", model=MockModel([[Delay(0.4), Text("done")]] * 4))

    sessions = MemorySessions()
    server = AgentServer([agent()], session_factory=sessions)
    async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url, timeout=BOUND) as c:

        async def post(session: str) -> httpx.Response:
            headers = {"X-Session-Id": session}
            return await c.post("/agents/a/runs", json={"input": session}, headers=headers)

        start = time.monotonic()
        parallel = await asyncio.gather(post("a"), post("b"))
        took_parallel = time.monotonic() - start
        start = time.monotonic()
        serial = await asyncio.gather(post("c"), post("c"))
        took_serial = time.monotonic() - start
    assert [r.json()["status"] for r in parallel + serial] == ["completed"] * 4
    assert took_parallel < 0.75 <= took_serial
    kinds = [e.type for e in await sessions.sessions["c"].events()]
    assert kinds == ["user_message", "assistant_message", "user_message", "assistant_message"]


async def test_websocket_over_uvicorn_replays_and_tails(live: type[Live]) -> None:
    server = AgentServer([slow_agent(0.2)])
    async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url) as c:
        r = await c.post("/agents/slow/runs?mode=async", json={"input": "x"})
        events_url = r.json()["events_url"]
        async with asyncio.timeout(BOUND):
            await wait_for_run(server, events=3)  # some events happened before we connect
            async with aconnect_ws(events_url, c) as ws:  # type: ignore[var-annotated]
                frames: list[dict[str, Any]] = []
                while not frames or frames[-1]["type"] not in ("run_completed", "run_failed"):
                    frames.append(json.loads(await ws.receive_text()))
            missing = await c.get(events_url.replace("/events", "/nope"))
    slow_types = [*TOOL_RUN_TYPES[:7], "token_delta", *TOOL_RUN_TYPES[7:]]
    assert [f["type"] for f in frames] == slow_types
    assert missing.status_code == 404


async def test_websocket_refusal_over_uvicorn_is_an_http_404(live: type[Live]) -> None:
    async with Live(AgentServer([calc_agent()])) as srv, httpx.AsyncClient(base_url=srv.url) as c:
        headers = {
            "Connection": "Upgrade",
            "Upgrade": "websocket",
            "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        }
        r = await c.get("/agents/calc/runs/missing/events", headers=headers)
    assert r.status_code == 404 and r.json()["error"] == "unknown_run"


async def test_idle_sse_stream_gets_keepalive_comments(live: type[Live]) -> None:
    server = AgentServer([slow_agent(0.3)], config=ServerConfig(keepalive=0.05))
    async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url) as c:
        async with asyncio.timeout(BOUND):
            async with c.stream("POST", "/agents/slow/runs?stream=sse", json={"input": "x"}) as r:
                lines = [line async for line in r.aiter_lines()]
    assert ": keepalive" in lines
    assert [line for line in lines if line.startswith("event: ")][-1] == "event: run_completed"


async def test_shutdown_cancels_runs_in_flight_and_records_them(live: type[Live]) -> None:
    sessions = MemorySessions()
    server = AgentServer([slow_agent()], session_factory=sessions)
    async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url) as c:
        r = await c.post(
            "/agents/slow/runs?mode=async", json={"input": "x"}, headers={"X-Session-Id": "s"}
        )
        assert r.status_code == 202
        run = await wait_for_run(server, events=7)
    assert run.done and run.events[-1].data["error"]["kind"] == "Cancelled"
    assert run.cancel.reason == "server shutting down"
    assert len(await sessions.sessions["s"].events()) == 4  # user, call, decision, result
