"""Translate a helikon :class:`~helikon.core.model.ModelRequest` into a Messages API body.

The rules (each one a Messages API requirement or a documented helikon choice):

* ``system`` items, wherever they sit in the history, are hoisted into the top-level
  ``system`` field, one text block per item, in order.
* Content is always sent as a list of blocks. Empty text parts are left out (the API rejects
  empty text blocks); a message left with no block is dropped.
* An assistant turn is the assistant message plus the ``tool_call`` items after it (a
  ``tool_call`` with no message before it opens a new assistant turn). Its blocks go in this
  order: thinking blocks first, exactly as received, then text, then ``tool_use``.
  A turn whose ``provider_data`` holds ``anthropic_thinking`` (written when a response had
  more than one thinking block) sends those blocks verbatim; otherwise the turn's
  :class:`~helikon.core.items.ReasoningPart` becomes a ``thinking`` block (text and
  signature, also when the text is empty) and/or a ``redacted_thinking`` block. Reasoning
  without a signature or redacted data (another provider's) cannot be verified by the API
  and is left out.
* ``tool_result`` items become ``tool_result`` blocks in a user message; consecutive results
  share one message, which comes right after the assistant turn that made the calls, and
  tool results precede any other block in that message. ``is_error`` is sent on every
  result. Text-only results are sent as one string, other results as text and image blocks;
  a result with no content is sent as ``"(no output)"`` because the API needs content.
* Tool-call ids are made valid (``[A-Za-z0-9_-]``) and unique within the request: a repeated
  id becomes ``<id>_2``, ``<id>_3`` ..., and each result is paired with the earliest call of
  that id still waiting for its result.
* Consecutive messages of the same role are merged into one (the API would merge them too).
* Settings: ``max_output_tokens`` replaces the model's ``max_tokens``; ``temperature``,
  ``top_p``; ``tool_choice`` (``auto`` / ``none`` / ``required`` -> ``any`` / a named tool) and
  ``parallel_tool_calls=False`` (``disable_parallel_tool_use``) only when tools are offered;
  ``JsonSchemaFormat`` -> ``output_config.format = {"type": "json_schema", "schema": ...}``
  (the schema is sent as given); ``JsonObjectFormat`` and ``TextFormat`` have no Messages
  equivalent and send nothing. ``extra`` is merged last; where both sides hold an object
  (``output_config``, ``metadata``) the two are merged one level deep.
* Caching (:class:`~helikon.providers.anthropic.settings.CacheStrategy`): breakpoints on the
  last system block, the last tool and the last block of the last N user messages.
"""

from __future__ import annotations

import re
from typing import Any

from helikon.core.items import (
    AssistantMessage,
    AudioPart,
    ContentPart,
    ImagePart,
    Item,
    MediaSource,
    ReasoningPart,
    TextPart,
    ToolResult,
    ToolUsePart,
    text_of,
)
from helikon.core.model import JsonSchemaFormat, ModelRequest, ModelSettings, ToolDef
from helikon.errors import ConfigError, ModelOther
from helikon.providers._call_ids import CallIds, history_call_ids
from helikon.providers._json import json_text, merge_extra, tool_input
from helikon.providers._turns import TurnBlocks, fold_turns, last_user_turns
from helikon.providers.anthropic.settings import CacheStrategy, ExtendedThinking

__all__ = ["THINKING_KEY", "build_messages_body"]

THINKING_KEY = "anthropic_thinking"
"""The ``provider_data`` key holding a turn's thinking blocks as received."""

EMPTY_TOOL_RESULT = "(no output)"
_INVALID_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")


# --------------------------------------------------------------------------- ids


def _valid_chars(original: str) -> str:
    return _INVALID_ID_CHARS.sub("_", original)


class _MessagesCallIds(CallIds):
    """Ids with invalid characters replaced; a repeated id gets ``_2``, ``_3`` ..."""

    def clean(self, original: str) -> str:
        return _valid_chars(original) or "toolu"

    def fresh(self, original: str) -> str:
        base = self.clean(original)
        if base not in self.used:
            return base
        n = 2
        while f"{base}_{n}" in self.used or f"{base}_{n}" in self.reserved:
            n += 1
        return f"{base}_{n}"


# --------------------------------------------------------------------------- blocks


def _image_block(source: MediaSource) -> dict[str, Any]:
    if source.type == "url":
        if not source.url:
            raise ModelOther("image source of type 'url' has no url")
        return {"type": "image", "source": {"type": "url", "url": source.url}}
    if not source.data:
        raise ModelOther("image source of type 'base64' has no data")
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": source.mime_type or "image/png",
            "data": source.data,
        },
    }


def _plain_block(part: ContentPart) -> dict[str, Any] | None:
    """The block of a non-empty text part or an image part; ``None`` for any other part."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text} if part.text else None
    if isinstance(part, ImagePart):
        return _image_block(part.source)
    return None


def _user_blocks(parts: list[ContentPart]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, AudioPart):
            raise ModelOther("the Anthropic Messages API does not accept audio input")
        block = _plain_block(part)  # reasoning and tool_use parts have no place here
        if block is not None:
            blocks.append(block)
    return blocks


def _thinking_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    stored = (message.provider_data or {}).get(THINKING_KEY)
    if isinstance(stored, list) and all(isinstance(b, dict) for b in stored):
        return [dict(b) for b in stored]
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if not isinstance(part, ReasoningPart):
            continue
        if part.signature is not None:
            blocks.append({"type": "thinking", "thinking": part.text, "signature": part.signature})
        if part.redacted is not None:
            blocks.append({"type": "redacted_thinking", "data": part.redacted})
    return blocks


def _tool_result_content(parts: list[ContentPart]) -> str | list[dict[str, Any]]:
    if all(isinstance(p, TextPart) for p in parts):
        return text_of(parts) or EMPTY_TOOL_RESULT
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, (AudioPart, ToolUsePart)):
            dumped = json_text(part.model_dump(mode="json", exclude_none=True))
            blocks.append({"type": "text", "text": dumped})
            continue
        block = _plain_block(part)
        if block is not None:
            blocks.append(block)
    return blocks or EMPTY_TOOL_RESULT


# --------------------------------------------------------------------------- messages


class _MessagesBlocks(TurnBlocks):
    """Messages API blocks, the call ids made valid and unique within the request."""

    def __init__(self, items: list[Item]) -> None:
        self._ids = _MessagesCallIds(reserved=history_call_ids(items, _valid_chars))

    def user(self, content: list[ContentPart]) -> list[dict[str, Any]]:
        return _user_blocks(content)

    def reasoning(self, message: AssistantMessage) -> list[dict[str, Any]]:
        return _thinking_blocks(message)

    def text(self, text: str) -> dict[str, Any]:
        return {"type": "text", "text": text}

    def tool_use(self, call_id: str, name: str, args: Any) -> dict[str, Any]:
        return {
            "type": "tool_use",
            "id": self._ids.call(call_id),
            "name": name,
            "input": tool_input(args),
        }

    def tool_result(self, result: ToolResult) -> dict[str, Any]:
        return {
            "type": "tool_result",
            "tool_use_id": self._ids.result(result.call_id),
            "content": _tool_result_content(result.content),
            "is_error": result.is_error,
        }


# --------------------------------------------------------------------------- tools, settings


def _tool(tool: ToolDef) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.parameters or {"type": "object", "properties": {}},
    }
    if tool.strict is not None:
        entry["strict"] = tool.strict
    return entry


def _tool_choice(settings: ModelSettings) -> dict[str, Any] | None:
    choice = settings.tool_choice
    out: dict[str, Any] | None = None
    if choice is not None:
        if choice.mode == "tool":
            if not choice.name:
                raise ConfigError(
                    "ToolChoice(mode='tool') needs a tool name: ToolChoice.tool(name)"
                )
            out = {"type": "tool", "name": choice.name}
        elif choice.mode == "required":
            out = {"type": "any"}
        else:
            out = {"type": choice.mode}
    if settings.parallel_tool_calls is False:
        out = out or {"type": "auto"}
        if out["type"] != "none":
            out["disable_parallel_tool_use"] = True
    return out


def _mark_cache(body: dict[str, Any], messages: list[dict[str, Any]], cache: CacheStrategy) -> None:
    mark = cache.breakpoint()
    system = body.get("system")
    if cache.system and isinstance(system, list) and system:
        system[-1]["cache_control"] = dict(mark)
    tools = body.get("tools")
    if cache.tools and isinstance(tools, list) and tools:
        tools[-1]["cache_control"] = dict(mark)
    for message in last_user_turns(messages, cache.last_turns):
        message["content"][-1]["cache_control"] = dict(mark)


def build_messages_body(
    model_id: str,
    request: ModelRequest,
    *,
    max_tokens: int,
    thinking: ExtendedThinking | None = None,
    cache: CacheStrategy | None = None,
    stream: bool,
) -> dict[str, Any]:
    """The JSON body of ``POST /v1/messages`` for ``request``.

    Args:
        model_id: the ``model`` field.
        request: the conversation, tools and settings.
        max_tokens: the output cap unless ``settings.max_output_tokens`` is set.
        thinking: extended thinking, if on.
        cache: where to put cache breakpoints, if anywhere.
        stream: whether to ask for an SSE stream.

    Returns:
        A JSON-ready dict.

    Raises:
        ModelOther: content the Messages API cannot carry (audio, an empty media source).
        ConfigError: ``ToolChoice(mode="tool")`` without a name.
    """
    settings = request.settings
    system, messages = fold_turns(request.messages, _MessagesBlocks(request.messages))
    body: dict[str, Any] = {
        "model": model_id,
        "max_tokens": settings.max_output_tokens or max_tokens,
        "messages": messages,
    }
    if system:
        body["system"] = [{"type": "text", "text": text} for text in system]
    if request.tools:
        body["tools"] = [_tool(t) for t in request.tools]
        choice = _tool_choice(settings)
        if choice is not None:
            body["tool_choice"] = choice
    if thinking is not None:
        body["thinking"] = thinking.to_param()
    body["stream"] = stream
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    fmt = settings.response_format
    if isinstance(fmt, JsonSchemaFormat):
        body["output_config"] = {"format": {"type": "json_schema", "schema": fmt.schema}}
    if cache is not None:
        _mark_cache(body, messages, cache)
    merge_extra(body, settings.extra)
    return body
