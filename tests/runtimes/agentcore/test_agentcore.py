"""AgentCore container routes end to end on a real uvicorn bound to 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pydantic
import pytest
import uvicorn

from helikon import Agent, tool
from helikon.agents import SequentialAgent
from helikon.core.cancel import CancellationToken
from helikon.core.context import ToolContext
from helikon.errors import ConfigError
from helikon.runtimes.agentcore import SESSION_HEADER, AgentCoreServer, mcp_app
from helikon.sessions import MemorySession
from helikon.testing import Call, Delay, Fail, MockModel, Text, Usage

BOUND = 30.0


@tool
async def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """Run ``app`` on uvicorn at a free loopback port; yields the base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="auto"))
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        deadline = time.monotonic() + BOUND
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            assert not task.done(), task
            await asyncio.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, BOUND)
        sock.close()


async def _until(cond: Callable[[], Any], seconds: float = BOUND) -> None:
    deadline = time.monotonic() + seconds
    while not await cond():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


async def test_ping_is_healthy_with_a_unix_time() -> None:
    server = AgentCoreServer(Agent(name="a", model=MockModel()))
    async with serving(server.app()) as url, httpx.AsyncClient(base_url=url) as http:
        r = await http.get("/ping")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "Healthy"
    assert isinstance(body["time_of_last_update"], int)
    assert abs(body["time_of_last_update"] - time.time()) < 60


async def test_invocation_with_a_tool_call_returns_the_exact_output() -> None:
    model = MockModel([[Call("c1", "add", {"a": 2, "b": 3}), Usage(5, 1)], [Text("5")]])
    server = AgentCoreServer(Agent(name="calc", model=model, tools=[add]))
    async with serving(server.app()) as url, httpx.AsyncClient(base_url=url) as http:
        r = await http.post(
            "/invocations", json={"prompt": "2+3?"}, headers={SESSION_HEADER: "sess-1"}
        )
    assert r.status_code == 200
    assert r.headers[SESSION_HEADER] == "sess-1"
    body = r.json()
    assert body["output"] == "5"
    assert body["session_id"] == "sess-1"
    assert body["usage"]["input_tokens"] == 5
    model.assert_exhausted()


async def test_same_session_id_continues_the_conversation() -> None:
    model = MockModel([[Text("one")], [Text("two")], [Text("other")]])
    sessions: dict[str, MemorySession] = {}

    def factory(sid: str) -> MemorySession:
        return sessions.setdefault(sid, MemorySession())

    server = AgentCoreServer(Agent(name="chat", model=model), session_factory=factory)
    async with serving(server.app()) as url, httpx.AsyncClient(base_url=url) as http:
        for sid, text in (("s1", "hi"), ("s1", "again"), ("s2", "fresh")):
            r = await http.post(
                "/invocations", json={"prompt": text}, headers={SESSION_HEADER: sid}
            )
            assert r.status_code == 200
    assert [len(req.messages) for req in model.requests] == [1, 3, 1]
    assert [i.type for i in await sessions["s1"].snapshot()] == [
        "user_message",
        "assistant_message",
        "user_message",
        "assistant_message",
    ]


async def test_sse_streams_every_event_in_order() -> None:
    model = MockModel([[Call("c1", "add", {"a": 1, "b": 1})], [Text("two")]])
    server = AgentCoreServer(Agent(name="calc", model=model, tools=[add]))
    frames: list[tuple[str, dict[str, Any]]] = []
    sse = {"Accept": "text/event-stream"}
    async with (
        serving(server.app()) as url,
        httpx.AsyncClient(base_url=url) as http,
        http.stream("POST", "/invocations", json={"prompt": "1+1"}, headers=sse) as r,
    ):
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        kind = ""
        async for line in r.aiter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                frames.append((kind, json.loads(line[6:])))
    assert [k for k, _ in frames] == [
        "run_started",
        "turn_started",
        "tool_call_delta",
        "tool_call_item",
        "tool_output_item",
        "turn_started",
        "token_delta",
        "message_output",
        "run_completed",
    ]
    assert all(k == d["type"] for k, d in frames)
    assert frames[4][1]["item"]["content"] == [{"type": "text", "text": "2"}]


async def test_structured_output_is_returned_as_json() -> None:
    class Answer(pydantic.BaseModel):
        n: int

    agent = Agent(name="s", model=MockModel([[Text('{"n": 7}')]]), output_type=Answer)
    async with serving(AgentCoreServer(agent).app()) as url, httpx.AsyncClient(base_url=url) as h:
        r = await h.post("/invocations", json={"prompt": "seven"})
    assert r.status_code == 200
    assert r.json()["output"] == {"n": 7}


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b"not json", "not JSON"),
        (b"[1]", "JSON object"),
        (b'{"prompt": "  "}', '"prompt"'),
        (b'{"text": "hi"}', '"prompt"'),
    ],
)
async def test_bad_requests_answer_400(body: bytes, needle: str) -> None:
    model = MockModel([[Text("never")]])
    app = AgentCoreServer(Agent(name="a", model=model)).app()
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        r = await http.post("/invocations", content=body)
    assert r.status_code == 400
    assert r.json()["error"]["kind"] == "BadRequest"
    assert needle in r.json()["error"]["message"]
    assert model.remaining == 1


async def test_failed_run_answers_500_with_the_error() -> None:
    model = MockModel([[Fail("other", "upstream broke")]])
    app = AgentCoreServer(Agent(name="a", model=model)).app()
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        r = await http.post("/invocations", json={"prompt": "hi"})
    assert r.status_code == 500
    error = r.json()["error"]
    assert error["kind"] == "Other"
    assert "upstream broke" in error["message"]


async def test_ping_is_busy_during_a_run_and_a_disconnect_cancels_and_records_it() -> None:
    session = MemorySession()
    started = asyncio.Event()

    @tool
    async def hold(ctx: ToolContext[Any]) -> str:
        """Wait until cancelled."""
        started.set()
        token: CancellationToken = ctx.cancel
        await asyncio.wait_for(token.wait(), BOUND)
        return "cancelled"

    model = MockModel([[Call("c1", "hold", {})], [Delay(BOUND), Text("never")]])
    server = AgentCoreServer(
        Agent(name="slow", model=model, tools=[hold]), session_factory=lambda sid: session
    )
    async with serving(server.app()) as url, httpx.AsyncClient(base_url=url) as http:
        call = asyncio.ensure_future(http.post("/invocations", json={"prompt": "wait"}))
        await asyncio.wait_for(started.wait(), BOUND)
        ping = (await http.get("/ping")).json()
        assert ping["status"] == "HealthyBusy"
        call.cancel()  # the client walks away mid-run
        with pytest.raises(asyncio.CancelledError):
            await call

        async def idle() -> bool:
            return bool((await http.get("/ping")).json()["status"] == "Healthy")

        await _until(idle)
    # the partial turn was finalized into the session: input, call, an interrupted result
    items = await session.snapshot()
    assert [i.type for i in items][:3] == ["user_message", "tool_call", "tool_result"]
    assert model.remaining == 1  # the second model turn never started


async def test_mcp_mode_serves_the_agent_as_one_stateless_tool() -> None:
    from helikon.mcp import McpServerHandle

    agent = Agent(name="helper", model=MockModel([[Text("from agentcore")]]))
    async with serving(mcp_app(agent, host="127.0.0.1")) as url:
        handle = McpServerHandle.streamable_http(f"{url}/mcp")
        async with handle:
            (only,) = handle.tools()
            ctx = ToolContext(
                user_ctx=None, state={}, cancel=CancellationToken(), call_id="c1", agent_name="t"
            )
            out = await asyncio.wait_for(only.invoke(ctx, {"input": "hi"}), BOUND)
    assert only.name == "helper"
    assert [p.text for p in out.content] == ["from agentcore"]  # type: ignore[union-attr]


async def _started(server: AgentCoreServer, task: asyncio.Task[None]) -> str:
    """The base URL of ``server.serve(..., port=0)`` once uvicorn listens."""
    deadline = time.monotonic() + BOUND
    while server._uvicorn is None or not server._uvicorn.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    port = server._uvicorn.servers[0].sockets[0].getsockname()[1]
    return f"http://127.0.0.1:{port}"


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, BOUND)


async def test_cancelled_serve_closes_its_socket_and_the_next_server_answers() -> None:
    def make() -> AgentCoreServer:
        return AgentCoreServer(Agent(name="a", model=MockModel([[Text("hi")]])))

    first = make()
    task = asyncio.create_task(first.serve("127.0.0.1", 0))
    url = await _started(first, task)
    async with httpx.AsyncClient(timeout=BOUND) as http:
        assert (await http.get(f"{url}/ping")).status_code == 200
        with pytest.raises(ConfigError, match="already serving"):
            await asyncio.wait_for(first.serve("127.0.0.1", 0), BOUND)
        await _cancel(task)
        with pytest.raises(httpx.ConnectError):
            await http.get(f"{url}/ping")
        for _ in range(2):
            server = make()
            task = asyncio.create_task(server.serve("127.0.0.1", 0))
            url = await _started(server, task)
            r = await http.post(f"{url}/invocations", json={"prompt": "x"}, timeout=5)
            assert r.json()["output"] == "hi"
            await _cancel(task)


async def test_a_pattern_is_served() -> None:
    pipe = SequentialAgent(
        "pipe",
        steps=[
            Agent(name="draft", model=MockModel([[Text("draft")]])),
            Agent(name="polish", model=MockModel([[Text("polished")]])),
        ],
    )
    server = AgentCoreServer(pipe)
    assert server.run_config is None  # the steps keep their own run configs
    async with serving(server.app()) as url, httpx.AsyncClient(base_url=url) as http:
        r = await http.post("/invocations", json={"prompt": "go"}, timeout=BOUND)
    assert r.status_code == 200, r.text
    assert r.json()["output"] == "polished"


async def test_text_that_is_not_unicode_is_400() -> None:
    server = AgentCoreServer(Agent(name="a", model=MockModel([[Text("hi")]])))
    async with serving(server.app()) as url, httpx.AsyncClient(base_url=url) as http:
        r = await http.post("/invocations", content=b'{"prompt": "\\ud800"}', timeout=BOUND)
    assert r.status_code == 400
    assert "not valid Unicode" in r.json()["error"]["message"]
