"""The worker process side: register agents, serve the workflow and its activities.

v0 constraints, refused at registration (fail fast): hooks, guardrails and output
validators (arbitrary user code cannot be made deterministic inside a workflow) and handoffs
(the durable driver does not follow them). Agent-as-tool runs are allowed but run
non-durably inside their tool activity: a retry after a crash re-runs the whole nested run.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from helikon.core.agent import Agent
from helikon.errors import ConfigError
from helikon.runtimes.temporal.activities import AgentActivities
from helikon.runtimes.temporal.posture import CtxFactory, WorkerPosture
from helikon.runtimes.temporal.workflow import AgentLoopWorkflow

__all__ = ["TemporalAgentWorker", "check_durable", "workflow_runner"]


def workflow_runner() -> SandboxedWorkflowRunner:
    """The sandbox the workflow runs in: helikon (and its native module) passed through.

    Use it with ``temporalio.worker.Replayer(workflows=[AgentLoopWorkflow],
    workflow_runner=workflow_runner())`` to replay a recorded history.
    """
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules("helikon", "pydantic")
    )


def check_durable(agent: Agent) -> None:
    """Refuse what the durable driver cannot run (the v0 constraint set).

    Raises:
        ConfigError: the agent has hooks, input or output guardrails, output validators, or
            handoffs.
    """
    if not isinstance(agent, Agent):
        raise ConfigError(f"TemporalAgentWorker(agents=...): {agent!r} is not an Agent")
    refused = [
        what
        for what, present in (
            ("hooks", agent.hooks),
            ("input_guardrails", agent.input_guardrails),
            ("output_guardrails", agent.output_guardrails),
            ("output_validators", agent.output_validators),
            ("handoffs", agent.handoffs),
        )
        if present
    ]
    if refused:
        raise ConfigError(
            f"agent {agent.name!r} cannot run durably: it has {', '.join(refused)}; the Temporal "
            "runner does not support hooks, guardrails, output validators or handoffs in v0 "
            "(arbitrary async code cannot be replayed deterministically). Run it with "
            "helikon.Runner instead."
        )


class TemporalAgentWorker:
    """Serves the agent-loop workflow and its activities for ``agents`` on ``task_queue``.

    Args:
        client: a connected ``temporalio.client.Client``.
        task_queue: the task queue the runner starts workflows on.
        agents: the agents this worker serves, looked up by name.
        posture: permissions and redaction for every tool call (authoritative: the caller's
            context never reaches the worker).
        ctx_factory: ``fn(seed) -> user_ctx`` rebuilding request data from the client's seed
            (:attr:`TemporalRunnerConfig.ctx_seed`); a seed it rejects fails the run at once.
        tool_attempts: maximum attempts per tool name (default: the runner's
            ``tool_max_attempts``); set ``1`` for tools that are not idempotent.
        heartbeat_interval: seconds between heartbeats of a running model or tool call; the
            heartbeat timeout is three intervals. Off by default: a blocking tool that starves
            the event loop would miss heartbeats (offload with ``asyncio.to_thread``).
        worker_options: extra keyword arguments for ``temporalio.worker.Worker``.

    Raises:
        ConfigError: an agent breaks the v0 constraints (:func:`check_durable`), two agents
            share a name, or an option is out of range.

    Example:
        >>> # async with TemporalAgentWorker(client, "agents", [agent]).running():
        >>> #     result = await TemporalRunner(client, TemporalRunnerConfig("agents")).run(
        >>> #         agent, "hello")
    """

    def __init__(
        self,
        client: Client,
        task_queue: str,
        agents: Sequence[Agent],
        *,
        posture: WorkerPosture | None = None,
        ctx_factory: CtxFactory | None = None,
        tool_attempts: Mapping[str, int] | None = None,
        heartbeat_interval: float | None = None,
        worker_options: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(task_queue, str) or not task_queue:
            raise ConfigError("TemporalAgentWorker(task_queue=...) must be a non-empty string")
        by_name: dict[str, Agent] = {}
        for agent in agents:
            check_durable(agent)
            if agent.name in by_name:
                raise ConfigError(
                    f"TemporalAgentWorker(agents=...): two agents named {agent.name!r}"
                )
            by_name[agent.name] = agent
        if not by_name:
            raise ConfigError("TemporalAgentWorker(agents=...) needs at least one agent")
        if posture is not None and not isinstance(posture, WorkerPosture):
            raise ConfigError(
                f"TemporalAgentWorker(posture=...) must be a WorkerPosture, got "
                f"{type(posture).__name__}"
            )
        if ctx_factory is not None and not callable(ctx_factory):
            raise ConfigError("TemporalAgentWorker(ctx_factory=...) must be a function fn(seed)")
        attempts = dict(tool_attempts or {})
        for name, n in attempts.items():
            if not isinstance(n, int) or n < 1:
                raise ConfigError(
                    f"TemporalAgentWorker(tool_attempts=...): {name!r} needs an int >= 1"
                )
        if heartbeat_interval is not None and heartbeat_interval <= 0:
            raise ConfigError("TemporalAgentWorker(heartbeat_interval=...) must be > 0 seconds")
        self.task_queue = task_queue
        self.agents = by_name
        self._activities = AgentActivities(
            by_name, posture or WorkerPosture(), ctx_factory, attempts, heartbeat_interval
        )
        self.worker = Worker(
            client,
            task_queue=task_queue,
            workflows=[AgentLoopWorkflow],
            activities=self._activities.activities(),
            workflow_runner=workflow_runner(),
            **dict(worker_options or {}),
        )

    async def run(self) -> None:
        """Serve until :meth:`shutdown` (or until cancelled)."""
        await self.worker.run()

    async def shutdown(self) -> None:
        """Stop polling and wait for running activities to finish."""
        await self.worker.shutdown()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[TemporalAgentWorker]:
        """Serve for the duration of an ``async with`` block."""
        async with self.worker:
            yield self
