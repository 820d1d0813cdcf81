"""The durable runner pauses for approval as a workflow waiting on an update, and resumes on
it; a worker killed while the run waits loses nothing (the Temporal dev server)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from helikon import Approve, Deny, RunConfig
from helikon.errors import ResumeRefused
from helikon.runtimes.temporal import TemporalRunner, TemporalRunnerConfig
from helikon.runtimes.temporal.runner import answer_approvals, pending_approvals
from tests.runtimes.temporal._support import bounded, wait_for_line
from tests.runtimes.temporal.test_restart import _stop, _worker

DEFER = RunConfig(approval="defer")


async def _waiting(client: Client, wid: str) -> list[dict[str, object]]:
    for _ in range(400):
        try:
            pending = await pending_approvals(client, wid)
        except Exception:  # the workflow may not have started yet
            pending = []
        if pending:
            return pending
        await asyncio.sleep(0.05)
    raise AssertionError("the workflow never waited for approval")


async def test_a_paused_workflow_survives_its_worker_and_resumes_on_the_update(
    temporal_address: str, tmp_path: Path
) -> None:
    client = await bounded(Client.connect(temporal_address))
    queue = f"approve-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "log.txt"
    cfg = TemporalRunnerConfig(queue, model_timeout=30, tool_timeout=30, prepare_timeout=30)
    runner = TemporalRunner(client, cfg)
    wid = f"approve-{uuid.uuid4().hex}"
    a = await _worker(temporal_address, queue, "approve-a", log, tmp_path / "unused")
    b = None
    try:
        await wait_for_line(log, f"ready {a.pid}")
        run = asyncio.ensure_future(
            runner.run("support", "refund A7", workflow_id=wid, run_config=DEFER)
        )
        pending = await bounded(_waiting(client, wid), 30)
        assert pending == [
            {
                "call_id": "c2",
                "tool": "refund",
                "args": {"order": "A7", "amount": 40},
                "reason": "refund of 40 needs approval",
                "agent": "support",
            }
        ]
        # the worker dies while the run waits; a new one (whose model holds only turn 2)
        # picks it up after the answer, without calling turn 1 or the lookup again
        await _stop(a)
        b = await _worker(temporal_address, queue, "approve-b", log, tmp_path / "unused")
        await wait_for_line(log, f"ready {b.pid}")
        with pytest.raises(ResumeRefused, match="no decision for waiting call"):
            await answer_approvals(client, wid, {})
        await bounded(answer_approvals(client, wid, {"c2": Approve()}), 30)
        with pytest.raises(ResumeRefused, match="does not wait"):
            await answer_approvals(client, wid, {"c2": Approve()})
        result = await bounded(run, 60)
    finally:
        await _stop(a)
        if b is not None:
            await _stop(b)
    assert result.final_output == "Refund handled."
    lines = log.read_text().splitlines()
    assert [x for x in lines if x.startswith("tool")] == [
        f"tool lookup {a.pid} A7",
        f"tool refund {b.pid} A7 40",
    ]
    assert [x.split()[1] for x in lines if x.startswith("model")] == [str(a.pid), str(b.pid)]
    kinds = [e.type for e in result.events]
    assert "approval_requested" in kinds and kinds[-1] == "run_completed"


async def test_an_unanswered_wait_times_out_as_a_denial(
    temporal_address: str, tmp_path: Path
) -> None:
    client = await bounded(Client.connect(temporal_address))
    queue = f"approve-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "log.txt"
    cfg = TemporalRunnerConfig(
        queue, model_timeout=30, tool_timeout=30, prepare_timeout=30, approval_timeout=1
    )
    a = await _worker(temporal_address, queue, "approve-a", log, tmp_path / "unused")
    try:
        await wait_for_line(log, f"ready {a.pid}")
        result = await bounded(
            TemporalRunner(client, cfg).run("support", "refund A7", run_config=DEFER), 60
        )
    finally:
        await _stop(a)
    outputs = [e for e in result.events if e.type == "tool_output_item"]
    assert outputs[-1].item.content[0].text == (  # type: ignore[union-attr]
        "approval denied: approval timed out: nobody answered in time"
    )
    assert [x for x in log.read_text().splitlines() if x.startswith("tool refund")] == []
    assert Deny  # a denial is the only outcome of a wait nobody answered


async def test_a_remembered_approval_answers_the_tools_later_asks_in_the_workflow(
    temporal_address: str, tmp_path: Path
) -> None:
    client = await bounded(Client.connect(temporal_address))
    queue = f"approve-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "log.txt"
    cfg = TemporalRunnerConfig(queue, model_timeout=30, tool_timeout=30, prepare_timeout=30)
    wid = f"approve-{uuid.uuid4().hex}"
    a = await _worker(temporal_address, queue, "approve-remember", log, tmp_path / "unused")
    try:
        await wait_for_line(log, f"ready {a.pid}")
        run = asyncio.ensure_future(
            TemporalRunner(client, cfg).run(
                "support", "refund A7", workflow_id=wid, run_config=DEFER
            )
        )
        pending = await bounded(_waiting(client, wid), 30)
        assert [p["call_id"] for p in pending] == ["c2"]
        await bounded(answer_approvals(client, wid, {"c2": Approve(remember=True)}), 30)
        # turn 2's refund asks again: the remembered answer approves it, no second pause
        result = await bounded(run, 60)
    finally:
        await _stop(a)
    assert result.final_output == "Both refunds done."
    lines = log.read_text().splitlines()
    assert [x for x in lines if x.startswith("tool")] == [
        f"tool refund {a.pid} A7 40",
        f"tool refund {a.pid} A7 10",
    ]
    asked = [e for e in result.events if e.type == "approval_requested"]
    assert len(asked) == 1  # only the first refund waited for a person
    outputs = [e.item.content[0].text for e in result.events if e.type == "tool_output_item"]
    assert outputs == ["refunded 40 on A7", "refunded 10 on A7"]  # type: ignore[union-attr]
