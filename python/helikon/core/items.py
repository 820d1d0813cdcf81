"""Conversation items and content parts: the spec's tagged shapes as pydantic models.

Every model carries a ``type`` tag in snake_case, so the same JSON serves the event stream,
session storage, the HTTP server and evals. Shapes (from the spec's serde forms)::

    {"type": "system", "content": [parts]}
    {"type": "user_message", "content": [parts]}
    {"type": "assistant_message", "content": [parts], "agent": "name" | null}
    {"type": "tool_call", "call_id": "c1", "name": "lookup", "args": {...}}
    {"type": "tool_result", "call_id": "c1", "content": [parts], "is_error": false}

Content parts: ``text``, ``reasoning`` (with an optional provider ``signature``),
``image`` / ``audio`` (``source`` = base64 or URL), and ``tool_use`` (kept for
providers that inline calls into content).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal, TypeAlias, overload

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "AssistantMessage",
    "AudioPart",
    "ContentPart",
    "ImagePart",
    "Item",
    "MediaSource",
    "ReasoningPart",
    "SystemMessage",
    "TextPart",
    "ToolCall",
    "ToolResult",
    "ToolUsePart",
    "UserMessage",
    "item_adapter",
    "items_adapter",
    "text_of",
]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextPart(_Model):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str


class ReasoningPart(_Model):
    """Model reasoning (thinking). ``signature`` must be sent back unchanged (Anthropic).

    ``redacted`` holds an opaque redacted-thinking payload when the provider sent one.
    """

    type: Literal["reasoning"] = "reasoning"
    text: str = ""
    signature: str | None = None
    redacted: str | None = None


class MediaSource(_Model):
    """Where media bytes come from: ``base64`` (``data`` + ``mime_type``) or ``url``."""

    type: Literal["base64", "url"]
    mime_type: str | None = None
    data: str | None = None
    url: str | None = None


class ImagePart(_Model):
    """An image, inline (base64) or by URL."""

    type: Literal["image"] = "image"
    source: MediaSource


class AudioPart(_Model):
    """Audio, inline (base64) or by URL."""

    type: Literal["audio"] = "audio"
    source: MediaSource


class ToolUsePart(_Model):
    """A tool call inlined into message content (some providers use this form)."""

    type: Literal["tool_use"] = "tool_use"
    call_id: str
    name: str
    args: Any = None


ContentPart: TypeAlias = Annotated[
    TextPart | ReasoningPart | ImagePart | AudioPart | ToolUsePart, Field(discriminator="type")
]


class _TextAccessor:
    """``text`` on :class:`UserMessage`: on the class it builds a message from a string
    (``UserMessage.text("hi")``), on a message it returns the message's text
    (``msg.text()``, as on :class:`AssistantMessage`)."""

    @overload
    def __get__(self, obj: None, owner: type[UserMessage]) -> Callable[[str], UserMessage]: ...

    @overload
    def __get__(self, obj: UserMessage, owner: type[UserMessage]) -> Callable[[], str]: ...

    def __get__(
        self, obj: UserMessage | None, owner: type[UserMessage]
    ) -> Callable[[str], UserMessage] | Callable[[], str]:
        if obj is None:

            def build(text: str) -> UserMessage:
                """A user message holding one text part."""
                return owner(content=[TextPart(text=text)])

            return build
        message = obj

        def read() -> str:
            """The message's text parts joined (reasoning and media are skipped)."""
            return text_of(message.content)

        return read


class SystemMessage(_Model):
    """System instructions (or a compaction summary)."""

    type: Literal["system"] = "system"
    content: list[ContentPart]


class UserMessage(_Model):
    """A user turn."""

    type: Literal["user_message"] = "user_message"
    content: list[ContentPart]

    # ``UserMessage.text("hi")`` builds a message; ``message.text()`` reads its text.
    text: ClassVar[_TextAccessor] = _TextAccessor()


class AssistantMessage(_Model):
    """An assistant turn; ``agent`` names the agent that produced it.

    ``provider_data`` is opaque state the producing provider needs back on the next turn
    (a Responses id, encrypted reasoning); other providers ignore it.
    """

    type: Literal["assistant_message"] = "assistant_message"
    content: list[ContentPart]
    agent: str | None = None
    provider_data: dict[str, Any] | None = None

    def text(self) -> str:
        """The message's text parts joined (reasoning and media are skipped)."""
        return text_of(self.content)


class ToolCall(_Model):
    """A tool call the model asked for. ``args`` is the parsed JSON arguments.

    ``provider_data`` is opaque per-call provider state (e.g. a Gemini thought signature).
    """

    type: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    args: Any = Field(default_factory=dict)
    provider_data: dict[str, Any] | None = None


class ToolResult(_Model):
    """The result of a tool call; ``is_error`` marks an error fed back to the model."""

    type: Literal["tool_result"] = "tool_result"
    call_id: str
    content: list[ContentPart]
    is_error: bool = False
    meta: dict[str, Any] | None = None
    """Metadata the tool attached (an MCP result's ``_meta``); kept with the item, never
    sent to a model."""


Item: TypeAlias = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolCall | ToolResult,
    Field(discriminator="type"),
]

item_adapter: TypeAdapter[Item] = TypeAdapter(Item)
items_adapter: TypeAdapter[list[Item]] = TypeAdapter(list[Item])


def text_of(parts: list[ContentPart]) -> str:
    """Concatenate the text parts of a content list (reasoning and media are skipped)."""
    return "".join(p.text for p in parts if isinstance(p, TextPart))
