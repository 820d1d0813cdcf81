"""The client side: :class:`TemporalRunner` starts the agent-loop workflow and awaits it.

Lifecycle of ``TemporalRunner.run(agent, input, session=...)``: the session's conversation
is loaded (and repaired) here, on the client; the workflow runs the loop on a worker (model
turns and tool calls as activities); its events come back in the workflow result and are
recorded in the session here, before the result is returned. Token deltas are not part of
a durable run's events (a model turn is recorded settled).

The caller's :class:`~helikon.RunContext` does not cross to the worker; pass request data
as a small JSON seed (:attr:`TemporalRunnerConfig.ctx_seed`), which the worker's
``ctx_factory`` turns back into its ``user_ctx``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from temporalio.client import Client, WorkflowFailureError, WorkflowUpdateFailedError

from helikon.core.agent import Agent
from helikon.core.context import RunConfig
from helikon.core.decisions import Approve, Decision, Deny, decision_input
from helikon.core.events import AgentEvent, event_adapter
from helikon.core.result import RunResult, RunResultStreaming
from helikon.core.runnable import AgentInput, check_run_args, input_items
from helikon.errors import AgentOther, ConfigError, ResumeRefused, RunError
from helikon.runtimes.temporal.payloads import (
    WORKFLOW,
    ActivityOptions,
    WorkflowInput,
    WorkflowOutput,
)
from helikon.sessions import Session, SessionRecorder, load_conversation
from helikon.sessions.shield import complete

__all__ = ["TemporalRunner", "TemporalRunnerConfig", "answer_approvals", "pending_approvals"]

log = logging.getLogger("helikon.runtimes")


@dataclass(frozen=True, slots=True)
class TemporalRunnerConfig:
    """Where and how durable runs execute.

    Args:
        task_queue: the task queue a :class:`TemporalAgentWorker` serves.
        model_timeout: start-to-close timeout of one model turn, in seconds.
        tool_timeout: start-to-close timeout of one tool call, in seconds.
        prepare_timeout: timeout of the instructions/tool-list activity, in seconds.
        model_max_attempts: attempts of a model-turn activity (a crash or timeout retries;
            a model error never does: wrap the model in ``RetryingModel`` for that).
        tool_max_attempts: attempts of a tool-call activity unless the worker sets the
            tool's own (tools must be idempotent, or set to 1 on the worker).
        ctx_seed: JSON-serializable request data for the worker's ``ctx_factory``.
        id_prefix: prefix of generated workflow ids.
        execution_timeout: Temporal's workflow execution timeout, in seconds (``None``: none;
            prefer ``RunConfig.timeout``, which ends the run with ``RunFailed(Timeout)``).
        approval_timeout: seconds a run paused for approval (``RunConfig(approval="defer")``)
            waits for :func:`answer_approvals`; then every waiting call is denied.
            ``None``: wait without limit (default 86400, a day).

    Raises:
        ConfigError: an empty task queue or a value out of range.

    Example:
        >>> TemporalRunnerConfig("agents").with_ctx_seed({"tenant": "t-1"}).ctx_seed
        {'tenant': 't-1'}
    """

    task_queue: str
    model_timeout: float = 300.0
    tool_timeout: float = 300.0
    prepare_timeout: float = 60.0
    model_max_attempts: int = 3
    tool_max_attempts: int = 3
    ctx_seed: Any = None
    id_prefix: str = "helikon-run"
    execution_timeout: float | None = None
    approval_timeout: float | None = 86400.0

    def __post_init__(self) -> None:
        if not isinstance(self.task_queue, str) or not self.task_queue:
            raise ConfigError("TemporalRunnerConfig(task_queue=...) must be a non-empty string")
        for name in ("model_timeout", "tool_timeout", "prepare_timeout"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"TemporalRunnerConfig.{name} must be > 0 seconds")
        for name in ("model_max_attempts", "tool_max_attempts"):
            if getattr(self, name) < 1:
                raise ConfigError(f"TemporalRunnerConfig.{name} must be >= 1")
        if self.execution_timeout is not None and self.execution_timeout <= 0:
            raise ConfigError("TemporalRunnerConfig.execution_timeout must be > 0 or None")
        if self.approval_timeout is not None and self.approval_timeout <= 0:
            raise ConfigError("TemporalRunnerConfig.approval_timeout must be > 0 or None")

    def with_ctx_seed(self, seed: Any) -> TemporalRunnerConfig:
        """A copy carrying ``seed`` (sent with every instructions and tool activity)."""
        return replace(self, ctx_seed=seed)

    def activity_options(self) -> ActivityOptions:
        return ActivityOptions(
            prepare_timeout=self.prepare_timeout,
            model_timeout=self.model_timeout,
            tool_timeout=self.tool_timeout,
            model_max_attempts=self.model_max_attempts,
            tool_max_attempts=self.tool_max_attempts,
        )


async def _events(events: list[AgentEvent]) -> AsyncIterator[AgentEvent]:
    for ev in events:
        yield ev


class TemporalRunner:
    """Runs agents as Temporal workflows (the spec's ``TemporalRunner``).

    Args:
        client: a connected ``temporalio.client.Client``.
        config: the task queue, timeouts, attempts and ctx seed.

    Example:
        >>> # runner = TemporalRunner(client, TemporalRunnerConfig("agents"))
        >>> # (await runner.run(agent, "hello")).final_output
    """

    def __init__(self, client: Client, config: TemporalRunnerConfig) -> None:
        if not isinstance(config, TemporalRunnerConfig):
            raise ConfigError(
                f"TemporalRunner(config=...) must be a TemporalRunnerConfig, got "
                f"{type(config).__name__}"
            )
        self.client = client
        self.config = config

    async def run(
        self,
        agent: Agent | str,
        input: AgentInput,
        *,
        session: Session | None = None,
        run_config: RunConfig | None = None,
        workflow_id: str | None = None,
    ) -> RunResult[Any]:
        """Run to completion on a worker; see the module doc for the lifecycle.

        ``agent`` is the registered agent (or just its name; then ``final_output`` stays the
        text, without ``output_type`` validation). ``workflow_id`` makes a run idempotent:
        starting an id that is already running fails instead of running twice.

        Raises:
            SessionError: the session could not be read.
            RunError: the run failed (``.error`` is the cause; the session records it).
            ConfigError: a bad argument.
        """
        check_run_args("TemporalRunner.run", None, run_config)
        if session is not None and not isinstance(session, Session):
            raise ConfigError(
                f"TemporalRunner.run(session=...) must be a Session, got {type(session).__name__}"
            )
        if isinstance(agent, Agent):
            name, rc = agent.name, run_config or agent.run_config
        elif isinstance(agent, str) and agent:
            name, rc = agent, run_config or RunConfig()
        else:
            raise ConfigError("TemporalRunner.run(agent=...) must be an Agent or its name")
        new_items = input_items(input)
        history = await load_conversation(session) if session is not None else []
        cfg = self.config
        inp = WorkflowInput(
            agent=name,
            items=[i.model_dump(mode="json", exclude_none=True) for i in [*history, *new_items]],
            max_turns=rc.max_turns,
            parallel_tool_call_limit=rc.parallel_tool_call_limit,
            timeout=rc.timeout,
            max_agent_depth=rc.max_agent_depth,
            ctx_seed=cfg.ctx_seed,
            options=cfg.activity_options(),
            approval=rc.approval,
            approval_timeout=cfg.approval_timeout,
        )
        wid = workflow_id or f"{cfg.id_prefix}-{uuid.uuid4()}"
        try:
            out = await self.client.execute_workflow(
                WORKFLOW,
                inp,
                id=wid,
                task_queue=cfg.task_queue,
                result_type=WorkflowOutput,
                execution_timeout=_delta(cfg.execution_timeout),
            )
        except WorkflowFailureError as exc:
            cause = exc.cause if exc.cause is not None else exc
            raise RunError(AgentOther(f"workflow {wid} failed: {cause}")) from exc
        events = [event_adapter.validate_python(e) for e in out.events]
        if session is not None:
            await _record(session, name, new_items, events)
        result: RunResult[Any] = await RunResultStreaming(_events(events)).collect()
        return agent.typed_result(result) if isinstance(agent, Agent) else result


async def pending_approvals(client: Client, workflow_id: str) -> list[dict[str, Any]]:
    """The calls the run ``workflow_id`` waits on for approval (``[]`` when it does not
    wait): each ``{"call_id", "tool", "args", "reason", "agent"}``."""
    handle = client.get_workflow_handle(workflow_id)
    pending: list[dict[str, Any]] = await handle.query("helikon.pending")
    return pending


async def answer_approvals(
    client: Client, workflow_id: str, decisions: Mapping[str, Decision]
) -> None:
    """Answer the waiting calls of the run ``workflow_id``; its workflow goes on.

    Raises:
        ResumeRefused: the run does not wait, or the decisions do not answer exactly the
            waiting calls (the workflow's validator refused them; nothing changed).
    """
    handle = client.get_workflow_handle(workflow_id)
    body = {call_id: _decision_json(d) for call_id, d in decisions.items()}
    try:
        await handle.execute_update("helikon.approve", body)
    except WorkflowUpdateFailedError as exc:
        cause = exc.cause if exc.cause is not None else exc
        raise ResumeRefused(f"workflow {workflow_id} refused the decisions: {cause}") from exc


def _decision_json(d: Decision) -> dict[str, Any]:
    body = decision_input("", d)
    body.pop("call_id")
    if isinstance(d, Approve | Deny) and d.remember:
        body["remember"] = True
    return body


def _delta(seconds: float | None) -> timedelta | None:
    return None if seconds is None else timedelta(seconds=seconds)


async def _record(
    session: Session, agent: str, new_items: list[Any], events: list[AgentEvent]
) -> None:
    recorder = SessionRecorder(agent)
    recorder.record_input(new_items)
    for ev in events:
        recorder.observe(ev)
    drained = recorder.drain()
    if not drained:
        return
    try:
        await complete(session.append(drained))
    except Exception as exc:  # best effort: the run's outcome stands
        log.warning("could not record the run in the session: %s", exc)
