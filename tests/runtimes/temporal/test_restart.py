"""A worker killed mid-tool-call: a new worker process resumes from the last completed activity.

Worker A (a child process) runs turn 1 and starts the tool; the test kills it with SIGKILL
while the tool waits. Worker B, a fresh process whose MockModel holds only turn 2's script,
picks the run up: it replays the history (turn 1 is not called again; if it were, B's model
would answer turn 1 with turn 2's script and the tool would never finish the run), retries
the interrupted tool call once and finishes the run.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import uuid
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from helikon.runtimes.temporal import TemporalRunner, TemporalRunnerConfig
from tests.runtimes.temporal._support import WORKER, bounded, subprocess_env, wait_for_line


async def _worker(
    address: str, queue: str, scenario: str, log: Path, release: Path
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        WORKER,
        "serve",
        address,
        queue,
        scenario,
        str(log),
        str(release),
        env=subprocess_env(),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGKILL)
    await bounded(proc.wait(), 10)


async def test_worker_restart_resumes_without_rerunning_completed_activities(
    temporal_address: str, tmp_path: Path
) -> None:
    client = await bounded(Client.connect(temporal_address))
    queue = f"restart-{uuid.uuid4().hex[:8]}"
    log, release = tmp_path / "log.txt", tmp_path / "release"
    runner = TemporalRunner(
        client, TemporalRunnerConfig(queue, model_timeout=30, tool_timeout=30, prepare_timeout=30)
    )
    wid = f"restart-{uuid.uuid4().hex}"
    a = await _worker(temporal_address, queue, "restart-a", log, release)
    b: asyncio.subprocess.Process | None = None
    try:
        await wait_for_line(log, f"ready {a.pid}")
        run = asyncio.ensure_future(runner.run("durable", "go", workflow_id=wid))
        await wait_for_line(log, f"tool-start {a.pid}")
        a.send_signal(signal.SIGKILL)
        await bounded(a.wait(), 10)
        release.touch()
        b = await _worker(temporal_address, queue, "restart-b", log, release)
        result = await bounded(run, 90)
    finally:
        await _stop(a)
        if b is not None:
            await _stop(b)
    assert result.final_output == "resumed and done"
    lines = log.read_text().splitlines()
    assert b is not None
    # turn 1 ran once, on A; turn 2 once, on B, with the tool's result in its request
    assert [x for x in lines if x.startswith("model")] == [f"model {a.pid} 1", f"model {b.pid} 3"]
    # the interrupted call was retried on B (tools must be idempotent) and finished there
    assert [x for x in lines if x.startswith("tool")] == [
        f"tool-start {a.pid} one",
        f"tool-start {b.pid} one",
        f"tool-end {b.pid} one",
    ]
    history = await client.get_workflow_handle(wid).fetch_history()
    scheduled = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    assert scheduled == [
        "helikon.render_instructions",
        "helikon.call_model",
        "helikon.invoke_tool",
        "helikon.call_model",
    ]
    outputs = [e for e in result.events if e.type == "tool_output_item"]
    assert [o.item.content[0].text for o in outputs] == ["released one"]
