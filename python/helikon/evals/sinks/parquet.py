""":class:`ParquetTraceSink`: eval runs as Parquet files (needs ``pyarrow``)."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from helikon.evals._deps import require
from helikon.evals.sinks.base import case_rows, event_rows, score_rows

if TYPE_CHECKING:
    from helikon.evals.report import EvalReport

__all__ = ["ParquetTraceSink"]


def _schemas(pa: Any) -> dict[str, Any]:
    ts = pa.timestamp("us", tz="UTC")
    key = [("run_id", pa.string()), ("case_index", pa.int32()), ("case_id", pa.string())]
    return {
        "events": pa.schema(
            [
                *key,
                ("seq", pa.int32()),
                ("type", pa.string()),
                ("ts", ts),
                ("event_json", pa.string()),
            ]
        ),
        "scores": pa.schema(
            [
                *key,
                ("evaluator", pa.string()),
                ("outcome", pa.string()),
                ("value", pa.float64()),
                ("detail", pa.string()),
                ("error", pa.string()),
            ]
        ),
        "cases": pa.schema(
            [
                *key,
                ("line", pa.int32()),
                ("input", pa.string()),
                ("expected_json", pa.string()),
                ("expected_tools_json", pa.string()),
                ("metadata_json", pa.string()),
                ("passed", pa.bool_()),
                ("error", pa.string()),
                ("final_response", pa.string()),
                ("tool_calls_json", pa.string()),
                ("agent", pa.string()),
                ("input_tokens", pa.int64()),
                ("output_tokens", pa.int64()),
                ("duration_ms", pa.float64()),
            ]
        ),
    }


class ParquetTraceSink:
    """Writes ``<dir>/<run_id>-events.parquet``, ``-scores.parquet`` and ``-cases.parquet``.

    Flat schemas (the rows of :mod:`helikon.evals.sinks.base`), for any Parquet reader:

    * events: ``run_id, case_index, case_id, seq, type, ts`` (timestamp, UTC) ``, event_json``
      (the case's run as session events);
    * scores: ``run_id, case_index, case_id, evaluator, outcome, value, detail, error``;
    * cases: one row per case, with its pass/fail, run error and final response.

    Each file is written to a temporary name and linked into place, so a reader never sees
    half a file, and an existing file is never overwritten: a ``run_id`` that already has
    files in the directory is refused (``FileExistsError``), and the old run stays.

    Args:
        directory: where the files go (created if missing).

    Raises:
        ImportError: ``pyarrow`` is missing (``pip install 'helikon[evals]'``).

    Example:
        >>> import tempfile
        >>> sink = ParquetTraceSink(tempfile.mkdtemp())
        >>> sink.paths("r1")["scores"].name
        'r1-scores.parquet'
    """

    def __init__(self, directory: str | Path) -> None:
        self._pa = require("pyarrow", feature="ParquetTraceSink")
        self._pq = require("pyarrow.parquet", feature="ParquetTraceSink")
        self.directory = Path(directory)
        self._schemas = _schemas(self._pa)

    def paths(self, run_id: str) -> dict[str, Path]:
        """The files a run is written to, by kind (``events``, ``scores``, ``cases``)."""
        return {kind: self.directory / f"{run_id}-{kind}.parquet" for kind in self._schemas}

    async def record(self, report: EvalReport) -> None:
        """Write the run's three files (in a worker thread).

        Raises:
            FileExistsError: a file of this ``run_id`` exists already (it is never
                overwritten).
            OSError: the directory or a file cannot be written.
        """
        await asyncio.to_thread(self._write, report)

    def _write(self, report: EvalReport) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        rows = {
            "events": event_rows(report),
            "scores": score_rows(report),
            "cases": case_rows(report),
        }
        paths = self.paths(report.run_id)
        taken = [p for p in paths.values() if p.exists()]
        if taken:
            raise FileExistsError(self._reused(report.run_id, taken[0]))
        for kind, path in paths.items():
            table = self._pa.Table.from_pylist(rows[kind], schema=self._schemas[kind])
            tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
            try:
                self._pq.write_table(table, tmp)
                os.link(tmp, path)  # never replaces: a file written meanwhile is kept
            except FileExistsError:
                raise FileExistsError(self._reused(report.run_id, path)) from None
            finally:
                tmp.unlink(missing_ok=True)

    @staticmethod
    def _reused(run_id: str, path: Path) -> str:
        return (
            f"run id {run_id!r} already has {path}; run ids are unique per directory: pass "
            "another EvalRun(run_id=...) (or leave it out for a random one), or use another "
            "directory"
        )
