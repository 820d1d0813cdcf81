"""``GET /metrics``: the Prometheus text format, parsed back, with the counts of real runs."""

from __future__ import annotations

import math
import re
from typing import Any

from starlette.requests import HTTPConnection
from starlette.testclient import TestClient

from helikon.errors import AuthRejection
from helikon.runtimes.server import AgentServer, ServerConfig

from .conftest import calc_agent
from .test_http import BrokenSession

_SAMPLE = re.compile(r'^([a-z_]+)(?:\{([a-z]+)="([^"]*)"\})? (\S+)$')


def parse(text: str) -> tuple[dict[str, str], dict[tuple[str, str | None], float]]:
    """The families (name -> type) and samples ((name, label value) -> value) of an
    exposition; fails on any line that is not HELP, TYPE or a sample of a declared family."""
    assert text.endswith("\n")
    types: dict[str, str] = {}
    samples: dict[tuple[str, str | None], float] = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, _, help_text = line[7:].partition(" ")
            assert help_text, line
        elif line.startswith("# TYPE "):
            name, _, kind = line[7:].partition(" ")
            assert kind in ("gauge", "counter", "histogram") and name not in types
            types[name] = kind
        else:
            match = _SAMPLE.match(line)
            assert match is not None, line
            name, _, label, value = match.groups()
            family = re.sub(r"_(bucket|sum|count)$", "", name)
            assert name in types or types.get(family) == "histogram", line
            samples[(name, label)] = float(value)
    return types, samples


def histogram(samples: dict[tuple[str, str | None], float], name: str) -> dict[str, float]:
    buckets = [(float(le), v) for (n, le), v in samples.items() if n == f"{name}_bucket"]
    assert buckets == sorted(buckets) and buckets[-1][0] == math.inf
    counts = [v for _, v in buckets]
    assert counts == sorted(counts)  # cumulative
    assert counts[-1] == samples[(f"{name}_count", None)]
    return {"count": counts[-1], "sum": samples[(f"{name}_sum", None)]}


def test_metrics_count_runs_errors_and_latencies() -> None:
    p = "helikon_server_"
    server = AgentServer(
        [calc_agent(2)], session_factory=lambda sid: BrokenSession(), config=ServerConfig()
    )
    with TestClient(server.app) as c:
        for _ in range(2):
            assert c.post("/agents/calc/runs", json={"input": "x"}).status_code == 200
        broken = c.post("/agents/calc/runs", json={"input": "x"}, headers={"X-Session-Id": "s"})
        assert broken.status_code == 503
        assert c.post("/agents/nope/runs", json={"input": "x"}).status_code == 404
        r = c.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    types, samples = parse(r.text)
    assert types == {
        f"{p}runs": "gauge",
        f"{p}queue_depth": "gauge",
        f"{p}run_slots_in_use": "gauge",
        f"{p}runs_started_total": "counter",
        f"{p}runs_finished_total": "counter",
        f"{p}run_errors_total": "counter",
        f"{p}http_errors_total": "counter",
        f"{p}time_to_first_event_seconds": "histogram",
        f"{p}run_duration_seconds": "histogram",
    }
    assert samples[(f"{p}runs", "completed")] == 2
    assert samples[(f"{p}runs", "incomplete")] == 1
    assert samples[(f"{p}queue_depth", None)] == 0
    assert samples[(f"{p}run_slots_in_use", None)] == 0
    assert samples[(f"{p}runs_started_total", None)] == 3
    assert samples[(f"{p}runs_finished_total", "completed")] == 2
    assert samples[(f"{p}runs_finished_total", "incomplete")] == 1
    assert samples[(f"{p}run_errors_total", "Unavailable")] == 1
    assert samples[(f"{p}http_errors_total", "503")] == 1
    assert samples[(f"{p}http_errors_total", "404")] == 1
    first = histogram(samples, f"{p}time_to_first_event_seconds")
    assert first["count"] == 2 and first["sum"] > 0  # the broken run had no event
    duration = histogram(samples, f"{p}run_duration_seconds")
    assert duration["count"] == 3 and duration["sum"] >= first["sum"]


def test_metrics_route_is_behind_auth_and_can_be_turned_off() -> None:
    def auth(conn: HTTPConnection) -> None:
        if conn.headers.get("authorization") != "Bearer ok":
            raise AuthRejection("no token")

    with TestClient(AgentServer([calc_agent()], auth=auth).app) as c:
        assert c.get("/metrics").status_code == 401
        assert c.get("/metrics", headers={"authorization": "Bearer ok"}).status_code == 200
    off = AgentServer([calc_agent()], config=ServerConfig(metrics_path=None))
    with TestClient(off.app) as c:
        assert c.get("/metrics").status_code == 404


def test_a_run_that_fails_counts_its_error_kind() -> None:
    from helikon import Agent
    from helikon.testing import Fail, MockModel

    agent: Any = Agent(name="bad", model=MockModel([[Fail("boom")]]))
    with TestClient(AgentServer([agent]).app) as c:
        assert c.post("/agents/bad/runs", json={"input": "x"}).json()["status"] == "failed"
        kind = c.get("/agents/bad/runs").status_code  # 405: counted as an HTTP error too
        _, samples = parse(c.get("/metrics").text)
    assert samples[("helikon_server_runs_finished_total", "failed")] == 1
    assert sum(v for (n, _), v in samples.items() if n == "helikon_server_run_errors_total") == 1
    assert samples[("helikon_server_http_errors_total", str(kind))] == 1
