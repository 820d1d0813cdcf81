"""``helikon eval run`` shows progress (a line per case when piped), takes ``--concurrency``,
and on Ctrl-C prints and saves the report of the cases that finished."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.clihelp import env, exe, helikon


def _project(tmp_path: Path, slow: str | None = None, n: int = 3) -> Path:
    cases = {f"c{i}": [[{"token": f"answer {i}"}]] for i in range(n)}
    if slow is not None:
        cases[slow] = [[{"delay_ms": 60000}, {"token": "too late"}]]
    (tmp_path / "s.json").write_text(json.dumps({"cases": cases}))
    (tmp_path / "agents.toml").write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\n'
        '[eval]\nevaluators = ["exact_match"]\n'
    )
    (tmp_path / "d.jsonl").write_text(
        "".join(
            json.dumps({"id": f"c{i}", "input": "q", "expected": f"answer {i}"}) + "\n"
            for i in range(n)
        )
    )
    return tmp_path


def test_a_line_per_case_when_piped(tmp_path: Path) -> None:
    _project(tmp_path)
    proc = helikon("eval", "run", "d.jsonl", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert [line.split(" ")[:3] for line in lines] == [
        ["[1/3]", "c0", "PASS"],
        ["[2/3]", "c1", "PASS"],
        ["[3/3]", "c2", "PASS"],
    ]
    assert json.loads(proc.stdout)["run_id"]  # stdout holds only the report


def test_concurrency_runs_cases_at_once_and_keeps_dataset_order(tmp_path: Path) -> None:
    n = 4
    cases = {f"c{i}": [[{"delay_ms": 600}, {"token": f"answer {i}"}]] for i in range(n)}
    _project(tmp_path, n=n)
    (tmp_path / "s.json").write_text(json.dumps({"cases": cases}))
    started = time.monotonic()
    proc = helikon("eval", "run", "d.jsonl", "--concurrency", "4", "--json", cwd=tmp_path)
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert [c["case"]["id"] for c in report["cases"]] == ["c0", "c1", "c2", "c3"]
    assert elapsed < 4 * 0.6 + 10  # not a timing test: only that it finished
    bad = helikon("eval", "run", "d.jsonl", "--concurrency", "0", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr == "error: --concurrency 0: must be >= 1. Fix: e.g. --concurrency 4\n"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_prints_and_saves_the_finished_cases(tmp_path: Path) -> None:
    _project(tmp_path, slow="c2", n=4)
    proc = subprocess.Popen(
        [exe(), "eval", "run", "d.jsonl", "--json", "--trace", "sqlite:evals.db"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )
    assert proc.stderr is not None
    seen = [proc.stderr.readline(), proc.stderr.readline()]
    assert [s.split(" ")[1] for s in seen] == ["c0", "c1"], seen
    time.sleep(0.3)  # c2 is waiting on its 60 s delay
    proc.send_signal(signal.SIGINT)
    out, rest = proc.communicate(timeout=30)
    assert proc.returncode == 130, rest
    assert rest.startswith("interrupted: 2 of 4 cases finished; the report below holds those")
    report = json.loads(out)
    assert [c["case"]["id"] for c in report["cases"]] == ["c0", "c1"]
    assert all(c["error"] is None for c in report["cases"])
    with sqlite3.connect(tmp_path / "evals.db") as db:
        rows = db.execute("SELECT case_id FROM eval_cases ORDER BY case_index").fetchall()
    assert rows == [("c0",), ("c1",)]
