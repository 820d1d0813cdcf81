"""Agent events: the one serializable stream every agent run yields.

Variants (the spec's ``AgentEvent``), tagged by ``type``:

* lifecycle: ``run_started``, ``turn_started``
* raw deltas: ``token_delta``, ``reasoning_delta``, ``tool_call_delta``
* semantic items: ``message_output``, ``tool_call_item``, ``tool_output_item``, ``handoff_item``
* transitions: ``agent_updated``
* control: ``guardrail_triggered``, ``approval_requested``, ``permission_denied``,
  ``repair_started``, ``structured_output_failed``, ``conversation_repaired``,
  ``compaction_started``, ``compaction_completed``
* sandbox: ``network_access`` (a sandboxed command's connection, allowed or refused)
* terminal: ``run_completed``, ``run_failed``, ``run_interrupted`` (paused for approval)

Raw deltas arrive as the provider streams them; the semantic items carry the same content
re-aggregated once the turn settles.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from helikon.core.items import AssistantMessage, ContentPart, ToolCall, ToolResult
from helikon.core.run_state import RunState
from helikon.core.usage import Usage

__all__ = [
    "AgentEvent",
    "AgentUpdated",
    "ApprovalRequested",
    "CompactionCompleted",
    "CompactionStarted",
    "ConversationRepaired",
    "GuardrailTriggered",
    "HandoffItem",
    "MessageOutput",
    "NetworkAccess",
    "PermissionDenied",
    "ReasoningDelta",
    "RepairKind",
    "RepairStarted",
    "RunCompleted",
    "RunFailed",
    "RunInterrupted",
    "RunStarted",
    "StructuredOutputFailed",
    "TokenDelta",
    "ToolCallDelta",
    "ToolCallItem",
    "ToolOutputItem",
    "TurnStarted",
    "event_adapter",
]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True)


class RunStarted(_Event):
    """The run began; ``agent`` is the root agent's name."""

    type: Literal["run_started"] = "run_started"
    agent: str


class TurnStarted(_Event):
    """A model turn began (0-based)."""

    type: Literal["turn_started"] = "turn_started"
    turn: int


class TokenDelta(_Event):
    """A fragment of visible assistant text, as streamed."""

    type: Literal["token_delta"] = "token_delta"
    text: str


class ReasoningDelta(_Event):
    """A fragment of model reasoning, as streamed.

    ``signature`` / ``redacted`` carry the provider's opaque thinking signature or redacted
    thinking payload (Anthropic) when the stream delivers one; both go back unchanged.
    """

    type: Literal["reasoning_delta"] = "reasoning_delta"
    text: str = ""
    signature: str | None = None
    redacted: str | None = None


class ToolCallDelta(_Event):
    """A fragment of a tool call's JSON arguments, as streamed."""

    type: Literal["tool_call_delta"] = "tool_call_delta"
    call_id: str
    name: str | None = None
    args_delta: str = ""


class MessageOutput(_Event):
    """A complete assistant message once the turn settled.

    ``model`` is the model that answered and ``response_id`` the provider's id of the
    response (OpenTelemetry GenAI ``gen_ai.response.model`` / ``gen_ai.response.id``), when
    the provider named them (``Finish.model`` / ``Finish.response_id``); ``None`` otherwise
    (a scripted model, a resumed run's earlier turn).
    """

    type: Literal["message_output"] = "message_output"
    item: AssistantMessage
    model: str | None = None
    response_id: str | None = None


class ToolCallItem(_Event):
    """A complete tool call once the turn settled.

    ``model`` / ``response_id``: the response the call came from, as for
    :class:`MessageOutput`.
    """

    type: Literal["tool_call_item"] = "tool_call_item"
    item: ToolCall
    model: str | None = None
    response_id: str | None = None


class ToolOutputItem(_Event):
    """A tool call's result (``item.is_error`` for failures fed back to the model)."""

    type: Literal["tool_output_item"] = "tool_output_item"
    item: ToolResult


class HandoffItem(_Event):
    """Control passed from one agent to another."""

    type: Literal["handoff_item"] = "handoff_item"
    from_agent: str = Field(alias="from")
    to_agent: str = Field(alias="to")


class AgentUpdated(_Event):
    """The active agent changed (after a handoff)."""

    type: Literal["agent_updated"] = "agent_updated"
    agent: str


class GuardrailTriggered(_Event):
    """A guardrail tripped; ``kind`` is ``input``, ``output`` or ``other``."""

    type: Literal["guardrail_triggered"] = "guardrail_triggered"
    kind: str
    info: Any = None


class ApprovalRequested(_Event):
    """A tool call waits for approval."""

    type: Literal["approval_requested"] = "approval_requested"
    call_id: str
    tool: str
    args: Any = None


class PermissionDenied(_Event):
    """A tool call was denied by the permission pipeline."""

    type: Literal["permission_denied"] = "permission_denied"
    tool: str
    reason: str


class RepairStarted(_Event):
    """The structured-output repair turn began."""

    type: Literal["repair_started"] = "repair_started"
    attempt: int


class StructuredOutputFailed(_Event):
    """The final answer failed validation after the repair turn."""

    type: Literal["structured_output_failed"] = "structured_output_failed"
    schema_errors: list[str]
    final_text: str


RepairKind: TypeAlias = Literal[
    "tool_result_synthesized",
    "tool_result_dropped",
    "tool_args_replaced",
    "empty_text_dropped",
]
"""The fixes :mod:`helikon.core.repair` makes to keep a conversation valid for providers."""


class ConversationRepaired(_Event):
    """The conversation was fixed before a model call so providers accept it (helikon's own).

    * ``tool_result_synthesized``: tool call ``call_id`` had no result; ``content`` is the
      error result placed after the call's block of results.
    * ``tool_result_dropped``: a result for ``call_id`` answered no call right before it; it
      is removed.
    * ``tool_args_replaced``: call ``call_id``'s arguments were not a JSON object (e.g.
      truncated JSON); they became ``args``.
    * ``empty_text_dropped``: blank text parts were removed, and messages left empty.

    ``detail`` says what was wrong. A session records the same fix as
    :class:`helikon.sessions.ConversationRepaired`, so it holds on every later load.
    """

    type: Literal["conversation_repaired"] = "conversation_repaired"
    repair: RepairKind
    call_id: str | None = None
    content: list[ContentPart] | None = None
    args: Any = None
    detail: str = ""


class NetworkAccess(_Event):
    """A sandboxed command asked the egress proxy for a connection.

    ``verdict`` is ``"allow"`` or ``"deny"``; ``rule`` names what decided (see
    :class:`helikon.tools.egress.NetworkDecision`) and ``reason`` says it in words.
    ``address`` is the resolved address connected to (allowed) or refused (address rule).
    ``protocol`` is how the client asked: ``"connect"`` (HTTP CONNECT), ``"http"`` (a
    plain-HTTP forward) or ``"socks5"``. ``call_id`` is the Bash call that made it, when known.
    """

    type: Literal["network_access"] = "network_access"
    host: str
    port: int
    verdict: Literal["allow", "deny"]
    rule: str
    reason: str = ""
    address: str | None = None
    protocol: str = ""
    call_id: str | None = None


class CompactionStarted(_Event):
    """The conversation is being compacted; ``tokens_before`` is its size now."""

    type: Literal["compaction_started"] = "compaction_started"
    tokens_before: int


class CompactionCompleted(_Event):
    """Compaction finished: the conversation went from ``tokens_before`` to ``tokens_after``."""

    type: Literal["compaction_completed"] = "compaction_completed"
    tokens_before: int
    tokens_after: int


class RunInterrupted(_Event):
    """Terminal pause: tool calls wait for a person. Resume from ``state`` with
    ``Runner.resume(agent, state, decisions=...)``; ``usage`` is the total so far."""

    type: Literal["run_interrupted"] = "run_interrupted"
    state: RunState
    usage: Usage = Field(default_factory=Usage)


class RunCompleted(_Event):
    """Terminal success; ``usage`` is the run's total.

    ``model`` / ``response_id``: the model that answered the run's last model turn and the
    provider's id of that response, as for :class:`MessageOutput` (``None`` when the provider
    named none, or for a pattern's run).
    """

    type: Literal["run_completed"] = "run_completed"
    usage: Usage
    model: str | None = None
    response_id: str | None = None


class RunFailed(_Event):
    """Terminal failure; ``error`` is ``{"kind", "message", ...}`` (see AgentError.to_dict)."""

    type: Literal["run_failed"] = "run_failed"
    error: dict[str, Any]
    usage: Usage = Field(default_factory=Usage)

    @property
    def message(self) -> str:
        """The error's human-readable message."""
        return str(self.error.get("message", ""))


AgentEvent: TypeAlias = Annotated[
    RunStarted
    | TurnStarted
    | TokenDelta
    | ReasoningDelta
    | ToolCallDelta
    | MessageOutput
    | ToolCallItem
    | ToolOutputItem
    | HandoffItem
    | AgentUpdated
    | GuardrailTriggered
    | ApprovalRequested
    | PermissionDenied
    | RepairStarted
    | StructuredOutputFailed
    | ConversationRepaired
    | NetworkAccess
    | CompactionStarted
    | CompactionCompleted
    | RunCompleted
    | RunFailed
    | RunInterrupted,
    Field(discriminator="type"),
]

event_adapter: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent)
