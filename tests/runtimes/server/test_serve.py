"""``AgentServer.serve()``'s lifecycle: cancelling it, serving twice, serving again."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import re
import socket
import threading
import time

import httpx
import pytest

from helikon.errors import ConfigError
from helikon.runtimes.server import AgentServer, MemorySessions
from helikon.runtimes.server.serving import check_settings, listening_socket, loop_factory

from .conftest import BOUND, Live, calc_agent, slow_agent


async def started(server: AgentServer, task: asyncio.Task[None]) -> str:
    """The base URL once ``server`` answers (fails the test after ``BOUND`` seconds)."""
    async with asyncio.timeout(BOUND):
        while server._uvicorn is None or not server._uvicorn.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
    return f"http://127.0.0.1:{server.port}"


async def cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    async with asyncio.timeout(BOUND):
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_a_cancelled_serve_stops_and_the_next_server_on_the_loop_answers() -> None:
    first = AgentServer([calc_agent()])
    task = asyncio.create_task(first.serve("127.0.0.1", 0))
    url = await started(first, task)
    async with httpx.AsyncClient(timeout=BOUND) as c:
        assert (await c.get(f"{url}/healthz")).text == "ok"
        await cancel(task)
        assert first._uvicorn is None
        with pytest.raises(httpx.ConnectError):  # the socket is closed, not left behind
            await c.get(f"{url}/healthz")
        for _ in range(2):  # each new server may reuse the closed socket's descriptor
            second = AgentServer([calc_agent()])
            task = asyncio.create_task(second.serve("127.0.0.1", 0))
            url = await started(second, task)
            assert (await c.get(f"{url}/healthz", timeout=5)).text == "ok"
            r = await c.post(f"{url}/agents/calc/runs", json={"input": "x"}, timeout=5)
            assert r.status_code == 200 and r.json()["output"] == "3"
            await cancel(task)


async def test_cancelling_serve_cancels_runs_in_flight_and_records_them() -> None:
    sessions = MemorySessions()
    server = AgentServer([slow_agent()], session_factory=sessions)
    task = asyncio.create_task(server.serve("127.0.0.1", 0))
    url = await started(server, task)
    async with httpx.AsyncClient(base_url=url, timeout=BOUND) as c:
        lines: list[str] = []

        async def stream() -> None:
            body = {"input": "x"}
            headers = {"X-Session-Id": "s"}
            async with c.stream(
                "POST", "/agents/slow/runs?stream=sse", json=body, headers=headers
            ) as r:
                async for line in r.aiter_lines():
                    lines.append(line)

        reader = asyncio.create_task(stream())
        async with asyncio.timeout(BOUND):
            while "event: token_delta" not in lines:  # the model is waiting 30 s
                await asyncio.sleep(0.01)
        await cancel(task)  # well under the run's 30 s
        with contextlib.suppress(httpx.HTTPError):
            async with asyncio.timeout(BOUND):
                await reader
    (run,) = server.runs._runs.values()
    assert run.done and run.events[-1].data["error"]["kind"] == "Cancelled"
    assert run.cancel.reason == "server shutting down"
    assert len(await sessions.sessions["s"].events()) == 4  # user, call, decision, result


async def test_a_second_serve_while_serving_is_refused() -> None:
    server = AgentServer([calc_agent()])
    async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url, timeout=BOUND) as c:
        port = server.port
        with pytest.raises(ConfigError, match=f"already serving on port {port}; call shutdown"):
            async with asyncio.timeout(BOUND):
                await server.serve("127.0.0.1", 0)
        assert server.port == port
        assert (await c.get("/healthz")).text == "ok"
    # Live's exit: shutdown() stopped the only uvicorn, the serve() task ended


async def test_serve_again_after_shutdown() -> None:
    server = AgentServer([calc_agent(2)])
    for _ in range(2):
        async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url, timeout=BOUND) as c:
            r = await c.post("/agents/calc/runs", json={"input": "x"})
            assert r.json()["output"] == "3"


def _server_side_nodelay(server: AgentServer) -> list[int]:
    """``TCP_NODELAY`` of every connection uvicorn holds, read from its transport's socket."""
    values = []
    for conn in server._uvicorn.server_state.connections:
        sock = conn.transport.get_extra_info("socket")
        values.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
    return values


async def test_accepted_connections_have_nagle_off() -> None:
    # Without TCP_NODELAY the first SSE frame after the headers waits for the client's
    # delayed ACK (~40 ms); asyncio sets it only on sockets created with proto=IPPROTO_TCP.
    server = AgentServer([calc_agent(2)])
    async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url, timeout=BOUND) as c:
        assert (await c.get("/healthz")).text == "ok"  # the keep-alive connection stays open
        assert _server_side_nodelay(server) == [1]
        async with c.stream("POST", "/agents/calc/runs?stream=sse", json={"input": "x"}) as r:
            assert r.status_code == 200
            assert _server_side_nodelay(server) == [1]
            await r.aread()


def test_the_listening_socket_is_tcp_by_protocol_number() -> None:
    sock = listening_socket("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP  # accepted sockets inherit it
        client = socket.create_connection(sock.getsockname())
        accepted, _ = sock.accept()
        with client, accepted:
            assert accepted.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


async def test_serve_takes_uvicorn_settings_and_signals_ready(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from helikon.runtimes.server import app as app_module

    backlogs: list[int] = []

    def recording(host: str, port: int, *, backlog: int) -> socket.socket:
        backlogs.append(backlog)
        return listening_socket(host, port, backlog=backlog)

    monkeypatch.setattr(app_module, "listening_socket", recording)
    server = AgentServer([calc_agent()])
    with caplog.at_level(logging.INFO, logger="helikon.server"):
        task = asyncio.create_task(
            server.serve("127.0.0.1", 0, backlog=16, keep_alive=2.5, http="h11", log_level="info")
        )
        async with asyncio.timeout(BOUND):
            port = await server.wait_ready()
        assert port == server.port and server._uvicorn.started
        async with httpx.AsyncClient(timeout=BOUND) as c:
            assert (await c.get(f"http://127.0.0.1:{port}/healthz")).text == "ok"
        config = server._uvicorn.config
        assert (config.timeout_keep_alive, config.http, config.log_level) == (2.5, "h11", "info")
        assert backlogs == [16]
        await cancel(task)
    assert [r.getMessage() for r in caplog.records if r.name == "helikon.server"] == [
        f"helikon server ready on http://127.0.0.1:{port}"
    ]
    assert not server._ready.is_set()  # until the next serve() is ready


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"backlog": 0}, "serve(backlog=...) must be an int >= 1, got 0"),
        ({"keep_alive": 0}, "serve(keep_alive=...) must be seconds > 0, got 0"),
        ({"keep_alive": float("inf")}, "serve(keep_alive=...) must be seconds > 0, got inf"),
        ({"http": "h2"}, "serve(http=...) must be one of ('auto', 'h11', 'httptools'), got 'h2'"),
        ({"log_level": "INFO"}, "serve(log_level=...) must be one of ('critical', 'error',"),
    ],
)
async def test_bad_serve_settings_are_refused_before_binding(
    settings: dict[str, object], says: str
) -> None:
    server = AgentServer([calc_agent()])
    with pytest.raises(ConfigError, match=re.escape(says)):
        await server.serve("127.0.0.1", 0, **settings)  # type: ignore[arg-type]
    assert server.port is None and not server._serving


def test_loop_choices() -> None:
    with pytest.raises(ConfigError, match=re.escape("serve_sync(loop=...) must be one of")):
        loop_factory("trio")
    assert loop_factory("asyncio") is None
    if importlib.util.find_spec("uvloop") is None:
        assert loop_factory("auto") is None
        with pytest.raises(ConfigError, match="needs uvloop: pip install uvloop"):
            loop_factory("uvloop")
    if importlib.util.find_spec("httptools") is None:
        with pytest.raises(ConfigError, match="needs httptools"):
            check_settings(backlog=1, keep_alive=1, http="httptools", log_level="info")


def test_serve_sync_runs_its_own_loop_until_shutdown() -> None:
    server = AgentServer([calc_agent()])
    thread = threading.Thread(target=server.serve_sync, args=("127.0.0.1", 0))
    thread.start()
    try:
        deadline = time.monotonic() + BOUND
        while not server._ready.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert httpx.get(f"http://127.0.0.1:{server.port}/healthz", timeout=BOUND).text == "ok"
    finally:
        server.shutdown()
        thread.join(BOUND)
    assert not thread.is_alive()
