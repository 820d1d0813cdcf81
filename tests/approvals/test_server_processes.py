"""The agent server restarted for real: a uvicorn process pauses a run and is killed; a new
process on the same SQLite / PostgreSQL database reports it, resumes the same run id, and
runs the approved call once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def _serving(mode: str, env: dict[str, str], tmp: Path) -> Iterator[httpx.Client]:
    full = {**os.environ, **env, "APPROVAL_RAN": str(tmp / "ran.jsonl"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.approvals.server_proc", mode],
        cwd=ROOT,
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("port "), proc.stderr.read() if proc.stderr else line
        with httpx.Client(base_url=f"http://127.0.0.1:{line.split()[1]}", timeout=30) as c:
            yield c
    finally:
        proc.send_signal(signal.SIGKILL)  # a crash, not a shutdown
        proc.communicate(timeout=30)


def _ran(tmp: Path) -> list[Any]:
    path = tmp / "ran.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def _wait(c: httpx.Client, run_id: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        body: dict[str, Any] = c.get(f"/agents/support/runs/{run_id}").json()
        assert "status" in body, body
        if body["status"] == status:
            return body
        time.sleep(0.05)
    raise AssertionError(f"run never reached {status}: {body}")


def test_a_paused_run_survives_a_killed_server_process(
    backend_env: dict[str, str], tmp_path: Path
) -> None:
    headers = {"X-Session-Id": backend_env["APPROVAL_SESSION"]}
    with _serving("pause", backend_env, tmp_path) as c:
        first = c.post("/agents/support/runs", json={"input": "refund A7"}, headers=headers)
        run_id = first.json()["run_id"]
        assert first.json()["status"] == "needs_approval"
    assert _ran(tmp_path) == [["lookup", "A7"]]
    with _serving("resume", backend_env, tmp_path) as c:
        assert _wait(c, run_id, "needs_approval")["session_id"] == headers["X-Session-Id"]
        waiting = c.get(f"/agents/support/runs/{run_id}/approvals").json()
        assert [(p["call_id"], p["args"]) for p in waiting["pending"]] == [
            ("c2", {"order": "A7", "amount": 40})
        ]
        approve = {"decisions": {"c2": {"decision": "approve"}}}
        answered = c.post(f"/agents/support/runs/{run_id}/approvals", json=approve)
        assert answered.status_code == 202
        done = _wait(c, run_id, "completed")
        assert done["output"] == "Refunded."
        again = c.post(f"/agents/support/runs/{run_id}/approvals", json=approve)
        assert again.status_code == 409
    assert _ran(tmp_path) == [["lookup", "A7"], ["refund", {"order": "A7", "amount": 40}]]
    with _serving("resume", backend_env, tmp_path) as c:  # and after another restart
        approve = {"decisions": {"c2": {"decision": "approve"}}}
        assert c.post(f"/agents/support/runs/{run_id}/approvals", json=approve).status_code == 404
    assert len(_ran(tmp_path)) == 2
