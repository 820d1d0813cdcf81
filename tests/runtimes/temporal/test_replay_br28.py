"""Field case BR-28: replay determinism across workers (warm and fresh processes).

Process A (this one) serves an agent whose tools come from a loopback MCP server and runs
W1; W1's history replays in a fresh process B that has no agent, no MCP connection and no
cache at all. Then B serves the agent and runs W2, and W2's history replays here in A (warm:
connected, tools listed). Both replays must pass: the workflow always records what it needs
(the tool list included) in its first activity and reads nothing from the worker process.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import uuid
from pathlib import Path

from temporalio.client import Client
from temporalio.worker import Replayer

from helikon import Agent
from helikon.mcp import McpServerHandle
from helikon.runtimes.temporal import (
    AgentLoopWorkflow,
    TemporalAgentWorker,
    TemporalRunner,
    TemporalRunnerConfig,
    workflow_runner,
)
from helikon.testing import MockModel
from tests.runtimes.temporal._support import WORKER, bounded, subprocess_env, wait_for_line
from tests.runtimes.temporal.mcp_stub import serve_echo
from tests.runtimes.temporal.worker_proc import mcp_scripts


async def _replay_in_fresh_process(history_json: str, wid: str, tmp: Path) -> None:
    path = tmp / f"{wid}.json"
    path.write_text(history_json)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        WORKER,
        "replay",
        str(path),
        wid,
        env=subprocess_env(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await bounded(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()[-3000:]
    assert out.decode().strip() == f"replayed {wid}"


def _config(queue: str) -> TemporalRunnerConfig:
    return TemporalRunnerConfig(queue, model_timeout=20, tool_timeout=20, prepare_timeout=20)


async def test_br28_histories_replay_in_fresh_and_warm_processes(
    temporal_address: str, tmp_path: Path
) -> None:
    client = await bounded(Client.connect(temporal_address))
    replayer = Replayer(workflows=[AgentLoopWorkflow], workflow_runner=workflow_runner())
    with serve_echo() as (url, methods):
        handle = McpServerHandle.streamable_http(url)
        await bounded(handle.connect())
        try:
            # --- W1 on a worker in process A
            agent = Agent(name="mcp-agent", model=MockModel(mcp_scripts()), tools=handle.tools())
            queue_a = f"br28-a-{uuid.uuid4().hex[:8]}"
            w1 = f"br28-w1-{uuid.uuid4().hex}"
            async with TemporalAgentWorker(client, queue_a, [agent]).running():
                r1 = await bounded(
                    TemporalRunner(client, _config(queue_a)).run(agent, "hi", workflow_id=w1)
                )
            assert r1.final_output == "echoed"
            echoed = [e.item.content[0].text for e in r1.events if e.type == "tool_output_item"]
            assert echoed == ["echo: hi"]
            h1 = await client.get_workflow_handle(w1).fetch_history()
            # replay W1 in a fresh process B (no agent, no MCP connection, nothing cached)
            await _replay_in_fresh_process(h1.to_json(), w1, tmp_path)

            # --- W2 on a worker in process B
            queue_b = f"br28-b-{uuid.uuid4().hex[:8]}"
            log = tmp_path / "b.log"
            b = await asyncio.create_subprocess_exec(
                sys.executable,
                WORKER,
                "serve",
                temporal_address,
                queue_b,
                "mcp",
                str(log),
                url,
                env=subprocess_env(),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            try:
                await wait_for_line(log, f"ready {b.pid}")
                w2 = f"br28-w2-{uuid.uuid4().hex}"
                r2 = await bounded(
                    TemporalRunner(client, _config(queue_b)).run("mcp-agent", "hi", workflow_id=w2)
                )
            finally:
                if b.returncode is None:
                    b.send_signal(signal.SIGTERM)
                await bounded(b.wait(), 15)
            assert r2.final_output == "echoed"
            h2 = await client.get_workflow_handle(w2).fetch_history()
            # replay W2 here in A: warm (connected, tools listed), and W1 too
            await bounded(replayer.replay_workflow(h2))
            await bounded(replayer.replay_workflow(h1))
        finally:
            await handle.close()
    # both workers listed the tools at connect; the workflows never did
    assert methods.count("tools/list") == 2
    assert methods.count("tools/call") == 2
