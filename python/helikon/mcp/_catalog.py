"""Resources and prompts: MCP results turned into helikon content and items.

A resource read (``resources/read``) becomes content parts: a text resource one
:class:`~helikon.core.items.TextPart`, an image blob one
:class:`~helikon.core.items.ImagePart`, and any other blob a text part saying what it is
(its bytes are not given to a model). A prompt (``prompts/get``) becomes the conversation
it describes, as :class:`~helikon.core.items.UserMessage` and
:class:`~helikon.core.items.AssistantMessage` items. Templates (``resources/templates/list``)
are RFC 6570 URI templates, expanded with the ``mcp`` package's implementation.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types as types
from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

from helikon.core.items import (
    AssistantMessage,
    AudioPart,
    ContentPart,
    ImagePart,
    MediaSource,
    TextPart,
    UserMessage,
)
from helikon.errors import ConfigError

__all__ = ["block_parts", "expand_template", "prompt_items", "resource_parts", "resource_text"]


def expand_template(template: str, variables: Mapping[str, str | Sequence[str]]) -> str:
    """The URI ``template`` (RFC 6570, levels 1-3) names with ``variables`` filled in.

    Example:
        >>> expand_template("note://{name}", {"name": "to do"})
        'note://to%20do'

    Raises:
        ConfigError: the template is not a valid URI template, or a variable it needs is
            missing (the message names it).
    """
    try:
        parsed = UriTemplate.parse(template)
    except InvalidUriTemplate as exc:
        raise ConfigError(f"resource template {template!r} is invalid: {exc}") from None
    missing = [n for n in parsed.variable_names if n not in variables]
    if missing:
        raise ConfigError(
            f"resource template {template!r} needs the variable(s) {', '.join(missing)}; "
            f"got {sorted(variables) or 'none'}"
        )
    return parsed.expand(variables)


def _blob_part(contents: types.BlobResourceContents) -> ContentPart:
    mime = contents.mime_type or "application/octet-stream"
    if mime.startswith("image/"):
        return ImagePart(source=MediaSource(type="base64", mime_type=mime, data=contents.blob))
    if mime.startswith("audio/"):
        return AudioPart(source=MediaSource(type="base64", mime_type=mime, data=contents.blob))
    try:
        size = len(base64.b64decode(contents.blob, validate=True))
    except (binascii.Error, ValueError):
        size = -1
    shown = f"{size} bytes" if size >= 0 else "invalid base64"
    return TextPart(text=f"[binary resource {contents.uri} ({mime}, {shown}) not shown]")


def resource_parts(result: types.ReadResourceResult) -> list[ContentPart]:
    """The contents of a ``resources/read`` answer as content parts (see the module
    docstring), in the server's order."""
    parts: list[ContentPart] = []
    for contents in result.contents:
        if isinstance(contents, types.TextResourceContents):
            parts.append(TextPart(text=contents.text))
        else:
            parts.append(_blob_part(contents))
    return parts


def resource_text(parts: Sequence[ContentPart]) -> str:
    """The parts as one text for a tool result: text parts as they are, media named."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append(part.text)
        elif isinstance(part, ImagePart | AudioPart):
            out.append(f"[{part.type} {part.source.mime_type}]")
    return "\n".join(out)


def block_parts(block: Any) -> list[ContentPart]:
    """One MCP content block (of a prompt message or a tool result) as content parts: text
    as text, image and audio as media parts, an embedded resource as its contents (see
    :func:`resource_parts`), a resource link as a text naming its URI."""
    if isinstance(block, types.TextContent):
        return [TextPart(text=block.text)]
    if isinstance(block, types.ImageContent):
        return [
            ImagePart(source=MediaSource(type="base64", mime_type=block.mime_type, data=block.data))
        ]
    if isinstance(block, types.AudioContent):
        return [
            AudioPart(source=MediaSource(type="base64", mime_type=block.mime_type, data=block.data))
        ]
    if isinstance(block, types.EmbeddedResource):
        return resource_parts(types.ReadResourceResult(contents=[block.resource]))
    if isinstance(block, types.ResourceLink):
        return [TextPart(text=f"[resource {block.uri}: {block.description or block.name}]")]
    return [TextPart(text=f"[{getattr(block, 'type', 'unknown')} content not shown]")]


def prompt_items(result: types.GetPromptResult) -> list[UserMessage | AssistantMessage]:
    """A ``prompts/get`` answer as conversation items: ``user`` messages become
    :class:`UserMessage`, ``assistant`` ones :class:`AssistantMessage`, in order."""
    items: list[UserMessage | AssistantMessage] = []
    for message in result.messages:
        parts = block_parts(message.content)
        if message.role == "assistant":
            items.append(AssistantMessage(content=parts))
        else:
            items.append(UserMessage(content=parts))
    return items
