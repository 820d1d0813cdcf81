"""A worker or replayer in its own process, for the restart and replay tests.

``python worker_proc.py serve ADDRESS QUEUE SCENARIO LOG [ARG]``: serve until killed.
``python worker_proc.py replay HISTORY_JSON WORKFLOW_ID``: replay a history, exit 0 on success.

Scenarios (each writes one line per activity it runs to LOG: ``model <pid> <n>``, ``tool ...``):
    restart-a   turn 1 calls ``wait``; the ``wait`` tool blocks until the file ARG exists
    restart-b   the same worker after the crash: its MockModel holds only turn 2's script
    mcp         an agent whose tools come from the loopback MCP server at URL ARG
    approve-a   turn 1 calls ``lookup`` (allowed) and ``refund`` (asks: the run pauses)
    approve-b   the same worker after the crash: its MockModel holds only turn 2's script
    approve-remember  turn 1 asks to refund 40 (pause), turn 2 refunds 10, turn 3 answers
"""

from __future__ import annotations

import asyncio
import os
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from helikon import Agent, tool
from helikon.core.model import ModelRequest
from helikon.runtimes.temporal import AgentLoopWorkflow, TemporalAgentWorker, workflow_runner
from helikon.testing import Call, MockModel, Text


class LoggedModel(MockModel):
    """A MockModel that appends ``model <pid> <messages>`` to a log per call."""

    def __init__(self, scripts: list[Any], log: Path) -> None:
        super().__init__(scripts)
        self.log = log

    def invoke(self, request: ModelRequest, cancel: Any) -> Any:
        with self.log.open("a") as f:
            f.write(f"model {os.getpid()} {len(request.messages)}\n")
        return super().invoke(request, cancel)


def build(scenario: str, log: Path, arg: str) -> tuple[list[Agent], Any]:
    if scenario in ("restart-a", "restart-b"):

        @tool
        async def wait(step: str) -> str:
            """Wait for the release file, then answer."""
            with log.open("a") as f:
                f.write(f"tool-start {os.getpid()} {step}\n")
            while not Path(arg).exists():
                await asyncio.sleep(0.05)
            with log.open("a") as f:
                f.write(f"tool-end {os.getpid()} {step}\n")
            return f"released {step}"

        turn1 = [Call("c1", "wait", {"step": "one"})]
        turn2 = [Text("resumed and done")]
        scripts = [turn1, turn2] if scenario == "restart-a" else [turn2]
        return [Agent(name="durable", model=LoggedModel(scripts, log), tools=[wait])], None
    if scenario.startswith("approve"):

        @tool
        async def lookup(order: str) -> str:
            """Look an order up."""
            with log.open("a") as f:
                f.write(f"tool lookup {os.getpid()} {order}\n")
            return f"order {order}: 40 EUR"

        @tool
        async def refund(order: str, amount: int) -> str:
            """Refund part of an order."""
            with log.open("a") as f:
                f.write(f"tool refund {os.getpid()} {order} {amount}\n")
            return f"refunded {amount} on {order}"

        turn1 = [
            Call("c1", "lookup", {"order": "A7"}),
            Call("c2", "refund", {"order": "A7", "amount": 40}),
        ]
        turn2 = [Text("Refund handled.")]
        scripts = [turn1, turn2] if scenario == "approve-a" else [turn2]
        if scenario == "approve-remember":
            scripts = [
                [Call("c2", "refund", {"order": "A7", "amount": 40})],
                [Call("c3", "refund", {"order": "A7", "amount": 10})],
                [Text("Both refunds done.")],
            ]
        model = LoggedModel(scripts, log)
        return [Agent(name="support", model=model, tools=[lookup, refund])], None
    if scenario == "mcp":
        from helikon.mcp import McpServerHandle

        handle = McpServerHandle.streamable_http(arg)
        return [], handle
    raise SystemExit(f"unknown scenario {scenario}")


def mcp_scripts() -> list[Any]:
    return [[Call("c1", "echo", {"text": "hi"})], [Text("echoed")]]


async def serve(address: str, queue: str, scenario: str, log: Path, arg: str) -> None:
    client = await Client.connect(address)
    agents, handle = build(scenario, log, arg)
    if handle is not None:
        await handle.connect()
        agents = [
            Agent(name="mcp-agent", model=LoggedModel(mcp_scripts(), log), tools=handle.tools())
        ]
    worker = TemporalAgentWorker(
        client,
        queue,
        agents,
        posture=_posture(scenario),
        heartbeat_interval=0.5,
        worker_options={"sticky_queue_schedule_to_start_timeout": timedelta(seconds=1)},
    )
    with log.open("a") as f:
        f.write(f"ready {os.getpid()}\n")
    await worker.run()


class _AsksForRefunds:
    async def check(self, ctx: Any, tool: str, args: Any) -> Any:
        from helikon.core.permissions import AskUser, PermissionAllow

        if tool == "refund":
            return AskUser(f"refund of {args.get('amount')} needs approval")
        return PermissionAllow()


def _posture(scenario: str) -> Any:
    from helikon.core.permissions import Permissions
    from helikon.runtimes.temporal import WorkerPosture

    if scenario.startswith("approve"):
        return WorkerPosture(permissions=Permissions(policy=_AsksForRefunds()))
    return None


async def replay(history_path: str, workflow_id: str) -> None:
    history = WorkflowHistory.from_json(workflow_id, Path(history_path).read_text())
    await Replayer(
        workflows=[AgentLoopWorkflow], workflow_runner=workflow_runner()
    ).replay_workflow(history)
    print("replayed", workflow_id)


def main() -> None:
    mode = sys.argv[1]
    if mode == "serve":
        address, queue, scenario, log = sys.argv[2:6]
        arg = sys.argv[6] if len(sys.argv) > 6 else ""
        asyncio.run(serve(address, queue, scenario, Path(log), arg))
    elif mode == "replay":
        asyncio.run(replay(sys.argv[2], sys.argv[3]))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
