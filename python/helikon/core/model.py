"""The model boundary: one protocol for every provider, and the carriers that cross it.

A :class:`Model` turns a :class:`ModelRequest` into an async stream of model events
(:data:`ModelEvent`): text, reasoning and tool-call deltas, a usage report, and one terminal
:class:`Finish`. Failures raise :class:`helikon.errors.ModelError` subclasses from the stream.
The loop never retries; wrap a model in a retrying model for that.
"""

from __future__ import annotations

import contextvars
import enum
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol, TypeAlias, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from helikon.core.events import ReasoningDelta, TokenDelta, ToolCallDelta
from helikon.core.items import Item
from helikon.core.usage import Usage

if TYPE_CHECKING:
    from helikon.core.cancel import CancellationToken

__all__ = [
    "CALLING_AGENT",
    "Finish",
    "FinishReason",
    "JsonObjectFormat",
    "JsonSchemaFormat",
    "Model",
    "ModelCapabilities",
    "ModelEvent",
    "ModelRequest",
    "ModelSettings",
    "ProviderMetadata",
    "ReasoningDelta",
    "ResponseFormat",
    "TextFormat",
    "TokenDelta",
    "ToolCallDelta",
    "ToolChoice",
    "ToolDef",
    "UsageReported",
]


class FinishReason(enum.StrEnum):
    """Why the model stopped (normalized across providers)."""

    STOP = "stop"
    LENGTH = "length"
    TOOL_CALLS = "tool_calls"
    CONTENT_FILTER = "content_filter"
    REFUSAL = "refusal"
    OTHER = "other"


class UsageReported(BaseModel):
    """Token usage for this model call (may arrive once, at the end of the stream)."""

    model_config = ConfigDict(frozen=True)
    type: Literal["usage"] = "usage"
    usage: Usage


class Finish(BaseModel):
    """The terminal model event. ``raw`` keeps the provider's own finish value.

    ``model`` is the model that answered as the provider names it (e.g.
    ``gpt-4o-2024-08-06``, which may differ from the requested alias) and ``response_id`` the
    provider's id of the response (``chatcmpl-...``, ``resp_...``, ``msg_...``, Gemini's
    ``responseId``, Bedrock's request id); ``None`` when the provider sent none.
    """

    model_config = ConfigDict(frozen=True)
    type: Literal["finish"] = "finish"
    reason: FinishReason
    raw: str | None = None
    model: str | None = None
    response_id: str | None = None


class ProviderMetadata(BaseModel):
    """Opaque provider state to carry back on later turns.

    With ``call_id`` it attaches to that tool call's ``provider_data``; without, to the
    turn's assistant message (or, when the turn produced no message, to its first tool
    call). Later events merge over earlier ones key by key.
    """

    model_config = ConfigDict(frozen=True)
    type: Literal["provider_metadata"] = "provider_metadata"
    data: dict[str, Any]
    call_id: str | None = None


ModelEvent: TypeAlias = Annotated[
    TokenDelta | ReasoningDelta | ToolCallDelta | UsageReported | Finish | ProviderMetadata,
    Field(discriminator="type"),
]


@dataclass(frozen=True, slots=True)
class TextFormat:
    """Plain text output (the default)."""

    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class JsonObjectFormat:
    """Any JSON object."""

    type: Literal["json_object"] = "json_object"


@dataclass(frozen=True, slots=True)
class JsonSchemaFormat:
    """JSON matching ``schema``; ``strict`` asks the provider to enforce it exactly."""

    name: str
    schema: dict[str, Any]
    strict: bool = True
    type: Literal["json_schema"] = "json_schema"


ResponseFormat: TypeAlias = TextFormat | JsonObjectFormat | JsonSchemaFormat


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """Whether and which tool the model must call: ``auto``, ``none``, ``required`` or a name.

    Example:
        >>> ToolChoice.tool("lookup").name
        'lookup'
    """

    mode: Literal["auto", "none", "required", "tool"] = "auto"
    name: str | None = None

    @classmethod
    def tool(cls, name: str) -> ToolChoice:
        """Force a call to the tool called ``name``."""
        return cls(mode="tool", name=name)


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Provider-tuning knobs; ``None`` leaves the provider default.

    Args:
        temperature: sampling temperature.
        top_p: nucleus sampling mass.
        max_output_tokens: cap on generated tokens.
        tool_choice: see :class:`ToolChoice`.
        response_format: see :data:`ResponseFormat`.
        parallel_tool_calls: allow several tool calls in one turn.
        previous_response_id: OpenAI Responses server-managed state.
        extra: provider-specific request fields, merged into the request body.
    """

    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = None
    tool_choice: ToolChoice | None = None
    response_format: ResponseFormat | None = None
    parallel_tool_calls: bool | None = None
    previous_response_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def merged(self, **changes: Any) -> ModelSettings:
        """A copy with ``changes`` applied."""
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class ToolDef:
    """What the model sees of a tool: name, description and JSON Schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]
    strict: bool | None = None


@dataclass(slots=True)
class ModelRequest:
    """One model call: the conversation so far, the tools on offer and the settings.

    ``messages`` starts with the system instructions (if any) as a ``system`` item.
    """

    messages: list[Item]
    tools: list[ToolDef] = field(default_factory=list)
    settings: ModelSettings = field(default_factory=ModelSettings)


@dataclass(frozen=True, slots=True)
class ModelCapabilities:
    """What a model instance can do; stable per instance."""

    streaming: bool = False
    tools: bool = False
    parallel_tool_calls: bool = False
    structured_output: bool = False
    server_managed_state: bool = False
    reasoning: bool = False
    vision: bool = False
    audio: bool = False
    prompt_caching: bool = False


CALLING_AGENT: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "helikon_calling_agent", default=None
)
"""The name of the agent whose loop calls ``Model.invoke`` (set by the driver around the
call that starts each model turn; ``None`` outside one). A model may read it when
``invoke`` is called, e.g. to name the agent in an error (``MockModel`` does)."""


@runtime_checkable
class Model(Protocol):
    """The single interface to an LLM provider.

    ``invoke`` returns an async iterator of model events ending with one :class:`Finish`;
    it raises :class:`helikon.errors.ModelError` (a subclass) on failure, and stops promptly
    when ``cancel`` fires.
    """

    @property
    def provider(self) -> str:
        """GenAI ``gen_ai.provider.name``, e.g. ``"openai"``."""
        ...

    @property
    def model(self) -> str:
        """GenAI ``gen_ai.request.model``, e.g. ``"gpt-5-mini"``."""
        ...

    def capabilities(self) -> ModelCapabilities:
        """The capability flags of this instance."""
        ...

    def invoke(self, request: ModelRequest, cancel: CancellationToken) -> AsyncIterator[Any]:
        """Stream the model's answer to ``request`` as model events."""
        ...
