"""A run paused over the agent server survives the server: a new AgentServer on the same
paused-run store (SQLite, PostgreSQL, Redis) reports it, lists its calls and resumes the same
run id; two answers, on one server or two, never run a tool twice."""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from helikon import Agent, RunConfig
from helikon.errors import ConfigError, ServerError
from helikon.runtimes.server import (
    AgentServer,
    MemoryPausedRuns,
    PausedRun,
    PostgresPausedRuns,
    RedisPausedRuns,
    ServerConfig,
    SqlitePausedRuns,
)
from helikon.runtimes.server.paused import PausedRunStore
from helikon.testing import MockModel, Text
from tests.conftest import require_service
from tests.sessions import backends

from . import _support as s

REFUND = ("refund", {"order": "A7", "amount": 40})


@pytest.fixture(autouse=True)
def _clear() -> None:
    s.RAN.clear()


@dataclass
class Backend:
    """Sessions and a paused-run store on one database, as two server processes share."""

    sessions: Any
    store: PausedRunStore


@pytest.fixture(params=["sqlite", "postgres", "redis"])
def db(request: pytest.FixtureRequest) -> tuple[str, Any]:
    """The backend's kind and, for PostgreSQL, a DSN and a schema of this test's own."""
    if request.param == "postgres":
        return "postgres", request.getfixturevalue("postgres_schema")
    if request.param == "redis":
        require_service("redis", backends.redis_available)
    return request.param, None


@pytest.fixture
async def backend(db: tuple[str, Any], tmp_path: Path) -> AsyncIterator[Backend]:
    kind, pg_target = db
    if kind == "sqlite":
        from helikon.sessions.sqlite import SqlitePool, SqliteSession

        pool = await SqlitePool.connect(tmp_path / "sessions.db")
        yield Backend(lambda sid: SqliteSession.open(pool, sid), SqlitePausedRuns(pool))
        await pool.close()
    elif kind == "postgres":
        import asyncpg  # type: ignore[import-untyped]

        from helikon.sessions.postgres import PostgresSession

        dsn, schema = pg_target
        pg = await asyncpg.create_pool(dsn, min_size=1, max_size=4)
        yield Backend(
            lambda sid: PostgresSession.open(pg, sid, schema=schema),
            PostgresPausedRuns(pg, schema=schema),
        )
        await pg.close()
    else:
        import redis.asyncio as aioredis

        from helikon.sessions.redis import RedisSession

        client = aioredis.Redis.from_url(backends.REDIS_URL)
        prefix = f"helikon-test-{uuid.uuid4().hex[:12]}"
        yield Backend(
            lambda sid: RedisSession(client, sid, prefix=prefix),
            RedisPausedRuns(client, prefix=prefix),
        )
        keys = [k async for k in client.scan_iter(match=f"{prefix}:*", count=500)]
        if keys:
            await client.delete(*keys)
        await client.aclose()


def _server(b: Backend, script: list[list[Any]], **config: Any) -> AgentServer:
    agent = Agent(
        name="support",
        model=MockModel(script),
        tools=[s.lookup, s.refund],
        run_config=RunConfig(approval="defer"),
    )
    return AgentServer(
        [agent],
        session_factory=b.sessions,
        context_factory=lambda conn, session, cancel: s.ctx(),
        paused_runs=b.store,
        config=ServerConfig(**config),
    )


def _client(server: AgentServer) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=server.app), base_url="http://t")


async def _pause(b: Backend, headers: dict[str, str]) -> str:
    """Start a run on a first server, which pauses; that server then goes away."""
    first = _server(b, [s.first_turn()])
    async with _client(first) as c:
        r = await c.post("/agents/support/runs", json={"input": "refund A7"}, headers=headers)
        body = r.json()
        assert body["status"] == "needs_approval", body
    await first.aclose()
    assert s.RAN == [("lookup", "A7")]
    return str(body["run_id"])


async def _wait(c: httpx.AsyncClient, run_id: str, status: str) -> dict[str, Any]:
    for _ in range(500):
        body: dict[str, Any] = (await c.get(f"/agents/support/runs/{run_id}")).json()
        if body["status"] == status:
            return body
        await asyncio.sleep(0.01)
    raise AssertionError(f"run never reached {status}: {body}")


APPROVE = {"decisions": {"c2": {"decision": "approve"}}}


@pytest.mark.parametrize("session_id", ["user-7", None])
async def test_a_new_server_reports_lists_and_resumes_the_paused_run(
    backend: Backend, session_id: str | None
) -> None:
    headers = {"X-Session-Id": session_id} if session_id else {}
    run_id = await _pause(backend, headers)
    second = _server(backend, [[Text("Refunded.")]])
    async with _client(second) as c:
        status = (await c.get(f"/agents/support/runs/{run_id}")).json()
        assert status["status"] == "needs_approval"
        assert status["session_id"] == session_id
        assert [e["type"] for e in status["events"]][-1] == "run_interrupted"
        assert [p["call_id"] for p in status["pending"]] == ["c2"]
        waiting = (await c.get(f"/agents/support/runs/{run_id}/approvals")).json()
        assert waiting["status"] == "needs_approval"
        assert waiting["pending"] == [
            {
                "call_id": "c2",
                "tool": "refund",
                "args": {"order": "A7", "amount": 40},
                "reason": "refund of 40 needs approval",
                "agent": "support",
            }
        ]
        r = await c.post(f"/agents/support/runs/{run_id}/approvals", json=APPROVE)
        assert r.status_code == 202 and r.json()["run_id"] == run_id
        done = await _wait(c, run_id, "completed")
        assert done["output"] == "Refunded."
        kinds = [e["type"] for e in done["events"]]
        # the same log: the first server's events, then the resumed ones
        assert kinds.index("run_interrupted") < kinds.index("run_completed") == len(kinds) - 1
        sse = (await c.get(f"/agents/support/runs/{run_id}/events")).text
        ids = [int(line[4:]) for line in sse.splitlines() if line.startswith("id: ")]
        assert ids == list(range(len(kinds)))
        again = await c.post(f"/agents/support/runs/{run_id}/approvals", json=APPROVE)
        assert again.status_code == 409 and again.json()["error"] == "not_waiting"
    await second.aclose()
    assert s.RAN == [("lookup", "A7"), REFUND]
    # a third server finds nothing to resume
    third = _server(backend, [])
    async with _client(third) as c:
        gone = await c.post(f"/agents/support/runs/{run_id}/approvals", json=APPROVE)
        assert gone.status_code == 404 and gone.json()["error"] == "unknown_run"
    await third.aclose()
    assert s.RAN.count(REFUND) == 1


async def test_with_a_session_the_resumed_run_continues_its_conversation(
    backend: Backend,
) -> None:
    run_id = await _pause(backend, {"X-Session-Id": "conv"})
    model = MockModel([[Text("Refunded.")]])
    second = _server(backend, [])
    second.agents["support"] = Agent(
        name="support",
        model=model,
        tools=[s.lookup, s.refund],
        run_config=RunConfig(approval="defer"),
    )
    async with _client(second) as c:
        await c.post(f"/agents/support/runs/{run_id}/approvals", json=APPROVE)
        await _wait(c, run_id, "completed")
    await second.aclose()
    sent = [m.type for m in model.requests[0].messages]
    assert sent == [
        "user_message",
        "assistant_message",
        "tool_call",
        "tool_call",
        "tool_result",
        "tool_result",
    ]
    assert model.requests[0].messages[-1].content[0].text == "refunded 40 on A7"  # type: ignore[union-attr]
    made = backend.sessions("conv")
    session = await made if inspect.isawaitable(made) else made
    assert [i.type for i in await session.snapshot()][-1] == "assistant_message"


async def test_two_servers_answering_at_once_run_the_call_once(backend: Backend) -> None:
    run_id = await _pause(backend, {"X-Session-Id": "race"})
    servers = [_server(backend, [[Text("Refunded.")]]) for _ in range(2)]
    clients = [_client(server) for server in servers]
    for c in clients:  # both servers hold the run, waiting
        assert (await c.get(f"/agents/support/runs/{run_id}")).json()["status"] == "needs_approval"
    answers = await asyncio.gather(
        *(c.post(f"/agents/support/runs/{run_id}/approvals", json=APPROVE) for c in clients)
    )
    assert sorted(r.status_code for r in answers) == [202, 409]
    winner = clients[[r.status_code for r in answers].index(202)]
    loser = clients[[r.status_code for r in answers].index(409)]
    assert (await _wait(winner, run_id, "completed"))["output"] == "Refunded."
    lost = (await loser.get(f"/agents/support/runs/{run_id}")).json()
    assert lost["status"] == "incomplete"
    assert "answered by another server" in lost["error"]["message"]
    for c, server in zip(clients, servers, strict=True):
        await c.aclose()
        await server.aclose()
    assert s.RAN.count(REFUND) == 1


async def test_an_approval_timeout_counts_from_the_pause_across_a_restart(
    backend: Backend,
) -> None:
    run_id = await _pause(backend, {"X-Session-Id": "late"})
    await asyncio.sleep(0.3)
    second = _server(backend, [[Text("Not refunded.")]], approval_timeout=0.2)
    async with _client(second) as c:
        await c.get(f"/agents/support/runs/{run_id}")  # restored: already past the timeout
        done = await _wait(c, run_id, "completed")
    await second.aclose()
    results = [e for e in done["events"] if e["type"] == "tool_output_item"]
    assert results[-1]["item"]["content"][0]["text"] == (
        "approval denied: approval timed out: nobody answered in time"
    )
    assert REFUND not in s.RAN


async def test_the_memory_store_and_its_checks() -> None:
    store = MemoryPausedRuns()
    with pytest.raises(ConfigError, match=r"AgentServer\(paused_runs=...\) must be a paused-run"):
        AgentServer([Agent(name="a", model=MockModel([]))], paused_runs="sqlite:///x.db")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"SqlitePausedRuns\(pool=...\) must be a SqlitePool"):
        SqlitePausedRuns("x.db")
    with pytest.raises(ConfigError, match=r"PostgresPausedRuns\(pool=...\) must be an asyncpg"):
        PostgresPausedRuns("postgresql://x")
    with pytest.raises(ConfigError, match=r"RedisPausedRuns\(client=...\) must be a redis"):
        RedisPausedRuns("redis://x")
    assert await store.take("r1") is None
    with pytest.raises(ServerError, match="schema_version 9 is newer") as err:
        PausedRun.from_json(
            '{"run_id": "r", "agent": "a", "events": [], "state": {"schema_version": 9}}'
        )
    assert err.value.code == "paused_run_unreadable"
