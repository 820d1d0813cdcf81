"""OpenAI Chat Completions behind the helikon :class:`~helikon.core.model.Model` protocol.

:class:`OpenAIModel` drives ``POST /v1/chat/completions`` through the official ``openai``
SDK (``AsyncOpenAI``) and turns the answer into model events: a :class:`TokenDelta` per
content fragment, a :class:`ToolCallDelta` per tool-call fragment, one
:class:`UsageReported` and one terminal :class:`Finish`. It works against any
OpenAI-compatible server (``base_url``). It is also the base of the Responses adapter
(``helikon.providers.openai.responses``), which shares its client handling and call loop.

How the request is built is documented in ``helikon.providers.openai._chat_request``, how the
answer is read in ``helikon.providers.openai._chat_events`` and how errors map in
``helikon.providers.openai._errors``. In short: system items become one leading ``system``
message, repeated tool-call ids are made unique, tool text is never escaped, refusals are not
text (a bare refusal raises :class:`~helikon.errors.Refused`), and a stream cut off before its
``finish_reason`` raises :class:`~helikon.errors.TransportError`.

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

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Literal, cast

import openai

from helikon.core.model import ModelCapabilities, ModelEvent, ModelRequest
from helikon.errors import ConfigError
from helikon.providers._clients import ClosingModel, LoopClient
from helikon.providers._decoder import TurnDecoder
from helikon.providers._stream import Cancelled, CancelRace, next_item
from helikon.providers.openai._chat_events import ChatTurn
from helikon.providers.openai._chat_request import build_chat_body
from helikon.providers.openai._errors import guarded

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

    from helikon.core.cancel import CancellationToken
    from helikon.providers.openai.responses import OpenAIResponsesModel

__all__ = ["OpenAIModel", "build_chat_body"]


class OpenAIModel(ClosingModel):
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
        self._clients = LoopClient(self._new_client, lambda c: c.close(), client)

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
            ``UsageReported`` (when the provider reports usage), on the Responses API one
            ``ProviderMetadata``, and one ``Finish``.

        Raises:
            ModelError: a subclass per the mapping in ``helikon.providers.openai._errors``;
                :class:`~helikon.errors.Refused` for a bare refusal.
        """
        if cancel.cancelled:
            return
        body = self.request_body(request)
        client = self._clients.get()
        calls = CancelRace(cancel)
        stream: Any = None
        try:
            started = await calls.step(self._send(client, body))
            if isinstance(started, Cancelled):
                return
            turn = self._new_turn()
            if not self._stream:
                for event in turn.whole(started):
                    yield event
            else:
                stream = started
                iterator = cast("AsyncIterator[Any]", stream.__aiter__())
                async for chunk in calls.items(lambda: guarded(next_item(iterator))):
                    for event in turn.chunk(chunk):
                        yield event
                    if turn.finished:
                        break
            if cancel.cancelled:
                return
            for event in turn.ending():
                yield event
        finally:
            await calls.close()
            if stream is not None:
                with suppress(Exception):
                    await stream.close()

    async def aclose(self) -> None:
        """Close the SDK client this model created (a client passed in is left open)."""
        await self._clients.aclose()

    def __repr__(self) -> str:
        return f"OpenAIModel.chat({self._model_id!r}, stream={self._stream})"

    # ------------------------------------------------------------------ internals

    def _new_client(self) -> openai.AsyncOpenAI:
        options: dict[str, Any] = {"max_retries": self._max_retries}
        if self._timeout is not None:
            options["timeout"] = self._timeout
        return openai.AsyncOpenAI(
            api_key=self._api_key,
            base_url=self._base_url,
            organization=self._organization,
            **options,
        )

    def _new_turn(self) -> TurnDecoder:
        """The decoder of one answer of this API."""
        return ChatTurn()

    async def _send(self, client: openai.AsyncOpenAI, body: dict[str, Any]) -> Any:
        payload = dict(body)
        model = payload.pop("model")
        messages = cast("list[ChatCompletionMessageParam]", payload.pop("messages"))
        stream = bool(payload.pop("stream"))
        create = client.chat.completions.create
        if stream:
            return await guarded(
                create(model=model, messages=messages, stream=True, extra_body=payload)
            )
        return await guarded(
            create(model=model, messages=messages, stream=False, extra_body=payload)
        )
