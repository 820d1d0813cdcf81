"""The SQLite and Parquet trace sinks, written and read back row by row."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from helikon import Agent
from helikon.evals import (
    EvalCase,
    EvalDataset,
    EvalReport,
    EvalRun,
    ExactMatch,
    ParquetTraceSink,
    SqliteTraceSink,
    ToolUseTrajectory,
    TraceSinkError,
)

Factory = Callable[[EvalCase], Agent]

CASES = [
    # run_id, case_index, case_id, line, input, expected_json, expected_tools_json,
    # metadata_json, passed, error, final_response, tool_calls_json, agent, in, out tokens
    (
        "run-1",
        0,
        "shipped",
        1,
        "Where is A-17?",
        '"Order A-17 has shipped."',
        '["lookup_order"]',
        "{}",
        1,
        None,
        "Order A-17 has shipped.",
        '["lookup_order"]',
        "support",
        30,
        8,
    ),
    (
        "run-1",
        1,
        "wrong",
        2,
        "Where is B-2?",
        '"Order B-2 was cancelled."',
        '["lookup_order","refund"]',
        "{}",
        0,
        None,
        "Order B-2 has shipped.",
        '["lookup_order"]',
        "support",
        30,
        8,
    ),
    (
        "run-1",
        2,
        "case-3",
        3,
        "Hello",
        None,
        None,
        "{}",
        1,
        None,
        "Hi! How can I help?",
        "[]",
        "support",
        5,
        4,
    ),
    (
        "run-1",
        3,
        "crash",
        4,
        "Boom",
        '"x"',
        None,
        "{}",
        0,
        "model error (Unavailable): model down",
        None,
        None,
        None,
        None,
        None,
    ),
    (
        "run-1",
        4,
        "json",
        5,
        "Status of A-17 as JSON",
        '{"status":"shipped"}',
        "[]",
        '{"format":"json"}',
        1,
        None,
        '```json\n{"status": "shipped"}\n```',
        "[]",
        "support",
        7,
        6,
    ),
]

SCORES = [
    ("run-1", 0, "shipped", "exact_match", "passed", 1.0, "", None),
    ("run-1", 0, "shipped", "tool_trajectory", "passed", 1.0, "", None),
    (
        "run-1",
        1,
        "wrong",
        "exact_match",
        "failed",
        0.0,
        "expected 'Order B-2 was cancelled.', got 'Order B-2 has shipped.'",
        None,
    ),
    (
        "run-1",
        1,
        "wrong",
        "tool_trajectory",
        "failed",
        0.0,
        "expected ['lookup_order', 'refund'], got ['lookup_order']",
        None,
    ),
    ("run-1", 2, "case-3", "exact_match", "skipped", 0.0, "case has no 'expected'", None),
    ("run-1", 2, "case-3", "tool_trajectory", "skipped", 0.0, "case has no 'expected_tools'", None),
    ("run-1", 4, "json", "exact_match", "passed", 1.0, "", None),
    ("run-1", 4, "json", "tool_trajectory", "passed", 1.0, "", None),
]

EVENTS = [  # case_index, case_id, seq, type
    (0, "shipped", 0, "user_message"),
    (0, "shipped", 1, "tool_called"),
    (0, "shipped", 2, "permission_decided"),
    (0, "shipped", 3, "tool_returned"),
    (0, "shipped", 4, "assistant_message"),
    (1, "wrong", 0, "user_message"),
    (1, "wrong", 1, "tool_called"),
    (1, "wrong", 2, "permission_decided"),
    (1, "wrong", 3, "tool_returned"),
    (1, "wrong", 4, "assistant_message"),
    (2, "case-3", 0, "user_message"),
    (2, "case-3", 1, "assistant_message"),
    (3, "crash", 0, "user_message"),
    (4, "json", 0, "user_message"),
    (4, "json", 1, "assistant_message"),
]


def _strip_ts(event_json: str) -> dict[str, Any]:
    doc = json.loads(event_json)
    assert isinstance(datetime.fromisoformat(doc.pop("ts")), datetime)
    return doc


async def _run(dataset: EvalDataset, factory: Factory, *sinks: Any) -> EvalReport:
    return await EvalRun(
        dataset=dataset,
        evaluators=[ExactMatch(), ToolUseTrajectory()],
        agent_factory=factory,
        sinks=list(sinks),
        run_id="run-1",
    ).run()


async def test_sqlite_rows(tmp_path: Path, dataset: EvalDataset, factory: Factory) -> None:
    db = tmp_path / "evals.db"
    report = await _run(dataset, factory, SqliteTraceSink(db))
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone() == (1,)
    (run,) = conn.execute("SELECT * FROM eval_runs").fetchall()
    assert run[0] == "run-1"
    assert datetime.fromisoformat(run[1]) == report.started_at
    assert datetime.fromisoformat(run[2]) == report.finished_at
    assert run[3:8] == (5, 3, 0, pytest.approx(4 / 6), '["exact_match","tool_trajectory"]')
    assert json.loads(run[8])[0] == {
        "evaluator": "exact_match",
        "passed": 2,
        "failed": 1,
        "skipped": 1,
        "errors": 0,
        "mean": pytest.approx(2 / 3),
    }
    rows = conn.execute("SELECT * FROM eval_cases ORDER BY case_index").fetchall()
    assert [r[:-1] for r in rows] == CASES
    assert all(isinstance(r[-1], float) and r[-1] >= 0 for r in rows)
    assert conn.execute("SELECT * FROM eval_scores ORDER BY rowid").fetchall() == SCORES
    events = conn.execute(
        "SELECT run_id, case_index, case_id, seq, type, ts, event_json FROM eval_events "
        "ORDER BY case_index, seq"
    ).fetchall()
    assert [e[1:5] for e in events] == EVENTS
    stored = [_strip_ts(e[6]) for e in events]
    assert stored[1] == {
        "type": "tool_called",
        "call_id": "c1",
        "name": "lookup_order",
        "args": {"order_id": "A-17"},
    }
    assert stored[2] == {
        "type": "permission_decided",
        "call_id": "c1",
        "tool": "lookup_order",
        "decision": "allow",
        "stage": "default",
        "reason": "no policy installed",
        "decided_by": "policy",
    }
    assert stored[4] == {
        "type": "assistant_message",
        "agent": "support",
        "content": [{"type": "text", "text": "Order A-17 has shipped."}],
    }
    assert all(datetime.fromisoformat(e[5]).tzinfo is not None for e in events)


async def test_sqlite_holds_several_runs_and_rejects_a_duplicate_id(
    tmp_path: Path, dataset: EvalDataset, factory: Factory
) -> None:
    db = tmp_path / "evals.db"
    sink = SqliteTraceSink(db)
    await _run(dataset, factory, sink)
    with pytest.raises(TraceSinkError) as info:
        await _run(dataset, factory, sink)
    assert str(info.value) == (
        "SqliteTraceSink: could not record run run-1: IntegrityError: run id 'run-1' already "
        f"exists in {db}; run ids are unique per file: pass another EvalRun(run_id=...) (or "
        "leave it out for a random one), or use another file"
    )
    assert info.value.__cause__ is not None
    assert info.value.__cause__.__cause__ is None  # no raw UNIQUE-constraint chain
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM eval_cases").fetchone() == (5,)  # all or nothing
    report = await EvalRun(
        dataset=dataset,
        evaluators=[ExactMatch()],
        agent_factory=factory,
        sinks=[sink],
        run_id="run-2",
    ).run()
    assert len(report.cases) == 5
    assert conn.execute("SELECT run_id FROM eval_runs ORDER BY run_id").fetchall() == [
        ("run-1",),
        ("run-2",),
    ]


async def test_sqlite_refuses_a_newer_schema(
    tmp_path: Path, dataset: EvalDataset, factory: Factory
) -> None:
    db = tmp_path / "evals.db"
    sqlite3.connect(db).execute("PRAGMA user_version = 9").connection.close()
    with pytest.raises(TraceSinkError, match="schema version 9 is newer"):
        await _run(dataset, factory, SqliteTraceSink(db))


async def test_parquet_files(tmp_path: Path, dataset: EvalDataset, factory: Factory) -> None:
    sink = ParquetTraceSink(tmp_path / "traces")
    await _run(dataset, factory, sink)
    names = sorted(p.name for p in (tmp_path / "traces").iterdir())
    assert names == ["run-1-cases.parquet", "run-1-events.parquet", "run-1-scores.parquet"]

    scores = pq.read_table(tmp_path / "traces" / "run-1-scores.parquet")
    assert scores.column_names == [
        "run_id",
        "case_index",
        "case_id",
        "evaluator",
        "outcome",
        "value",
        "detail",
        "error",
    ]
    assert [tuple(r.values()) for r in scores.to_pylist()] == SCORES

    events = pq.read_table(tmp_path / "traces" / "run-1-events.parquet")
    assert str(events.schema.field("ts").type) == "timestamp[us, tz=UTC]"
    assert str(events.schema.field("case_index").type) == "int32"
    rows = events.to_pylist()
    assert [(r["case_index"], r["case_id"], r["seq"], r["type"]) for r in rows] == EVENTS
    assert {r["run_id"] for r in rows} == {"run-1"}
    for r in rows:
        assert json.loads(r["event_json"])["ts"].startswith(r["ts"].strftime("%Y-%m-%dT%H:%M"))
    assert _strip_ts(rows[3]["event_json"]) == {
        "type": "tool_returned",
        "call_id": "c1",
        "is_error": False,
        "content": [{"type": "text", "text": '{"id":"A-17","status":"shipped"}'}],
    }

    cases = pq.read_table(tmp_path / "traces" / "run-1-cases.parquet").to_pylist()
    expected = [(*c[:8], bool(c[8]), *c[9:]) for c in CASES]
    assert [tuple(r.values())[:-1] for r in cases] == expected


async def test_parquet_empty_run_writes_typed_empty_files(tmp_path: Path) -> None:
    sink = ParquetTraceSink(tmp_path)
    await EvalRun(
        dataset=[],
        evaluators=[ExactMatch()],
        agent_factory=lambda c: None,  # type: ignore[arg-type,return-value]
        sinks=[sink],
        run_id="empty",
    ).run()
    table = pq.read_table(sink.paths("empty")["events"])
    assert table.num_rows == 0
    assert table.column_names[:3] == ["run_id", "case_index", "case_id"]
