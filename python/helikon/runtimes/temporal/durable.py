"""The durable driver: the native loop machine, with its side effects handed out as requests.

:class:`DurableDriver` is SDK-free and synchronous. It owns one native ``LoopRun`` (the same
machine ``helikon.core.driver`` drives) and the conversation; instead of calling the model
or the tools it returns what to do next (:class:`CallModel`, :class:`RunTools`,
:class:`Finished`) and takes the outcome back (:meth:`model_replied`, :meth:`tools_replied`).
The Temporal workflow turns each request into activities; a unit test can answer them
in-process. Every decision is a function of the inputs given, so a replay that feeds the
recorded activity results back makes the same requests in the same order.

The loop's own decisions (turn counting, max turns, structured-output repair, when to run
tools, the terminal event) stay in the machine. What the ephemeral driver does around the
machine and this class repeats: the conversation repair before each model call, the
"nothing to send" check and the one-feedback-round rule for invalid tool arguments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from helikon import _native
from helikon.core._native_step import call_of, event_of, native_usage, plan_of, usage_of
from helikon.core.events import AgentEvent, RunFailed, RunStarted, event_adapter
from helikon.core.items import (
    Item,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    items_adapter,
)
from helikon.core.repair import ConversationCheck
from helikon.core.tool_exec import CallOutcome
from helikon.core.usage import Usage
from helikon.errors import AgentError, AgentOther
from helikon.runtimes.temporal.payloads import ModelCall, ModelReply, Prepared, ToolReply

__all__ = ["CallModel", "DurableDriver", "Finished", "RunTools", "dump_event"]

_EMPTY_CONVERSATION = (
    "nothing to send to the model: the conversation holds no message (the input was empty "
    "or blank and there is no history); pass the user's message as the input"
)


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
    """Request: run these calls (concurrently, at most ``limit`` at once; ``None``: all)."""

    calls: list[ToolCall]
    limit: int | None


@dataclass(frozen=True, slots=True)
class Finished:
    """The run ended; the last of :attr:`DurableDriver.events` is terminal."""


Request = CallModel | RunTools | Finished


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
        self.machine = _native.LoopRun(_native.LoopConfig(prepared.loop_config_json(max_turns)))
        head: list[Item] = []
        if prepared.instructions.strip():
            head.append(SystemMessage(content=[TextPart(text=prepared.instructions)]))
        self.conversation: list[Item] = head + list(items_adapter.validate_python(items))
        self.events: list[AgentEvent] = [RunStarted(agent=prepared.agent)]
        self._tools = {t["name"]: t for t in prepared.tools}
        self._check = ConversationCheck()
        self._items: list[Item] = []
        self._results: list[ToolResult] = []
        self._invalid_seen: set[str] = set()
        self._validate = False
        self._extra_usage = Usage()

    @property
    def finished(self) -> bool:
        """True once a terminal event was recorded."""
        return self.events[-1].type in ("run_completed", "run_failed")

    @property
    def usage(self) -> Usage:
        """The run's usage so far."""
        return usage_of(self.machine.usage) + self._extra_usage

    @property
    def output_text(self) -> str | None:
        """The answer's text once the run completed."""
        return self.machine.output_text

    def start(self) -> Request:
        """The first request."""
        return self._advance(self.machine.start())

    def model_replied(self, reply: ModelReply) -> Request:
        """Feed the model's settled turn; returns the next request."""
        items: list[Item] = list(items_adapter.validate_python(reply.items))
        self.conversation.extend(items)
        self._items = items
        validation = reply.validation if self._validate else None
        usage = Usage.model_validate(reply.usage)
        exact = [i.model_dump(exclude_none=True) for i in items]
        try:
            step = self.machine.model_response(
                exact, native_usage(usage), reply.finish_reason, validation, "[]"
            )
        except TypeError:  # a value without an exact JSON form: the text path decides
            response: dict[str, Any] = {
                "items": reply.items,
                "usage": usage.model_dump(),
                "finish_reason": reply.finish_reason,
            }
            if self._validate:
                response["validation"] = None if validation is None else {"errors": validation}
            step = self.machine.step_json(json.dumps({"model_response": response}))
        return self._advance(step)

    def tools_replied(self, calls: list[ToolCall], replies: list[ToolReply]) -> Request:
        """Feed the results of the calls of a :class:`RunTools`, in the calls' order."""
        outcomes = [
            CallOutcome(
                ToolResult.model_validate(r.item),
                [event_adapter.validate_python(e) for e in r.events],
                r.invalid_args,
            )
            for r in replies
        ]
        invalid: set[str] = set()
        for call, outcome in zip(calls, outcomes, strict=True):
            if outcome.invalid_args is None:
                continue
            if call.name in self._invalid_seen:
                self.events.extend(ev for o in outcomes for ev in o.events)
                return self.fail(
                    AgentOther(
                        f"tool {call.name!r} got invalid arguments again after the errors were "
                        f"fed back once: {'; '.join(outcome.invalid_args)}"
                    )
                )
            invalid.add(call.name)
        self._invalid_seen |= invalid
        for o in outcomes:
            self.events.extend(o.events)
        self._results = [o.item for o in outcomes]
        self.conversation.extend(self._results)
        try:
            step = self.machine.tool_results([o.native() for o in outcomes])
        except TypeError:
            results = [o.result for o in outcomes]
            step = self.machine.step_json(json.dumps({"tool_results": results}))
        return self._advance(step)

    def fail(self, error: AgentError, usage: Usage | None = None) -> Finished:
        """End the run with ``RunFailed(error)`` (cancellation, timeout, a model error)."""
        if usage is not None:
            self._extra_usage = self._extra_usage + usage
        if not self.finished:
            self.events.append(RunFailed(error=error.to_dict(), usage=self.usage))
        return Finished()

    # ------------------------------------------------------------------ internals

    def _advance(self, step: Any) -> Request:
        kind, refs, payload, appends = step
        for ref in refs:
            self.events.append(event_of(ref, self._items, self._results))
        if appends is not None:
            self.conversation.extend(items_adapter.validate_json(appends))
        if kind == "Terminate":
            return Finished()
        if kind == "CallModel":
            return self._model_request(payload)
        if kind == "ExecuteTools":
            calls = [call_of(self._items, c) for c in payload]
            return RunTools(calls, self.limit)
        if kind == "Handoff":
            return self.fail(AgentOther("handoffs are not supported by the durable driver (v0)"))
        return self.fail(AgentOther(f"internal: unknown next action {kind!r}"))

    def _model_request(self, plan_json: str) -> Request:
        self.events.extend(self._check.repair(self.conversation))
        if all(isinstance(i, SystemMessage) for i in self.conversation):
            return self.fail(AgentOther(_EMPTY_CONVERSATION))
        plan = plan_of(plan_json)
        rf = plan.get("response_format", "unchanged")
        tools = [self._tools[n] for n in plan.get("tools", ()) if n in self._tools]
        self._validate = self.machine.state in ("Finalizing", "RepairingOutput")
        return CallModel(
            ModelCall(
                agent=self.prepared.agent,
                messages=[i.model_dump(mode="json", exclude_none=True) for i in self.conversation],
                tools=tools,
                response_format=isinstance(rf, dict) and self.prepared.output_type is not None,
                clear_tool_choice=bool(plan.get("clear_tool_choice")),
                validate=self._validate,
            )
        )
