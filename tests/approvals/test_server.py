"""A run paused for approval over the agent server: status, the approvals routes, the same
run id continuing on its streams, the approval timeout, OpenAPI."""

from __future__ import annotations

import time
from typing import Any

import pytest
from starlette.testclient import TestClient

from helikon import Agent, RunConfig
from helikon.runtimes.server import AgentServer, ServerConfig
from helikon.testing import MockModel, Text

from ..runtimes.server.conftest import parse_sse
from . import _support as s


@pytest.fixture(autouse=True)
def _clear() -> None:
    s.RAN.clear()


def _server(**config: Any) -> AgentServer:
    agent = Agent(
        name="support",
        model=MockModel([s.first_turn(), [Text("Refunded.")]]),
        tools=[s.lookup, s.refund],
        run_config=RunConfig(approval="defer"),
    )
    return AgentServer(
        [agent],
        context_factory=lambda conn, session, cancel: s.ctx(),
        config=ServerConfig(**config),
    )


def _wait_status(c: TestClient, run_id: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        body: dict[str, Any] = c.get(f"/agents/support/runs/{run_id}").json()
        if body["status"] == status:
            return body
        time.sleep(0.02)
    raise AssertionError(f"run never reached {status}: {body['status']}")


def test_a_paused_run_lists_its_waiting_calls_and_continues_under_the_same_id() -> None:
    with TestClient(_server().app) as c:
        r = c.post("/agents/support/runs", json={"input": "refund A7"})
        assert r.status_code == 200
        body = r.json()
        run_id = body["run_id"]
        assert body["status"] == "needs_approval"
        assert body["events"][-1]["type"] == "run_interrupted"
        waiting = c.get(f"/agents/support/runs/{run_id}/approvals").json()
        assert waiting == {
            "run_id": run_id,
            "status": "needs_approval",
            "pending": [
                {
                    "call_id": "c2",
                    "tool": "refund",
                    "args": {"order": "A7", "amount": 40},
                    "reason": "refund of 40 needs approval",
                    "agent": "support",
                }
            ],
        }
        assert s.RAN == [("lookup", "A7")]
        answered = c.post(
            f"/agents/support/runs/{run_id}/approvals",
            json={"decisions": {"c2": {"decision": "approve"}}},
        )
        assert answered.status_code == 202
        assert answered.json()["events_url"] == f"/agents/support/runs/{run_id}/events"
        done = _wait_status(c, run_id, "completed")
        assert done["output"] == "Refunded."
        assert s.RAN[-1] == ("refund", {"order": "A7", "amount": 40})
        # the same log holds both segments; a replay streams all of it, the pause included
        kinds = [f["event"] for f in parse_sse(c.get(f"/agents/support/runs/{run_id}/events").text)]
        assert kinds.index("run_interrupted") < kinds.index("run_completed")
        assert kinds[-1] == "run_completed"
        again = c.post(
            f"/agents/support/runs/{run_id}/approvals",
            json={"decisions": {"c2": {"decision": "approve"}}},
        )
        assert again.status_code == 409 and again.json()["error"] == "not_waiting"
        assert [r for r in s.RAN if r[0] == "refund"] == [("refund", {"order": "A7", "amount": 40})]


def test_an_sse_stream_stays_open_across_the_pause_and_goes_on() -> None:
    with TestClient(_server().app) as c:
        run_id = c.post("/agents/support/runs?mode=async", json={"input": "x"}).json()["run_id"]
        _wait_status(c, run_id, "needs_approval")
        with c.stream("GET", f"/agents/support/runs/{run_id}/events") as stream:
            c.post(
                f"/agents/support/runs/{run_id}/approvals",
                json={"decisions": {"c2": {"decision": "deny", "reason": "no"}}},
            )
            frames = parse_sse(stream.read().decode())
    kinds = [f["event"] for f in frames]
    assert "run_interrupted" in kinds and kinds[-1] == "run_completed"
    after = kinds[kinds.index("run_interrupted") + 1 :]
    assert after[:2] == ["run_started", "tool_output_item"]
    denial = frames[kinds.index("run_interrupted") + 2]["data"]["item"]
    assert denial["content"][0]["text"] == "approval denied: no" and denial["is_error"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"decisions": {"c2": {"decision": "maybe"}}}, "decisions.c2.decision"),
        ({"decisions": {"c2": {"decision": "deny"}}}, "decisions.c2.reason"),
        ({"decisions": {"c2": {"decision": "edit", "args": [1]}}}, "decisions.c2.args"),
        (
            {"decisions": {"c2": {"decision": "approve", "remember": "yes"}}},
            "decisions.c2.remember",
        ),
        ({"decisions": {"c2": {"decision": "approve", "why": 1}}}, "decisions.c2.why"),
        ({"decisions": {}}, "decisions"),
        ({"approve": True}, None),
    ],
)
def test_bad_answers_are_400_naming_the_field_and_the_run_keeps_waiting(
    body: dict[str, Any], field: str | None
) -> None:
    with TestClient(_server().app) as c:
        run_id = c.post("/agents/support/runs", json={"input": "x"}).json()["run_id"]
        r = c.post(f"/agents/support/runs/{run_id}/approvals", json=body)
        assert r.status_code == 400 and r.json()["field"] == field
        wrong = c.post(
            f"/agents/support/runs/{run_id}/approvals",
            json={"decisions": {"c9": {"decision": "approve"}}},
        )
        assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_decisions"
        assert c.get(f"/agents/support/runs/{run_id}").json()["status"] == "needs_approval"
    assert s.RAN == [("lookup", "A7")]


def test_an_unanswered_wait_times_out_as_a_denial() -> None:
    with TestClient(_server(approval_timeout=0.2).app) as c:
        run_id = c.post("/agents/support/runs", json={"input": "x"}).json()["run_id"]
        done = _wait_status(c, run_id, "completed")
    results = [e for e in done["events"] if e["type"] == "tool_output_item"]
    assert results[-1]["item"]["content"][0]["text"] == (
        "approval denied: approval timed out: nobody answered in time"
    )
    assert s.RAN == [("lookup", "A7")]


def test_openapi_documents_the_approvals_routes() -> None:
    with TestClient(_server().app) as c:
        spec = c.get("/openapi.json").json()
    path = spec["paths"]["/agents/{name}/runs/{run_id}/approvals"]
    assert set(path) == {"get", "post"}
    assert path["post"]["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ApprovalDecisions"
    }
    assert "needs_approval" in spec["components"]["schemas"]["Run"]["properties"]["status"]["enum"]
    assert "PendingCall" in spec["components"]["schemas"]
