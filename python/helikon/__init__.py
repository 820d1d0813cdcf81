"""helikon: agentic AI systems in Python with a Rust core.

The curated public API. Provider adapters live in their own modules
(``helikon.providers.openai``), test doubles in ``helikon.testing``.

Example:
    >>> from helikon import Agent, tool
    >>> from helikon.testing import MockModel, Text
    >>> @tool
    ... def ping() -> str:
    ...     '''Answer pong.'''
    ...     return "pong"
    >>> agent = Agent(name="demo", model=MockModel([[Text("hello")]]), tools=[ping])
    >>> agent.run_sync("hi").final_output
    'hello'
"""

from helikon.agents import (
    AgentAsTool,
    GraphAgent,
    LoopAgent,
    ParallelAgent,
    SequentialAgent,
    SwarmAgent,
    escalate,
)
from helikon.core.agent import Agent, Instructions
from helikon.core.cancel import CancellationToken
from helikon.core.context import RunConfig, RunContext, ToolContext
from helikon.core.decisions import Approve, Deny, Edit
from helikon.core.events import (
    AgentEvent,
    AgentUpdated,
    ApprovalRequested,
    CompactionCompleted,
    CompactionStarted,
    ConversationRepaired,
    GuardrailTriggered,
    HandoffItem,
    MessageOutput,
    NetworkAccess,
    PermissionDenied,
    ReasoningDelta,
    RepairStarted,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunStarted,
    StructuredOutputFailed,
    TokenDelta,
    ToolCallDelta,
    ToolCallItem,
    ToolOutputItem,
    TurnStarted,
)
from helikon.core.guardrails import Guardrail, GuardrailInput, GuardrailKind, Pass, Tripwire
from helikon.core.hooks import Hook, HookRegistry
from helikon.core.items import (
    AssistantMessage,
    AudioPart,
    ContentPart,
    ImagePart,
    Item,
    MediaSource,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolUsePart,
    UserMessage,
    text_of,
)
from helikon.core.model import (
    Finish,
    FinishReason,
    JsonObjectFormat,
    JsonSchemaFormat,
    Model,
    ModelCapabilities,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    ProviderMetadata,
    ResponseFormat,
    TextFormat,
    ToolChoice,
    ToolDef,
    UsageReported,
)
from helikon.core.output import OutputType
from helikon.core.permissions import (
    AllowRule,
    ApprovalHandler,
    DenyRule,
    GuardRule,
    PermissionMode,
    PermissionPolicy,
)
from helikon.core.result import RunResult, RunResultStreaming
from helikon.core.run_state import PendingCall, RunState
from helikon.core.runnable import AgentInput
from helikon.core.tool import FunctionTool, Tool, ToolEffect, ToolOutput, tool
from helikon.core.usage import Usage
from helikon.errors import (
    AgentError,
    Cancelled,
    ConfigError,
    ContextLengthExceeded,
    GuardrailTripwire,
    HelikonError,
    InvalidArgs,
    InvalidStructuredOutput,
    MaxAgentDepthExceeded,
    MaxHandoffsExceeded,
    MaxIterationsExceeded,
    MaxTurnsExceeded,
    ModelError,
    ModelUnavailable,
    OutputTypeError,
    RateLimited,
    Refused,
    ResumeRefused,
    RunError,
    RunInterruptedError,
    RunStateError,
    RunTimeout,
    SchemaError,
    ToolDenied,
    ToolError,
    TransportError,
)
from helikon.providers.retry import RetryingModel, RetryPolicy
from helikon.redaction import Redactor, redact
from helikon.tracing import TracerHandle


def _installed_version() -> str:
    """The installed distribution's version; in an uninstalled source tree, the native
    module's. Both come from the one version in the Cargo workspace (pyproject's is dynamic)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("helikon")
    except PackageNotFoundError:
        from helikon._native import __version__ as native_version

        return native_version


__version__: str = _installed_version()
del _installed_version

__all__ = [
    "Agent",
    "AgentAsTool",
    "AgentError",
    "AgentEvent",
    "AgentInput",
    "AgentUpdated",
    "AllowRule",
    "ApprovalHandler",
    "ApprovalRequested",
    "Approve",
    "AssistantMessage",
    "AudioPart",
    "CancellationToken",
    "Cancelled",
    "CompactionCompleted",
    "CompactionStarted",
    "ConfigError",
    "ContentPart",
    "ContextLengthExceeded",
    "ConversationRepaired",
    "Deny",
    "DenyRule",
    "Edit",
    "Finish",
    "FinishReason",
    "FunctionTool",
    "GraphAgent",
    "GuardRule",
    "Guardrail",
    "GuardrailInput",
    "GuardrailKind",
    "GuardrailTriggered",
    "GuardrailTripwire",
    "HandoffItem",
    "HelikonError",
    "Hook",
    "HookRegistry",
    "ImagePart",
    "Instructions",
    "InvalidArgs",
    "InvalidStructuredOutput",
    "Item",
    "JsonObjectFormat",
    "JsonSchemaFormat",
    "LoopAgent",
    "MaxAgentDepthExceeded",
    "MaxHandoffsExceeded",
    "MaxIterationsExceeded",
    "MaxTurnsExceeded",
    "MediaSource",
    "MessageOutput",
    "Model",
    "ModelCapabilities",
    "ModelError",
    "ModelEvent",
    "ModelRequest",
    "ModelSettings",
    "ModelUnavailable",
    "NetworkAccess",
    "OutputType",
    "OutputTypeError",
    "ParallelAgent",
    "Pass",
    "PendingCall",
    "PermissionDenied",
    "PermissionMode",
    "PermissionPolicy",
    "ProviderMetadata",
    "RateLimited",
    "ReasoningDelta",
    "ReasoningPart",
    "Redactor",
    "Refused",
    "RepairStarted",
    "ResponseFormat",
    "ResumeRefused",
    "RetryPolicy",
    "RetryingModel",
    "RunCompleted",
    "RunConfig",
    "RunContext",
    "RunError",
    "RunFailed",
    "RunInterrupted",
    "RunInterruptedError",
    "RunResult",
    "RunResultStreaming",
    "RunStarted",
    "RunState",
    "RunStateError",
    "RunTimeout",
    "SchemaError",
    "SequentialAgent",
    "StructuredOutputFailed",
    "SwarmAgent",
    "SystemMessage",
    "TextFormat",
    "TextPart",
    "TokenDelta",
    "Tool",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallItem",
    "ToolChoice",
    "ToolContext",
    "ToolDef",
    "ToolDenied",
    "ToolEffect",
    "ToolError",
    "ToolOutput",
    "ToolOutputItem",
    "ToolResult",
    "ToolUsePart",
    "TracerHandle",
    "TransportError",
    "Tripwire",
    "TurnStarted",
    "Usage",
    "UsageReported",
    "UserMessage",
    "__version__",
    "escalate",
    "redact",
    "text_of",
    "tool",
]
