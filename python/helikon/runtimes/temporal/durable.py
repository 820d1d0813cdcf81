"""The durable driver: the native loop machine, with its side effects handed out as requests.

:class:`DurableDriver` is SDK-free and synchronous. It owns one
:class:`~helikon.core.loop_core.LoopCore` (the machine and the rules
``helikon.core.driver`` applies around it: the conversation repair before each model call,
the "nothing to send" refusal, the one-feedback-round rule for invalid tool arguments) and
the conversation; instead of calling the model or the tools it returns what to do next
(:class:`CallModel`, :class:`RunTools`, :class:`Finished`) and takes the outcome back
(:meth:`model_replied`, :meth:`tools_replied`). The Temporal workflow turns each request into
activities; a unit test can answer them in-process. Every decision is a function of the
inputs given, so a replay that feeds the recorded activity results back makes the same
requests in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from helikon.core.decisions import Decision
from helikon.core.events import AgentEvent, RunFailed, RunStarted, event_adapter
from helikon.core.items import (
    Item,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    items_adapter,
)
from helikon.core.loop_core import LoopCore, NativeStep, turn_plan
from helikon.core.loop_native import LoopConfig, call_of
from helikon.core.pause import Approvals
from helikon.core.retries import RetryRules
from helikon.core.run_state import PendingCall
from helikon.core.tool_exec import CallOutcome
from helikon.core.usage import Usage
from helikon.errors import AgentError, AgentOther
from helikon.runtimes.temporal.payloads import ModelCall, ModelReply, Prepared, ToolReply

__all__ = ["AwaitApproval", "CallModel", "DurableDriver", "Finished", "RunTools", "dump_event"]


def dump_event(ev: AgentEvent) -> dict[str, Any]:
    """An event's JSON shape (what the workflow records and returns)."""
    out: dict[str, Any] = ev.model_dump(mode="json", by_alias=True, exclude_none=True)
    return out


@dataclass(frozen=True, slots=True)
class CallModel:
    """Request: call the model with this turn's request."""

    call: ModelCall


@dataclass(frozen=True, slots=True)
class RunTools:
    """Request: run these calls (concurrently, at most ``limit`` at once; ``None``: all).
    ``granted``: ids of calls a person approved (their asks are answered yes);
    ``remembered``: tool name -> ``"approve"`` / ``"deny"``, answers a person gave with
    ``remember=True`` earlier in the run (they answer that tool's later asks)."""

    calls: list[ToolCall]
    limit: int | None
    granted: frozenset[str] = frozenset()
    remembered: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AwaitApproval:
    """Request: wait for a person's decisions on ``pending``, then call
    :meth:`DurableDriver.approvals_given`."""

    pending: list[PendingCall]


@dataclass(frozen=True, slots=True)
class Finished:
    """The run ended; the last of :attr:`DurableDriver.events` is terminal."""


Request = CallModel | RunTools | AwaitApproval | Finished


class DurableDriver:
    """One run of the native loop machine, one request at a time.

    Args:
        prepared: what the worker registered for the agent (recorded by an activity).
        items: the run's input conversation (history and new input) in JSON shape.
        max_turns: the run's turn limit.
        parallel_tool_call_limit: cap on concurrently running tool calls.
    """

    def __init__(
        self,
        prepared: Prepared,
        items: list[dict[str, Any]],
        *,
        max_turns: int,
        parallel_tool_call_limit: int | None = None,
    ) -> None:
        self.prepared = prepared
        self.limit = parallel_tool_call_limit
        rules = RetryRules(retries=prepared.retries, tool_retries=prepared.tool_retries)
        self.core = LoopCore(LoopConfig(prepared.loop_config_json(max_turns)), policy=rules)
        head: list[Item] = []
        if prepared.instructions.strip():
            head.append(SystemMessage(content=[TextPart(text=prepared.instructions)]))
        self.conversation: list[Item] = head + list(items_adapter.validate_python(items))
        self.events: list[AgentEvent] = [RunStarted(agent=prepared.agent)]
        self._tools = {t["name"]: t for t in prepared.tools}
        self._extra_usage = Usage()
        self._waiting: list[PendingCall] = []
        self._granted: frozenset[str] = frozenset()
        #: answers given with ``remember=True``, per tool name, for the rest of the run (a
        #: replay rebuilds them from the recorded decisions, so they are workflow state)
        self.remembered: dict[str, str] = {}

    @property
    def finished(self) -> bool:
        """True once a terminal event was recorded."""
        return self.events[-1].type in ("run_completed", "run_failed")

    @property
    def usage(self) -> Usage:
        """The run's usage so far."""
        return self.core.usage + self._extra_usage

    @property
    def output_text(self) -> str | None:
        """The answer's text once the run completed."""
        return self.core.output_text

    def start(self) -> Request:
        """The first request."""
        return self._advance(self.core.start())

    def model_replied(self, reply: ModelReply) -> Request:
        """Feed the model's settled turn; returns the next request."""
        items: list[Item] = list(items_adapter.validate_python(reply.items))
        usage = Usage.model_validate(reply.usage)
        step = self.core.model_replied(
            self.conversation,
            items,
            usage,
            reply.finish_reason,
            reply.validation,
            model=reply.model,
            response_id=reply.response_id,
        )
        return self._advance(step)

    def tools_replied(self, calls: list[ToolCall], replies: list[ToolReply]) -> Request:
        """Feed the results of the calls of a :class:`RunTools`, in the calls' order."""
        outcomes = [
            CallOutcome(
                ToolResult.model_validate(r.item),
                [event_adapter.validate_python(e) for e in r.events],
                r.invalid_args,
                r.deferred,
                retry=r.retry,
            )
            for r in replies
        ]
        error = self.core.invalid_args_error(calls, outcomes)
        if error is not None:
            return self.fail(error)
        for o in outcomes:
            self.events.extend(o.events)
        self._granted = frozenset()
        waiting = [
            PendingCall(
                call_id=c.call_id,
                tool=c.name,
                args=c.args,
                reason=o.deferred,
                agent=self.prepared.agent,
            )
            for c, o in zip(calls, outcomes, strict=True)
            if o.deferred is not None
        ]
        if waiting:
            self._waiting = waiting
            return self._advance(self.core.tools_deferred(self.conversation, outcomes))
        return self._advance(self.core.tools_replied(self.conversation, outcomes))

    @property
    def waiting(self) -> list[PendingCall]:
        """The calls an :class:`AwaitApproval` waits on (empty when not paused)."""
        return list(self._waiting)

    def approvals_given(self, decisions: Mapping[str, Decision]) -> Request:
        """Feed a person's decisions on the waiting calls: denials go to the model,
        approved and edited calls are the next :class:`RunTools` (``granted``).

        Raises:
            ResumeRefused: the decisions do not answer exactly the waiting calls.
        """
        approvals = Approvals(remembered=dict(self.remembered))
        machine_input = approvals.decide(self._waiting, decisions)
        self._waiting = []
        self._granted = frozenset(approvals.granted)
        self.remembered = dict(approvals.remembered)
        return self._advance(self.core.decided(self.conversation, machine_input))

    def fail(self, error: AgentError, usage: Usage | None = None) -> Finished:
        """End the run with ``RunFailed(error)`` (cancellation, timeout, a model error)."""
        if usage is not None:
            self._extra_usage = self._extra_usage + usage
        if not self.finished:
            self.events.append(RunFailed(error=error.to_dict(), usage=self.usage))
        return Finished()

    # ------------------------------------------------------------------ internals

    def _advance(self, step: NativeStep) -> Request:
        core = self.core
        kind, refs, payload, appends = step
        self.events.extend(core.event(ref) for ref in refs)
        core.appended(self.conversation, appends)
        if kind == "Terminate":
            return Finished()
        if kind == "CallModel":
            return self._model_request(payload)
        if kind == "ExecuteTools":
            calls = [call_of(core.items, c) for c in payload]
            return RunTools(calls, self.limit, self._granted, dict(self.remembered))
        if kind == "AwaitApproval":
            return AwaitApproval(self.waiting)
        if kind == "Handoff":
            return self.fail(AgentOther("handoffs are not supported by the durable driver (v0)"))
        return self.fail(AgentOther(f"internal: unknown next action {kind!r}"))

    def _model_request(self, plan_json: str) -> Request:
        repairs, refusal = self.core.before_model_call(self.conversation)
        self.events.extend(repairs)
        if refusal is not None:
            return self.fail(refusal)
        plan = turn_plan(plan_json)
        tools = [self._tools[n] for n in plan.tools if n in self._tools]
        return CallModel(
            ModelCall(
                agent=self.prepared.agent,
                messages=[i.model_dump(mode="json", exclude_none=True) for i in self.conversation],
                tools=tools,
                response_format=plan.response_format and self.prepared.output_type is not None,
                clear_tool_choice=plan.clear_tool_choice,
                validate=self.core.validating,
            )
        )
