"""The Parquet sink never overwrites a file: a reused ``run_id`` is refused and the earlier
run's files stay as they were."""

from __future__ import annotations

from pathlib import Path

import pytest

pq = pytest.importorskip("pyarrow.parquet")

from helikon import Agent  # noqa: E402
from helikon.evals import (  # noqa: E402
    EvalCase,
    EvalRun,
    ExactMatch,
    ParquetTraceSink,
    TraceSinkError,
)
from helikon.testing import MockModel, Text  # noqa: E402


def _run(sink: ParquetTraceSink, answer: str, run_id: str = "nightly") -> EvalRun:
    return EvalRun(
        dataset=[EvalCase(id="c", input="hi", expected="first")],
        evaluators=[ExactMatch()],
        agent_factory=lambda case: Agent(name="a", model=MockModel([[Text(answer)]])),
        sinks=[sink],
        run_id=run_id,
    )


def _answers(sink: ParquetTraceSink, run_id: str = "nightly") -> list[str]:
    rows = pq.read_table(sink.paths(run_id)["cases"]).to_pylist()
    return [r["final_response"] for r in rows]


async def test_a_reused_run_id_is_refused_and_the_old_files_stay(tmp_path: Path) -> None:
    sink = ParquetTraceSink(tmp_path)
    await _run(sink, "first").run()
    before = {k: p.read_bytes() for k, p in sink.paths("nightly").items()}
    with pytest.raises(TraceSinkError) as info:
        await _run(sink, "second").run()
    assert info.value.report.cases[0].outcome is not None
    assert info.value.report.cases[0].outcome.final_response == "second"
    assert f"run id 'nightly' already has {tmp_path}" in str(info.value)
    assert {k: p.read_bytes() for k, p in sink.paths("nightly").items()} == before
    assert _answers(sink) == ["first"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "nightly-cases.parquet",
        "nightly-events.parquet",
        "nightly-scores.parquet",
    ]


async def test_one_leftover_file_of_the_run_id_is_enough_to_refuse(tmp_path: Path) -> None:
    sink = ParquetTraceSink(tmp_path)
    sink.paths("nightly")["scores"].write_bytes(b"someone else's file")
    with pytest.raises(TraceSinkError, match="already has"):
        await _run(sink, "first").run()
    assert sink.paths("nightly")["scores"].read_bytes() == b"someone else's file"
    assert not sink.paths("nightly")["events"].exists()
    assert not sink.paths("nightly")["cases"].exists()


async def test_distinct_run_ids_share_a_directory(tmp_path: Path) -> None:
    sink = ParquetTraceSink(tmp_path)
    await _run(sink, "first", "r1").run()
    await _run(sink, "second", "r2").run()
    assert (_answers(sink, "r1"), _answers(sink, "r2")) == (["first"], ["second"])
