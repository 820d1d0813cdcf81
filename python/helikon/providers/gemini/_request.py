"""Build the JSON body of a Gemini ``generateContent`` / ``streamGenerateContent`` request.

How helikon items become Gemini ``contents``:

* ``system`` items (wherever they sit) are joined with a blank line into one
  ``systemInstruction`` (``{"role": "user", "parts": [{"text": ...}]}``, the form the recorded
  traffic shows).
* ``user_message`` -> a ``user`` content: text parts as ``text``; base64 images and audio as
  ``inlineData``; images and audio by URL as ``fileData`` (``fileUri`` plus a ``mimeType``
  from the part or guessed from the URL's extension, left out when neither says). Gemini reads
  ``gs://`` and Files API URIs, and public ``https`` URLs on models that fetch them; a URL it
  cannot use comes back as a 400 (:class:`~helikon.errors.ModelOther`), never a silent drop.
  Reasoning and tool-use parts are skipped.
* ``assistant_message`` and the ``tool_call`` items after it -> one ``model`` content: text,
  then one ``functionCall`` part per call (inline ``tool_use`` parts too). Reasoning parts are
  not sent back (Gemini does not take thought text as input); the thought *signatures* are:
  a call's ``provider_data["gemini_thought_signature"]`` goes on its ``functionCall`` part as
  ``thoughtSignature``, a message's ``provider_data["gemini_text_signature"]`` on its text
  part (dropped when the message has no text to carry it; Gemini validates signatures on
  function calls only). A call's own Gemini id (``provider_data["gemini_call_id"]``) is sent as
  ``functionCall.id`` and on its ``functionResponse``; helikon's synthesized ``call_id`` never
  goes on the wire.
* ``tool_result`` items -> ``functionResponse`` parts in one ``user`` content placed right
  after the ``model`` content holding their calls, in call order, each with its call's name
  (and Gemini id). Results are paired with calls by helikon ``call_id``; when an id repeats
  (a history made elsewhere), each result takes the earliest call of that id still waiting
  for one, so every response lands after its own call (field case BR-08). A result whose
  text is one JSON object is sent as that object (``{"city": "Paris", "temp_c": 21}``); any
  other result as ``{"output": text}``, an error result as ``{"error": text}``. Base64 images
  in a tool result follow the responses as ``inlineData`` parts of the same content; other non-text
  parts (URL media, audio) are replaced by a note in the text. A call with no result
  gets ``{"error": "no result was recorded for this call"}`` so the turn stays valid; a
  result whose call is unknown becomes a user text part naming the call id.
* Adjacent contents with the same role are merged, and empty text parts are dropped, so the
  roles alternate and no part is empty.

Tools and settings:

* ``tools`` -> ``[{"functionDeclarations": [...]}]``. In the default ``"openapi"`` schema mode
  each declaration's ``parameters`` is the tool schema sanitized by
  :func:`helikon.schema.gemini` (``for_function=True``: refs inlined, no
  ``additionalProperties`` / ``$schema`` / ``$defs`` / ``$ref``, ``Optional[T]`` nullable and
  not required; field case BR-03) with type names upper-cased (``OBJECT``, ``STRING``), the
  form every recorded request uses. In ``"json_schema"`` mode the schema goes unchanged as
  ``parametersJsonSchema``.
* ``ModelSettings``: ``temperature``, ``top_p`` -> ``topP``, ``max_output_tokens`` ->
  ``maxOutputTokens`` (all in ``generationConfig``, which is always present); ``tool_choice``
  -> ``toolConfig.functionCallingConfig`` (``AUTO`` / ``NONE`` / ``ANY``, a named tool as
  ``ANY`` + ``allowedFunctionNames``; only with tools); ``JsonSchemaFormat`` ->
  ``responseMimeType: application/json`` + ``responseSchema`` (sanitized, upper-cased types) or,
  in ``"json_schema"`` mode, ``responseJsonSchema`` (the schema as given);
  ``JsonObjectFormat`` -> ``responseMimeType`` only. ``parallel_tool_calls`` and
  ``previous_response_id`` have no Gemini equivalent and are ignored.
* ``extra`` is merged last: keys that are ``GenerationConfig`` fields (``thinkingConfig``,
  ``stopSequences``, ``responseModalities``, ``topK``, ``seed`` ...) go into
  ``generationConfig``; any other key (``safetySettings``, ``cachedContent``, ``toolConfig``,
  ``labels``) goes on the body, a mapping merged into an existing mapping one level deep.
* Structured output with function calling is refused before anything is sent (Gemini rejects
  the combination): a JSON response format together with tools, or with a ``tool_choice``
  other than ``none``, raises :class:`~helikon.errors.ModelOther`.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

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
    JsonObjectFormat,
    JsonSchemaFormat,
    ModelRequest,
    ModelSettings,
    ToolDef,
)
from helikon.errors import ConfigError, ModelOther
from helikon.providers._json import json_text, merge_extra, sampling
from helikon.schema import gemini as sanitize

__all__ = [
    "CALL_ID_KEY",
    "SIGNATURE_KEY",
    "TEXT_SIGNATURE_KEY",
    "SchemaMode",
    "build_gemini_body",
    "check_conflict",
    "json_text",
    "upper_types",
]

SchemaMode = Literal["openapi", "json_schema"]

CALL_ID_KEY = "gemini_call_id"
"""``ToolCall.provider_data`` key: the id Gemini gave the call (absent when it gave none)."""
SIGNATURE_KEY = "gemini_thought_signature"
"""``ToolCall.provider_data`` key: the ``thoughtSignature`` of the call's part."""
TEXT_SIGNATURE_KEY = "gemini_text_signature"
"""``AssistantMessage.provider_data`` key: the ``thoughtSignature`` of a text part."""

_NO_RESULT = "no result was recorded for this call"
_GENERATION_CONFIG_KEYS = frozenset(
    {
        "stopSequences",
        "responseMimeType",
        "responseSchema",
        "responseJsonSchema",
        "responseModalities",
        "candidateCount",
        "maxOutputTokens",
        "temperature",
        "topP",
        "topK",
        "seed",
        "presencePenalty",
        "frequencyPenalty",
        "responseLogprobs",
        "logprobs",
        "enableEnhancedCivicAnswers",
        "speechConfig",
        "thinkingConfig",
        "imageConfig",
        "mediaResolution",
    }
)


# --------------------------------------------------------------------------- schemas


def upper_types(schema: Any) -> Any:
    """A copy of a Gemini ``Schema`` with every ``type`` name upper-cased (``"OBJECT"``).

    Only schema positions are walked (``properties`` values, ``items``, ``anyOf`` members), so
    a property that happens to be called ``type`` is left alone.

    Example:
        >>> upper_types({"type": "object", "properties": {"type": {"type": "string"}}})
        {'type': 'OBJECT', 'properties': {'type': {'type': 'STRING'}}}
    """
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out[key] = value.upper()
        elif key == "properties" and isinstance(value, Mapping):
            out[key] = {name: upper_types(sub) for name, sub in value.items()}
        elif key == "items":
            out[key] = upper_types(value)
        elif key == "anyOf" and isinstance(value, list):
            out[key] = [upper_types(sub) for sub in value]
        else:
            out[key] = value
    return out


def _declaration(tool: ToolDef, mode: SchemaMode) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": tool.name, "description": tool.description}
    if mode == "json_schema":
        declaration["parametersJsonSchema"] = dict(tool.parameters)
    else:
        declaration["parameters"] = upper_types(sanitize(tool.parameters, for_function=True))
    return declaration


# --------------------------------------------------------------------------- parts


def _args(args: Any) -> dict[str, Any]:
    """Tool-call arguments as the object ``functionCall.args`` needs."""
    if args is None:
        return {}
    if isinstance(args, str):
        try:
            parsed = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return {"_raw": args}
        args = parsed
    if isinstance(args, Mapping):
        return dict(args)
    return {"value": args}


def _guess_mime(url: str) -> str | None:
    path = url.split("?", 1)[0].split("#", 1)[0]
    guessed, _ = mimetypes.guess_type(path, strict=False)
    return guessed


def _media(source: MediaSource, kind: str) -> dict[str, Any]:
    if source.type == "base64":
        if not source.data:
            raise ModelOther(f"{kind} source of type 'base64' has no data")
        default = "image/png" if kind == "image" else "audio/wav"
        return {"inlineData": {"mimeType": source.mime_type or default, "data": source.data}}
    if not source.url:
        raise ModelOther(f"{kind} source of type 'url' has no url")
    data: dict[str, Any] = {"fileUri": source.url}
    mime = source.mime_type or _guess_mime(source.url)
    if mime:
        data["mimeType"] = mime
    return {"fileData": data}


def _input_part(part: ContentPart) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"text": part.text}
    if isinstance(part, ImagePart):
        return _media(part.source, "image")
    if isinstance(part, AudioPart):
        return _media(part.source, "audio")
    return None  # reasoning and tool_use parts have no place in a user turn


def _call_part(name: str, args: Any, data: Mapping[str, Any] | None) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name, "args": _args(args)}
    gemini_id = (data or {}).get(CALL_ID_KEY)
    if isinstance(gemini_id, str) and gemini_id:
        call["id"] = gemini_id
    part: dict[str, Any] = {"functionCall": call}
    signature = (data or {}).get(SIGNATURE_KEY)
    if isinstance(signature, str) and signature:
        part["thoughtSignature"] = signature
    return part


def _tool_output(parts: list[ContentPart]) -> tuple[str, list[dict[str, Any]]]:
    """The text of a tool result and the inline media that can follow its response."""
    texts: list[str] = []
    media: list[dict[str, Any]] = []
    dropped = 0
    for part in parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ImagePart) and part.source.type == "base64" and part.source.data:
            media.append(_media(part.source, "image"))
        elif not isinstance(part, ReasoningPart):
            dropped += 1
    text = "".join(texts)
    if media:
        note = f"[{len(media)} image part(s) follow this response]"
        text = f"{text}\n{note}" if text else note
    if dropped:
        note = f"[{dropped} non-text part(s) of this result could not be sent to Gemini]"
        text = f"{text}\n{note}" if text else note
    return text, media


def _response_of(text: str, media: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``functionResponse.response`` of a successful result: the result itself when its
    text is one JSON object (and no media note was added to it), else ``{"output": text}``."""
    if not media and text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"output": text}


# --------------------------------------------------------------------------- contents


@dataclass
class _Slot:
    """One function call in a model content, waiting for its result."""

    name: str
    gemini_id: str | None
    response: dict[str, Any] | None = None
    media: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Block:
    role: Literal["user", "model"]
    parts: list[dict[str, Any]] = field(default_factory=list)
    slots: list[_Slot] = field(default_factory=list)


@dataclass
class _Builder:
    blocks: list[_Block] = field(default_factory=list)
    system: list[str] = field(default_factory=list)
    open_model: _Block | None = None
    pending: dict[str, list[_Slot]] = field(default_factory=dict)

    def model_block(self) -> _Block:
        if self.open_model is None:
            self.open_model = _Block("model")
            self.blocks.append(self.open_model)
        return self.open_model

    def add_call(self, call_id: str, name: str, args: Any, data: Mapping[str, Any] | None) -> None:
        block = self.model_block()
        part = _call_part(name, args, data)
        block.parts.append(part)
        slot = _Slot(name=name, gemini_id=part["functionCall"].get("id"))
        block.slots.append(slot)
        self.pending.setdefault(call_id, []).append(slot)

    def add_assistant(self, message: AssistantMessage) -> None:
        block = self.model_block()
        text = text_of(message.content)
        if text:
            part: dict[str, Any] = {"text": text}
            signature = (message.provider_data or {}).get(TEXT_SIGNATURE_KEY)
            if isinstance(signature, str) and signature:
                part["thoughtSignature"] = signature
            block.parts.append(part)
        for p in message.content:
            if isinstance(p, ImagePart):
                block.parts.append(_media(p.source, "image"))
        for p in message.content:
            if isinstance(p, ToolUsePart):
                self.add_call(p.call_id, p.name, p.args, None)

    def add_result(self, result: ToolResult) -> None:
        self.open_model = None
        text, media = _tool_output(result.content)
        waiting = self.pending.get(result.call_id)
        if not waiting:
            label = "error result" if result.is_error else "result"
            note = f"[tool {label} for call {result.call_id}]\n{text}"
            self.blocks.append(_Block("user", [{"text": note}]))
            return
        slot = waiting.pop(0)
        slot.response = {"error": text} if result.is_error else _response_of(text, media)
        slot.media = media

    def add(self, item: Item) -> None:
        if isinstance(item, SystemMessage):
            text = text_of(item.content)
            if text:
                self.system.append(text)
        elif isinstance(item, ToolCall):
            self.add_call(item.call_id, item.name, item.args, item.provider_data)
        elif isinstance(item, AssistantMessage):
            if self.open_model is not None and self.open_model.slots:
                self.open_model = None  # text after calls starts a new model turn
            self.add_assistant(item)
        elif isinstance(item, ToolResult):
            self.add_result(item)
        elif isinstance(item, UserMessage):
            self.open_model = None
            parts = [p for p in (_input_part(x) for x in item.content) if p is not None]
            self.blocks.append(_Block("user", parts))

    def contents(self) -> list[dict[str, Any]]:
        ordered: list[_Block] = []
        for index, block in enumerate(self.blocks):
            ordered.append(block)
            if block.role != "model" or not block.slots:
                continue
            if all(s.response is None for s in block.slots) and index == len(self.blocks) - 1:
                continue  # the newest calls, still waiting: nothing to answer yet
            responses: list[dict[str, Any]] = []
            media: list[dict[str, Any]] = []
            for slot in block.slots:
                response: dict[str, Any] = {
                    "name": slot.name,
                    "response": (
                        slot.response if slot.response is not None else {"error": _NO_RESULT}
                    ),
                }
                if slot.gemini_id:
                    response["id"] = slot.gemini_id
                responses.append({"functionResponse": response})
                media.extend(slot.media)
            ordered.append(_Block("user", responses + media))
        out: list[dict[str, Any]] = []
        for block in ordered:
            parts = [p for p in block.parts if p.get("text", None) != ""]
            if not parts:
                continue
            if out and out[-1]["role"] == block.role:
                out[-1]["parts"].extend(parts)
            else:
                out.append({"role": block.role, "parts": parts})
        return out


def _translate(items: Iterable[Item]) -> tuple[list[dict[str, Any]], list[str]]:
    builder = _Builder()
    for item in items:
        builder.add(item)
    return builder.contents(), builder.system


# --------------------------------------------------------------------------- settings


def check_conflict(request: ModelRequest) -> None:
    """Refuse structured output combined with function calling (Gemini rejects it).

    Raises:
        ModelOther: a JSON response format is set while tools are offered or a
            ``tool_choice`` other than ``none`` is set.
    """
    settings = request.settings
    fmt = settings.response_format
    if not isinstance(fmt, JsonSchemaFormat | JsonObjectFormat):
        return
    choice = settings.tool_choice
    if request.tools or (choice is not None and choice.mode != "none"):
        what = "tools" if request.tools else f"tool_choice={choice.mode!r}" if choice else ""
        raise ModelOther(
            f"Gemini rejects structured output ({fmt.type} response format) combined with "
            f"function calling ({what}); drop the tools and tool_choice for the structured "
            "turn or drop the response format. Nothing was sent."
        )


def _tool_config(settings: ModelSettings) -> dict[str, Any] | None:
    choice = settings.tool_choice
    if choice is None:
        return None
    if choice.mode == "tool":
        if not choice.name:
            raise ConfigError("ToolChoice(mode='tool') needs a tool name: ToolChoice.tool(name)")
        config: dict[str, Any] = {"mode": "ANY", "allowedFunctionNames": [choice.name]}
    else:
        config = {"mode": {"auto": "AUTO", "none": "NONE", "required": "ANY"}[choice.mode]}
    return {"functionCallingConfig": config}


def _merge_extra(body: dict[str, Any], extra: Mapping[str, Any]) -> None:
    generation: dict[str, Any] = body["generationConfig"]
    generation.update((k, v) for k, v in extra.items() if k in _GENERATION_CONFIG_KEYS)
    merge_extra(body, {k: v for k, v in extra.items() if k not in _GENERATION_CONFIG_KEYS})


def build_gemini_body(
    request: ModelRequest, *, schema_mode: SchemaMode = "openapi"
) -> dict[str, Any]:
    """The JSON body of ``generateContent`` / ``streamGenerateContent`` for ``request``.

    Args:
        request: the conversation, tools and settings.
        schema_mode: ``"openapi"`` (default) sends sanitized ``parameters`` / ``responseSchema``;
            ``"json_schema"`` sends the schemas as given in ``parametersJsonSchema`` /
            ``responseJsonSchema``.

    Returns:
        A JSON-ready dict.

    Raises:
        ModelOther: structured output combined with function calling, or a media part
            without data.
        ConfigError: ``ToolChoice(mode="tool")`` without a name.
        helikon.errors.SchemaError: a schema cannot be sanitized.
    """
    check_conflict(request)
    contents, system = _translate(request.messages)
    body: dict[str, Any] = {"contents": contents}
    if system:
        body["systemInstruction"] = {"role": "user", "parts": [{"text": "\n\n".join(system)}]}
    settings = request.settings
    if request.tools:
        body["tools"] = [
            {"functionDeclarations": [_declaration(t, schema_mode) for t in request.tools]}
        ]
        tool_config = _tool_config(settings)
        if tool_config is not None:
            body["toolConfig"] = tool_config
    generation = sampling(settings, top_p="topP", max_tokens="maxOutputTokens")
    fmt = settings.response_format
    if isinstance(fmt, JsonSchemaFormat):
        generation["responseMimeType"] = "application/json"
        if schema_mode == "json_schema":
            generation["responseJsonSchema"] = dict(fmt.schema)
        else:
            generation["responseSchema"] = upper_types(sanitize(fmt.schema))
    elif isinstance(fmt, JsonObjectFormat):
        generation["responseMimeType"] = "application/json"
    body["generationConfig"] = generation
    _merge_extra(body, settings.extra)
    return body
