"""The effect-free loop core both drivers call: what to do after each native step.

The native machine (:mod:`helikon.core.loop_native`) decides the loop itself: turn counting,
max turns, structured-output repair, when tools run, the terminal event. Around it sit rules
that are not the machine's but must hold the same wherever a run is driven, in-process
(:mod:`helikon.core.driver`) or one activity per effect
(:mod:`helikon.runtimes.temporal.durable`):

- before every model call the conversation is checked and repaired
  (:class:`~helikon.core.repair.ConversationCheck`), and a conversation holding only
  instructions is refused (providers reject a request without messages);
- the turn's request settings follow the machine's plan (:func:`request_settings`);
- structured output is validated by the user's type (:func:`validate_output`), the verdict
  handed to the machine;
- a tool whose arguments were invalid in an earlier turn ends the run when they are invalid
  again (:meth:`LoopCore.invalid_args_error`);
- a value without an exact JSON form (a tuple, NaN, an int over 64 bits) takes the machine's
  JSON-text path, which behaves exactly as the pure transition.

:class:`LoopCore` holds one agent's machine and those rules. It does no I/O, calls no model
or tool and never awaits, so a driver that stops between steps (an activity, a pause for an
approval) holds it as it is.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from helikon.core.events import AgentEvent, ConversationRepaired
from helikon.core.items import (
    AssistantMessage,
    Item,
    SystemMessage,
    ToolCall,
    ToolResult,
    items_adapter,
    text_of,
)
from helikon.core.loop_native import (
    LoopRun,
    dump_items,
    event_of,
    native_usage,
    usage_of,
)
from helikon.core.model import JsonSchemaFormat, ModelSettings
from helikon.core.output import OutputType
from helikon.core.repair import ConversationCheck
from helikon.core.retries import RetryRules
from helikon.core.tool_exec import CallOutcome
from helikon.core.usage import Usage
from helikon.errors import (
    AgentError,
    AgentOther,
    InvalidStructuredOutput,
    OutputRetriesExceeded,
    ToolRetriesExceeded,
)

__all__ = [
    "EMPTY_CONVERSATION",
    "LoopCore",
    "NativeStep",
    "TurnPlan",
    "core_for",
    "nothing_to_send",
    "request_settings",
    "turn_plan",
    "validate_output",
]

#: One native step: ``(action, event refs, payload, items to append as JSON or None)``.
NativeStep = tuple[str, Sequence[tuple[str, Any]], Any, str | None]

EMPTY_CONVERSATION = (
    "nothing to send to the model: the conversation holds no message (the input was empty "
    "or blank and there is no history); pass the user's message as the input"
)

_VALIDATING_STATES = ("Finalizing", "RepairingOutput")


@dataclass(frozen=True, slots=True)
class TurnPlan:
    """A ``CallModel`` step's plan for the request.

    Attributes:
        tools: names offered this turn (regular and transfer tools), in the agent's order.
        response_format: ask for the output type's JSON Schema as the response format.
        clear_tool_choice: drop the settings' ``tool_choice`` this turn.
    """

    tools: tuple[str, ...]
    response_format: bool
    clear_tool_choice: bool


@functools.lru_cache(maxsize=64)
def turn_plan(plan_json: str) -> TurnPlan:
    """The plan of a ``CallModel`` step (its payload is the plan's JSON text)."""
    plan: dict[str, Any] = json.loads(plan_json)
    return TurnPlan(
        tools=tuple(plan.get("tools", ())),
        response_format=isinstance(plan.get("response_format", "unchanged"), dict),
        clear_tool_choice=bool(plan.get("clear_tool_choice")),
    )


def request_settings(
    settings: ModelSettings,
    output_type: OutputType[Any] | None,
    *,
    response_format: bool,
    clear_tool_choice: bool,
    has_tools: bool,
) -> ModelSettings:
    """The settings of one model request: the agent's, as the turn's plan adjusts them.

    The output type's schema becomes the response format when the plan asks for it;
    ``tool_choice`` is dropped when the plan says so or when no tool is offered (providers
    reject a tool choice without tools).
    """
    if response_format and output_type is not None:
        ot = output_type
        settings = settings.merged(
            response_format=JsonSchemaFormat(name=ot.name, schema=ot.schema, strict=ot.strict)
        )
    if settings.tool_choice is not None and (clear_tool_choice or not has_tools):
        settings = settings.merged(tool_choice=None)
    return settings


def validate_output(output_type: OutputType[Any] | None, items: Sequence[Item]) -> list[str] | None:
    """The verdict on a final answer: its validation errors (``[]``: valid).

    ``None`` when there is nothing to judge: no output type, or the turn called a tool (the
    machine reports that violation itself).
    """
    if output_type is None or any(isinstance(i, ToolCall) for i in items):
        return None
    last = next((i for i in reversed(items) if isinstance(i, AssistantMessage)), None)
    _, errors = output_type.validate_text(text_of(last.content) if last else "")
    return errors


_NO_SIDE = Usage()


def core_for(
    agent: Any, max_turns: int, handoff_tools: Collection[str], state_json: str | None = None
) -> LoopCore:
    """The :class:`LoopCore` of ``agent`` (a ``DrivenAgent``): its native config for
    ``max_turns`` and its retry rules, from the start or from ``state_json``."""
    config = agent.native_config(max_turns)
    rules = agent.retry_rules
    return LoopCore(config, handoff_tools, state_json, policy=rules, agent_name=agent.name)


def nothing_to_send(conversation: Sequence[Item]) -> bool:
    """True when only instructions are left (providers reject a request without messages)."""
    return all(isinstance(item, SystemMessage) for item in conversation)


class LoopCore:
    """One agent's native machine with the rules every driver applies around it.

    Args:
        config: the native ``LoopConfig`` (see :mod:`helikon.core.loop_native`).
        handoff_tools: the agent's transfer-tool names (their calls are remembered, each
            gets a result when the handoff happens).
        state_json: a state :meth:`state_json` wrote, to resume from (default: the start).
        policy: the agent's output mode and retry bounds (the mode must be the one ``config``
            was built with).
    """

    __slots__ = (
        "agent_name",
        "answered",
        "check",
        "handoff_calls",
        "handoff_tools",
        "invalid_args_seen",
        "items",
        "machine",
        "policy",
        "requests",
        "results",
        "retry_by",
        "side_usage",
        "validating",
    )

    def __init__(
        self,
        config: Any,
        handoff_tools: Collection[str] = frozenset(),
        state_json: str | None = None,
        policy: RetryRules | None = None,
        agent_name: str | None = None,
    ) -> None:
        self.machine: Any = LoopRun(config, state_json)
        self.handoff_tools = handoff_tools
        self.check = ConversationCheck()
        #: the last model response, which the step's event references point into
        self.items: list[Item] = []
        #: the model and response id of the turn ``items`` came from
        self.answered: tuple[str | None, str | None] = (None, None)
        #: the last tool results, likewise
        self.results: list[ToolResult] = []
        #: retry rounds (invalid arguments or ModelRetry) per tool name
        self.invalid_args_seen: dict[str, int] = {}
        self.policy = policy if policy is not None else RetryRules()
        #: the output validator whose ModelRetry the last verdict carried
        self.retry_by: str | None = None
        #: the agent an answer the machine writes (the output tool's) is attributed to
        self.agent_name = agent_name
        #: transfer calls seen since the last handoff, in order
        self.handoff_calls: list[str] = []
        #: whether the current model turn's answer is validated (structured output)
        self.validating = False
        #: model requests made by this agent's loop (the machine counts only tokens)
        self.requests = 0
        #: usage of model calls made inside this loop's tool calls (MCP sampling), added to
        #: the run's usage
        self.side_usage = Usage()

    @property
    def usage(self) -> Usage:
        """The machine's token total, with the requests this loop made."""
        tokens = usage_of(self.machine.usage)
        usage = tokens.model_copy(update={"requests": self.requests}) if self.requests else tokens
        return usage + self.side_usage if self.side_usage != _NO_SIDE else usage

    @property
    def output_text(self) -> str | None:
        """The answer's text once the run completed."""
        text: str | None = self.machine.output_text
        return text

    def state_json(self) -> str:
        """The machine's state as JSON (resume with ``LoopCore(config, ..., state_json)``)."""
        state: str = self.machine.state_json()
        return state

    def start(self) -> NativeStep:
        """The first step."""
        step: NativeStep = self.machine.start()
        return step

    def event(self, ref: tuple[str, Any]) -> AgentEvent:
        """The event a step's reference stands for (a transfer call is remembered; an
        output failure says how many repair turns were spent, and names the validator
        when one asked for the last retry)."""
        ev = event_of(ref, self.items, self.results, self.answered)
        if ev.type == "tool_call_item" and ev.item.name in self.handoff_tools:
            self.handoff_calls.append(ev.item.call_id)
        elif ev.type == "run_failed" and ev.error.get("kind") == "InvalidStructuredOutput":
            ev = ev.model_copy(update={"error": self._output_failure(ev.error).to_dict()})
        elif ev.type == "message_output" and ev.item.agent is None and self.agent_name:
            ev = ev.model_copy(update={"item": self._attributed(ev.item)})
        if ev.type in ("run_completed", "run_failed") and self.requests:
            ev = ev.model_copy(
                update={"usage": ev.usage.model_copy(update={"requests": self.requests})}
            )
        if ev.type in ("run_completed", "run_failed") and self.side_usage != _NO_SIDE:
            ev = ev.model_copy(update={"usage": ev.usage + self.side_usage})
        return ev

    def _attributed(self, item: AssistantMessage) -> AssistantMessage:
        return item.model_copy(update={"agent": self.agent_name})

    def _output_failure(self, error: dict[str, Any]) -> InvalidStructuredOutput:
        errors = list(error.get("schema_errors", []))
        text = str(error.get("final_text", ""))
        retries = self.policy.retries
        if self.retry_by is not None and errors:
            return OutputRetriesExceeded(self.retry_by, errors[0], text, retries)
        return InvalidStructuredOutput(errors, text, retries)

    def appended(self, conversation: list[Item], appends: str | None) -> None:
        """Add the items a step appends (a structured-output repair prompt) to the
        conversation."""
        if appends is not None:
            conversation.extend(
                self._attributed(i) if isinstance(i, AssistantMessage) and i.agent is None else i
                for i in items_adapter.validate_json(appends)
            )

    def before_model_call(
        self, conversation: list[Item]
    ) -> tuple[list[ConversationRepaired], AgentError | None]:
        """Check ``conversation`` before a model call, repairing it in place.

        Returns:
            The repairs made (emit each as an event), and the error that ends the run when
            nothing is left to send (else ``None``).
        """
        repairs = self.check.repair(conversation)
        if nothing_to_send(conversation):
            return repairs, AgentOther(EMPTY_CONVERSATION)
        state = self.machine.state
        self.validating = state in _VALIDATING_STATES or (
            state == "CallingModel" and self.policy.mode != "finalize"
        )
        return repairs, None

    def model_replied(
        self,
        conversation: list[Item],
        items: list[Item],
        usage: Usage,
        finish_reason: str,
        validation: list[str] | None,
        retry_by: str | None = None,
        *,
        model: str | None = None,
        response_id: str | None = None,
    ) -> NativeStep:
        """Feed a settled model turn (``items`` are added to ``conversation``).

        Args:
            conversation: the run's conversation, without ``items`` yet.
            items: the turn's response items.
            usage: the turn's usage.
            finish_reason: the turn's :class:`~helikon.core.turn.FinishReason` value.
            validation: :func:`validate_output`'s verdict (ignored unless
                :attr:`validating`).
            retry_by: the output validator that produced ``validation`` (its ModelRetry).
            model: the model that answered, when the provider named it; the turn's
                ``MessageOutput`` / ``ToolCallItem`` events carry it.
            response_id: the provider's id of the response, likewise.
        """
        self.items = items
        self.answered = (model, response_id)
        self.retry_by = retry_by
        conv = "[]"
        if self.handoff_tools and any(
            isinstance(i, ToolCall) and i.name in self.handoff_tools for i in items
        ):
            conv = json.dumps(dump_items(conversation))
        conversation.extend(items)
        if not self.validating:
            validation = None
        # Python-mode dumps, so a value JSON would change (a tuple, NaN, ...) is refused as
        # it is, and the JSON-text path (which decodes everything the machine returns)
        # handles the response exactly as before.
        exact = [i.model_dump(exclude_none=True) for i in items]
        try:
            step: NativeStep = self.machine.model_response(
                exact, native_usage(usage), finish_reason, validation, conv
            )
            return step
        except TypeError:  # a value without an exact JSON form: the text path decides
            response: dict[str, Any] = {
                "items": dump_items(items),
                "usage": usage.model_dump(),
                "finish_reason": finish_reason,
            }
            if self.validating:
                response["validation"] = None if validation is None else {"errors": validation}
            step = self.machine.step_json(json.dumps({"model_response": response}), conv)
            return step

    def invalid_args_error(
        self, calls: Sequence[ToolCall], outcomes: Sequence[CallOutcome]
    ) -> AgentError | None:
        """The retry bound of tools: invalid arguments and :class:`~helikon.ModelRetry`.

        Each turn in which a tool got invalid arguments or asked for a retry is one round
        for that tool (several calls in one turn count once); a round past the tool's bound
        (``RetryRules.tool_limit``, default 1) ends the run. The rounds are consecutive: a
        turn in which the tool's calls all succeeded starts its count again.

        Returns:
            :class:`~helikon.errors.ToolRetriesExceeded` naming the tool, else ``None`` (this
            turn's rounds are counted).
        """
        seen: set[str] = set()
        ran: set[str] = set()
        for call, outcome in zip(calls, outcomes, strict=True):
            if outcome.invalid_args is None and outcome.retry is None:
                if not outcome.item.is_error and outcome.deferred is None:
                    ran.add(call.name)
                continue
            name = call.name
            if name in seen:
                continue
            seen.add(name)
            rounds = self.invalid_args_seen.get(name, 0) + 1
            limit = self.policy.tool_limit(name)
            if rounds > limit:
                if outcome.invalid_args is not None:
                    reason = "; ".join(outcome.invalid_args)
                    return ToolRetriesExceeded(name, reason, limit, invalid_args=True)
                return ToolRetriesExceeded(name, outcome.retry or "", limit)
            self.invalid_args_seen[name] = rounds
        for name in ran - seen:
            self.invalid_args_seen.pop(name, None)
        return None

    def tools_replied(
        self, conversation: list[Item], outcomes: Sequence[CallOutcome]
    ) -> NativeStep:
        """Feed the outcomes of an ``ExecuteTools`` step's calls, in the calls' order (their
        results are added to ``conversation``)."""
        self.results = [o.item for o in outcomes]
        conversation.extend(self.results)
        try:
            step: NativeStep = self.machine.tool_results([o.native() for o in outcomes])
            return step
        except TypeError:  # a value without an exact JSON form: the text path decides
            results = [o.result for o in outcomes]
            step = self.machine.step_json(json.dumps({"tool_results": results}))
            return step

    def tools_deferred(
        self, conversation: list[Item], outcomes: Sequence[CallOutcome]
    ) -> NativeStep:
        """Feed an ``ExecuteTools`` step's outcomes when some calls wait for a person.

        The decided calls' results are added to ``conversation``; the machine pauses in
        ``NeedsApproval`` holding the waiting calls (the step's action is
        ``AwaitApproval``).
        """
        done = [o for o in outcomes if o.deferred is None]
        self.results = [o.item for o in done]
        conversation.extend(self.results)
        deferral = {
            "pending": [o.item.call_id for o in outcomes if o.deferred is not None],
            "results": [o.result for o in done],
        }
        step: NativeStep = self.machine.step_json(json.dumps({"defer": deferral}))
        return step

    def decided(self, conversation: list[Item], decisions: list[dict[str, Any]]) -> NativeStep:
        """Feed a person's decisions on the waiting calls (``NeedsApproval`` only).

        Denials become error results at once (added to ``conversation``); approved and
        edited calls are what the returned ``ExecuteTools`` step runs.
        """
        step: NativeStep = self.machine.step_json(json.dumps({"decisions": decisions}))
        self.results = []
        for ref in step[1]:
            ev = event_of(ref, self.items, self.results, self.answered)
            if ev.type == "tool_output_item":
                conversation.append(ev.item)
        return step

    def compaction_started(self, tokens_before: int) -> NativeStep:
        """Enter ``Compacting`` (``CallingModel`` only): the step emits
        ``CompactionStarted`` and asks for ``Compact``."""
        start = {"compaction_started": {"tokens_before": tokens_before}}
        step: NativeStep = self.machine.step_json(json.dumps(start))
        return step

    def compaction_completed(self, tokens_after: int, usage: Usage) -> NativeStep:
        """Leave ``Compacting``: the step emits ``CompactionCompleted`` and asks for the model
        call that was due; ``usage`` (the summary call's) is added to the run's."""
        end = {"compaction_completed": {"tokens_after": tokens_after, "usage": usage.model_dump()}}
        step: NativeStep = self.machine.step_json(json.dumps(end))
        return step

    def transcript(self) -> list[Item]:
        """The conversation a handoff passes on (the machine's filtered transcript)."""
        return list(items_adapter.validate_json(self.machine.transcript_json() or "[]"))

    def reopen_handoff_calls(self, conversation: Sequence[Item]) -> None:
        """On a resume: the transfer calls of ``conversation`` that have no result yet (a
        handoff the paused turn asked for, field case BR-27) get theirs when it happens."""
        answered = {i.call_id for i in conversation if isinstance(i, ToolResult)}
        self.handoff_calls = [
            i.call_id
            for i in conversation
            if isinstance(i, ToolCall)
            and i.name in self.handoff_tools
            and i.call_id not in answered
        ]

    def take_handoff_calls(self) -> list[str]:
        """The transfer calls seen since the last handoff (each needs a result); clears them."""
        calls, self.handoff_calls = self.handoff_calls, []
        return calls
