"""The loop driver: runs the side effects between pure transitions.

The state machine itself is Rust (``helikon._native.transition``): given the state and the
latest input it returns the next state, the events to emit and the next action. This module
does what the machine asks — call the model, run tools, hand off — and feeds the outcome
back. Python owns every message body: per turn only the turn's own items cross the native
boundary, never the whole conversation, so a run is O(turns), not O(turns²).

Before every model call the conversation is checked and, where providers would reject it,
repaired in place (:mod:`helikon.core.repair`), each fix yielded as ``ConversationRepaired``.

Around the machine it runs the governance seams: lifecycle hooks, input guardrails
(concurrently with the first model call; no tool runs before they pass), output guardrails
(before ``RunCompleted``), the per-call pipeline in :mod:`helikon.core.tool_exec`, and
OpenTelemetry spans (:mod:`helikon.tracing`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import replace
from typing import Any

from helikon.core._unicode import scrub_item
from helikon.core.context import RunConfig, RunContext
from helikon.core.driven import DrivenAgent
from helikon.core.events import (
    AgentEvent,
    AgentUpdated,
    GuardrailTriggered,
    HandoffItem,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunStarted,
    ToolOutputItem,
)
from helikon.core.guardrails import GuardrailInput, Tripwire, output_input, run_guardrails
from helikon.core.handoff_run import run_handoff_options
from helikon.core.hooks import (
    HookError,
    OnHandoff,
    OnRunComplete,
    OnRunFailed,
    OnRunStart,
    OnSubagentStop,
    OnTurnStart,
    fire,
    fire_quietly,
)
from helikon.core.items import (
    Item,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
    text_of,
)
from helikon.core.live_compaction import LiveCompaction
from helikon.core.live_tools import LiveTools
from helikon.core.loop_core import core_for
from helikon.core.loop_native import call_of, run_started
from helikon.core.model_turn import ModelTurns
from helikon.core.pause import Approvals, ItemTrail, ResumePlan, pause_state
from helikon.core.resume_config import config_fields
from helikon.core.retries import judge_output
from helikon.core.run_state import RunState
from helikon.core.runnable import AgentInput, input_items
from helikon.core.tool import Tool
from helikon.core.tool_exec import CallOutcome, ToolCallRunner
from helikon.core.tool_round import ToolRound, calling_agent, calling_run_context
from helikon.core.turn import TurnAccumulator
from helikon.core.usage import Usage
from helikon.core.usage_limits import UsageMeter, current_meter
from helikon.errors import (
    AgentError,
    AgentOther,
    Cancelled,
    InputGuardrailTripwire,
    MaxAgentDepthExceeded,
    MaxHandoffsExceeded,
    ModelError,
    OutputGuardrailTripwire,
    RunTimeout,
    UsageLimitExceeded,
)
from helikon.tracing import RunSpans

__all__ = ["calling_agent", "calling_run_context", "resume_agent", "run_agent"]


class _Stop(Exception):
    """Internal: the run ends with this agent error (after ``events``)."""

    def __init__(self, error: AgentError, events: tuple[AgentEvent, ...] = ()) -> None:
        self.error = error
        self.events = events


class _Pause(Exception):
    """Internal: the run pauses; ``state`` is the asking agent's (root fields unset)."""

    def __init__(self, state: RunState) -> None:
        self.state = state


class _Run:
    """One agent's loop within a run (a handoff starts a new ``_Run`` for the target)."""

    def __init__(
        self,
        agent: DrivenAgent,
        ctx: RunContext[Any],
        config: RunConfig,
        token: Any,
        spans: RunSpans | None,
        input_guard: asyncio.Task[Tripwire | None] | None = None,
        approvals: Approvals | None = None,
        path: list[str] | None = None,
        meter: UsageMeter | None = None,
        handoffs_done: int = 0,
    ) -> None:
        self.agent = agent
        #: handoffs made on the way to this agent (``RunConfig.max_handoffs`` bounds them)
        self.handoffs_done = handoffs_done
        #: the budget this run spends from (shared with handoff targets)
        self.meter = meter if meter is not None else UsageMeter(config.usage_limits)
        #: how asks are answered before the approval handler (shared with handoff targets)
        self.approvals = (
            approvals if approvals is not None else Approvals(config.approval == "defer")
        )
        shared = ctx.remembered_answers
        if shared is not None and self.approvals.remembered is not shared:
            # a pattern's step: answers remembered here hold for the rest of the pattern
            shared.update(self.approvals.remembered)
            self.approvals.remembered = shared
        #: agent names from the root to this one
        self.path = path if path is not None else [agent.name]
        self.ctx = ctx
        self.config = config
        self.token = token
        self.spans = spans
        self.input_guard = input_guard
        self.tools: dict[str, Tool] = {t.name: t for t in agent.tools}
        self.handoffs = {h.tool_name: h for h in agent.handoff_specs}
        self.core = core_for(agent, config.max_turns, self.handoffs)
        self._usage: Usage | None = None
        self.hooks = [*agent.hooks, *ctx.hooks]
        self.injected: list[str] = []
        self._caller: ToolCallRunner | None = None
        self.turns = ModelTurns(agent, self.tools, self.handoffs, spans, token)
        self.live = LiveTools(agent.tools)
        self.compacting = LiveCompaction(ctx.compaction, token) if ctx.compaction else None
        self._pending: Any = None
        #: calls deferred by the last tool step: (call, reason, the paused sub-run's state)
        self.waiting: list[tuple[ToolCall, str, RunState | None]] = []
        self.final_text = ""  # the run's answer once run_completed is reached (via handoffs too)

    @property
    def usage(self) -> Usage:
        """The run's usage: the machine's total, unless a failure path set it."""
        if self._usage is not None:
            return self._usage
        return self.core.usage

    @usage.setter
    def usage(self, value: Usage) -> None:
        self._usage = value

    @property
    def caller(self) -> ToolCallRunner:
        """The tool-call pipeline (built at the first tool call)."""
        if self._caller is None:
            self._caller = ToolCallRunner(
                replace(self.ctx, cancel=self.token),
                self.tools,
                self.agent.name,
                list(self.agent.hooks),
                self.config.max_agent_depth,
                self.spans,
            )
            self._caller.answer = self.approvals.answer
        return self._caller

    # ----------------------------------------------------------------- tools

    async def _follow_tool_sources(self) -> None:
        """Take the current tools of the agent's tool sources (an MCP server that added or
        removed tools): the next model turn offers them and calls reach them."""
        if self.live and await self.live.refresh(self.tools):
            self.turns.retool()

    async def _run_tools(self, calls: list[ToolCall]) -> list[CallOutcome]:
        await self._await_input_guard()
        await self._follow_tool_sources()
        outcomes = await ToolRound(
            self.caller, self.token, self.approvals, self.meter, self.agent
        ).run(calls, self.config.parallel_tool_call_limit)
        if outcomes is None:
            raise _Stop(self._cancel_error())
        side = self.meter.take_side()
        if side is not None:  # model calls made inside the tools (an MCP server's sampling)
            self.core.side_usage = self.core.side_usage + side
        error = self.core.invalid_args_error(calls, outcomes)
        if error is not None:
            raise _Stop(error)
        return outcomes

    # ----------------------------------------------------------------- guardrails

    async def _await_input_guard(self) -> None:
        task = self.input_guard
        if task is None:
            return
        self.input_guard = None
        trip = await task
        if trip is not None:
            raise _Stop(
                InputGuardrailTripwire(trip.kind.value, trip.info),
                (GuardrailTriggered(kind=trip.kind.value, info=trip.info),),
            )

    async def _check_output(self) -> None:
        """This agent's output guardrails on :attr:`final_text` (its own answer, or the
        answer of the agent it handed off to: an answer leaves through every agent on the
        handoff chain, so each one's output guardrails see it, the answering agent's first)."""
        guards = self.agent.output_guardrails
        if not guards:
            return
        trip = await run_guardrails(guards, self.ctx, output_input(self.agent, self.final_text))
        if trip is not None:
            raise _Stop(
                OutputGuardrailTripwire(trip.kind.value, trip.info),
                (GuardrailTriggered(kind=trip.kind.value, info=trip.info),),
            )

    def _cancel_error(self) -> AgentError:
        if self.token.reason == "timeout" and self.config.timeout is not None:
            return RunTimeout(self.config.timeout)
        if self.token.reason == "guardrail":
            return AgentOther("input guardrail tripped")
        return Cancelled()

    # ----------------------------------------------------------------- the loop

    async def drive(self, conversation: list[Item], step: Any = None) -> AsyncIterator[AgentEvent]:
        """Drive this agent's loop over ``conversation`` (mutated in place), from the start
        or from ``step`` (a resume's first step).

        Raises:
            _Pause: calls wait for a person (``RunConfig(approval="defer")``).
        """
        core = self.core
        if step is None:
            step = core.start()
        ev: AgentEvent | None = None
        while True:
            kind, events, payload, appends = step
            for ref in events:
                ev = core.event(ref)
                if ev.type == "turn_started":
                    if self.spans is not None:
                        self.spans.turn(ev.turn)
                    if self.hooks:
                        turn = await fire(self.hooks, self.ctx, OnTurnStart(ev.turn))
                        self.injected.extend(turn.inject)
                elif ev.type == "run_completed":
                    await self._await_input_guard()
                    self.final_text = core.output_text or ""
                    await self._check_output()
                    if self.hooks:
                        await fire(self.hooks, self.ctx, OnRunComplete(self.agent.name))
                yield ev
            ev = None  # nothing of a finished step stays alive while tools run
            del events
            core.appended(conversation, appends)
            if kind == "Terminate":
                return
            if self.token.cancelled:
                await self._await_input_guard()
                raise _Stop(self._cancel_error())
            if kind == "CallModel":
                compacting = self.compacting and self.compacting.start(core, conversation)
                if compacting:  # the machine enters Compacting first; its events come next
                    step = compacting
                    continue
                repairs, refusal = core.before_model_call(conversation)
                for ev in repairs:
                    yield ev
                if refusal is not None:
                    await self._await_input_guard()
                    raise _Stop(refusal)
                async for ev in self._call_model(conversation, payload):
                    yield ev
                assert self._pending is not None
                step, self._pending = self._pending, None
            elif kind == "ExecuteTools":
                calls = [call_of(core.items, c) for c in payload]
                del step, payload
                outcomes = await self._run_tools(calls)
                self.approvals.granted.clear()
                for o in outcomes:
                    for ev in o.events:
                        yield ev
                if any(o.deferred is not None for o in outcomes):
                    self.waiting = [
                        (c, o.deferred, o.nested)
                        for c, o in zip(calls, outcomes, strict=True)
                        if o.deferred is not None
                    ]
                    step = core.tools_deferred(conversation, outcomes)
                else:
                    step = core.tools_replied(conversation, outcomes)
            elif kind == "Compact":
                assert self.compacting is not None
                step = await self.compacting.finish(core, conversation)
            elif kind == "AwaitApproval":
                raise _Pause(
                    pause_state(
                        path=self.path,
                        agent=self.agent,
                        max_turns=self.config.max_turns,
                        loop_state_json=core.state_json(),
                        conversation=conversation,
                        waiting=self.waiting,
                        remembered=self.approvals.remembered,
                    )
                )
            elif kind == "Handoff":
                async for ev in self._handoff(payload):
                    yield ev
                return
            else:  # pragma: no cover - the native machine only emits these actions
                raise _Stop(AgentOther(f"internal: unknown next action {kind!r}"))

    async def _call_model(
        self, conversation: list[Item], plan_json: str
    ) -> AsyncIterator[AgentEvent]:
        output_tool = self.core.policy.tool_name
        await self._follow_tool_sources()
        request = self.turns.request(conversation, plan_json, self.injected, output_tool)
        self.injected = []
        acc = TurnAccumulator()
        try:
            self.meter.before_request()
            self.core.requests += 1
            async for ev in self.turns.stream(request, acc):
                yield ev
            self.meter.add_tokens(acc.usage)
        except UsageLimitExceeded as exc:
            self.usage = self.usage + acc.usage
            await self._await_input_guard()
            raise _Stop(exc) from None
        except ModelError as exc:
            self.usage = self.usage + acc.usage
            await self._await_input_guard()
            raise _Stop(AgentOther(f"model error ({exc.kind}): {exc}")) from exc
        if self.token.cancelled:
            self.usage = self.usage + acc.usage
            await self._await_input_guard()
            raise _Stop(self._cancel_error())
        del request
        items = [scrub_item(i) for i in acc.items(self.agent.name)]
        core = self.core
        try:
            verdict = await judge_output(self.agent.output_type, core, self.ctx, items)
        except AgentError as failed:  # an output validator raised (not ModelRetry)
            raise _Stop(failed) from failed
        self._pending = core.model_replied(
            conversation,
            items,
            acc.usage,
            acc.finish.value,
            verdict.errors,
            verdict.validator,
            model=acc.model,
            response_id=acc.response_id,
        )

    async def _handoff(self, target_name: str) -> AsyncIterator[AgentEvent]:
        await self._await_input_guard()
        target = self.agent.handoff_target(target_name)
        depth = self.ctx.agent_depth + 1
        if depth >= self.config.max_agent_depth:
            raise _Stop(MaxAgentDepthExceeded(self.config.max_agent_depth))
        bound = self.config.max_handoffs
        if bound is not None and self.handoffs_done >= bound:
            raise _Stop(MaxHandoffsExceeded(bound))
        if self.hooks:
            await fire(self.hooks, self.ctx, OnHandoff(self.agent.name, target.name))
        for call_id in self.core.take_handoff_calls():  # every transfer call gets its result
            yield ToolOutputItem(
                item=ToolResult(
                    call_id=call_id, content=[TextPart(text=f"Transferred to {target.name}.")]
                )
            )
        yield HandoffItem.model_validate({"from": self.agent.name, "to": target.name})
        yield AgentUpdated(agent=target.name)
        options = getattr(self.agent, "handoff_options", {}).get(target.name)
        try:
            transcript = await run_handoff_options(options, self.ctx, self.core.transcript())
        except AgentError as failed:  # on_handoff / input_filter raised
            raise _Stop(failed) from failed
        conversation = await _with_instructions(target, self.ctx, transcript)
        sub = self._sub_run(target)
        async for ev in self._follow(sub, sub.drive(conversation), self.core.usage):
            yield ev

    def _sub_run(self, target: DrivenAgent) -> _Run:
        spans = RunSpans.start(target.name, self.ctx.tracer, self.spans)
        return _Run(
            target,
            self.ctx.nested(),
            self.config,
            self.token,
            spans,
            approvals=self.approvals,
            path=[*self.path, target.name],
            meter=self.meter,
            handoffs_done=self.handoffs_done + 1,
        )

    async def _follow(
        self, sub: _Run, events: AsyncIterator[AgentEvent], base: Usage
    ) -> AsyncIterator[AgentEvent]:
        """Pass on a handoff target's events; its answer leaves through this agent (output
        guardrails, then this agent's own hooks see ``OnRunComplete``)."""
        error: str | None = None
        try:
            async for ev in events:
                if ev.type == "run_completed":
                    self.final_text = sub.final_text
                    await self._check_output()
                    if self.agent.hooks:  # run-level hooks saw the target's OnRunComplete
                        await fire(self.agent.hooks, self.ctx, OnRunComplete(self.agent.name))
                    yield ev.model_copy(update={"usage": base + ev.usage})
                    continue
                yield ev
        except _Stop as stop:
            error = stop.error.kind
            self.usage = base + sub.usage
            raise
        except _Pause:
            error = "Paused"
            self.usage = base + sub.usage
            raise
        finally:
            if sub.spans is not None:
                sub.spans.end(error)
            if self.hooks:
                await fire(self.hooks, self.ctx, OnSubagentStop(sub.agent.name))
        self.usage = base + sub.usage

    async def resume(self, plan: ResumePlan, depth: int = 0) -> AsyncIterator[AgentEvent]:
        """Continue a paused run down ``plan.chain`` (this run is ``chain[depth]``)."""
        if depth + 1 < len(plan.chain):
            target = plan.chain[depth + 1]
            sub = self._sub_run(target)
            yield AgentUpdated(agent=target.name)
            async for ev in self._follow(sub, sub.resume(plan, depth + 1), Usage()):
                yield ev
            return
        state = plan.state
        loop_state = json.dumps(state.loop_state)
        self.core = core_for(self.agent, self.config.max_turns, self.handoffs, loop_state)
        conversation = await _with_instructions(
            self.agent, self.ctx, list(state.conversation or [])
        )
        self.core.reopen_handoff_calls(conversation)
        step = self.core.decided(conversation, plan.decisions)
        async for ev in self.drive(conversation, step):
            yield ev


async def _with_instructions(
    agent: DrivenAgent, ctx: RunContext[Any], items: list[Item]
) -> list[Item]:
    text = await agent.render_instructions(ctx)
    head: list[Item] = [SystemMessage(content=[TextPart(text=text)])] if text.strip() else []
    return head + items


def _user_text(items: list[Item]) -> str:
    return "\n".join(text_of(i.content) for i in items if isinstance(i, UserMessage))


async def run_agent(
    agent: DrivenAgent, input: AgentInput, ctx: RunContext[Any], config: RunConfig
) -> AsyncIterator[AgentEvent]:
    """Yield the run's events: ``RunStarted`` first, exactly one terminal event last.

    Failures never raise out of the stream: they arrive as ``RunFailed``; only an ``input``
    that is not one raises (:class:`ConfigError`, before any event). Cancellation and
    ``config.timeout`` are best-effort: a terminal event already emitted wins. With
    ``RunConfig(approval="defer")`` a call that asks ends the run with ``RunInterrupted``.
    """
    clashes = agent.collisions()
    if clashes:
        yield RunStarted(agent=agent.name)
        yield RunFailed(
            error=AgentOther(
                f"handoff tool name collision: {'; '.join(clashes)}; rename an agent or tool "
                "(a transfer tool is transfer_to_ + the agent name's ASCII letters and digits)"
            ).to_dict()
        )
        return
    async with contextlib.aclosing(_root(agent, ctx, config, input_items(input), None)) as evs:
        async for ev in evs:
            yield ev


async def resume_agent(
    agent: DrivenAgent, plan: ResumePlan, ctx: RunContext[Any], config: RunConfig
) -> AsyncIterator[AgentEvent]:
    """Continue a paused run (see :func:`helikon.core.pause.plan_resume`), with the same
    event contract as :func:`run_agent`: the decided calls' results first, then the run
    goes on from where it paused (and may pause again)."""
    async with contextlib.aclosing(_root(agent, ctx, config, [], plan)) as evs:
        async for ev in evs:
            yield ev


async def _root(
    agent: DrivenAgent,
    ctx: RunContext[Any],
    config: RunConfig,
    items: list[Item],
    plan: ResumePlan | None,
) -> AsyncGenerator[AgentEvent, None]:
    yield run_started(agent.name)
    token = ctx.cancel.child()
    timer: asyncio.TimerHandle | None = None
    if config.timeout is not None:
        timer = asyncio.get_running_loop().call_later(config.timeout, token.cancel, "timeout")
    spans = RunSpans.start(agent.name, ctx.tracer)
    guard: asyncio.Task[Tripwire | None] | None = None
    if agent.input_guardrails and plan is None:  # a resumed run's input passed them already
        guard = asyncio.ensure_future(
            run_guardrails(
                agent.input_guardrails,
                ctx,
                GuardrailInput("user_text", _user_text(items), tuple(items)),
            )
        )
        guard.add_done_callback(
            lambda t: token.cancel("guardrail") if not t.cancelled() and t.result() else None
        )
    approvals = plan.approvals if plan is not None else None
    if approvals is not None:
        approvals.defer = config.approval == "defer"
    meter = UsageMeter(config.usage_limits, current_meter().get())
    run = _Run(agent, ctx, config, token, spans, guard, approvals, meter=meter)
    # a resumed run's usage includes what was spent before the pause outside the asking
    # agent's machine (its ancestors' tokens, every earlier request)
    before = plan.base_usage if plan is not None else Usage()
    trail = ItemTrail(items, plan.state if plan is not None else None)
    error: str | None = None
    ended = False  # the terminal event was yielded (closing the stream then cancels nothing)
    try:
        hooks = run.hooks
        if hooks:
            start = await fire(hooks, ctx, OnRunStart(agent.name))
            if start.deny is not None:
                raise _Stop(AgentOther(f"run denied by hook: {start.deny}"))
            run.injected.extend(start.inject)
        if plan is None:
            conversation = await _with_instructions(agent, ctx, list(items))
            events = run.drive(conversation)
        else:
            events = run.resume(plan)
        async for ev in events:
            if ev.type == "run_failed":  # the machine's own failure (max turns, output)
                await _failed(run, ctx, ev.error.get("kind", "Other"), ev.message)
            ended = ev.type in ("run_completed", "run_failed")
            if plan is not None and isinstance(ev, RunCompleted | RunFailed):
                ev = ev.model_copy(update={"usage": before + ev.usage})
            trail.note(ev)
            yield ev
    except _Pause as pause:
        error = "Paused"
        usage = run.usage + before
        state = pause.state.model_copy(
            update={"agent": agent.name, "usage": usage, "run_config": config_fields(config)}
        )
        yield RunInterrupted(state=trail.keep(state), usage=usage)
    except _Stop as stop:
        error = stop.error.kind
        await _failed(run, ctx, stop.error.kind, str(stop.error))
        for ev in stop.events:
            yield ev
        yield RunFailed(error=stop.error.to_dict(), usage=run.usage + before)
    except HookError as exc:  # user code: name the hook, not "internal error"
        error = type(exc).__name__
        failure = AgentOther(str(exc))
        await _failed(run, ctx, failure.kind, str(failure))
        yield RunFailed(error=failure.to_dict(), usage=run.usage + before)
    except GeneratorExit:  # the consumer closed the stream: unless it ended, it is cancelled
        if not ended:
            error = "Cancelled"
            await _failed(run, ctx, "Cancelled", str(Cancelled()))
        raise
    except Exception as exc:  # an agent bug must still end the stream with RunFailed
        error = type(exc).__name__
        failure = AgentOther(f"internal error: {type(exc).__name__}: {exc}")
        await _failed(run, ctx, failure.kind, str(failure))
        yield RunFailed(error=failure.to_dict(), usage=run.usage)
    finally:
        if timer is not None:
            timer.cancel()
        if guard is not None and not guard.done():
            guard.cancel()
        if spans is not None:
            spans.end(error)


async def _failed(run: _Run, ctx: RunContext[Any], kind: str, message: str) -> None:
    """Fire ``OnRunFailed`` at the root's hooks (a hook that raises is logged, not raised:
    the run's own failure is what the caller gets)."""
    if run.hooks:
        await fire_quietly(run.hooks, ctx, OnRunFailed(run.agent.name, kind, message))
