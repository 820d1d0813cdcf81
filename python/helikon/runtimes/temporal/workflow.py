"""The agent-loop workflow: a thin deterministic adapter over :class:`DurableDriver`.

The workflow schedules ``helikon.render_instructions`` first, on every run (so what it
decides from is always in the history, never in a worker's cache: field case BR-28), then
one ``helikon.call_model`` per model turn and one ``helikon.invoke_tool`` per tool call
(started together, at most ``parallel_tool_call_limit`` at once). It never calls the model
or a tool itself and reads nothing from the worker process: its command sequence depends
only on its input and the recorded activity results, so any worker can replay it.

A query, ``helikon.events``, returns the events recorded so far (progress of a long run).
Cancelling the workflow ends the run with ``RunFailed(Cancelled)``; the input's ``timeout``
is a durable timer ending it with ``RunFailed(Timeout)``.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.exceptions import CancelledError as ActivityCancelled

with workflow.unsafe.imports_passed_through():
    from helikon.core.decisions import Decision, Deny, check_decisions, decision_from_json
    from helikon.core.events import RunFailed, RunStarted
    from helikon.core.items import ToolCall
    from helikon.core.usage import Usage
    from helikon.errors import AgentOther, Cancelled, ResumeRefused, RunTimeout
    from helikon.runtimes.temporal.activities import BAD_SEED, MODEL_ERROR, UNKNOWN_AGENT
    from helikon.runtimes.temporal.durable import (
        AwaitApproval,
        CallModel,
        DurableDriver,
        Finished,
        RunTools,
        dump_event,
    )
    from helikon.runtimes.temporal.payloads import (
        CALL_MODEL,
        INVOKE_TOOL,
        RENDER_INSTRUCTIONS,
        WORKFLOW,
        ModelReply,
        Prepare,
        Prepared,
        ToolInvocation,
        ToolReply,
        WorkflowInput,
        WorkflowOutput,
    )

__all__ = ["AgentLoopWorkflow"]

_NON_RETRYABLE = [MODEL_ERROR, UNKNOWN_AGENT, BAD_SEED]

TIMED_OUT = "approval timed out: nobody answered in time"


def _parse(decisions: Any) -> dict[str, Decision]:
    if not isinstance(decisions, dict):
        raise ResumeRefused("decisions must map call ids to decisions")
    return {str(k): decision_from_json(v) for k, v in decisions.items()}


def _cause(exc: ActivityError) -> tuple[str, Any]:
    """The message (and details) of the failure behind an activity error.

    Raises:
        asyncio.CancelledError: the activity was cancelled because the run was (a workflow
            cancellation or the run's timeout), so the run's own cancellation proceeds.
    """
    if isinstance(exc.cause, ActivityCancelled):
        raise asyncio.CancelledError from exc
    cause: BaseException | None = exc.cause
    while cause is not None and not isinstance(cause, ApplicationError):
        cause = getattr(cause, "cause", None)
    if isinstance(cause, ApplicationError):
        details = cause.details[0] if cause.details else None
        return cause.message, details
    inner = exc.cause
    return (str(inner) if inner is not None else str(exc)) or type(exc).__name__, None


@workflow.defn(name=WORKFLOW)
class AgentLoopWorkflow:
    """Runs one agent run; returns its events (the last one terminal)."""

    def __init__(self) -> None:
        self._driver: DurableDriver | None = None
        self._failed: list[dict[str, Any]] = []
        self._answer: dict[str, Decision] | None = None

    @workflow.query(name="helikon.pending")
    def pending(self) -> list[dict[str, Any]]:
        """The calls the run waits on for approval (empty when it does not wait)."""
        if self._driver is None:
            return []
        return [p.model_dump(mode="json") for p in self._driver.waiting]

    @workflow.update(name="helikon.approve")
    def approve(self, decisions: dict[str, Any]) -> str:
        """Answer the waiting calls: ``{call_id: {"decision": "approve" | "deny" | "edit",
        ...}}``; the run goes on. Refused (nothing changes) by the validator when the run
        does not wait or the decisions do not answer exactly the waiting calls."""
        self._answer = _parse(decisions)
        return "accepted"

    @approve.validator
    def _check_approve(self, decisions: dict[str, Any]) -> None:
        waiting = self._driver.waiting if self._driver is not None else []
        if not waiting or self._answer is not None:
            raise ValueError("the run does not wait for approval")
        try:
            check_decisions(waiting, _parse(decisions))
        except ResumeRefused as exc:  # a malformed decision too
            raise ValueError(str(exc)) from None

    @workflow.query(name="helikon.events")
    def events(self) -> list[dict[str, Any]]:
        """The events recorded so far."""
        if self._driver is None:
            return list(self._failed)
        return [dump_event(e) for e in self._driver.events]

    @workflow.run
    async def run(self, inp: WorkflowInput) -> WorkflowOutput:
        opts = inp.options
        try:
            prepared = await workflow.execute_activity(
                RENDER_INSTRUCTIONS,
                Prepare(agent=inp.agent, ctx_seed=inp.ctx_seed),
                result_type=Prepared,
                start_to_close_timeout=timedelta(seconds=opts.prepare_timeout),
                retry_policy=self._retry(opts.model_max_attempts),
            )
        except ActivityError as exc:
            message, _ = _cause(exc)
            self._failed = [
                dump_event(RunStarted(agent=inp.agent)),
                dump_event(RunFailed(error=AgentOther(message).to_dict())),
            ]
            return WorkflowOutput(events=self._failed)
        driver = DurableDriver(
            prepared,
            inp.items,
            max_turns=inp.max_turns,
            parallel_tool_call_limit=inp.parallel_tool_call_limit,
        )
        self._driver = driver
        try:
            if inp.timeout is None:
                await self._loop(driver, inp, prepared)
            else:
                await asyncio.wait_for(self._loop(driver, inp, prepared), inp.timeout)
        except TimeoutError:
            driver.fail(RunTimeout(inp.timeout or 0.0))
        except asyncio.CancelledError:
            driver.fail(Cancelled())
        return WorkflowOutput(events=[dump_event(e) for e in driver.events])

    def _retry(self, attempts: int) -> RetryPolicy:
        return RetryPolicy(
            initial_interval=timedelta(seconds=0.5),
            maximum_attempts=attempts,
            non_retryable_error_types=_NON_RETRYABLE,
        )

    async def _loop(self, driver: DurableDriver, inp: WorkflowInput, prepared: Prepared) -> None:
        opts = inp.options
        hb = prepared.heartbeat_timeout
        heartbeat = None if hb is None else timedelta(seconds=hb)
        req = driver.start()
        while not isinstance(req, Finished):
            if isinstance(req, CallModel):
                try:
                    reply = await workflow.execute_activity(
                        CALL_MODEL,
                        req.call,
                        result_type=ModelReply,
                        start_to_close_timeout=timedelta(seconds=opts.model_timeout),
                        heartbeat_timeout=heartbeat,
                        retry_policy=self._retry(opts.model_max_attempts),
                    )
                except ActivityError as exc:
                    message, details = _cause(exc)
                    usage = None
                    if isinstance(details, dict) and isinstance(details.get("usage"), dict):
                        usage = Usage.model_validate(details["usage"])
                    req = driver.fail(AgentOther(message), usage)
                    continue
                req = driver.model_replied(reply)
            elif isinstance(req, AwaitApproval):
                req = driver.approvals_given(await self._wait_for_answer(req, inp))
            elif isinstance(req, RunTools):
                replies = await self._run_tools(req, inp, prepared, heartbeat)
                if isinstance(replies, str):
                    req = driver.fail(AgentOther(replies))
                    continue
                req = driver.tools_replied(req.calls, replies)

    async def _wait_for_answer(self, req: AwaitApproval, inp: WorkflowInput) -> dict[str, Decision]:
        """The decisions the ``helikon.approve`` update gives; every call denied when
        ``approval_timeout`` passes first (a wait that times out is never an approval)."""
        self._answer = None
        try:
            await workflow.wait_condition(
                lambda: self._answer is not None, timeout=inp.approval_timeout
            )
        except TimeoutError:
            return {p.call_id: Deny(TIMED_OUT) for p in req.pending}
        answer = self._answer
        self._answer = None
        assert answer is not None
        return answer

    async def _run_tools(
        self,
        req: RunTools,
        inp: WorkflowInput,
        prepared: Prepared,
        heartbeat: timedelta | None,
    ) -> list[ToolReply] | str:
        """All calls' replies in order, or the message of the first activity that failed."""
        opts = inp.options
        sem = asyncio.Semaphore(req.limit) if req.limit is not None else None

        async def one(call: ToolCall) -> ToolReply:
            attempts = prepared.tool_attempts.get(call.name, opts.tool_max_attempts)
            coro = workflow.execute_activity(
                INVOKE_TOOL,
                ToolInvocation(
                    agent=inp.agent,
                    call=call.model_dump(mode="json", exclude_none=True),
                    ctx_seed=inp.ctx_seed,
                    max_agent_depth=inp.max_agent_depth,
                    defer=inp.approval == "defer",
                    granted=call.call_id in req.granted,
                    remembered=req.remembered.get(call.name),
                ),
                result_type=ToolReply,
                start_to_close_timeout=timedelta(seconds=opts.tool_timeout),
                heartbeat_timeout=heartbeat,
                retry_policy=self._retry(attempts),
            )
            if sem is None:
                reply: ToolReply = await coro
                return reply
            async with sem:
                reply = await coro
                return reply

        results = await asyncio.gather(*(one(c) for c in req.calls), return_exceptions=True)
        replies: list[ToolReply] = []
        for call, r in zip(req.calls, results, strict=True):
            if isinstance(r, ActivityError):
                message, _ = _cause(r)
                return f"tool {call.name!r} (call {call.call_id}) failed in its activity: {message}"
            if isinstance(r, BaseException):
                raise r
            replies.append(r)
        return replies
