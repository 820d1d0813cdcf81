"""The HTTP routes over Starlette's TestClient: one-shot runs, run lookup, errors, limits."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from starlette.requests import HTTPConnection
from starlette.testclient import TestClient

from helikon import Agent, CancellationToken, RunContext
from helikon.agents import SequentialAgent
from helikon.errors import ConfigError, SessionBackendError, SessionUnavailable
from helikon.runtimes.server import (
    AgentServer,
    AuthRejection,
    MemorySessions,
    ServerConfig,
    ServerError,
)
from helikon.runtimes.server.sessions import session_id_header
from helikon.sessions import MemorySession, SequenceId, Session, SessionEvent
from helikon.testing import MockModel, Text

from .conftest import BOUND, TOOL_RUN_TYPES, calc_agent, slow_agent, types_of


def client(server: AgentServer) -> TestClient:
    return TestClient(server.app)


@pytest.fixture
def calc() -> Iterator[TestClient]:
    with client(AgentServer([calc_agent(4), calc_agent(name="other")])) as c:
        yield c


def test_one_shot_run_returns_the_finished_run(calc: TestClient) -> None:
    r = calc.post("/agents/calc/runs", json={"input": "1+2?"})
    assert r.status_code == 200
    body = r.json()
    assert uuid.UUID(r.headers["x-run-id"]).version == 4
    assert body["run_id"] == r.headers["x-run-id"]
    assert (body["agent"], body["status"], body["output"], body["error"]) == (
        "calc",
        "completed",
        "3",
        None,
    )
    assert types_of(body["events"]) == TOOL_RUN_TYPES
    assert body["events"][3]["item"] == {
        "type": "tool_call",
        "call_id": "c1",
        "name": "add",
        "args": {"a": 1, "b": 2},
        "provider_data": None,
    }
    assert body["usage"]["total_tokens"] == 0


def test_messages_body_runs_the_given_items(calc: TestClient) -> None:
    messages = [
        {"type": "user_message", "content": [{"type": "text", "text": "hi"}]},
        {"type": "assistant_message", "content": [{"type": "text", "text": "hello"}]},
        {"type": "user_message", "content": [{"type": "text", "text": "1+2?"}]},
    ]
    r = calc.post("/agents/calc/runs", json={"messages": messages})
    assert r.status_code == 200 and r.json()["output"] == "3"


def test_get_run_returns_its_summary_and_404s_for_others(calc: TestClient) -> None:
    run_id = calc.post("/agents/calc/runs", json={"input": "go"}).headers["x-run-id"]
    r = calc.get(f"/agents/calc/runs/{run_id}")
    assert r.status_code == 200 and r.headers["x-run-id"] == run_id
    assert r.json()["status"] == "completed" and types_of(r.json()["events"]) == TOOL_RUN_TYPES
    wrong_agent = calc.get(f"/agents/other/runs/{run_id}")
    assert wrong_agent.status_code == 404 and wrong_agent.json()["error"] == "unknown_run"
    unknown = calc.get("/agents/calc/runs/nope")
    assert unknown.status_code == 404 and "has no run 'nope'" in unknown.json()["message"]


def test_unknown_agent_is_404_naming_the_known_agents(calc: TestClient) -> None:
    r = calc.post("/agents/nope/runs", json={"input": "x"})
    assert r.status_code == 404
    assert r.json() == {
        "error": "unknown_agent",
        "message": "no agent named 'nope'; known agents: 'calc', 'other'",
        "agents": ["calc", "other"],
    }
    assert calc.get("/agents/nope/runs/x").status_code == 404


@pytest.mark.parametrize(
    ("content", "field", "says"),
    [
        (b"{not json", None, "not valid JSON"),
        (b"[1, 2]", None, "must be a JSON object, got list"),
        (b"{}", "input", "needs 'input' or 'messages' (got no keys)"),
        (
            b'{"prompt": "x"}',
            "prompt",
            "unknown key 'prompt' in the request body; allowed keys: 'input', 'messages'",
        ),
        (b'{"input": "x", "extra": 1}', "extra", "unknown key 'extra'"),
        (b'{"input": ""}', "input", "'input' is empty or only whitespace"),
        (b'{"input": " \\n "}', "input", "'input' is empty or only whitespace"),
        (b'{"input": "a\\ud800"}', "input", "'input' is not valid Unicode text"),
        (
            b'{"messages": [{"type": "user_message", "content": [{"type": "text", '
            b'"text": "\\udfff"}]}]}',
            "messages[0].content[0].text",
            "messages[0].content[0].text is not valid Unicode text",
        ),
        (b'{"input": 3}', "input", "'input' must be a string, got number"),
        (b'{"input": "x", "messages": []}', "messages", "either 'input' or 'messages'"),
        (b'{"messages": []}', "messages", "non-empty list of items, got array"),
        (b'{"messages": "hi"}', "messages", "non-empty list of items, got string"),
        (
            b'{"messages": [{"type": "user_message", "content": [{"type": "text", "text": "a"}]},'
            b' {"type": "usr"}]}',
            "messages[1]",
            "messages[1] has 'type': 'usr', not an item type",
        ),
        (
            b'{"messages": [{"type": "tool_result", "call_id": "c1", "content": '
            b'[{"type": "text", "text": "42"}]}]}',
            "messages",
            "'messages' holds only tool results: a tool result answers a tool call, and there "
            "is no message for the agent to answer; add the user's message",
        ),
        (
            b'{"messages": [{"type": "tool_result", "call_id": "c1", "content": []},'
            b' {"type": "tool_result", "call_id": "c2", "content": [], "is_error": true}]}',
            "messages",
            "'messages' holds only tool results",
        ),
    ],
)
def test_bad_body_is_400_naming_the_field(
    calc: TestClient, content: bytes, field: str | None, says: str
) -> None:
    r = calc.post("/agents/calc/runs", content=content)
    assert r.status_code == 400
    assert r.json()["error"] == "invalid_request" and r.json()["field"] == field
    assert says in r.json()["message"]
    assert "x-run-id" not in r.headers


@pytest.mark.parametrize(
    ("query", "field"),
    [("stream=yes", "stream"), ("mode=later", "mode"), ("stream=sse&mode=async", "mode")],
)
def test_bad_transport_query_is_400(calc: TestClient, query: str, field: str) -> None:
    r = calc.post(f"/agents/calc/runs?{query}", json={"input": "x"})
    assert r.status_code == 400 and r.json()["field"] == field


def test_body_over_the_limit_is_413_with_or_without_content_length() -> None:
    server = AgentServer([calc_agent(2)], config=ServerConfig(max_body_bytes=64))
    with client(server) as c:
        big = {"input": "x" * 100}
        r = c.post("/agents/calc/runs", json=big)
        assert r.status_code == 413
        assert r.json() == {
            "error": "body_too_large",
            "message": "request body is larger than the 64-byte limit",
            "limit": 64,
        }

        def chunks() -> Iterator[bytes]:  # chunked: no Content-Length header
            yield b'{"input": "'
            yield b"x" * 100
            yield b'"}'

        assert c.post("/agents/calc/runs", content=chunks()).status_code == 413
        assert c.post("/agents/calc/runs", json={"input": "1+2"}).status_code == 200
    assert len(server.runs) == 1


def test_method_and_path_errors_are_json(calc: TestClient) -> None:
    r = calc.get("/agents/calc/runs")
    assert r.status_code == 405 and r.json()["error"] == "method_not_allowed"
    r = calc.get("/nothing")
    assert r.status_code == 404 and r.json()["error"] == "not_found"


def test_async_mode_answers_202_and_the_run_finishes_in_the_background(calc: TestClient) -> None:
    r = calc.post("/agents/calc/runs?mode=async", json={"input": "go"})
    assert r.status_code == 202
    body = r.json()
    run_id = r.headers["x-run-id"]
    assert body["run_id"] == run_id and body["status"] in ("queued", "running")
    assert body["run_url"] == r.headers["location"] == f"/agents/calc/runs/{run_id}"
    assert body["events_url"] == f"/agents/calc/runs/{run_id}/events"
    deadline = time.monotonic() + BOUND
    while (summary := calc.get(body["run_url"]).json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert summary["status"] == "completed" and types_of(summary["events"]) == TOOL_RUN_TYPES


def test_session_id_shares_history_and_no_header_stores_nothing() -> None:
    sessions = MemorySessions()
    agent = Agent(name="chat", model=MockModel([[Text("one")], [Text("two")], [Text("three")]]))
    with client(AgentServer([agent], session_factory=sessions)) as c:
        c.post("/agents/chat/runs", json={"input": "a"}, headers={"X-Session-Id": "u1"})
        r = c.post("/agents/chat/runs", json={"input": "b"}, headers={"X-Session-Id": "u1"})
        assert r.json()["session_id"] == "u1"
        c.post("/agents/chat/runs", json={"input": "c"})
    assert list(sessions.sessions) == ["u1"]
    second = agent.model.requests[1]  # type: ignore[attr-defined]
    assert [m.type for m in second.messages] == [
        "user_message",
        "assistant_message",
        "user_message",
    ]
    assert [m.type for m in agent.model.requests[2].messages] == ["user_message"]  # type: ignore[attr-defined]
    events = asyncio.run(sessions.sessions["u1"].events())
    assert [e.type for e in events] == [
        "user_message",
        "assistant_message",
        "user_message",
        "assistant_message",
    ]


def test_session_id_header_too_long_is_400(calc: TestClient) -> None:
    r = calc.post("/agents/calc/runs", json={"input": "x"}, headers={"X-Session-Id": "s" * 257})
    assert r.status_code == 400 and r.json()["field"] == "X-Session-Id"


def test_session_id_header_is_read_as_utf8() -> None:
    sessions = MemorySessions()
    with client(AgentServer([calc_agent(2)], session_factory=sessions)) as c:
        r = c.post(
            "/agents/calc/runs", json={"input": "x"}, headers={"X-Session-Id": "héllo".encode()}
        )
        assert r.status_code == 200 and r.json()["session_id"] == "héllo"
    assert list(sessions.sessions) == ["héllo"]
    # Starlette hands header bytes over decoded as latin-1: b"a\xff" arrives as "a\xff"
    assert session_id_header({"x-session-id": "h\xc3\xa9llo"}) == "héllo"
    with pytest.raises(ServerError, match="X-Session-Id must be UTF-8 text") as bad:
        session_id_header({"x-session-id": "a\xff"})
    assert (bad.value.status, bad.value.body()["field"]) == (400, "X-Session-Id")


def test_text_that_is_not_unicode_is_refused_and_nothing_is_recorded() -> None:
    sessions = MemorySessions()
    with client(AgentServer([calc_agent()], session_factory=sessions)) as c:
        r = c.post(
            "/agents/calc/runs",
            content=b'{"input": "\\ud800"}',
            headers={"X-Session-Id": "sur"},
        )
    assert r.status_code == 400 and r.json()["field"] == "input"
    assert sessions.sessions == {}  # refused before any session was opened


def test_a_pattern_is_served_end_to_end() -> None:
    first = Agent(name="draft", model=MockModel([[Text("draft")]]))
    second = Agent(name="polish", model=MockModel([[Text("polished")]]))
    pipe = SequentialAgent("pipe", "drafts, then polishes", steps=[first, second])
    sessions = MemorySessions()
    server = AgentServer([pipe], session_factory=sessions, config=ServerConfig(run_timeout=5))
    assert server.agents == {"pipe": pipe}
    with client(server) as c:
        r = c.post("/agents/pipe/runs", json={"input": "go"}, headers={"X-Session-Id": "p"})
    body = r.json()
    assert r.status_code == 200, body
    assert (body["agent"], body["status"], body["output"]) == ("pipe", "completed", "polished")
    types = types_of(body["events"])
    assert types[0] == "run_started" and types[-1] == "run_completed"
    assert [e["agent"] for e in body["events"] if e["type"] == "agent_updated"] == [
        "draft",
        "polish",
    ]
    recorded = asyncio.run(sessions.sessions["p"].events())
    assert [e.type for e in recorded] == ["user_message", "assistant_message", "assistant_message"]


def test_a_patterns_run_timeout_becomes_its_run_config() -> None:
    pipe = SequentialAgent("pipe", steps=[calc_agent()])
    assert AgentServer([pipe])._run_config(pipe) is None  # children keep their own configs
    capped = AgentServer([pipe], config=ServerConfig(run_timeout=2))._run_config(pipe)
    assert capped is not None and capped.timeout == 2


def test_async_session_factory_is_called_per_session_id() -> None:
    made: list[str] = []
    store: dict[str, MemorySession] = {}

    async def factory(session_id: str) -> Session:
        made.append(session_id)
        return store.setdefault(session_id, MemorySession())

    with client(AgentServer([calc_agent(3)], session_factory=factory)) as c:
        for sid in ("a", "b", "a"):
            assert (
                c.post(
                    "/agents/calc/runs", json={"input": "x"}, headers={"X-Session-Id": sid}
                ).status_code
                == 200
            )
    assert made == ["a", "b", "a"]
    assert len(asyncio.run(store["a"].events())) == 2 * 5  # user, call, decision, result, answer


def _raise(exc: Exception) -> Any:
    raise exc


@pytest.mark.parametrize(
    ("factory", "status", "says"),
    [
        (lambda sid: _raise(SessionUnavailable("db down")), 503, "db down"),
        (lambda sid: _raise(ConnectionRefusedError(111, "refused")), 503, "refused"),
        (lambda sid: _raise(TimeoutError("pool acquire")), 503, "pool acquire"),
        (lambda sid: _raise(ValueError("bad id")), 500, "ValueError: bad id"),
        (lambda sid: "not a session", 500, "returned str for 's1', not a Session"),
    ],
)
def test_session_factory_failure_is_503_when_the_backend_is_unavailable(
    factory: Any, status: int, says: str
) -> None:
    with client(AgentServer([calc_agent()], session_factory=factory)) as c:
        r = c.post("/agents/calc/runs", json={"input": "x"}, headers={"X-Session-Id": "s1"})
    assert r.status_code == status and r.json()["error"] == "session_unavailable"
    assert says in r.json()["message"]
    assert r.headers.get("retry-after") == ("1" if status == 503 else None)


class BrokenSession:
    """A session whose log cannot be read (the run fails to start after registration):
    by default the store is unreachable."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error or SessionUnavailable("store unreachable")

    async def append(self, events: Sequence[SessionEvent]) -> list[SequenceId]:
        return []

    async def events(self, since: SequenceId | None = None) -> list[SessionEvent]:
        raise self.error

    async def snapshot(self) -> Any:
        raise self.error


def test_run_whose_session_is_unavailable_is_503_in_one_shot_mode() -> None:
    with client(AgentServer([calc_agent()], session_factory=lambda sid: BrokenSession())) as c:
        r = c.post("/agents/calc/runs", json={"input": "x"}, headers={"X-Session-Id": "s"})
    assert r.status_code == 503 and r.headers["retry-after"] == "1"
    assert r.json() == {
        "error": "session_unavailable",
        "message": "the run's session is unavailable: SessionUnavailable: store unreachable",
        "run_id": r.headers["x-run-id"],
    }


def test_run_whose_session_refuses_is_500_in_one_shot_mode() -> None:
    broken = BrokenSession(SessionBackendError("disk I/O error"))
    with client(AgentServer([calc_agent()], session_factory=lambda sid: broken)) as c:
        r = c.post("/agents/calc/runs", json={"input": "x"}, headers={"X-Session-Id": "s"})
    assert r.status_code == 500 and "retry-after" not in r.headers
    assert r.json() == {
        "error": "run_start_failed",
        "message": "the run could not start: SessionBackendError: disk I/O error",
        "run_id": r.headers["x-run-id"],
    }


def test_run_timeout_ends_the_run_with_a_timeout_failure() -> None:
    server = AgentServer([slow_agent()], config=ServerConfig(run_timeout=0.2))
    with client(server) as c:
        r = c.post("/agents/slow/runs", json={"input": "x"})
    assert r.status_code == 200
    assert r.json()["status"] == "failed" and r.json()["error"]["kind"] == "Timeout"
    assert types_of(r.json()["events"])[-1] == "run_failed"


def test_concurrency_limit_without_a_queue_answers_503_with_retry_after() -> None:
    config = ServerConfig(max_concurrent_runs=1, max_queued_runs=0)
    server = AgentServer([slow_agent()], config=config)
    with client(server) as c:
        assert c.post("/agents/slow/runs?mode=async", json={"input": "x"}).status_code == 202
        r = c.post("/agents/slow/runs", json={"input": "y"})
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert r.json() == {
            "error": "too_many_runs",
            "message": "the server is running 1 runs, its limit, and 0 more wait, the "
            "queue's limit; retry later",
            "limit": 1,
            "queued": 0,
        }
    # leaving the client ran the lifespan shutdown: the slow run was cancelled and recorded
    (run,) = server.runs._runs.values()
    assert run.done and run.status == "failed"
    assert run.events[-1].data["error"]["kind"] == "Cancelled"


def test_auth_rejects_and_hands_identity_to_the_context_factory() -> None:
    seen: list[Any] = []

    def auth(conn: HTTPConnection) -> None:
        token = conn.headers.get("authorization")
        if token is None:
            raise AuthRejection("missing bearer token")
        if token != "Bearer good":
            raise AuthRejection("token not allowed", status=403)
        conn.state.tenant = "acme"

    def context(
        conn: HTTPConnection, session: Session, cancel: CancellationToken
    ) -> RunContext[Any]:
        seen.append((conn.state.tenant, isinstance(session, MemorySession)))
        return RunContext.ephemeral({"tenant": conn.state.tenant})

    server = AgentServer([calc_agent(2)], auth=auth, context_factory=context)
    with client(server) as c:
        r = c.post("/agents/calc/runs", json={"input": "x"})
        assert r.status_code == 401
        assert r.json() == {"error": "unauthorized", "message": "missing bearer token"}
        r = c.post("/agents/calc/runs", json={"input": "x"}, headers={"Authorization": "Bearer x"})
        assert r.status_code == 403 and r.json()["error"] == "forbidden"
        assert c.get("/openapi.json").status_code == 401
        assert c.get("/agents/calc/runs/x").status_code == 401
        assert c.get("/healthz").text == "ok"  # exempt
        ok = c.post(
            "/agents/calc/runs", json={"input": "x"}, headers={"Authorization": "Bearer good"}
        )
        assert ok.status_code == 200 and ok.json()["status"] == "completed"
    assert seen == [("acme", True)]


def test_context_factory_token_is_replaced_by_the_runs_token() -> None:
    tokens: list[tuple[CancellationToken, CancellationToken]] = []

    async def context(
        conn: HTTPConnection, session: Session, cancel: CancellationToken
    ) -> RunContext[Any]:
        ctx: RunContext[Any] = RunContext.ephemeral(None)  # forgot .with_cancel(cancel)
        tokens.append((ctx.cancel, cancel))
        return ctx

    server = AgentServer([calc_agent()], context_factory=context)
    with client(server) as c:
        run_id = c.post("/agents/calc/runs", json={"input": "x"}).headers["x-run-id"]
    ((own, given),) = tokens
    assert own is not given and server.runs.get(run_id).cancel is given  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("context", "code"),
    [
        (lambda conn, s, c: 42, "context_failed"),
        (lambda conn, s, c: (_ for _ in ()).throw(KeyError("tenant")), "context_failed"),
        (
            lambda conn, s, c: (_ for _ in ()).throw(
                ServerError("no plan", status=402, code="pay")
            ),
            "pay",
        ),
    ],
)
def test_context_factory_failures_become_json_errors(context: Any, code: str) -> None:
    with client(AgentServer([calc_agent()], context_factory=context)) as c:
        r = c.post("/agents/calc/runs", json={"input": "x"})
    assert r.json()["error"] == code
    assert r.status_code == (402 if code == "pay" else 500)


def test_openapi_and_health_routes_and_switching_them_off() -> None:
    with client(AgentServer([calc_agent()])) as c:
        schema = c.get("/openapi.json").json()
        assert schema["openapi"] == "3.1.0"
        assert set(schema["paths"]) == {
            "/agents/{name}/runs",
            "/agents/{name}/runs/{run_id}",
            "/agents/{name}/runs/{run_id}/events",
            "/agents/{name}/runs/{run_id}/approvals",
        }
        name = schema["paths"]["/agents/{name}/runs"]["post"]["parameters"][0]
        assert name["schema"] == {"enum": ["calc"]}
        assert "RunFailed" in schema["components"]["schemas"]
        assert c.get("/healthz").status_code == 200
    config = ServerConfig(openapi=False, health_path=None)
    with client(AgentServer([calc_agent()], config=config)) as c:
        assert c.get("/openapi.json").status_code == 404
        assert c.get("/healthz").status_code == 404


def test_finished_runs_expire_after_retention_and_past_the_count() -> None:
    server = AgentServer([calc_agent(3)], config=ServerConfig(max_retained_runs=2))
    with client(server) as c:
        ids = [
            c.post("/agents/calc/runs", json={"input": "x"}).headers["x-run-id"] for _ in range(3)
        ]
        assert c.get(f"/agents/calc/runs/{ids[0]}").status_code == 404
        assert c.get(f"/agents/calc/runs/{ids[2]}").status_code == 200
        server.runs.prune(now=time.monotonic() + 301)  # default retention: 300 s
        assert c.get(f"/agents/calc/runs/{ids[2]}").status_code == 404


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"agents": []}, "is empty"),
        ({"agents": "calc"}, "must be a dict"),
        ({"agents": {"a/b": calc_agent()}}, "without '/'"),
        ({"agents": [calc_agent(), calc_agent()]}, "two agents are named 'calc'"),
        ({"agents": {"x": "agent"}}, "'agent' is not an agent; pass an Agent or a pattern"),
        ({"agents": [calc_agent()], "auth": "token"}, "auth=...) must be callable"),
        ({"agents": [calc_agent()], "config": {"max_body_bytes": 1}}, "must be a ServerConfig"),
    ],
)
def test_bad_server_arguments_raise_config_error(kwargs: dict[str, Any], says: str) -> None:
    with pytest.raises(ConfigError, match=says.replace("(", r"\(").replace(")", r"\)")):
        AgentServer(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"max_body_bytes": 0}, "max_body_bytes must be an int >= 1, got 0 (int)"),
        ({"max_body_bytes": "1MB"}, "max_body_bytes must be an int >= 1, got '1MB' (str)"),
        ({"max_body_bytes": None}, "max_body_bytes must be an int >= 1, got None (NoneType)"),
        ({"max_body_bytes": True}, "max_body_bytes must be an int >= 1, got True (bool)"),
        (
            {"max_concurrent_runs": 0},
            "max_concurrent_runs must be an int >= 1 or None (no cap), got 0 (int)",
        ),
        ({"max_concurrent_runs": 2.5}, "max_concurrent_runs must be an int >= 1"),
        ({"max_queued_runs": -1}, "max_queued_runs must be an int >= 0, got -1 (int)"),
        ({"max_queued_runs": None}, "max_queued_runs must be an int >= 0, got None"),
        (
            {"queue_timeout": 0},
            "queue_timeout must be a number of seconds > 0 or None (as long as it takes), "
            "got 0 (int)",
        ),
        ({"run_timeout": 0}, "run_timeout must be a number of seconds > 0 or None"),
        ({"run_timeout": "30"}, "run_timeout must be a number of seconds > 0 or None"),
        ({"run_timeout": float("nan")}, "run_timeout must be a number of seconds > 0"),
        ({"keepalive": -1}, "keepalive must be a number of seconds > 0, got -1 (int)"),
        ({"retention": None}, "retention must be a number of seconds > 0, got None"),
        ({"cancel_grace": "5"}, "cancel_grace must be a number of seconds > 0, got '5'"),
        ({"max_retained_runs": -1}, "max_retained_runs must be an int >= 0, got -1 (int)"),
        ({"max_retained_runs": None}, "max_retained_runs must be an int >= 0, got None"),
        ({"openapi": "yes"}, "openapi must be True or False, got 'yes' (str)"),
        ({"health_path": "healthz"}, "health_path must be a path starting with '/'"),
        (
            {"health_path": 5},
            "health_path must be a path starting with '/' (e.g. '/healthz') or None (no health "
            "route), got 5 (int)",
        ),
    ],
)
def test_bad_config_raises_config_error(kwargs: dict[str, Any], says: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"ServerConfig.{says}")):
        ServerConfig(**kwargs)
