"""The Chat Completions request body (``POST /chat/completions``) for a model request.

Translation:
    * ``system`` items are concatenated (blank line between) into one leading ``system``
      message, wherever they sit in the history.
    * An assistant message followed by ``tool_call`` items becomes one assistant message with
      ``tool_calls``; ``tool_result`` items become ``role: tool`` messages. Tool text stays
      text: nothing is JSON-encoded twice and non-ASCII characters are never escaped by
      helikon; non-text tool output is JSON-encoded with ``ensure_ascii=False``.
    * Tool call ids are made unique within the request: when the history repeats an id (some
      providers reuse them), the 2nd, 3rd ... call with that id become ``<id>_2``,
      ``<id>_3`` ..., and each result is paired with the earliest call of that id still
      waiting for its result (else the latest call of that id). The rewrite is deterministic.
    * :class:`~helikon.core.model.ModelSettings` maps to ``temperature``, ``top_p``,
      ``max_completion_tokens``, ``tool_choice`` and ``parallel_tool_calls`` (both only when
      tools are offered), ``response_format``; ``extra`` is merged last.
      ``previous_response_id`` has no Chat Completions equivalent and is ignored.
    * ``ToolDef.strict=True`` sends the schema normalized for strict mode, or the original
      with ``strict: false`` when strict mode cannot express it
      (``helikon.providers.openai._strict``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from helikon.core.items import (
    AssistantMessage,
    AudioPart,
    ContentPart,
    ImagePart,
    Item,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolUsePart,
    UserMessage,
    text_of,
)
from helikon.core.model import (
    JsonObjectFormat,
    JsonSchemaFormat,
    ModelRequest,
    ModelSettings,
    TextFormat,
    ToolDef,
)
from helikon.providers._call_ids import CallIds, history_call_ids
from helikon.providers._json import json_text
from helikon.providers.openai._encode import (
    arguments,
    input_audio,
    media_url,
    sampling_settings,
)
from helikon.providers.openai._strict import strict_schema

__all__ = ["build_chat_body"]


def _user_part(part: ContentPart) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        return {"type": "image_url", "image_url": {"url": media_url(part.source, "image/png")}}
    if isinstance(part, AudioPart):
        return input_audio(part, "Chat Completions")
    return None  # reasoning and tool_use parts have no place in a user message


def _user_content(parts: list[ContentPart]) -> str | list[dict[str, Any]]:
    converted = [p for p in (_user_part(part) for part in parts) if p is not None]
    if all(p["type"] == "text" for p in converted):
        texts = [str(p["text"]) for p in converted]
        if len(texts) <= 1:
            return texts[0] if texts else ""
    return converted


def _tool_output(parts: list[ContentPart]) -> str:
    """The text of a tool message: text parts verbatim, anything else as JSON (no escapes)."""
    if all(isinstance(p, TextPart) for p in parts):
        return text_of(parts)
    return json_text([p.model_dump(mode="json", exclude_none=True) for p in parts])


@dataclass
class _ChatCallIds(CallIds):
    """The 2nd, 3rd ... call with one id become ``<id>_2``, ``<id>_3`` ... (skipping ids the
    history already uses)."""

    seen: dict[str, int] = field(default_factory=dict)

    def fresh(self, original: str) -> str:
        count = self.seen.get(original, 0) + 1
        self.seen[original] = count
        if count == 1:
            return original
        n = count
        while f"{original}_{n}" in self.used or f"{original}_{n}" in self.reserved:
            n += 1
        return f"{original}_{n}"


def _messages(items: list[Item]) -> list[dict[str, Any]]:
    """Translate helikon items into Chat Completions messages."""
    system_texts: list[str] = []
    out: list[dict[str, Any]] = []
    ids = _ChatCallIds(reserved=history_call_ids(items))
    open_assistant: dict[str, Any] | None = None  # the message tool calls attach to

    def tool_call_entry(call_id: str, name: str, args: Any) -> dict[str, Any]:
        new_id = ids.call(call_id)
        return {
            "id": new_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments(args)},
        }

    for item in items:
        if isinstance(item, SystemMessage):
            system_texts.append(text_of(item.content))
            continue
        if isinstance(item, ToolCall):
            if open_assistant is None:
                open_assistant = {"role": "assistant", "content": None}
                out.append(open_assistant)
            open_assistant.setdefault("tool_calls", []).append(
                tool_call_entry(item.call_id, item.name, item.args)
            )
            continue
        open_assistant = None
        if isinstance(item, UserMessage):
            out.append({"role": "user", "content": _user_content(item.content)})
        elif isinstance(item, AssistantMessage):
            text = text_of(item.content)
            message: dict[str, Any] = {"role": "assistant", "content": text}
            inline = [p for p in item.content if isinstance(p, ToolUsePart)]
            if inline:
                message["tool_calls"] = [tool_call_entry(p.call_id, p.name, p.args) for p in inline]
            out.append(message)
            open_assistant = message
        elif isinstance(item, ToolResult):
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": ids.result(item.call_id),
                    "content": _tool_output(item.content),
                }
            )
    for message in out:
        if message["role"] == "assistant" and message.get("tool_calls") and not message["content"]:
            message["content"] = None
    if system_texts:
        out.insert(0, {"role": "system", "content": "\n\n".join(system_texts)})
    return out


def _named_choice(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name}}


def _tool(tool: ToolDef) -> dict[str, Any]:
    parameters, strict = tool.parameters, tool.strict
    if strict:
        parameters, strict = strict_schema(tool.parameters, True)
    function: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "parameters": parameters,
    }
    if strict is not None:
        function["strict"] = strict
    return {"type": "function", "function": function}


def _settings(settings: ModelSettings, has_tools: bool) -> dict[str, Any]:
    body = sampling_settings(
        settings, has_tools, max_tokens_key="max_completion_tokens", named_choice=_named_choice
    )
    fmt = settings.response_format
    if isinstance(fmt, JsonSchemaFormat):
        schema, strict = strict_schema(fmt.schema, fmt.strict)
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": fmt.name, "schema": schema, "strict": strict},
        }
    elif isinstance(fmt, JsonObjectFormat):
        body["response_format"] = {"type": "json_object"}
    elif isinstance(fmt, TextFormat):
        body["response_format"] = {"type": "text"}
    body.update(settings.extra)
    return body


def build_chat_body(model_id: str, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
    """The JSON body of ``POST /chat/completions`` for ``request``.

    Args:
        model_id: the ``model`` field.
        request: the conversation, tools and settings.
        stream: whether to ask for an SSE stream (with ``stream_options.include_usage``).

    Returns:
        A JSON-ready dict.
    """
    body: dict[str, Any] = {"model": model_id, "messages": _messages(request.messages)}
    if request.tools:
        body["tools"] = [_tool(t) for t in request.tools]
    body["stream"] = stream
    if stream:
        body["stream_options"] = {"include_usage": True}
    body.update(_settings(request.settings, bool(request.tools)))
    return body
