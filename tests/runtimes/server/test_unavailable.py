"""A session backend that cannot be reached answers 503 before any stream starts."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest

from helikon.runtimes.server import AgentServer
from helikon.runtimes.server.unavailable import backend_unavailable
from helikon.sessions import MemorySession
from tests.sessions.backends import REDIS_URL, redis_available

from .conftest import BOUND, Live, calc_agent, slow_agent


@pytest.mark.skipif(not redis_available(), reason="needs Redis")
async def test_an_exhausted_redis_pool_answers_503_not_a_200_stream() -> None:
    import redis.asyncio as aioredis
    from redis.exceptions import ConnectionError as RedisConnectionError

    from helikon.sessions.redis import RedisSession

    # the pool as the sessions guide used to build it: a cap, and no waiting for a connection
    pool = aioredis.ConnectionPool.from_url(REDIS_URL, max_connections=1)
    client = aioredis.Redis(connection_pool=pool)
    held = await pool.get_connection()  # another request holds the only connection
    prefix = f"helikon-test-{uuid.uuid4().hex[:12]}"
    server = AgentServer(
        [calc_agent()], session_factory=lambda sid: RedisSession(client, sid, prefix=prefix)
    )
    try:
        async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url, timeout=BOUND) as c:
            for query in ("?stream=sse", ""):
                r = await c.post(
                    f"/agents/calc/runs{query}", json={"input": "x"}, headers={"X-Session-Id": "s"}
                )
                assert r.status_code == 503 and r.headers["retry-after"] == "1"
                body = r.json()
                assert body["error"] == "session_unavailable"
                assert body["message"].startswith("the run's session is unavailable: ")
                assert "Too many connections" in body["message"]
        assert backend_unavailable(RedisConnectionError("Too many connections"))
    finally:
        await pool.release(held)
        await client.aclose()
        await pool.disconnect()


async def test_a_run_behind_another_on_its_session_streams_at_once() -> None:
    # the wait for the first event before the headers stops when the run queues behind
    # its session: the stream starts (with keep-alives) as before
    sessions = {"s": MemorySession()}
    server = AgentServer([slow_agent(runs=2)], session_factory=sessions.__getitem__)
    async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url, timeout=BOUND) as c:
        headers = {"X-Session-Id": "s"}
        first = await c.post("/agents/slow/runs?mode=async", json={"input": "a"}, headers=headers)
        assert first.status_code == 202
        async with c.stream(
            "POST", "/agents/slow/runs?stream=sse", json={"input": "b"}, headers=headers
        ) as r:
            assert r.status_code == 200
            second = server.runs.get(r.headers["x-run-id"])
            assert second is not None and second.id != first.json()["run_id"]
            assert second.behind_session and second.events == []
            for run in (server.runs.get(first.json()["run_id"]), second):
                assert run is not None
                server.runs.cancel(run, "test")
            async with asyncio.timeout(BOUND):
                await r.aread()


def test_what_counts_as_unavailable() -> None:
    from helikon.errors import SessionBackendError, SessionUnavailable

    assert backend_unavailable(SessionUnavailable("x"))
    assert backend_unavailable(ConnectionResetError())
    assert backend_unavailable(TimeoutError())
    assert not backend_unavailable(SessionBackendError("database is locked"))
    assert not backend_unavailable(ValueError("x"))
