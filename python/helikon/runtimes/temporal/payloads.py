"""The JSON payloads that cross Temporal: workflow input and result, activity inputs/outputs.

Plain dataclasses of JSON values (Temporal's default converter encodes them), so a history
recorded by one worker decodes in any other process. Items and events travel in their
pydantic JSON shapes (``model_dump(mode="json")``), the one schema helikon uses for the
event stream, sessions and the HTTP server.

Names of the activities and the workflow are fixed strings (``helikon.*``): renaming a Python
function must not change what a recorded history refers to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from helikon.core.loop_native import loop_config_json

__all__ = [
    "CALL_MODEL",
    "INVOKE_TOOL",
    "RENDER_INSTRUCTIONS",
    "WORKFLOW",
    "ActivityOptions",
    "ModelCall",
    "ModelReply",
    "Prepare",
    "Prepared",
    "ToolInvocation",
    "ToolReply",
    "WorkflowInput",
    "WorkflowOutput",
]

WORKFLOW = "helikon.AgentLoop"
RENDER_INSTRUCTIONS = "helikon.render_instructions"
CALL_MODEL = "helikon.call_model"
INVOKE_TOOL = "helikon.invoke_tool"


@dataclass
class ActivityOptions:
    """Timeouts (seconds) and attempts the workflow schedules its activities with.

    Chosen by the client (:class:`~helikon.runtimes.temporal.TemporalRunnerConfig`) and
    recorded in the workflow input, so a replay schedules exactly what the run did.
    """

    prepare_timeout: float = 60.0
    model_timeout: float = 300.0
    tool_timeout: float = 300.0
    model_max_attempts: int = 3
    tool_max_attempts: int = 3
    retry_initial_interval: float = 1.0


@dataclass
class WorkflowInput:
    """What a run starts with: the agent's registered name and the conversation so far."""

    agent: str
    items: list[dict[str, Any]]
    max_turns: int = 16
    parallel_tool_call_limit: int | None = None
    timeout: float | None = None
    max_agent_depth: int = 8
    ctx_seed: Any = None
    options: ActivityOptions = field(default_factory=ActivityOptions)
    approval: str = "inline"
    """``"defer"``: a call that asks pauses the workflow until the ``helikon.approve``
    update answers it (``RunConfig.approval``)."""
    approval_timeout: float | None = None
    """Seconds a pause waits; then every waiting call is denied. ``None``: no limit."""


@dataclass
class WorkflowOutput:
    """The run's events (no streaming deltas) in their JSON shape; the last is terminal."""

    events: list[dict[str, Any]]


@dataclass
class Prepare:
    """Input of ``helikon.render_instructions``."""

    agent: str
    ctx_seed: Any = None


@dataclass
class Prepared:
    """What the worker registered for an agent, recorded once per run.

    Everything the workflow decides from comes from here or from the input, never from the
    worker process (field case BR-28): the tool list (MCP tools included), the rendered
    instructions, the output type's schema, per-tool attempts and the heartbeat timeout.
    """

    agent: str
    instructions: str
    tools: list[dict[str, Any]]
    output_type: dict[str, Any] | None = None
    tool_attempts: dict[str, int] = field(default_factory=dict)
    heartbeat_timeout: float | None = None
    retries: int = 1
    """``Agent(retries=)``: repair turns of the answer, and each tool's default bound."""
    tool_retries: dict[str, int] = field(default_factory=dict)
    """``@tool(retries=)`` of the tools that set it."""

    def loop_config_json(self, max_turns: int) -> str:
        """The native ``LoopConfig`` JSON (as ``Agent.native_config`` builds it, in the
        ``finalize`` output mode: durable runs take no one-call mode yet)."""
        ot = self.output_type
        return loop_config_json(
            max_turns,
            [(t["name"], t["description"]) for t in self.tools],
            [],
            None if ot is None else (ot["name"], ot["schema"]),
            output_retries=self.retries,
        )


@dataclass
class ModelCall:
    """Input of ``helikon.call_model``: the whole conversation and this turn's plan."""

    agent: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    response_format: bool = False
    clear_tool_choice: bool = False
    validate: bool = False


@dataclass
class ModelReply:
    """Output of ``helikon.call_model``: the settled turn (deltas are not recorded)."""

    items: list[dict[str, Any]]
    usage: dict[str, int]
    finish_reason: str
    validation: list[str] | None = None
    model: str | None = None
    """The model that answered, when the provider named it."""
    response_id: str | None = None
    """The provider's id of the response, when it gave one."""


@dataclass
class ToolInvocation:
    """Input of ``helikon.invoke_tool``: one call and the client's seed."""

    agent: str
    call: dict[str, Any]
    ctx_seed: Any = None
    max_agent_depth: int = 8
    defer: bool = False
    """A call that asks is not run; the reply says it waits (``deferred``)."""
    granted: bool = False
    """A person approved this call: its asks are answered yes (denials still deny)."""
    remembered: str | None = None
    """``"approve"`` / ``"deny"``: a person answered this tool's asks for the rest of the run
    (``remember=True``); its ask is answered so (a deny rule or guard still denies)."""


@dataclass
class ToolReply:
    """Output of ``helikon.invoke_tool``: the (redacted) result item and events before it."""

    item: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    invalid_args: list[str] | None = None
    deferred: str | None = None
    """The permission prompt when the call waits for a person (it did not run)."""
    retry: str | None = None
    """The reason when the tool raised ``ModelRetry`` (counted against its retries)."""
