"""The activities a worker serves: render instructions, call the model, invoke one tool.

Each activity looks the agent up by its registered name, so only names and JSON cross
Temporal. A model error is a non-retryable activity failure (wrap the model in
:class:`~helikon.RetryingModel` for retries); a tool error is data (an error result), never
an activity failure. Tool output is redacted before it is returned, so what Temporal records
is already redacted. With a heartbeat interval set, a running call heartbeats so a crashed
worker's attempt is reclaimed after the heartbeat timeout instead of the full timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from helikon.core.agent import Agent
from helikon.core.cancel import CancellationToken
from helikon.core.items import ToolCall, items_adapter
from helikon.core.loop_core import request_settings, validate_output
from helikon.core.model import ModelRequest, ToolDef
from helikon.core.pause import Approvals
from helikon.core.tool_exec import ToolCallRunner
from helikon.core.turn import TurnAccumulator
from helikon.errors import ModelError
from helikon.runtimes.temporal.durable import dump_event
from helikon.runtimes.temporal.payloads import (
    CALL_MODEL,
    INVOKE_TOOL,
    RENDER_INSTRUCTIONS,
    ModelCall,
    ModelReply,
    Prepare,
    Prepared,
    ToolInvocation,
    ToolReply,
)
from helikon.runtimes.temporal.posture import CtxFactory, WorkerPosture
from helikon.tracing import RunSpans, chat_span

__all__ = ["AgentActivities"]

#: ``ApplicationError.type`` of the failures the workflow maps to a run's error
MODEL_ERROR = "helikon.ModelError"
UNKNOWN_AGENT = "helikon.UnknownAgent"
BAD_SEED = "helikon.BadCtxSeed"


class AgentActivities:
    """The activity implementations for a set of agents (one worker's registration).

    Args:
        agents: the agents by name.
        posture: the worker's permission and redaction settings.
        ctx_factory: ``fn(seed) -> user_ctx`` for the client's seed (``None``: the seed is
            the ``user_ctx`` as it is).
        tool_attempts: per-tool maximum attempts (e.g. ``{"charge_card": 1}``).
        heartbeat_interval: seconds between heartbeats of a running call (``None``: off).
    """

    def __init__(
        self,
        agents: dict[str, Agent],
        posture: WorkerPosture,
        ctx_factory: CtxFactory | None,
        tool_attempts: dict[str, int],
        heartbeat_interval: float | None,
    ) -> None:
        self.agents = agents
        self.posture = posture
        self.ctx_factory = ctx_factory
        self.tool_attempts = tool_attempts
        self.heartbeat_interval = heartbeat_interval

    def _agent(self, name: str) -> Agent:
        agent = self.agents.get(name)
        if agent is None:
            raise ApplicationError(
                f"no agent named {name!r} is registered with this worker "
                f"(registered: {', '.join(sorted(self.agents)) or 'none'})",
                type=UNKNOWN_AGENT,
                non_retryable=True,
            )
        return agent

    def _user_ctx(self, seed: Any) -> Any:
        if self.ctx_factory is None:
            return seed
        try:
            return self.ctx_factory(seed)
        except Exception as exc:  # fail fast: a seed the factory rejects ends the run
            raise ApplicationError(
                f"the worker's ctx_factory rejected the run's ctx seed: "
                f"{type(exc).__name__}: {exc}",
                type=BAD_SEED,
                non_retryable=True,
            ) from None

    def activities(self) -> list[Any]:
        """The bound activity functions to register with a Temporal worker."""
        return [self.render_instructions, self.call_model, self.invoke_tool]

    @activity.defn(name=RENDER_INSTRUCTIONS)
    async def render_instructions(self, req: Prepare) -> Prepared:
        """Record what the workflow needs about the agent (tools, instructions, schema)."""
        agent = self._agent(req.agent)
        ctx = self.posture.context(self._user_ctx(req.ctx_seed))
        ot = agent.output_type
        hb = self.heartbeat_interval
        return Prepared(
            agent=agent.name,
            instructions=await agent.render_instructions(ctx),
            tools=[
                {"name": t.name, "description": t.description, "parameters": t.parameters}
                for t in agent.tools
            ],
            output_type=None if ot is None else {"name": ot.name, "schema": ot.schema},
            retries=agent.retries,
            tool_retries=dict(agent.retry_rules.tool_retries),
            tool_attempts={
                t.name: self.tool_attempts[t.name]
                for t in agent.tools
                if t.name in self.tool_attempts
            },
            heartbeat_timeout=None if hb is None else hb * 3,
        )

    @activity.defn(name=CALL_MODEL)
    async def call_model(self, req: ModelCall) -> ModelReply:
        """One model turn, settled (streamed deltas are aggregated, not recorded)."""
        agent = self._agent(req.agent)
        settings = request_settings(
            agent.model_settings,
            agent.output_type,
            response_format=req.response_format,
            clear_tool_choice=req.clear_tool_choice,
            has_tools=bool(req.tools),
        )
        request = ModelRequest(
            messages=list(items_adapter.validate_python(req.messages)),
            tools=[ToolDef(t["name"], t["description"], t["parameters"]) for t in req.tools],
            settings=settings,
        )
        token = CancellationToken()
        acc = TurnAccumulator()
        span = chat_span(agent.model.provider, agent.model.model)
        error: str | None = None
        async with self._heartbeats(token):
            stream = agent.model.invoke(request, token)
            try:
                async for ev in stream:
                    acc.add(ev)
            except ModelError as exc:
                error = type(exc).__name__
                raise ApplicationError(
                    f"model error ({exc.kind}): {exc}",
                    {"kind": exc.kind, "usage": acc.usage.model_dump()},
                    type=MODEL_ERROR,
                    non_retryable=True,
                ) from None
            finally:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:
                    await aclose()
                if span is not None:
                    RunSpans.end_chat_turn(span, acc, error)
        items = acc.items(agent.name)
        validation = validate_output(agent.output_type, items) if req.validate else None
        return ModelReply(
            items=[i.model_dump(mode="json", exclude_none=True) for i in items],
            usage=acc.usage.model_dump(),
            finish_reason=acc.finish.value,
            validation=validation,
            model=acc.model,
            response_id=acc.response_id,
        )

    @activity.defn(name=INVOKE_TOOL)
    async def invoke_tool(self, req: ToolInvocation) -> ToolReply:
        """One tool call through the whole pipeline under the worker's posture."""
        agent = self._agent(req.agent)
        token = CancellationToken()
        ctx = self.posture.context(self._user_ctx(req.ctx_seed)).with_cancel(token)
        runner = ToolCallRunner(
            ctx, {t.name: t for t in agent.tools}, agent.name, [], req.max_agent_depth, None
        )
        call = ToolCall.model_validate(req.call)
        approvals = Approvals(
            defer=req.defer,
            remembered={call.name: req.remembered} if req.remembered else {},
            granted={call.call_id} if req.granted else set(),
        )
        if approvals.active:
            runner.answer = approvals.answer
        async with self._heartbeats(token):
            outcome = await runner.run(call)
        return ToolReply(
            item=outcome.item.model_dump(mode="json", exclude_none=True),
            events=[dump_event(e) for e in outcome.events],
            invalid_args=outcome.invalid_args,
            deferred=outcome.deferred,
            retry=outcome.retry,
        )

    @contextlib.asynccontextmanager
    async def _heartbeats(self, token: CancellationToken) -> AsyncIterator[None]:
        """Heartbeat while the body runs (when configured); an activity cancellation
        cancels ``token``, so the model or tool sees one signal."""
        interval = self.heartbeat_interval
        if interval is None:
            yield
            return

        async def beat() -> None:
            while True:
                activity.heartbeat()
                await asyncio.sleep(interval)

        task = asyncio.ensure_future(beat())
        try:
            yield
        except asyncio.CancelledError:
            token.cancel()
            raise
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
