"""Translate a helikon :class:`~helikon.core.model.ModelRequest` into Converse parameters.

The result is the keyword arguments of boto3's ``converse`` / ``converse_stream`` (without
``modelId``); binary fields (image bytes, redacted reasoning) are ``bytes``, which boto3
base64-encodes on the wire. The rules:

* ``system`` items, wherever they sit, are hoisted into ``system`` (one text block each; empty
  ones are left out because Converse rejects blank system text).
* An assistant turn is the assistant message plus the ``tool_call`` items after it. Its
  blocks go in this order: reasoning (``reasoningContent``, exactly as received), text, then
  ``toolUse``. Reasoning is sent back only when it carries a signature or redacted content
  (another provider's unsigned reasoning cannot be verified and is left out); when a turn had
  several reasoning blocks, ``provider_data["bedrock_reasoning"]`` holds them and they are
  sent verbatim.
* ``tool_result`` items become ``toolResult`` blocks at the head of the next user message;
  consecutive results share it. **Content is never empty** (field case BR-04): a result with
  no text, or only empty text, is sent as ``[{"text": "(no output)"}]`` (an error result as
  ``"(tool error)"``); the stored item keeps its real value, only the wire form is padded.
  ``status`` (``"success"`` / ``"error"``) is sent to the families that accept it (Claude,
  Nova); for the others the error text alone tells the model.
* Tool-use ids are made valid (``[a-zA-Z0-9_.:-]``, at most 64 characters) and unique within
  the request; each result is paired with the earliest call of its id still waiting.
* Consecutive messages of the same role are merged (Converse wants them alternating); empty
  text parts and messages left with no block are dropped.
* Images: base64 ``png`` / ``jpeg`` / ``gif`` / ``webp`` as bytes, ``s3://`` URLs as
  ``s3Location``. Other URLs and audio raise :class:`~helikon.errors.ModelOther`.
* Tools: ``toolSpec`` with the input schema rewritten by :func:`helikon.schema.bedrock`.
  When no tools are offered but the history holds tool calls, Converse still requires a
  ``toolConfig``; the tools named in the history are declared with an empty object schema.
* ``tool_choice``: ``auto`` -> ``{"auto": {}}``, ``required`` -> ``{"any": {}}``, a name ->
  ``{"tool": {"name": ...}}``. Converse has no ``none``: the tools are left out unless the
  history needs a ``toolConfig`` (then the model can still call one).
  ``parallel_tool_calls`` has no Converse field and is ignored.
* Structured output (``JsonSchemaFormat``) on the families that honour a forced tool choice
  (Anthropic, Amazon Nova, Mistral): a reserved tool (:data:`STRUCTURED_OUTPUT_TOOL`) whose
  input schema is the answer's schema (wrapped in ``{"value": ...}`` when it is not an
  object) is added and forced (``{"tool": ...}``; ``{"any": {}}`` when other tools are on
  offer; left ``auto`` when Claude's extended thinking is on, which forbids forcing). The
  response side turns that call back into the answer text. Other families, and
  ``JsonObjectFormat`` everywhere, get a plain text request; the loop still validates the
  answer.
* Settings: ``max_output_tokens`` (or the model's ``max_tokens``) -> ``inferenceConfig.maxTokens``,
  ``temperature``, ``top_p`` -> ``topP``. ``extra`` is merged last into the parameters; where
  both sides hold an object (``inferenceConfig``, ``additionalModelRequestFields``) the two are
  merged one level deep. Use it for ``additionalModelRequestFields`` (e.g. Claude's
  ``thinking``), ``guardrailConfig``, ``outputConfig``, ``performanceConfig``, ... .
* Caching (:class:`~helikon.providers.bedrock.settings.CachePoints`): ``cachePoint`` blocks
  after the system prompt, after the tools and at the end of the last N user messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from helikon.core.items import AssistantMessage, ContentPart, Item, ToolResult
from helikon.core.model import JsonSchemaFormat, ModelRequest, ModelSettings
from helikon.errors import ConfigError
from helikon.providers._json import merge_extra
from helikon.providers._turns import TurnBlocks, fold_turns, last_user_turns
from helikon.providers.bedrock._blocks import (
    ConverseCallIds,
    reasoning_blocks,
    tool_input,
    tool_result_content,
    user_blocks,
)
from helikon.providers.bedrock._family import (
    FORCED_TOOL_FAMILIES,
    TOOL_RESULT_STATUS_FAMILIES,
    ModelFamily,
)
from helikon.providers.bedrock.settings import CachePoints
from helikon.schema import bedrock as bedrock_schema

__all__ = [
    "STRUCTURED_OUTPUT_TOOL",
    "ConverseParams",
    "StructuredAnswer",
    "build_converse_params",
]

STRUCTURED_OUTPUT_TOOL = "helikon_structured_output"
"""The reserved tool name used to synthesize structured output."""

_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class StructuredAnswer:
    """The reserved tool of a structured-output request; ``wrapped``: the answer is
    ``input["value"]`` because the schema was not an object."""

    name: str
    wrapped: bool


@dataclass(slots=True)
class ConverseParams:
    """The Converse keyword arguments (``params``) and the structured answer, if any."""

    params: dict[str, Any]
    structured: StructuredAnswer | None = None


# --------------------------------------------------------------------------- messages


@dataclass
class _Conversation:
    system: list[str]
    messages: list[dict[str, Any]]
    tool_names: list[str]  # tools named by calls in the history, first-seen order


class _ConverseBlocks(TurnBlocks):
    """Converse blocks; notes the tool names the calls use."""

    def __init__(self, family: ModelFamily) -> None:
        self._ids = ConverseCallIds()
        self._with_status = family in TOOL_RESULT_STATUS_FAMILIES
        self.names: dict[str, None] = {}

    def keep_system(self, text: str) -> bool:
        return bool(text.strip())

    def user(self, content: list[ContentPart]) -> list[dict[str, Any]]:
        return user_blocks(content)

    def reasoning(self, message: AssistantMessage) -> list[dict[str, Any]]:
        return reasoning_blocks(message)

    def text(self, text: str) -> dict[str, Any]:
        return {"text": text}

    def tool_use(self, call_id: str, name: str, args: Any) -> dict[str, Any]:
        self.names[name] = None
        use = {"toolUseId": self._ids.call(call_id), "name": name, "input": tool_input(args)}
        return {"toolUse": use}

    def tool_result(self, result: ToolResult) -> dict[str, Any]:
        block: dict[str, Any] = {
            "toolUseId": self._ids.result(result.call_id),
            "content": tool_result_content(result),
        }
        if self._with_status:
            block["status"] = "error" if result.is_error else "success"
        return {"toolResult": block}


def _conversation(items: list[Item], family: ModelFamily) -> _Conversation:
    write = _ConverseBlocks(family)
    system, messages = fold_turns(items, write)
    return _Conversation(system, messages, list(write.names))


# --------------------------------------------------------------------------- tools, settings


def _tool_spec(name: str, description: str, schema: dict[str, Any] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name}
    if description:
        spec["description"] = description
    spec["inputSchema"] = {"json": bedrock_schema(schema or _EMPTY_OBJECT)}
    return spec


def _tool_choice(settings: ModelSettings) -> dict[str, Any] | None:
    choice = settings.tool_choice
    if choice is None or choice.mode == "none":
        return None
    if choice.mode == "tool":
        if not choice.name:
            raise ConfigError("ToolChoice(mode='tool') needs a tool name: ToolChoice.tool(name)")
        return {"tool": {"name": choice.name}}
    if choice.mode == "required":
        return {"any": {}}
    return {"auto": {}}


def _thinking_on(params: dict[str, Any]) -> bool:
    fields = params.get("additionalModelRequestFields")
    thinking = fields.get("thinking") if isinstance(fields, dict) else None
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def _is_object_schema(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "object" or (kind is None and "properties" in schema)


def _inference_config(settings: ModelSettings, max_tokens: int | None) -> dict[str, Any]:
    config: dict[str, Any] = {}
    limit = settings.max_output_tokens or max_tokens
    if limit is not None:
        config["maxTokens"] = limit
    if settings.temperature is not None:
        config["temperature"] = settings.temperature
    if settings.top_p is not None:
        config["topP"] = settings.top_p
    return config


def _mark_user_turns(messages: list[dict[str, Any]], cache: CachePoints) -> None:
    for message in last_user_turns(messages, cache.last_turns):
        message["content"].append(cache.block())


def build_converse_params(
    request: ModelRequest,
    *,
    family: ModelFamily,
    max_tokens: int | None = None,
    cache: CachePoints | None = None,
) -> ConverseParams:
    """The Converse keyword arguments (without ``modelId``) for ``request``.

    Args:
        request: the conversation, tools and settings.
        family: the model family (decides ``toolResult.status`` and structured output).
        max_tokens: the default ``maxTokens`` (``settings.max_output_tokens`` wins); ``None``
            leaves the model's default.
        cache: where to put cache points, if anywhere.

    Returns:
        The parameters and, for a synthesized structured-output request, its reserved tool.

    Raises:
        ModelOther: content Converse cannot carry (audio, an image URL that is not ``s3://``,
            an unsupported image type).
        ConfigError: ``ToolChoice(mode="tool")`` without a name.
    """
    settings = request.settings
    convo = _conversation(request.messages, family)
    params: dict[str, Any] = {"messages": convo.messages}
    if convo.system:
        params["system"] = [{"text": text} for text in convo.system]
    inference = _inference_config(settings, max_tokens)
    if inference:
        params["inferenceConfig"] = inference

    tools = [{"toolSpec": _tool_spec(t.name, t.description, t.parameters)} for t in request.tools]
    for tool, spec in zip(request.tools, tools, strict=True):
        if tool.strict is not None:
            spec["toolSpec"]["strict"] = tool.strict
    choice = _tool_choice(settings)
    if settings.tool_choice is not None and settings.tool_choice.mode == "none":
        tools = []
    structured: StructuredAnswer | None = None
    fmt = settings.response_format
    if isinstance(fmt, JsonSchemaFormat) and family in FORCED_TOOL_FAMILIES:
        wrapped = not _is_object_schema(fmt.schema)
        schema = (
            {"type": "object", "properties": {"value": fmt.schema}, "required": ["value"]}
            if wrapped
            else fmt.schema
        )
        description = (
            f"Give the final answer by calling this tool: its input is the answer, "
            f"a {fmt.name} value."
        )
        forced = {"tool": {"name": STRUCTURED_OUTPUT_TOOL}} if not tools else {"any": {}}
        if _thinking_on(settings.extra):
            forced = {"auto": {}}
        if choice is None or "auto" in choice:
            choice = forced
        tools.append({"toolSpec": _tool_spec(STRUCTURED_OUTPUT_TOOL, description, schema)})
        structured = StructuredAnswer(STRUCTURED_OUTPUT_TOOL, wrapped)
    if not tools and convo.tool_names:
        tools = [
            {"toolSpec": _tool_spec(name, "Not available in this turn.", None)}
            for name in convo.tool_names
        ]
        choice = None
    if tools:
        if cache is not None and cache.tools:
            tools.append(cache.block())
        tool_config: dict[str, Any] = {"tools": tools}
        if choice is not None:
            tool_config["toolChoice"] = choice
        params["toolConfig"] = tool_config
    if cache is not None:
        if cache.system and "system" in params:
            params["system"].append(cache.block())
        _mark_user_turns(convo.messages, cache)
    merge_extra(params, settings.extra)
    return ConverseParams(params, structured)
