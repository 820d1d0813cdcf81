"""SSE framing: exact frames of a run with a tool call, replay, synthetic failure frames."""

from __future__ import annotations

import json

from starlette.testclient import TestClient

from helikon.errors import SessionBackendError
from helikon.runtimes.server import AgentServer
from helikon.runtimes.server.runs import RecordedEvent
from helikon.runtimes.server.sse import encode_event

from .conftest import TOOL_RUN_TYPES, calc_agent, parse_sse
from .test_http import BrokenSession


def test_sse_streams_every_event_as_an_id_event_data_frame() -> None:
    with (
        TestClient(AgentServer([calc_agent()]).app) as c,
        c.stream("POST", "/agents/calc/runs?stream=sse", json={"input": "1+2?"}) as r,
    ):
        assert r.status_code == 200
        assert r.headers["content-type"] == "text/event-stream; charset=utf-8"
        assert r.headers["cache-control"] == "no-cache"
        run_id = r.headers["x-run-id"]
        raw = r.read().decode()
    frames = parse_sse(raw)
    assert [f["event"] for f in frames] == TOOL_RUN_TYPES
    assert [f["id"] for f in frames] == [str(i) for i in range(len(TOOL_RUN_TYPES))]
    assert all(f["data"]["type"] == f["event"] for f in frames)
    assert frames[0]["data"] == {"type": "run_started", "agent": "calc"}
    assert frames[2]["data"] == {
        "type": "tool_call_delta",
        "call_id": "c1",
        "name": "add",
        "args_delta": '{"a": 1, "b": 2}',
    }
    assert frames[4]["data"]["item"]["content"] == [{"type": "text", "text": "3"}]
    assert frames[6]["data"] == {"type": "token_delta", "text": "3"}
    assert run_id


def test_sse_query_accepts_true_as_well() -> None:
    with TestClient(AgentServer([calc_agent()]).app) as c:
        r = c.post("/agents/calc/runs?stream=true", json={"input": "x"})
    assert [f["event"] for f in parse_sse(r.text)] == TOOL_RUN_TYPES


def test_events_route_replays_after_last_event_id_over_sse() -> None:
    with TestClient(AgentServer([calc_agent()]).app) as c:
        run_id = c.post("/agents/calc/runs", json={"input": "x"}).headers["x-run-id"]
        url = f"/agents/calc/runs/{run_id}/events"
        full = parse_sse(c.get(url).text)
        tail = parse_sse(c.get(url, headers={"Last-Event-ID": "5"}).text)
        query = parse_sse(c.get(url + "?last_event_id=7").text)
        bad = c.get(url, headers={"Last-Event-ID": "x"})
    assert [f["event"] for f in full] == TOOL_RUN_TYPES
    assert [f["id"] for f in tail] == ["6", "7", "8"]
    assert [f["event"] for f in query] == ["run_completed"]
    assert bad.status_code == 400 and bad.json()["field"] == "Last-Event-ID"


def test_a_run_whose_session_is_unavailable_answers_503_before_the_stream_starts() -> None:
    server = AgentServer([calc_agent()], session_factory=lambda sid: BrokenSession())
    with TestClient(server.app) as c:
        r = c.post(
            "/agents/calc/runs?stream=sse", json={"input": "x"}, headers={"X-Session-Id": "s"}
        )
        run_id = r.headers["x-run-id"]
        summary = c.get(f"/agents/calc/runs/{run_id}").json()
        replay = c.get(f"/agents/calc/runs/{run_id}/events")
    assert r.status_code == 503 and r.headers["retry-after"] == "1"
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {
        "error": "session_unavailable",
        "message": "the run's session is unavailable: SessionUnavailable: store unreachable",
        "run_id": run_id,
    }
    assert summary["status"] == "incomplete" and summary["events"] == []
    assert summary["error"] == {
        "kind": "Unavailable",
        "message": "SessionUnavailable: store unreachable",
    }
    (frame,) = parse_sse(replay.text)  # the run's own stream still ends with a failure
    assert frame["event"] == "run_failed" and frame["data"]["error"] == summary["error"]


def test_a_run_whose_session_refuses_answers_500_before_the_stream_starts() -> None:
    broken = BrokenSession(SessionBackendError("disk I/O error"))
    server = AgentServer([calc_agent()], session_factory=lambda sid: broken)
    with TestClient(server.app) as c:
        r = c.post(
            "/agents/calc/runs?stream=sse", json={"input": "x"}, headers={"X-Session-Id": "s"}
        )
    assert r.status_code == 500 and "retry-after" not in r.headers
    assert r.json()["error"] == "run_start_failed"
    assert r.json()["message"] == "the run could not start: SessionBackendError: disk I/O error"


def test_encoded_frames_keep_data_on_one_line() -> None:
    text = json.dumps({"type": "token_delta", "text": "a\nb\r\n"}, separators=(",", ":"))
    frame = encode_event(RecordedEvent(3, "token_delta", {}, text))
    assert (
        frame == b'id: 3\nevent: token_delta\ndata: {"type":"token_delta","text":"a\\nb\\r\\n"}\n\n'
    )
