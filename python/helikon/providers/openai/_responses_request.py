"""The Responses API request body (``POST /responses``) for a model request.

Translation:
    * ``system`` items are joined (blank line between) into ``instructions``; they are sent on
      every request, also when chaining with ``previous_response_id`` (the API does not carry
      instructions over).
    * User messages become ``role: user`` input (a lone text part as a plain string; images
      as ``input_image``, base64 audio as ``input_audio``); tool calls become
      ``function_call`` items and tool results ``function_call_output`` items (text stays
      text, never escaped; non-text results become a list of input parts).
    * Assistant turns this adapter produced are replayed as the API returned them, and
      ``previous_response_id`` chains to an earlier response (``_responses_replay``).
      Assistant turns from elsewhere are sent as plain text.
    * Tools are ``{"type": "function", ...}`` entries. ``ToolDef.strict=True`` sends the
      schema normalized by :func:`helikon.schema.strict`; when the schema cannot be strict it
      is sent unchanged with ``strict: false`` (as is every tool with ``strict`` unset, since
      the Responses API would otherwise default to strict). Same rule as the Chat adapter
      (``helikon.providers.openai._strict``). ``ModelSettings.extra["tools"]`` (hosted tools)
      is appended to the function tools.
    * ``response_format`` maps to ``text.format`` (``json_schema`` with the same strict
      fallback, ``json_object``, ``text``); ``max_output_tokens``, ``temperature``,
      ``top_p``, ``tool_choice`` and ``parallel_tool_calls`` (both only with tools) map
      directly; ``extra`` is merged last (a ``text`` mapping is merged one level deep).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
from helikon.errors import SchemaError
from helikon.providers._json import json_text
from helikon.providers.openai._encode import input_audio, media_url, sampling_settings
from helikon.providers.openai._responses_replay import (
    chain_point,
    function_call,
    replay_turn,
    turn_data,
)
from helikon.providers.openai._strict import strict_schema

__all__ = ["build_responses_body"]


def _input_part(part: ContentPart) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    if isinstance(part, ImagePart):
        return {"type": "input_image", "image_url": media_url(part.source, "image/png")}
    if isinstance(part, AudioPart):
        return input_audio(part, "the Responses API")
    return None  # reasoning and tool_use parts have no place in user input


def _user_content(parts: list[ContentPart]) -> str | list[dict[str, Any]]:
    converted = [p for p in (_input_part(part) for part in parts) if p is not None]
    if len(converted) <= 1 and all(p["type"] == "input_text" for p in converted):
        return str(converted[0]["text"]) if converted else ""
    return converted


def _tool_output(parts: list[ContentPart]) -> str | list[dict[str, Any]]:
    """A function_call_output: text verbatim, else a list of input parts."""
    if all(isinstance(p, TextPart) for p in parts):
        return text_of(parts)
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, (TextPart, ImagePart)):
            converted = _input_part(part)
            if converted is not None:
                out.append(converted)
        else:
            dumped = json_text(part.model_dump(mode="json", exclude_none=True))
            out.append({"type": "input_text", "text": dumped})
    return out


def input_items(items: Sequence[Item], *, keep_ids: bool) -> list[dict[str, Any]]:
    """Translate helikon items (system items excluded) into Responses input items."""
    out: list[dict[str, Any]] = []
    consumed: set[int] = set()
    for pos, item in enumerate(items):
        if pos in consumed or isinstance(item, SystemMessage):
            continue
        if isinstance(item, UserMessage):
            out.append({"role": "user", "content": _user_content(item.content)})
        elif isinstance(item, (AssistantMessage, ToolCall)):
            turn = turn_data(item)
            if turn is not None:
                out.extend(replay_turn(items, pos, turn, consumed, keep_ids))
            elif isinstance(item, ToolCall):
                out.append(function_call(item.call_id, item.name, item.args))
            else:
                text = text_of(item.content)
                if text:
                    out.append({"role": "assistant", "content": text})
                for part in item.content:
                    if isinstance(part, ToolUsePart):
                        out.append(function_call(part.call_id, part.name, part.args))
        elif isinstance(item, ToolResult):
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": item.call_id,
                    "output": _tool_output(item.content),
                }
            )
    return out


def _strict_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """``(schema, strict)``: the strict-normalized schema, or the original with strict off
    when strict mode cannot express it (or it cannot be normalized at all)."""
    try:
        return strict_schema(schema, True)
    except SchemaError:
        return schema, False


def _named_choice(name: str) -> dict[str, Any]:
    return {"type": "function", "name": name}


def _tool(tool: ToolDef) -> dict[str, Any]:
    parameters, strict = tool.parameters, False
    if tool.strict:
        parameters, strict = _strict_schema(tool.parameters)
    out: dict[str, Any] = {"type": "function", "name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["parameters"] = parameters
    out["strict"] = strict
    return out


def _text_format(settings: ModelSettings) -> dict[str, Any] | None:
    fmt = settings.response_format
    if isinstance(fmt, JsonSchemaFormat):
        schema, strict = fmt.schema, False
        if fmt.strict:
            schema, strict = _strict_schema(fmt.schema)
        return {"type": "json_schema", "name": fmt.name, "schema": schema, "strict": strict}
    if isinstance(fmt, JsonObjectFormat):
        return {"type": "json_object"}
    if isinstance(fmt, TextFormat):
        return {"type": "text"}
    return None


def _settings(settings: ModelSettings, has_tools: bool) -> dict[str, Any]:
    body = sampling_settings(
        settings, has_tools, max_tokens_key="max_output_tokens", named_choice=_named_choice
    )
    fmt = _text_format(settings)
    if fmt is not None:
        body["text"] = {"format": fmt}
    for key, value in settings.extra.items():
        if key == "tools":
            continue  # appended to the function tools by build_responses_body
        current = body.get(key)
        if key == "text" and isinstance(current, dict) and isinstance(value, Mapping):
            body[key] = {**current, **value}
        else:
            body[key] = value
    return body


def build_responses_body(
    model_id: str,
    request: ModelRequest,
    *,
    stream: bool,
    server_state: bool = False,
    store: bool | None = None,
    include: Sequence[str] = (),
    reasoning: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body of ``POST /responses`` for ``request``.

    Args:
        model_id: the ``model`` field.
        request: the conversation, tools and settings.
        stream: whether to ask for an SSE stream.
        server_state: chain to the last response in the conversation with
            ``previous_response_id`` and send only the newer items.
        store: the ``store`` field (``None`` leaves the API default, which stores).
        include: the ``include`` field, e.g. ``["reasoning.encrypted_content"]``.
        reasoning: the ``reasoning`` field, e.g. ``{"effort": "low", "summary": "auto"}``.

    Returns:
        A JSON-ready dict.
    """
    items = request.messages
    settings = request.settings
    previous = settings.previous_response_id
    start = 0
    if previous is not None or server_state:
        point = chain_point(items, previous)
        if point is not None:
            previous, start = point
    body: dict[str, Any] = {"model": model_id}
    instructions = [text_of(i.content) for i in items if isinstance(i, SystemMessage)]
    if instructions:
        body["instructions"] = "\n\n".join(instructions)
    body["input"] = input_items(items[start:], keep_ids=store is not False)
    if previous:
        body["previous_response_id"] = previous
    tools = [_tool(t) for t in request.tools]
    extra_tools = settings.extra.get("tools")
    if isinstance(extra_tools, Sequence) and not isinstance(extra_tools, str):
        tools.extend(dict(t) for t in extra_tools if isinstance(t, Mapping))
    if tools:
        body["tools"] = tools
    body["stream"] = stream
    if store is not None:
        body["store"] = store
    if include:
        body["include"] = list(include)
    if reasoning:
        body["reasoning"] = dict(reasoning)
    body.update(_settings(settings, bool(tools)))
    return body
