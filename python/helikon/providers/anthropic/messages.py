"""Anthropic Messages behind the helikon :class:`~helikon.core.model.Model` protocol.

:class:`AnthropicModel` drives ``POST /v1/messages`` through the official ``anthropic`` SDK
(``AsyncAnthropic``) and turns the answer into model events: :class:`TokenDelta` for text,
:class:`ReasoningDelta` for extended thinking (with the block's signature or redacted data),
:class:`ToolCallDelta` for ``tool_use`` blocks and their ``input_json_delta`` fragments, one
:class:`UsageReported` and one terminal :class:`Finish`.

How a request is built is documented in ``helikon.providers.anthropic._request`` and how the
answer is read in ``helikon.providers.anthropic._response``; in short: system items are
hoisted into ``system``, tool results are paired with their ``tool_use`` turn, thinking blocks
go back unchanged and first in their assistant turn, and
:class:`~helikon.providers.anthropic.settings.CacheStrategy` places ``cache_control``
breakpoints.

Structured output: ``ResponseFormat`` :class:`~helikon.core.model.JsonSchemaFormat` is sent the
way the recorded traffic (``shared/wire/anthropic/messages_json_schema.yaml``) shows the API
taking it: ``output_config: {"format": {"type": "json_schema", "schema": ...}}``, the schema as
given; the answer is the JSON text of the ``text`` block. No forced tool is used, so the
schema'd answer streams as ordinary text and tools stay usable in the same request.

Finish reasons: ``end_turn`` / ``stop_sequence`` -> ``STOP``, ``tool_use`` -> ``TOOL_CALLS``,
``max_tokens`` / ``model_context_window_exceeded`` -> ``LENGTH``, ``refusal`` -> ``REFUSAL``
(the stream ends normally; ``stop_details`` go to the turn's ``provider_data``), anything
else (``pause_turn``) -> ``OTHER``; ``Finish.raw`` keeps the provider's value.

Errors: see ``helikon.providers.anthropic._errors`` (429 -> ``RateLimited`` with
``retry_after``, 529 / 5xx -> ``ModelUnavailable``, "prompt is too long" ->
``ContextLengthExceeded``, network -> ``TransportError``, 401 -> ``ModelOther`` naming
``ANTHROPIC_API_KEY``).

Cancellation: the token is checked between events, and the wait for the response headers and
for each next event races ``cancel.wait()``; when it fires the HTTP stream is closed and the
iterator ends without a ``Finish``.

Limitations:
    * Audio input is rejected (the Messages API takes none); documents (PDF) are not mapped.
    * ``JsonObjectFormat`` has no Messages equivalent and sends nothing; the loop still
      validates the answer.
    * Server tools (web search, code execution), citations and ``pause_turn`` continuation
      are not interpreted.
    * An SDK client created by the model is bound to the event loop that first used it; a
      new loop gets a new client. Call :meth:`AnthropicModel.aclose` when done.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

import anthropic

from helikon.core.model import ModelCapabilities, ModelRequest
from helikon.errors import ConfigError, ModelError
from helikon.providers._base import (
    BuildsOwner,
    Call,
    ProviderModel,
    require_api_key,
    require_retries,
)
from helikon.providers._stream import Cancelled
from helikon.providers.anthropic._errors import map_anthropic_error
from helikon.providers.anthropic._request import build_messages_body
from helikon.providers.anthropic._response import MessageTurn
from helikon.providers.anthropic.settings import CacheStrategy, ExtendedThinking

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicModel"]

DEFAULT_MAX_TOKENS = 8192
"""``max_tokens`` when neither the model nor ``ModelSettings.max_output_tokens`` sets one."""


class AnthropicModel(ProviderModel):
    """A Claude model on the Anthropic Messages API. Build it with ``AnthropicModel.messages``
    (the constructor under the API's name).

    Args:
        model_id: the model name, e.g. ``"claude-sonnet-4-5"``.
        api_key: the API key; defaults to ``ANTHROPIC_API_KEY``.
        base_url: the API root (without ``/v1``); defaults to ``ANTHROPIC_BASE_URL``,
            then the SDK's.
        client: a ready ``AsyncAnthropic`` to use instead (then ``api_key``,
            ``base_url``, ``max_retries`` and ``timeout`` are not used, and the client is
            not closed by :meth:`aclose`).
        max_tokens: the output cap (the API requires one);
            ``ModelSettings.max_output_tokens`` overrides it per request.
        thinking: extended thinking, e.g. ``ExtendedThinking(budget_tokens=2048)``.
        cache: prompt-cache breakpoints, e.g. ``CacheStrategy()``; ``None`` sends none.
        max_retries: SDK-level retries; 0 by default because retrying is a composition
            concern (wrap the model in a retrying model).
        timeout: request timeout in seconds; ``None`` keeps the SDK default.
        stream: stream the answer (SSE) or fetch it whole; events are the same.

    Raises:
        ConfigError: no API key (argument or ``ANTHROPIC_API_KEY``), a thinking budget
            not below ``max_tokens``, or another bad argument.

    Example:
        >>> model = AnthropicModel.messages("claude-sonnet-4-5", api_key="sk-ant-test")
        >>> (model.provider, model.model)
        ('anthropic', 'claude-sonnet-4-5')
    """

    #: the structured-output mode a typed run with tools uses by default
    #: (``Agent(output_mode=None)``, see helikon.core.retries): an output tool works on every
    #: Claude model with tools (``output_config`` needs Sonnet 4.5 or later)
    output_mode: ClassVar[str] = "tool"

    messages = BuildsOwner()
    """A model on the Messages API: ``AnthropicModel.messages(model_id, ...)`` takes the
    constructor's arguments (see the class)."""

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: anthropic.AsyncAnthropic | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        thinking: ExtendedThinking | None = None,
        cache: CacheStrategy | None = None,
        max_retries: int = 0,
        timeout: float | None = None,
        stream: bool = True,
    ) -> None:
        label = "AnthropicModel.messages"
        super().__init__(model_id, label=label, stream=stream, client=client)
        self._api_key = require_api_key(
            label,
            api_key,
            ("ANTHROPIC_API_KEY",),
            client_given=client is not None,
            client_hint="client=AsyncAnthropic(...)",
        )
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ConfigError(f"{label}: max_tokens must be a positive int")
        if thinking is not None and thinking.budget_tokens >= max_tokens:
            raise ConfigError(
                f"{label}: ExtendedThinking.budget_tokens "
                f"({thinking.budget_tokens}) must be below max_tokens ({max_tokens})"
            )
        self._max_retries = require_retries(label, max_retries)
        self._base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self._max_tokens = max_tokens
        self._thinking = thinking
        self._cache = cache
        self._timeout = timeout

    # ------------------------------------------------------------------ Model protocol

    @property
    def provider(self) -> str:
        """``"anthropic"``."""
        return "anthropic"

    @property
    def thinking(self) -> ExtendedThinking | None:
        """The extended-thinking setting, if on."""
        return self._thinking

    @property
    def cache(self) -> CacheStrategy | None:
        """The prompt-cache strategy, if any."""
        return self._cache

    def capabilities(self) -> ModelCapabilities:
        """Streaming (as configured), tools, parallel calls, structured output, vision and
        prompt caching; reasoning when extended thinking is on; no server-managed state, no
        audio."""
        return ModelCapabilities(
            streaming=self._stream,
            tools=True,
            parallel_tool_calls=True,
            structured_output=True,
            reasoning=self._thinking is not None,
            vision=True,
            prompt_caching=True,
        )

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body this model sends for ``request`` (for inspection and tests).

        Example:
            >>> from helikon.core.items import SystemMessage, TextPart, UserMessage
            >>> model = AnthropicModel.messages("claude-sonnet-4-5", api_key="k", max_tokens=512)
            >>> body = model.request_body(ModelRequest(messages=[
            ...     SystemMessage(content=[TextPart(text="Be brief.")]), UserMessage.text("hi")]))
            >>> body["system"], body["messages"]
            ([{'type': 'text', 'text': 'Be brief.'}], [{'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}]}])
        """  # noqa: E501
        return build_messages_body(
            self._model_id,
            request,
            max_tokens=self._max_tokens,
            thinking=self._thinking,
            cache=self._cache,
            stream=self._stream,
        )

    # ------------------------------------------------------------------ skeleton hooks

    def _new_client(self) -> anthropic.AsyncAnthropic:
        options: dict[str, Any] = {"max_retries": self._max_retries}
        if self._timeout is not None:
            options["timeout"] = self._timeout
        if self._base_url is not None:
            options["base_url"] = self._base_url
        return anthropic.AsyncAnthropic(api_key=self._api_key, **options)

    def _build_body(self, request: ModelRequest) -> dict[str, Any]:
        return self.request_body(request)

    async def _send(self, body: dict[str, Any], call: Call) -> Any:
        sent = await call.step(self._create(self._clients.get(), body))
        if self._stream and not isinstance(sent, Cancelled):
            call.on_close(sent.close)
        return sent

    def _new_turn(self, body: Any, sent: Any) -> MessageTurn:
        return MessageTurn()

    def _map_error(self, exc: BaseException) -> ModelError:
        # SDK errors, HTTP-library errors below it, SDK-side checks: all mapped
        return map_anthropic_error(exc)

    async def _close_client(self, client: Any) -> None:
        await client.close()

    async def _create(self, client: anthropic.AsyncAnthropic, body: dict[str, Any]) -> Any:
        payload = dict(body)
        model = payload.pop("model")
        max_tokens = payload.pop("max_tokens")
        messages = payload.pop("messages")
        stream = bool(payload.pop("stream"))
        create: Any = client.messages.create
        return await create(
            model=model,
            max_tokens=max_tokens,
            messages=messages,
            stream=stream,
            extra_body=payload,
        )
