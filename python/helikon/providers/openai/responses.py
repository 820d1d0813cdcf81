"""OpenAI Responses API behind the helikon :class:`~helikon.core.model.Model` protocol.

:class:`OpenAIResponsesModel` (built with ``OpenAIModel.responses(model_id)``) drives
``POST /v1/responses`` through the official ``openai`` SDK and turns the answer into model
events: :class:`TokenDelta` per ``output_text`` fragment, :class:`ReasoningDelta` per
reasoning-summary (or raw reasoning) fragment, :class:`ToolCallDelta` per function-call
fragment (``call_id`` is the id, not the ``fc_`` item id), one :class:`UsageReported`, one
:class:`ProviderMetadata` and one terminal :class:`Finish`.

Request translation (:meth:`OpenAIResponsesModel.request_body`):
    * ``system`` items are joined (blank line between) into ``instructions``; they are sent on
      every request, also when chaining with ``previous_response_id`` (the API does not carry
      instructions over).
    * User messages become ``role: user`` input (a lone text part as a plain string; images
      as ``input_image``, base64 audio as ``input_audio``); tool calls become
      ``function_call`` items and tool results ``function_call_output`` items (text stays
      text, never escaped; non-text results become a list of input parts).
    * Assistant turns this adapter produced are replayed exactly as the API returned them, in
      output order: reasoning items (``id``, ``summary`` and, when the request asked for
      ``include=["reasoning.encrypted_content"]``, the encrypted content), message items
      (``id``, ``phase``) and function calls (``id``), rebuilt from the turn's
      ``provider_data["openai_response"]`` plus the turn's items. With ``store=False`` nothing
      on the server can be referenced, so item ids are left out and reasoning items without
      encrypted content are dropped. Assistant turns from elsewhere are sent as plain text.
    * Server-managed state: ``previous_response_id`` comes from
      ``ModelSettings.previous_response_id`` or, with ``server_state=True``, from the last
      assistant turn in the conversation; then only the items after that turn are sent. If
      the conversation does not contain that response, the request's items are sent as
      given. A later assistant turn from another source stops automatic chaining.
    * Tools are ``{"type": "function", ...}`` entries. ``ToolDef.strict=True`` sends the
      schema normalized by :func:`helikon.schema.strict`; when the schema cannot be strict it
      is sent unchanged with ``strict: false`` (as is every tool with ``strict`` unset, since
      the Responses API would otherwise default to strict). Same rule as the Chat adapter
      (``helikon.providers.openai._strict``).
    * ``response_format`` maps to ``text.format`` (``json_schema`` with the same strict
      fallback, ``json_object``, ``text``); ``max_output_tokens``, ``temperature``,
      ``top_p``, ``tool_choice`` and ``parallel_tool_calls`` (both only with tools) map
      directly; ``extra`` is merged last (a ``text`` mapping is merged one level deep).

Response translation:
    * The raw finish value is the response ``status``: ``completed``, or
      ``incomplete:<reason>``. ``completed`` maps to ``STOP`` (``TOOL_CALLS`` when the turn
      has function calls, ``REFUSAL`` when a refusal came with other output);
      ``incomplete:max_output_tokens`` to ``LENGTH``, ``incomplete:content_filter`` to
      ``CONTENT_FILTER``, anything else to ``OTHER``.
    * A refusal with no text and no call raises :class:`~helikon.errors.Refused` carrying the
      refusal text (after usage is reported), as the Chat adapter does.
    * ``response.failed`` and in-band ``error`` events raise the error the HTTP mapping of
      ``helikon.providers.openai._errors`` gives for that error code.
    * Usage: ``input_tokens``, ``output_tokens``, ``total_tokens``,
      ``input_tokens_details.cached_tokens`` (and ``cache_write_tokens`` when sent),
      ``output_tokens_details.reasoning_tokens``.
    * Several summary parts (or reasoning items) are joined with a blank line in the
      reasoning text; the parts themselves travel in ``provider_data``.
    * A stream that ends before ``response.completed`` / ``incomplete`` / ``failed`` raises
      :class:`~helikon.errors.TransportError`.

The turn's :class:`ProviderMetadata` is
``{"openai_response": {"id": ..., "model": ..., "output": [...]}}``: ``model`` is the model
that answered (e.g. ``gpt-4o-2024-08-06``) and ``output`` has one entry per output item, in
order (``reasoning`` with id, summary and encrypted content; ``message`` with id and phase,
plus its own ``text`` when the turn had several messages and its ``refusal`` if any;
``function_call`` with id and call id; unknown item types verbatim).

Limitations:
    * Only function tools are translated from ``ToolDef``; hosted tools (web search, file
      search ...) go in ``ModelSettings.extra["tools"]``, which is appended to the function
      tools. Their output items are kept verbatim in ``provider_data`` and sent back.
    * Audio input needs base64 data; files are not supported as input parts.
    * Cancellation and client handling are as in :class:`OpenAIModel` (the base class).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

import openai

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
    Finish,
    FinishReason,
    JsonObjectFormat,
    JsonSchemaFormat,
    ModelCapabilities,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    ProviderMetadata,
    ReasoningDelta,
    TextFormat,
    TokenDelta,
    ToolCallDelta,
    ToolDef,
    UsageReported,
)
from helikon.core.usage import Usage
from helikon.errors import ConfigError, ModelError, ModelOther, Refused, SchemaError, TransportError
from helikon.providers._stream import Cancelled, next_item, race
from helikon.providers.openai._errors import map_openai_error
from helikon.providers.openai._strict import strict_schema
from helikon.providers.openai.chat import (
    _AUDIO_FORMATS,
    OpenAIModel,
    _media_url,
)

if TYPE_CHECKING:
    from helikon.core.cancel import CancellationToken

__all__ = ["PROVIDER_DATA_KEY", "OpenAIResponsesModel", "build_responses_body"]

PROVIDER_DATA_KEY = "openai_response"
"""The ``provider_data`` key under which a turn's Responses state travels."""

_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
_INCOMPLETE_MAP: dict[str, FinishReason] = {
    "max_output_tokens": FinishReason.LENGTH,
    "content_filter": FinishReason.CONTENT_FILTER,
}


# --------------------------------------------------------------------------- request side


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _arguments(args: Any) -> str:
    if isinstance(args, str):
        return args
    return _json_text({} if args is None else args)


def _input_part(part: ContentPart) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    if isinstance(part, ImagePart):
        return {"type": "input_image", "image_url": _media_url(part.source, "image/png")}
    if isinstance(part, AudioPart):
        if part.source.type != "base64" or not part.source.data:
            raise ModelOther("the Responses API accepts audio only as base64 data, not by URL")
        fmt = _AUDIO_FORMATS.get((part.source.mime_type or "audio/wav").lower(), "wav")
        return {"type": "input_audio", "input_audio": {"data": part.source.data, "format": fmt}}
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
            dumped = _json_text(part.model_dump(mode="json", exclude_none=True))
            out.append({"type": "input_text", "text": dumped})
    return out


def _function_call(call_id: str, name: str, args: Any) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": _arguments(args),
    }


def _turn_data(item: Item) -> dict[str, Any] | None:
    """The Responses state a turn's carrier item holds (``None`` when it has none)."""
    data = getattr(item, "provider_data", None)
    if not isinstance(data, dict):
        return None
    turn = data.get(PROVIDER_DATA_KEY)
    if isinstance(turn, dict) and isinstance(turn.get("output"), list):
        return turn
    return None


def _turn_call_ids(turn: Mapping[str, Any]) -> set[str]:
    return {
        str(e.get("call_id"))
        for e in turn["output"]
        if isinstance(e, dict) and e.get("type") == "function_call"
    }


def _chain_point(items: Sequence[Item], wanted: str | None) -> tuple[str, int] | None:
    """``(response id, index of the first item after that response's turn)``.

    With ``wanted`` ``None`` this is the latest response, provided no assistant output from
    another source follows it; otherwise the turn of response ``wanted``.
    """
    for index in range(len(items) - 1, -1, -1):
        turn = _turn_data(items[index])
        response_id = turn.get("id") if turn is not None else None
        if turn is None or not isinstance(response_id, str) or not response_id:
            continue
        if wanted is not None and response_id != wanted:
            continue
        ids = _turn_call_ids(turn)
        end = index + 1
        while end < len(items):
            nxt = items[end]
            if not (isinstance(nxt, ToolCall) and nxt.call_id in ids):
                break
            end += 1
        if wanted is None and any(
            isinstance(later, (AssistantMessage, ToolCall)) for later in items[end:]
        ):
            return None
        return response_id, end
    return None


def _reasoning_input(entry: Mapping[str, Any], keep_ids: bool) -> dict[str, Any] | None:
    item_id = entry.get("id")
    encrypted = entry.get("encrypted_content")
    if not isinstance(item_id, str) or not item_id:
        return None
    if not keep_ids and not encrypted:
        return None  # a bare reference to an item the server did not store
    out: dict[str, Any] = {
        "type": "reasoning",
        "id": item_id,
        "summary": entry.get("summary") or [],
    }
    if encrypted:
        out["encrypted_content"] = encrypted
    return out


def _message_input(entry: Mapping[str, Any], text: str, keep_ids: bool) -> dict[str, Any] | None:
    item_id = entry.get("id")
    phase = entry.get("phase")
    refusal = entry.get("refusal")
    if keep_ids and isinstance(item_id, str) and item_id:
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "output_text", "text": text, "annotations": []})
        if isinstance(refusal, str) and refusal:
            content.append({"type": "refusal", "refusal": refusal})
        if not content:
            return None
        message: dict[str, Any] = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "completed",
            "content": content,
        }
    else:
        if not text:
            return None
        message = {"role": "assistant", "content": text}
    if isinstance(phase, str) and phase:
        message["phase"] = phase
    return message


def _replay_turn(
    items: Sequence[Item],
    pos: int,
    turn: Mapping[str, Any],
    consumed: set[int],
    keep_ids: bool,
) -> list[dict[str, Any]]:
    """The input items of one earlier turn, in the order the API produced them."""
    carrier = items[pos]
    calls: dict[str, tuple[int, ToolCall]] = {}
    j = pos if isinstance(carrier, ToolCall) else pos + 1
    while j < len(items):
        candidate = items[j]
        if not isinstance(candidate, ToolCall):
            break
        calls.setdefault(candidate.call_id, (j, candidate))
        j += 1
    text = text_of(carrier.content) if isinstance(carrier, AssistantMessage) else ""
    entries = [e for e in turn["output"] if isinstance(e, dict)]
    messages = [e for e in entries if e.get("type") == "message"]
    own_texts = [e.get("text") for e in messages]
    if (
        len(messages) > 1
        and all(isinstance(t, str) for t in own_texts)
        and "".join(cast("list[str]", own_texts)) == text
    ):
        texts = cast("list[str]", own_texts)
    else:
        texts = [text] + [""] * max(len(messages) - 1, 0)
    out: list[dict[str, Any]] = []
    placed = not text
    message_index = 0
    for entry in entries:
        kind = entry.get("type")
        if kind == "reasoning":
            reasoning = _reasoning_input(entry, keep_ids)
            if reasoning is not None:
                out.append(reasoning)
        elif kind == "message":
            piece = texts[message_index]
            message_index += 1
            message = _message_input(entry, piece, keep_ids)
            if message is not None:
                out.append(message)
                placed = placed or bool(piece)
        elif kind == "function_call":
            found = calls.get(str(entry.get("call_id")))
            if found is None:
                continue  # the call was removed from the history
            index, call = found
            consumed.add(index)
            fc = _function_call(call.call_id, call.name, call.args)
            item_id = entry.get("id")
            if keep_ids and isinstance(item_id, str) and item_id:
                fc["id"] = item_id
            out.append(fc)
        elif isinstance(kind, str):
            out.append(dict(entry))  # an item type this adapter does not model: verbatim
    if not placed:
        first_call = next((k for k, e in enumerate(out) if e.get("type") == "function_call"), None)
        plain = {"role": "assistant", "content": text}
        out.insert(len(out) if first_call is None else first_call, plain)
    consumed.add(pos)
    return out


def _input_items(items: Sequence[Item], *, keep_ids: bool) -> list[dict[str, Any]]:
    """Translate helikon items (system items excluded) into Responses input items."""
    out: list[dict[str, Any]] = []
    consumed: set[int] = set()
    for pos, item in enumerate(items):
        if pos in consumed or isinstance(item, SystemMessage):
            continue
        if isinstance(item, UserMessage):
            out.append({"role": "user", "content": _user_content(item.content)})
        elif isinstance(item, (AssistantMessage, ToolCall)):
            turn = _turn_data(item)
            if turn is not None:
                out.extend(_replay_turn(items, pos, turn, consumed, keep_ids))
            elif isinstance(item, ToolCall):
                out.append(_function_call(item.call_id, item.name, item.args))
            else:
                text = text_of(item.content)
                if text:
                    out.append({"role": "assistant", "content": text})
                for part in item.content:
                    if isinstance(part, ToolUsePart):
                        out.append(_function_call(part.call_id, part.name, part.args))
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
    body: dict[str, Any] = {}
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.max_output_tokens is not None:
        body["max_output_tokens"] = settings.max_output_tokens
    if has_tools and settings.tool_choice is not None:
        choice = settings.tool_choice
        if choice.mode == "tool":
            if not choice.name:
                raise ConfigError(
                    "ToolChoice(mode='tool') needs a tool name: ToolChoice.tool(name)"
                )
            body["tool_choice"] = {"type": "function", "name": choice.name}
        else:
            body["tool_choice"] = choice.mode
    if has_tools and settings.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = settings.parallel_tool_calls
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
        point = _chain_point(items, previous)
        if point is not None:
            previous, start = point
    body: dict[str, Any] = {"model": model_id}
    instructions = [text_of(i.content) for i in items if isinstance(i, SystemMessage)]
    if instructions:
        body["instructions"] = "\n\n".join(instructions)
    body["input"] = _input_items(items[start:], keep_ids=store is not False)
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


# --------------------------------------------------------------------------- response side


def _as_dict(obj: Any) -> dict[str, Any]:
    """A wire-shaped dict from an SDK model (or a dict), unknown fields included."""
    if isinstance(obj, dict):
        return obj
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return cast("dict[str, Any]", to_dict(mode="json", warnings=False))
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return cast("dict[str, Any]", dump(mode="json"))
    raise TransportError(f"OpenAI sent an unexpected stream value: {type(obj).__name__}")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    input_details = raw.get("input_tokens_details") or {}
    output_details = raw.get("output_tokens_details") or {}
    prompt, completion = _int(raw.get("input_tokens")), _int(raw.get("output_tokens"))
    return Usage(
        input_tokens=prompt,
        output_tokens=completion,
        cached_input_tokens=_int(input_details.get("cached_tokens")),
        reasoning_tokens=_int(output_details.get("reasoning_tokens")),
        total_tokens=_int(raw.get("total_tokens")) or prompt + completion,
        cache_write_input_tokens=_int(input_details.get("cache_write_tokens")),
    )


def _inband_error(error: Any, fallback: str) -> ModelError:
    """Map an error reported inside a 200 response (``response.failed``, ``error`` events).

    The error envelope goes through the same mapping as an HTTP error without a status.
    """
    envelope: dict[str, Any] = dict(error) if isinstance(error, Mapping) else {}
    message = envelope.get("message")
    if not isinstance(message, str) or not message:
        message = fallback
        envelope["message"] = message
    # ``APIError`` only stores ``request``; the mapping reads the body, never the request.
    exc = openai.APIError(message, cast("Any", None), body=envelope)
    return map_openai_error(exc)


@dataclass
class _Output:
    """One output item as the turn saw it (keyed by ``output_index``)."""

    kind: str
    entry: dict[str, Any]
    call_id: str | None = None
    named: bool = False  # the function call's name was emitted
    held: list[str] = field(default_factory=list)  # argument fragments seen before the name
    args_sent: bool = False
    text: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    reasoning_sent: bool = False
    done: bool = False


@dataclass
class _Turn:
    """What one response accumulated; decides how the event stream ends."""

    response_id: str | None = None
    model: str | None = None
    outputs: dict[int, _Output] = field(default_factory=dict)
    by_item_id: dict[str, int] = field(default_factory=dict)
    reasoning_key: tuple[int, int] | None = None  # (output index, part) of the last fragment
    reasoning_seen: bool = False
    text_seen: bool = False
    status: str | None = None
    incomplete_reason: str | None = None
    error: Any = None
    usage: Usage | None = None

    # ------------------------------------------------------------------ bookkeeping

    def _index(self, event: Mapping[str, Any]) -> int:
        index = event.get("output_index")
        if isinstance(index, int):
            return index
        item_id = event.get("item_id")
        if isinstance(item_id, str) and item_id in self.by_item_id:
            return self.by_item_id[item_id]
        return max(self.outputs) if self.outputs else 0  # the item being streamed

    def _output(self, index: int, item: Mapping[str, Any] | None) -> _Output:
        out = self.outputs.get(index)
        if out is None:
            kind = str((item or {}).get("type") or "message")
            out = _Output(kind=kind, entry={"type": kind})
            self.outputs[index] = out
        if item is not None:
            self._absorb(out, item)
            item_id = item.get("id")
            if isinstance(item_id, str) and item_id:
                self.by_item_id[item_id] = index
        return out

    def _absorb(self, out: _Output, item: Mapping[str, Any]) -> None:
        """Update the output's provider-data entry from the item's latest state."""
        kind = out.kind
        entry = out.entry
        if kind == "reasoning":
            entry["type"] = "reasoning"
            for key in ("id", "encrypted_content"):
                if item.get(key):
                    entry[key] = item[key]
            summary = item.get("summary")
            if isinstance(summary, list) and (summary or "summary" not in entry):
                entry["summary"] = [
                    {"type": "summary_text", "text": str(s.get("text", ""))}
                    for s in summary
                    if isinstance(s, Mapping)
                ]
        elif kind == "message":
            entry["type"] = "message"
            for key in ("id", "phase"):
                if item.get(key):
                    entry[key] = item[key]
        elif kind == "function_call":
            entry["type"] = "function_call"
            if item.get("id"):
                entry["id"] = item["id"]
            call_id = item.get("call_id") or item.get("id")
            if out.call_id is None and isinstance(call_id, str) and call_id:
                out.call_id = call_id
            if out.call_id is not None:
                entry["call_id"] = out.call_id
        else:
            entry.clear()
            entry.update(item)

    def _reasoning(self, index: int, part: int, text: str) -> Iterator[ModelEvent]:
        if not text:
            return
        key = (index, part)
        if self.reasoning_seen and self.reasoning_key != key:
            yield ReasoningDelta(text="\n\n")
        self.reasoning_key = key
        self.reasoning_seen = True
        self.outputs[index].reasoning_sent = True
        yield ReasoningDelta(text=text)

    def _call_events(
        self, out: _Output, index: int, name: Any, args: str, *, final: bool = False
    ) -> Iterator[ModelEvent]:
        """Tool-call fragments; arguments seen before the name wait for it."""
        if not out.named and not name and not final:
            out.held.append(args)
            return
        if out.call_id is None:
            out.call_id = f"call_{index}"  # only servers that send no call id get here
            out.entry["call_id"] = out.call_id
        if not out.named:
            out.named = True
            args = "".join(out.held) + args
            out.held.clear()
            out.args_sent = out.args_sent or bool(args)
            yield ToolCallDelta(call_id=out.call_id, name=str(name or ""), args_delta=args)
        elif args:
            out.args_sent = True
            yield ToolCallDelta(call_id=out.call_id, args_delta=args)

    # ------------------------------------------------------------------ events

    def event(self, event: Mapping[str, Any]) -> Iterator[ModelEvent]:
        """Fold one stream event in, yielding the model events it produces."""
        kind = event.get("type")
        if kind in ("response.created", "response.in_progress", "response.queued"):
            self._response_header(event.get("response"))
        elif kind == "response.output_item.added":
            item = event.get("item")
            if isinstance(item, Mapping):
                index = self._index(event)
                out = self._output(index, item)
                if out.kind == "function_call":
                    yield from self._call_events(
                        out, index, item.get("name"), str(item.get("arguments") or "")
                    )
        elif kind == "response.output_text.delta":
            index = self._index(event)
            delta = str(event.get("delta") or "")
            if delta:
                self._output(index, None).text.append(delta)
                self.text_seen = True
                yield TokenDelta(text=delta)
        elif kind == "response.refusal.delta":
            self._output(self._index(event), None).refusal.append(str(event.get("delta") or ""))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            index = self._index(event)
            self._output(index, {"type": "reasoning"} if index not in self.outputs else None)
            part = event.get("summary_index", event.get("content_index", 0))
            yield from self._reasoning(
                index, part if isinstance(part, int) else 0, str(event.get("delta") or "")
            )
        elif kind == "response.function_call_arguments.delta":
            index = self._index(event)
            out = self._output(index, None if index in self.outputs else {"type": "function_call"})
            yield from self._call_events(out, index, None, str(event.get("delta") or ""))
        elif kind == "response.function_call_arguments.done":
            index = self._index(event)
            out = self._output(index, None if index in self.outputs else {"type": "function_call"})
            args = "" if out.args_sent or out.held else str(event.get("arguments") or "")
            if not out.named or args:
                yield from self._call_events(out, index, event.get("name"), args)
        elif kind == "response.output_item.done":
            item = event.get("item")
            if isinstance(item, Mapping):
                yield from self._item_done(self._index(event), item)
        elif kind in _TERMINAL:
            yield from self.response(event.get("response"))
        elif kind == "error":
            raise _inband_error(event.get("error", event), "OpenAI reported a stream error")

    def _response_header(self, response: Any) -> None:
        if isinstance(response, Mapping):
            response_id = response.get("id")
            if isinstance(response_id, str) and response_id:
                self.response_id = response_id
            model = response.get("model")
            if isinstance(model, str) and model:
                self.model = model

    def _item_done(self, index: int, item: Mapping[str, Any]) -> Iterator[ModelEvent]:
        """An output item is final: emit whatever its deltas did not already deliver."""
        out = self._output(index, item)
        if out.done:
            return
        out.done = True
        if out.kind == "function_call":
            args = "" if out.args_sent or out.held else str(item.get("arguments") or "")
            yield from self._call_events(out, index, item.get("name"), args, final=True)
        elif out.kind == "message":
            for part in item.get("content") or []:
                if not isinstance(part, Mapping):
                    continue
                if part.get("type") == "output_text" and not out.text:
                    text = str(part.get("text") or "")
                    if text:
                        self.text_seen = True
                        yield TokenDelta(text=text)
                        out.entry.setdefault("_text", []).append(text)
                elif part.get("type") == "refusal" and not out.refusal:
                    out.entry.setdefault("_refusal", []).append(str(part.get("refusal") or ""))
        elif out.kind == "reasoning" and not out.reasoning_sent:
            for part_index, summary in enumerate(out.entry.get("summary") or []):
                yield from self._reasoning(index, part_index, str(summary.get("text", "")))

    def response(self, response: Any) -> Iterator[ModelEvent]:
        """Fold in a whole response object (the non-streamed answer or a terminal event)."""
        if not isinstance(response, Mapping):
            raise TransportError("OpenAI sent a terminal event without a response object")
        self._response_header(response)
        for index, item in enumerate(response.get("output") or []):
            if isinstance(item, Mapping) and not (
                index in self.outputs and self.outputs[index].done
            ):
                yield from self._item_done(index, item)
        status = response.get("status")
        self.status = str(status) if status else "completed"
        details = response.get("incomplete_details")
        if isinstance(details, Mapping) and details.get("reason"):
            self.incomplete_reason = str(details["reason"])
        self.error = response.get("error")
        self.usage = _usage(response.get("usage"))

    # ------------------------------------------------------------------ ending

    def _texts(self, out: _Output) -> list[str]:
        return out.text or cast("list[str]", out.entry.get("_text", []))

    def _refusal_of(self, out: _Output) -> str:
        return "".join(out.refusal or cast("list[str]", out.entry.get("_refusal", [])))

    def provider_data(self) -> dict[str, Any]:
        ordered = [self.outputs[i] for i in sorted(self.outputs)]
        messages = [o for o in ordered if o.kind == "message"]
        entries: list[dict[str, Any]] = []
        for out in ordered:
            entry = {k: v for k, v in out.entry.items() if not k.startswith("_")}
            if out.kind == "message":
                if len(messages) > 1:
                    entry["text"] = "".join(self._texts(out))
                refusal = self._refusal_of(out)
                if refusal:
                    entry["refusal"] = refusal
            if out.kind == "function_call" and out.call_id is None:
                continue
            if out.kind == "reasoning" and "id" not in entry:
                continue  # nothing to send back (a server that gives reasoning no id)
            entries.append(entry)
        data: dict[str, Any] = {"output": entries}
        if self.response_id is not None:
            data["id"] = self.response_id
        if self.model is not None:
            data["model"] = self.model
        return {PROVIDER_DATA_KEY: data}

    def finish_raw(self) -> str:
        status = self.status or "completed"
        if status == "incomplete":
            return f"incomplete:{self.incomplete_reason}" if self.incomplete_reason else status
        return status

    def ending(self) -> Iterator[ModelEvent]:
        """The closing events; raises for a failed response or a bare refusal."""
        if self.status is None:
            raise TransportError("OpenAI stream ended before response.completed (cut off)")
        if self.usage is not None:
            yield UsageReported(usage=self.usage)
        if self.status == "failed":
            raise _inband_error(self.error, "OpenAI reported that the response failed")
        yield ProviderMetadata(data=self.provider_data())
        refusal = "".join(self._refusal_of(o) for o in self.outputs.values())
        has_calls = any(o.kind == "function_call" and o.named for o in self.outputs.values())
        if refusal and not self.text_seen and not has_calls:
            raise Refused(refusal)
        raw = self.finish_raw()
        if self.status == "completed":
            reason = FinishReason.STOP
            if has_calls:
                reason = FinishReason.TOOL_CALLS
            elif refusal:
                reason = FinishReason.REFUSAL
        elif self.status == "incomplete":
            reason = _INCOMPLETE_MAP.get(self.incomplete_reason or "", FinishReason.OTHER)
        else:
            reason = FinishReason.OTHER
        yield Finish(reason=reason, raw=raw)


# --------------------------------------------------------------------------- the model


class OpenAIResponsesModel(OpenAIModel):
    """An OpenAI model on the Responses API. Build it with ``OpenAIModel.responses(...)``.

    Example:
        >>> model = OpenAIModel.responses("gpt-5-mini", api_key="sk-test", server_state=True)
        >>> (model.provider, model.model, model.api, model.capabilities().server_managed_state)
        ('openai', 'gpt-5-mini', 'responses', True)
    """

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        organization: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        max_retries: int = 0,
        timeout: float | None = None,
        stream: bool = True,
        server_state: bool = False,
        store: bool | None = None,
        include: Sequence[str] = (),
        reasoning: Mapping[str, Any] | None = None,
    ) -> None:
        if not model_id:
            raise ConfigError("OpenAIModel.responses: model_id must be a non-empty model name")
        if server_state and store is False:
            raise ConfigError(
                "OpenAIModel.responses: server_state=True needs stored responses; "
                "drop store=False (or set server_state=False)"
            )
        if isinstance(include, str):
            raise ConfigError(
                "OpenAIModel.responses: include must be a list of strings, e.g. "
                '["reasoning.encrypted_content"]'
            )
        super().__init__(
            model_id,
            api_key=api_key,
            base_url=base_url,
            organization=organization,
            client=client,
            max_retries=max_retries,
            timeout=timeout,
            stream=stream,
        )
        self._server_state = server_state
        self._store = store
        self._include = tuple(include)
        self._reasoning = dict(reasoning) if reasoning else None

    @property
    def api(self) -> Literal["responses"]:
        """Which OpenAI API this instance speaks."""
        return "responses"

    @property
    def server_state(self) -> bool:
        """Whether requests chain to the previous response (``previous_response_id``)."""
        return self._server_state

    def capabilities(self) -> ModelCapabilities:
        """Streaming (as configured), tools, parallel calls, structured output, reasoning,
        vision, audio input and prompt caching; server-managed state when ``server_state``."""
        return ModelCapabilities(
            streaming=self._stream,
            tools=True,
            parallel_tool_calls=True,
            structured_output=True,
            server_managed_state=self._server_state,
            reasoning=True,
            vision=True,
            audio=True,
            prompt_caching=True,
        )

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body this model sends for ``request`` (for inspection and tests)."""
        return build_responses_body(
            self._model_id,
            request,
            stream=self._stream,
            server_state=self._server_state,
            store=self._store,
            include=self._include,
            reasoning=self._reasoning,
        )

    async def invoke(
        self, request: ModelRequest, cancel: CancellationToken
    ) -> AsyncIterator[ModelEvent]:
        """Call the model and stream its answer as model events.

        Args:
            request: the conversation, tools and settings.
            cancel: stops the call promptly when fired (the iterator just ends).

        Yields:
            ``ReasoningDelta`` / ``TokenDelta`` / ``ToolCallDelta`` as they arrive, then
            ``UsageReported``, ``ProviderMetadata`` and one ``Finish``.

        Raises:
            ModelError: a subclass per the mapping in ``helikon.providers.openai._errors``;
                :class:`~helikon.errors.Refused` for a bare refusal.
        """
        if cancel.cancelled:
            return
        body = self.request_body(request)
        client = self._client_for_loop()
        waiter: asyncio.Future[None] = asyncio.ensure_future(cancel.wait())
        stream: Any = None
        try:
            started = await race(self._send(client, body), waiter)
            if isinstance(started, Cancelled):
                return
            turn = _Turn()
            if not self._stream:
                for event in turn.response(_as_dict(started)):
                    yield event
            else:
                stream = started
                iterator = cast("AsyncIterator[Any]", stream.__aiter__())
                while turn.status is None:
                    if cancel.cancelled:
                        return
                    pulled = await race(self._guard(next_item(iterator)), waiter)
                    if isinstance(pulled, Cancelled):
                        return
                    more, chunk = pulled
                    if not more or chunk is None:
                        break
                    for event in turn.event(_as_dict(chunk)):
                        yield event
            if cancel.cancelled:
                return
            for event in turn.ending():
                yield event
        finally:
            waiter.cancel()
            with suppress(BaseException):
                await waiter
            if stream is not None:
                with suppress(Exception):
                    await stream.close()

    def __repr__(self) -> str:
        return (
            f"OpenAIModel.responses({self._model_id!r}, stream={self._stream}, "
            f"server_state={self._server_state})"
        )

    async def _send(self, client: openai.AsyncOpenAI, body: dict[str, Any]) -> Any:
        payload = dict(body)
        model = payload.pop("model")
        items = cast("Any", payload.pop("input"))
        stream = bool(payload.pop("stream"))
        create = client.responses.create
        if stream:
            return await self._guard(
                create(model=model, input=items, stream=True, extra_body=payload)
            )
        return await self._guard(create(model=model, input=items, stream=False, extra_body=payload))
