""":class:`SqliteTraceSink`: eval runs in a SQLite file (stdlib ``sqlite3``, no extra)."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from helikon.evals.sinks.base import case_rows, event_rows, run_row, score_rows

if TYPE_CHECKING:
    from helikon.evals.report import EvalReport

__all__ = ["SCHEMA_VERSION", "SqliteTraceSink"]

SCHEMA_VERSION = 1
"""The schema this sink writes (``PRAGMA user_version``)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS eval_runs (
    run_id          TEXT PRIMARY KEY,
    started_at      TEXT NOT NULL,
    finished_at     TEXT NOT NULL,
    case_count      INTEGER NOT NULL,
    passed_count    INTEGER NOT NULL,
    passed          INTEGER NOT NULL,
    mean_score      REAL,
    evaluators_json TEXT NOT NULL,
    summary_json    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS eval_cases (
    run_id              TEXT NOT NULL REFERENCES eval_runs(run_id),
    case_index          INTEGER NOT NULL,
    case_id             TEXT NOT NULL,
    line                INTEGER NOT NULL,
    input               TEXT NOT NULL,
    expected_json       TEXT,
    expected_tools_json TEXT,
    metadata_json       TEXT NOT NULL,
    passed              INTEGER NOT NULL,
    error               TEXT,
    final_response      TEXT,
    tool_calls_json     TEXT,
    agent               TEXT,
    input_tokens        INTEGER,
    output_tokens       INTEGER,
    duration_ms         REAL NOT NULL,
    PRIMARY KEY (run_id, case_index)
);
CREATE TABLE IF NOT EXISTS eval_scores (
    run_id      TEXT NOT NULL,
    case_index  INTEGER NOT NULL,
    case_id     TEXT NOT NULL,
    evaluator   TEXT NOT NULL,
    outcome     TEXT,
    value       REAL,
    detail      TEXT,
    error       TEXT,
    PRIMARY KEY (run_id, case_index, evaluator),
    FOREIGN KEY (run_id, case_index) REFERENCES eval_cases(run_id, case_index)
);
CREATE TABLE IF NOT EXISTS eval_events (
    run_id      TEXT NOT NULL,
    case_index  INTEGER NOT NULL,
    case_id     TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    type        TEXT NOT NULL,
    ts          TEXT NOT NULL,
    event_json  TEXT NOT NULL,
    PRIMARY KEY (run_id, case_index, seq),
    FOREIGN KEY (run_id, case_index) REFERENCES eval_cases(run_id, case_index)
);
"""


class SqliteTraceSink:
    """Writes each run to ``eval_runs``, ``eval_cases``, ``eval_scores`` and ``eval_events``.

    Columns are those of :mod:`helikon.evals.sinks.base`; booleans are 0/1, times are
    ISO-8601 UTC text, JSON values are compact text. ``eval_events`` holds each case's run
    as session events (``event_json`` is exactly what a session backend stores). The schema
    is created on first use (versioned with ``PRAGMA user_version``); one run is written in
    one transaction, so a failure leaves nothing of it behind. Several runs share one file;
    each needs its own ``run_id`` (a reused one is refused, and the file keeps the old run).

    Args:
        path: the database file (created if missing).

    Example:
        >>> import sqlite3, tempfile, os
        >>> from helikon import Agent
        >>> from helikon.evals import EvalRun, ExactMatch
        >>> from helikon.testing import MockModel, Text
        >>> db = os.path.join(tempfile.mkdtemp(), "evals.db")
        >>> EvalRun(dataset=[], evaluators=[ExactMatch()], run_id="r1",
        ...         agent=Agent(name="a", model=MockModel()),
        ...         sinks=[SqliteTraceSink(db)]).run_sync().passed()  # no case: not passed
        False
        >>> sqlite3.connect(db).execute("SELECT run_id, case_count FROM eval_runs").fetchall()
        [('r1', 0)]
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    async def record(self, report: EvalReport) -> None:
        """Write ``report`` (in a worker thread).

        Raises:
            sqlite3.Error: the database cannot be written, has a newer schema, or already
                holds this ``run_id``.
        """
        await asyncio.to_thread(self._write, report)

    def _write(self, report: EvalReport) -> None:
        conn = sqlite3.connect(self.path)
        try:
            _migrate(conn)
            with conn:
                try:
                    _insert(conn, "eval_runs", [run_row(report)])
                except sqlite3.IntegrityError:
                    raise sqlite3.IntegrityError(
                        f"run id {report.run_id!r} already exists in {self.path}; run ids are "
                        "unique per file: pass another EvalRun(run_id=...) (or leave it out "
                        "for a random one), or use another file"
                    ) from None
                _insert(conn, "eval_cases", case_rows(report))
                _insert(conn, "eval_scores", score_rows(report))
                _insert(conn, "eval_events", event_rows(report))
        finally:
            conn.close()


def _migrate(conn: sqlite3.Connection) -> None:
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version > SCHEMA_VERSION:
        raise sqlite3.DatabaseError(
            f"eval trace schema version {version} is newer than this helikon's "
            f"({SCHEMA_VERSION}); upgrade helikon"
        )
    if version < SCHEMA_VERSION:
        conn.executescript(f"BEGIN;{_SCHEMA}PRAGMA user_version = {SCHEMA_VERSION};COMMIT;")


def _insert(conn: sqlite3.Connection, table: str, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    cols = list(rows[0])
    sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
    conn.executemany(sql, [[_sql(row[c]) for c in cols] for row in rows])


def _sql(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value
