"""Over the run cap: requests wait in a bounded FIFO queue; beyond it, 503 with Retry-After."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from helikon.errors import ServerError
from helikon.runtimes.server import AgentServer, ServerConfig
from helikon.runtimes.server.admission import RunSlots

from .conftest import BOUND, Live, slow_agent

ASYNC = "/agents/slow/runs?mode=async"


async def until(check: object) -> None:
    async with asyncio.timeout(BOUND):
        while not check():  # type: ignore[operator]
            await asyncio.sleep(0.01)


async def test_a_request_over_the_cap_waits_and_one_over_the_queue_is_refused() -> None:
    config = ServerConfig(max_concurrent_runs=1, max_queued_runs=1, queue_timeout=None)
    server = AgentServer([slow_agent(runs=2)], config=config)
    async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url, timeout=BOUND) as c:
        first = await c.post(ASYNC, json={"input": "a"})
        assert first.status_code == 202
        queued = asyncio.create_task(c.post(ASYNC, json={"input": "b"}))
        await until(lambda: server.slots.queued == 1)
        assert not queued.done() and len(server.runs) == 1  # held back, nothing started

        refused = await c.post(ASYNC, json={"input": "c"})
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "1"
        assert refused.json() == {
            "error": "too_many_runs",
            "message": "the server is running 1 runs, its limit, and 1 more wait, the "
            "queue's limit; retry later",
            "limit": 1,
            "queued": 1,
        }

        server.runs.cancel(server.runs.get(first.json()["run_id"]), "test")  # type: ignore[arg-type]
        second = await queued
        assert second.status_code == 202
        assert server.slots.running == 1 and server.slots.queued == 0
        assert server.runs.get(second.json()["run_id"]) is not None


async def test_a_request_that_waits_past_queue_timeout_is_refused() -> None:
    config = ServerConfig(max_concurrent_runs=1, queue_timeout=0.05)
    server = AgentServer([slow_agent(runs=2)], config=config)
    async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url, timeout=BOUND) as c:
        assert (await c.post(ASYNC, json={"input": "a"})).status_code == 202
        r = await c.post("/agents/slow/runs?stream=sse", json={"input": "b"})
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert r.json()["message"] == (
            "the server is running 1 runs, its limit, and none was free within 0.05s; "
            "retry later"
        )
        assert server.slots.queued == 0 and len(server.runs) == 1


async def test_a_client_that_leaves_the_queue_starts_no_run() -> None:
    config = ServerConfig(max_concurrent_runs=1, queue_timeout=None)
    server = AgentServer([slow_agent(runs=2)], config=config)
    async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url, timeout=BOUND) as c:
        first = await c.post(ASYNC, json={"input": "a"})
        leaving = asyncio.create_task(c.post("/agents/slow/runs", json={"input": "b"}))
        await until(lambda: server.slots.queued == 1)
        leaving.cancel()  # httpx closes the connection
        await until(lambda: server.slots.queued == 0)
        server.runs.cancel(server.runs.get(first.json()["run_id"]), "test")  # type: ignore[arg-type]
        await until(lambda: server.slots.running == 0)
        assert len(server.runs) == 1  # the one that left never started


async def test_slots_pass_to_waiters_in_arrival_order() -> None:
    slots = RunSlots(limit=1, queue=3, timeout=None)
    await slots.acquire()
    order: list[int] = []

    async def take(n: int) -> None:
        await slots.acquire()
        order.append(n)

    waiters = [asyncio.create_task(take(n)) for n in range(3)]
    await until(lambda: slots.queued == 3)
    with pytest.raises(ServerError, match="and 3 more wait"):
        await slots.acquire()
    for n in range(3):
        slots.release()
        await until(lambda: len(order) == n + 1)  # noqa: B023 (awaited at once)
    await asyncio.gather(*waiters)
    assert order == [0, 1, 2] and slots.running == 1
    slots.release()
    assert slots.running == 0


async def test_a_cancelled_waiter_that_was_granted_gives_the_slot_back() -> None:
    slots = RunSlots(limit=1, queue=1, timeout=None)
    await slots.acquire()
    waiter = asyncio.create_task(slots.acquire())
    await until(lambda: slots.queued == 1)
    slots.release()  # granted ...
    waiter.cancel()  # ... but cancelled before it ran
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert slots.running == 0 and slots.queued == 0
    await slots.acquire()  # free again, at once
    assert slots.running == 1


async def test_twenty_concurrent_runs_over_a_cap_of_five_all_complete_in_the_queue() -> None:
    from helikon import Agent
    from helikon.testing import Call, Delay, ScriptedModel, Text

    from .conftest import add

    model = ScriptedModel([[Call("c1", "add", {"a": 1, "b": 2})], [Delay(0.01), Text("3")]])
    agent = Agent(name="calc", model=model, tools=[add])
    server = AgentServer([agent], config=ServerConfig(max_concurrent_runs=5, queue_timeout=None))
    async with Live(server) as srv, httpx.AsyncClient(base_url=srv.url, timeout=BOUND) as c:
        replies = await asyncio.gather(
            *(c.post("/agents/calc/runs", json={"input": f"q{i}"}) for i in range(20))
        )
    assert [r.status_code for r in replies] == [200] * 20
    assert [r.json()["output"] for r in replies] == ["3"] * 20
    assert server.slots.running == 0 and server.slots.queued == 0
