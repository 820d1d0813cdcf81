"""Pause in one process, resume in another, on real SQLite and PostgreSQL sessions: the
approved call runs exactly once, even when two resumes race."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _spawn(
    mode: str, env: dict[str, str], tmp: Path, decisions: Any = None
) -> subprocess.Popen[str]:
    full = {
        **os.environ,
        **env,
        "APPROVAL_STATE": str(tmp / "state.json"),
        "APPROVAL_RAN": str(tmp / "ran.jsonl"),
        "APPROVAL_DECISIONS": json.dumps(decisions or {}),
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "tests.approvals.proc", mode],
        cwd=ROOT,
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run(mode: str, env: dict[str, str], tmp: Path, decisions: Any = None) -> tuple[int, str]:
    proc = _spawn(mode, env, tmp, decisions)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, 2, 3), err
    return proc.returncode, out


def _ran(tmp: Path) -> list[Any]:
    path = tmp / "ran.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_approve_in_another_process_runs_the_call_once(
    backend_env: dict[str, str], tmp_path: Path
) -> None:
    code, _ = _run("pause", backend_env, tmp_path)
    assert code == 2
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["session_id"] == backend_env["APPROVAL_SESSION"]
    assert state["pending"][0]["call_id"] == "c2"
    assert _ran(tmp_path) == [["lookup", "A7"]]
    code, out = _run("resume", backend_env, tmp_path, {"c2": "approve"})
    assert code == 0, out
    assert json.loads(out)["output"] == "Refunded."
    assert _ran(tmp_path) == [["lookup", "A7"], ["refund", {"order": "A7", "amount": 40}]]
    code, out = _run("resume", backend_env, tmp_path, {"c2": "approve"})
    assert code == 3
    assert "was already resumed" in out
    assert len(_ran(tmp_path)) == 2  # never twice


def test_two_resumes_racing_run_the_call_once(backend_env: dict[str, str], tmp_path: Path) -> None:
    assert _run("pause", backend_env, tmp_path)[0] == 2
    procs = [_spawn("resume", backend_env, tmp_path, {"c2": "approve"}) for _ in range(2)]
    codes = sorted(p.communicate(timeout=60) and p.returncode for p in procs)
    assert codes == [0, 3]
    assert [r for r in _ran(tmp_path) if r[0] == "refund"] == [
        ["refund", {"order": "A7", "amount": 40}]
    ]


def test_deny_and_edit_in_another_process(backend_env: dict[str, str], tmp_path: Path) -> None:
    assert _run("pause", backend_env, tmp_path)[0] == 2
    code, out = _run(
        "resume", backend_env, tmp_path, {"c2": {"edit": {"order": "A7", "amount": 9}}}
    )
    assert code == 0, out
    assert json.loads(out)["last"]["content"][0]["text"] == "refunded 9 on A7"
    assert _ran(tmp_path)[-1] == ["refund", {"order": "A7", "amount": 9}]
    # a fresh pause in a new session, then a denial
    env = {**backend_env, "APPROVAL_SESSION": backend_env["APPROVAL_SESSION"] + "-b"}
    assert _run("pause", env, tmp_path)[0] == 2
    code, out = _run("resume", env, tmp_path, {"c2": "deny:not today"})
    assert code == 0, out
    last = json.loads(out)["last"]
    assert last["is_error"] is True
    assert last["content"][0]["text"] == "approval denied: not today"
    assert [r[0] for r in _ran(tmp_path)].count("refund") == 1


def test_a_pattern_paused_in_one_process_resumes_inside_its_step_in_another(
    backend_env: dict[str, str], tmp_path: Path
) -> None:
    code, _ = _run("pause-pattern", backend_env, tmp_path)
    assert code == 2
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["agent_path"] == ["pipe", "fan", "support"]
    assert state["pattern"]["done"] == {"check": "A7 exists"}
    assert state["steps"]["fan"]["pattern"]["done"] == {"audit": "audit ok"}
    assert [p["call_id"] for p in state["pending"]] == ["c2"]
    assert _ran(tmp_path) == [["lookup", "A7"]]
    code, out = _run("resume-pattern", backend_env, tmp_path, {"c2": "approve"})
    assert code == 0, out
    done = json.loads(out)
    assert done["output"] == '{"audit":"audit ok","support":"Refunded."}'
    assert done["state"] == {
        "check": "A7 exists",
        "audit": "audit ok",
        "support": "Refunded.",
        "fan": '{"audit":"audit ok","support":"Refunded."}',
    }
    assert _ran(tmp_path) == [["lookup", "A7"], ["refund", {"order": "A7", "amount": 40}]]
    code, out = _run("resume-pattern", backend_env, tmp_path, {"c2": "approve"})
    assert code == 3
    assert "already resumed" in out
    assert len(_ran(tmp_path)) == 2


def test_a_run_paused_without_a_session_resumes_elsewhere_with_a_session_as_ledger(
    backend_env: dict[str, str], tmp_path: Path
) -> None:
    code, _ = _run("pause-bare", backend_env, tmp_path)
    assert code == 2
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["session_id"] is None and state["session_position"] is None
    assert state["conversation"][0]["content"][0]["text"] == "refund A7"
    # another process without a session: refused, saying what to do; nothing ran
    code, out = _run("resume-bare", backend_env, tmp_path, {"c2": "approve"})
    assert code == 3
    assert out.startswith(
        f"refused: paused run {state['run_id']} was paused without a session in another "
        "process, where its resume-once claim is kept; resuming it here without a session "
        "could run the approved calls twice. Pass a session the resuming processes share as "
        "the ledger (Runner.resume(..., session=SqliteSession('<id>', 'runs.db'))"
    )
    assert _ran(tmp_path) == [["lookup", "A7"]]
    # with a shared session as the ledger it resumes from the state's own conversation
    code, out = _run("resume-ledger", backend_env, tmp_path, {"c2": "approve"})
    assert code == 0, out
    done = json.loads(out)
    assert done["output"] == "Refunded."
    assert done["last"]["content"][0]["text"] == "refunded 40 on A7"
    assert _ran(tmp_path) == [["lookup", "A7"], ["refund", {"order": "A7", "amount": 40}]]
    # once: again through the ledger, or racing it, is refused
    procs = [_spawn("resume-ledger", backend_env, tmp_path, {"c2": "approve"}) for _ in range(2)]
    outs = [p.communicate(timeout=60)[0] for p in procs]
    assert [p.returncode for p in procs] == [3, 3]
    assert all("was already resumed" in o for o in outs)
    assert [r[0] for r in _ran(tmp_path)].count("refund") == 1
