"""OpenAI Chat Completions behind the helikon :class:`~helikon.core.model.Model` protocol.

:class:`OpenAIModel` drives ``POST /v1/chat/completions`` through the official ``openai``
SDK (``AsyncOpenAI``) and turns the answer into model events: a :class:`TokenDelta` per
content fragment, a :class:`ToolCallDelta` per tool-call fragment, one
:class:`UsageReported` and one terminal :class:`Finish`. It works against any
OpenAI-compatible server (``base_url``).

Request translation (:meth:`OpenAIModel.request_body`):
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

Response translation:
    * ``finish_reason`` maps to :class:`FinishReason` (``stop``, ``length``, ``tool_calls`` /
      ``function_call``, ``content_filter``, anything else ``OTHER``); ``Finish.raw`` keeps the
      provider's value. A ``stop`` that carries tool calls (OpenAI does this when
      ``tool_choice`` forces a named function) is reported as ``TOOL_CALLS``.
    * Refusals (``message.refusal`` / ``delta.refusal``) are not text. When the model
      refused and produced no content and no tool call, the stream ends by raising
      :class:`~helikon.errors.Refused` whose message is the refusal text (after reporting
      usage). When a refusal comes with other output, the output is kept and the finish
      reason is ``REFUSAL``.
    * ``reasoning_content`` / ``reasoning`` deltas, which some OpenAI-compatible servers send,
      become :class:`ReasoningDelta`; OpenAI itself sends no reasoning text on this API.
    * A stream that ends without a ``finish_reason`` raises
      :class:`~helikon.errors.TransportError` (it was cut off).

Cancellation: the token is checked between chunks and the wait for the next chunk (and for
the response headers) races ``cancel.wait()``; when it fires the HTTP stream is closed and the
iterator ends without a ``Finish``.

Limitations:
    * Only the first choice (``n=1``) is read.
    * Audio input needs base64 data (``input_audio``); audio by URL is rejected.
    * An SDK client created by the model is bound to the event loop that first used it; a
      new loop gets a new client. Call :meth:`OpenAIModel.aclose` when done.
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from collections.abc import AsyncIterator, Awaitable, Iterable, Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import openai

from helikon.core.items import (
    AssistantMessage,
    AudioPart,
    ContentPart,
    ImagePart,
    Item,
    MediaSource,
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
    ReasoningDelta,
    TextFormat,
    TokenDelta,
    ToolCallDelta,
    ToolDef,
    UsageReported,
)
from helikon.core.usage import Usage
from helikon.errors import ConfigError, ModelError, ModelOther, Refused, TransportError
from helikon.providers._stream import Cancelled, next_item, race
from helikon.providers.openai._errors import map_openai_error
from helikon.providers.openai._strict import strict_schema

if TYPE_CHECKING:
    from types import TracebackType

    from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionMessageParam
    from openai.types.completion_usage import CompletionUsage

    from helikon.core.cancel import CancellationToken
    from helikon.providers.openai.responses import OpenAIResponsesModel

__all__ = ["OpenAIModel"]

_T = TypeVar("_T")

_FINISH_MAP: dict[str, FinishReason] = {
    "stop": FinishReason.STOP,
    "length": FinishReason.LENGTH,
    "tool_calls": FinishReason.TOOL_CALLS,
    "function_call": FinishReason.TOOL_CALLS,
    "content_filter": FinishReason.CONTENT_FILTER,
}
_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}
_REASONING_FIELDS = ("reasoning_content", "reasoning")


# --------------------------------------------------------------------------- request side


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _arguments(args: Any) -> str:
    """Tool-call arguments as the JSON text the API expects (raw strings pass through)."""
    if isinstance(args, str):
        return args
    return _json_text({} if args is None else args)


def _media_url(source: MediaSource, default_mime: str) -> str:
    if source.type == "url":
        if not source.url:
            raise ModelOther("image source of type 'url' has no url")
        return source.url
    if not source.data:
        raise ModelOther("media source of type 'base64' has no data")
    return f"data:{source.mime_type or default_mime};base64,{source.data}"


def _user_part(part: ContentPart) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        return {"type": "image_url", "image_url": {"url": _media_url(part.source, "image/png")}}
    if isinstance(part, AudioPart):
        if part.source.type != "base64" or not part.source.data:
            raise ModelOther("Chat Completions accepts audio only as base64 data, not by URL")
        fmt = _AUDIO_FORMATS.get((part.source.mime_type or "audio/wav").lower(), "wav")
        return {"type": "input_audio", "input_audio": {"data": part.source.data, "format": fmt}}
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
    return _json_text([p.model_dump(mode="json", exclude_none=True) for p in parts])


@dataclass
class _IdRewriter:
    """Make tool-call ids unique within one request, pairing each result with its call."""

    reserved: set[str] = field(default_factory=set)  # every id the history uses as given
    used: set[str] = field(default_factory=set)
    seen: dict[str, int] = field(default_factory=dict)
    pending: dict[str, list[str]] = field(default_factory=dict)
    latest: dict[str, str] = field(default_factory=dict)

    def call(self, original: str) -> str:
        count = self.seen.get(original, 0) + 1
        self.seen[original] = count
        new = original
        if count > 1:
            n = count
            while f"{original}_{n}" in self.used or f"{original}_{n}" in self.reserved:
                n += 1
            new = f"{original}_{n}"
        self.used.add(new)
        self.pending.setdefault(original, []).append(new)
        self.latest[original] = new
        return new

    def result(self, original: str) -> str:
        waiting = self.pending.get(original)
        if waiting:
            return waiting.pop(0)
        return self.latest.get(original, original)


def _collect_ids(items: Iterable[Item]) -> set[str]:
    """Every call id the history uses as given (so rewritten ids cannot collide with them)."""
    ids: set[str] = set()
    for item in items:
        if isinstance(item, ToolCall):
            ids.add(item.call_id)
        elif isinstance(item, AssistantMessage):
            ids.update(p.call_id for p in item.content if isinstance(p, ToolUsePart))
    return ids


def _messages(items: list[Item]) -> list[dict[str, Any]]:
    """Translate helikon items into Chat Completions messages."""
    system_texts: list[str] = []
    out: list[dict[str, Any]] = []
    ids = _IdRewriter(reserved=_collect_ids(items))
    open_assistant: dict[str, Any] | None = None  # the message tool calls attach to

    def tool_call_entry(call_id: str, name: str, args: Any) -> dict[str, Any]:
        new_id = ids.call(call_id)
        return {
            "id": new_id,
            "type": "function",
            "function": {"name": name, "arguments": _arguments(args)},
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
    body: dict[str, Any] = {}
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.max_output_tokens is not None:
        body["max_completion_tokens"] = settings.max_output_tokens
    if has_tools and settings.tool_choice is not None:
        choice = settings.tool_choice
        if choice.mode == "tool":
            if not choice.name:
                raise ConfigError(
                    "ToolChoice(mode='tool') needs a tool name: ToolChoice.tool(name)"
                )
            body["tool_choice"] = {"type": "function", "function": {"name": choice.name}}
        else:
            body["tool_choice"] = choice.mode
    if has_tools and settings.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = settings.parallel_tool_calls
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


# --------------------------------------------------------------------------- response side


def _usage(usage: CompletionUsage | None) -> Usage | None:
    if usage is None:
        return None
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    completion_details = getattr(usage, "completion_tokens_details", None)
    cached = getattr(prompt_details, "cached_tokens", None) if prompt_details else None
    reasoning = (
        getattr(completion_details, "reasoning_tokens", None) if completion_details else None
    )
    prompt = usage.prompt_tokens or 0
    completion = usage.completion_tokens or 0
    return Usage(
        input_tokens=prompt,
        output_tokens=completion,
        cached_input_tokens=cached or 0,
        reasoning_tokens=reasoning or 0,
        total_tokens=usage.total_tokens or (prompt + completion),
    )


def _reasoning_text(obj: Any) -> str:
    extra = getattr(obj, "model_extra", None) or {}
    for name in _REASONING_FIELDS:
        value = extra.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def _finish_reason(raw: str, *, has_calls: bool, refused: bool) -> FinishReason:
    reason = _FINISH_MAP.get(raw, FinishReason.OTHER)
    if reason is FinishReason.STOP and has_calls:
        return FinishReason.TOOL_CALLS
    if reason is FinishReason.STOP and refused:
        return FinishReason.REFUSAL
    return reason


@dataclass
class _Turn:
    """What one response accumulated; decides how the event stream ends."""

    text_seen: bool = False
    refusal: list[str] = field(default_factory=list)
    calls: dict[int, str] = field(default_factory=dict)  # tool-call index -> call id
    names: dict[int, str] = field(default_factory=dict)
    held_args: dict[int, list[str]] = field(default_factory=dict)  # args seen before the name
    finish_raw: str | None = None
    usage: Usage | None = None

    def tool_fragment(
        self, index: int, call_id: str | None, name: str | None, args: str | None
    ) -> ToolCallDelta | None:
        if index not in self.calls:
            self.calls[index] = call_id or f"call_{index}"
        if index not in self.names:
            if not name:
                self.held_args.setdefault(index, []).append(args or "")
                return None
            self.names[index] = name
            held = "".join(self.held_args.pop(index, []))
            return ToolCallDelta(
                call_id=self.calls[index], name=name, args_delta=held + (args or "")
            )
        if not args:
            return None
        return ToolCallDelta(call_id=self.calls[index], args_delta=args)

    def ending(self) -> Iterator[ModelEvent]:
        """The closing events; raises Refused for a bare refusal."""
        if self.usage is not None:
            yield UsageReported(usage=self.usage)
        refusal = "".join(self.refusal)
        if refusal and not self.text_seen and not self.names:
            raise Refused(refusal)
        if self.finish_raw is None:
            raise TransportError("OpenAI stream ended without a finish_reason (cut off)")
        yield Finish(
            reason=_finish_reason(
                self.finish_raw, has_calls=bool(self.names), refused=bool(refusal)
            ),
            raw=self.finish_raw,
        )


def _chunk_events(turn: _Turn, chunk: ChatCompletionChunk) -> Iterator[ModelEvent]:
    if chunk.usage is not None:
        turn.usage = _usage(chunk.usage)
    for choice in chunk.choices:
        if choice.index != 0:
            continue
        delta = choice.delta
        reasoning = _reasoning_text(delta)
        if reasoning:
            yield ReasoningDelta(text=reasoning)
        if delta.content:
            turn.text_seen = True
            yield TokenDelta(text=delta.content)
        refusal = getattr(delta, "refusal", None)
        if refusal:
            turn.refusal.append(refusal)
        for call in delta.tool_calls or []:
            function = call.function
            event = turn.tool_fragment(
                call.index,
                call.id,
                function.name if function is not None else None,
                function.arguments if function is not None else None,
            )
            if event is not None:
                yield event
        if choice.finish_reason:
            turn.finish_raw = choice.finish_reason


def _completion_events(turn: _Turn, completion: ChatCompletion) -> Iterator[ModelEvent]:
    turn.usage = _usage(completion.usage)
    choice = next((c for c in completion.choices if c.index == 0), None)
    if choice is None:
        raise ModelOther("OpenAI returned a completion without choices")
    message = choice.message
    reasoning = _reasoning_text(message)
    if reasoning:
        yield ReasoningDelta(text=reasoning)
    if message.content:
        turn.text_seen = True
        yield TokenDelta(text=message.content)
    if message.refusal:
        turn.refusal.append(message.refusal)
    for index, call in enumerate(message.tool_calls or []):
        function = getattr(call, "function", None)
        if function is None:  # custom (non-function) tool calls are not supported
            continue
        event = turn.tool_fragment(index, call.id, function.name, function.arguments)
        if event is not None:
            yield event
    turn.finish_raw = choice.finish_reason


# --------------------------------------------------------------------------- the model


class OpenAIModel:
    """An OpenAI (or OpenAI-compatible) chat model. Build it with :meth:`chat`.

    Example:
        >>> model = OpenAIModel.chat("gpt-5-mini", api_key="sk-test")
        >>> (model.provider, model.model)
        ('openai', 'gpt-5-mini')
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
    ) -> None:
        if not model_id:
            raise ConfigError("OpenAIModel.chat: model_id must be a non-empty model name")
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if client is None and key is None:
            raise ConfigError(
                "OpenAIModel.chat: no API key. Set the OPENAI_API_KEY environment variable "
                "or pass api_key=... (or client=AsyncOpenAI(...))."
            )
        if max_retries < 0:
            raise ConfigError("OpenAIModel.chat: max_retries must be >= 0")
        self._model_id = model_id
        self._api_key = key
        self._base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self._organization = organization
        self._max_retries = max_retries
        self._timeout = timeout
        self._stream = stream
        self._given_client = client
        self._client: openai.AsyncOpenAI | None = None
        self._client_loop: weakref.ref[asyncio.AbstractEventLoop] | None = None

    @classmethod
    def chat(
        cls,
        model_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        organization: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        max_retries: int = 0,
        timeout: float | None = None,
        stream: bool = True,
    ) -> OpenAIModel:
        """A model on the Chat Completions API.

        Args:
            model_id: the model name, e.g. ``"gpt-5-mini"``.
            api_key: the API key; defaults to ``OPENAI_API_KEY``.
            base_url: the API root (``.../v1``); defaults to ``OPENAI_BASE_URL``, then the SDK's.
            organization: the OpenAI organization id, if any.
            client: a ready ``AsyncOpenAI`` to use instead (then ``api_key``, ``base_url``,
                ``organization``, ``max_retries`` and ``timeout`` are not used, and the
                client is not closed by :meth:`aclose`).
            max_retries: SDK-level retries; 0 by default because retrying is a composition
                concern (wrap the model in a retrying model).
            timeout: request timeout in seconds; ``None`` keeps the SDK default.
            stream: stream the answer (SSE) or fetch it whole; events are the same.

        Returns:
            The model.

        Raises:
            ConfigError: no API key (argument or ``OPENAI_API_KEY``), or a bad argument.
        """
        return cls(
            model_id,
            api_key=api_key,
            base_url=base_url,
            organization=organization,
            client=client,
            max_retries=max_retries,
            timeout=timeout,
            stream=stream,
        )

    @classmethod
    def responses(
        cls,
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
    ) -> OpenAIResponsesModel:
        """A model on the Responses API (``helikon.providers.openai.responses``).

        Args:
            model_id, api_key, base_url, organization, client, max_retries, timeout, stream:
                as for :meth:`chat`.
            server_state: chain requests with ``previous_response_id`` (from the last
                assistant turn) and send only the newer items.
            store: the request's ``store`` flag; ``None`` keeps the API default (stored).
            include: extra outputs, e.g. ``["reasoning.encrypted_content"]`` to carry
                reasoning across turns without server state.
            reasoning: the ``reasoning`` request field, e.g. ``{"effort": "low"}``.

        Returns:
            The model.

        Raises:
            ConfigError: no API key, ``server_state=True`` with ``store=False``, or a bad
                argument.
        """
        from helikon.providers.openai.responses import OpenAIResponsesModel

        return OpenAIResponsesModel(
            model_id,
            api_key=api_key,
            base_url=base_url,
            organization=organization,
            client=client,
            max_retries=max_retries,
            timeout=timeout,
            stream=stream,
            server_state=server_state,
            store=store,
            include=include,
            reasoning=reasoning,
        )

    # ------------------------------------------------------------------ Model protocol

    @property
    def provider(self) -> str:
        """``"openai"``."""
        return "openai"

    @property
    def model(self) -> str:
        """The model id requested."""
        return self._model_id

    @property
    def api(self) -> Literal["chat_completions", "responses"]:
        """Which OpenAI API this instance speaks."""
        return "chat_completions"

    def capabilities(self) -> ModelCapabilities:
        """Streaming (as configured), tools, parallel calls, structured output, vision and
        automatic prompt caching; no server-managed state, no reasoning text, no audio."""
        return ModelCapabilities(
            streaming=self._stream,
            tools=True,
            parallel_tool_calls=True,
            structured_output=True,
            server_managed_state=False,
            reasoning=False,
            vision=True,
            audio=False,
            prompt_caching=True,
        )

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body this model sends for ``request`` (for inspection and tests)."""
        return build_chat_body(self._model_id, request, stream=self._stream)

    async def invoke(
        self, request: ModelRequest, cancel: CancellationToken
    ) -> AsyncIterator[ModelEvent]:
        """Call the model and stream its answer as model events.

        Args:
            request: the conversation, tools and settings.
            cancel: stops the call promptly when fired (the iterator just ends).

        Yields:
            ``ReasoningDelta`` / ``TokenDelta`` / ``ToolCallDelta`` as they arrive, then one
            ``UsageReported`` (when the provider reports usage) and one ``Finish``.

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
                for event in _completion_events(turn, cast("ChatCompletion", started)):
                    yield event
            else:
                stream = started
                iterator = cast("AsyncIterator[ChatCompletionChunk]", stream.__aiter__())
                while True:
                    if cancel.cancelled:
                        return
                    pulled = await race(self._guard(next_item(iterator)), waiter)
                    if isinstance(pulled, Cancelled):
                        return
                    more, chunk = pulled
                    if not more or chunk is None:
                        break
                    for event in _chunk_events(turn, chunk):
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

    async def aclose(self) -> None:
        """Close the SDK client this model created (a client passed in is left open)."""
        client, self._client = self._client, None
        self._client_loop = None
        if client is not None:
            await client.close()

    async def __aenter__(self) -> OpenAIModel:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"OpenAIModel.chat({self._model_id!r}, stream={self._stream})"

    # ------------------------------------------------------------------ internals

    def _client_for_loop(self) -> openai.AsyncOpenAI:
        if self._given_client is not None:
            return self._given_client
        loop = asyncio.get_running_loop()
        current = self._client_loop() if self._client_loop is not None else None
        if self._client is None or current is not loop:
            options: dict[str, Any] = {"max_retries": self._max_retries}
            if self._timeout is not None:
                options["timeout"] = self._timeout
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key,
                base_url=self._base_url,
                organization=self._organization,
                **options,
            )
            self._client_loop = weakref.ref(loop)
        return self._client

    async def _guard(self, awaitable: Awaitable[_T]) -> _T:
        """Await ``awaitable``, translating SDK and stream failures into ModelErrors."""
        try:
            return await awaitable
        except ModelError:
            raise
        except openai.OpenAIError as exc:
            raise map_openai_error(exc) from exc
        except json.JSONDecodeError as exc:
            raise TransportError(f"OpenAI sent malformed stream data: {exc}") from exc

    async def _send(self, client: openai.AsyncOpenAI, body: dict[str, Any]) -> Any:
        payload = dict(body)
        model = payload.pop("model")
        messages = cast("list[ChatCompletionMessageParam]", payload.pop("messages"))
        stream = bool(payload.pop("stream"))
        create = client.chat.completions.create
        if stream:
            return await self._guard(
                create(model=model, messages=messages, stream=True, extra_body=payload)
            )
        return await self._guard(
            create(model=model, messages=messages, stream=False, extra_body=payload)
        )
