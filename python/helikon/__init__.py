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

from helikon.core.agent import Agent, AgentInput, Instructions
from helikon.core.cancel import CancellationToken
from helikon.core.context import RunConfig, RunContext, ToolContext
from helikon.core.events import (
    AgentEvent,
    AgentUpdated,
    ApprovalRequested,
    ConversationRepaired,
    GuardrailTriggered,
    HandoffItem,
    MessageOutput,
    PermissionDenied,
    ReasoningDelta,
    RepairStarted,
    RunCompleted,
    RunFailed,
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
    MaxTurnsExceeded,
    ModelError,
    ModelUnavailable,
    RateLimited,
    Refused,
    RunError,
    RunTimeout,
    SchemaError,
    ToolDenied,
    ToolError,
    TransportError,
)
from helikon.providers.retry import RetryingModel, RetryPolicy
from helikon.redaction import Redactor, redact
from helikon.tracing import TracerHandle

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentError",
    "AgentEvent",
    "AgentInput",
    "AgentUpdated",
    "AllowRule",
    "ApprovalHandler",
    "ApprovalRequested",
    "AssistantMessage",
    "AudioPart",
    "CancellationToken",
    "Cancelled",
    "ConfigError",
    "ContentPart",
    "ContextLengthExceeded",
    "ConversationRepaired",
    "DenyRule",
    "Finish",
    "FinishReason",
    "FunctionTool",
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
    "MaxAgentDepthExceeded",
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
    "OutputType",
    "Pass",
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
    "RetryPolicy",
    "RetryingModel",
    "RunCompleted",
    "RunConfig",
    "RunContext",
    "RunError",
    "RunFailed",
    "RunResult",
    "RunResultStreaming",
    "RunStarted",
    "RunTimeout",
    "SchemaError",
    "StructuredOutputFailed",
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
    "redact",
    "text_of",
    "tool",
]
