"""OpenAI Chat Completions behind the helikon :class:`~helikon.core.model.Model` protocol.

:class:`OpenAIModel` drives ``POST /v1/chat/completions`` through the official ``openai``
SDK (``AsyncOpenAI``) and turns the answer into model events: a :class:`TokenDelta` per
content fragment, a :class:`ToolCallDelta` per tool-call fragment, one
:class:`UsageReported` and one terminal :class:`Finish`. It works against any
OpenAI-compatible server (``base_url``). Client handling is shared with the Responses adapter
(``helikon.providers.openai._client``); the call loop, cancellation and error wrapping are the
provider skeleton's (``helikon.providers._base``).

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

from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

import openai

from helikon.core.model import ModelCapabilities, ModelRequest
from helikon.providers._base import BuildsOwner
from helikon.providers._decoder import TurnDecoder
from helikon.providers.openai._chat_events import ChatTurn
from helikon.providers.openai._chat_request import build_chat_body
from helikon.providers.openai._client import OpenAIClientModel
from helikon.providers.openai.responses import OpenAIResponsesModel

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

__all__ = ["OpenAIModel", "build_chat_body"]


class OpenAIModel(OpenAIClientModel):
    """An OpenAI (or OpenAI-compatible) model. Build it with :meth:`chat` or :meth:`responses`.

    An instance built with :meth:`chat` is this class; :meth:`responses` builds an
    :class:`~helikon.providers.openai.responses.OpenAIResponsesModel`, which shares this
    class's base (``OpenAIClientModel``) and is registered as a virtual subclass, so
    ``isinstance(model, OpenAIModel)`` holds for a model on either API.

    Args:
        model_id: the model name, e.g. ``"gpt-5-mini"``.
        api_key, base_url, organization, client, max_retries, timeout, stream: how it reaches
            the API (:class:`~helikon.providers.openai._client.OpenAIConnection`): the key
            defaults to ``OPENAI_API_KEY``, the API root to ``OPENAI_BASE_URL``; SDK retries
            are 0 by default (retrying is a composition concern).

    Raises:
        ConfigError: no API key (argument or ``OPENAI_API_KEY``), or a bad argument.

    Example:
        >>> model = OpenAIModel.chat("gpt-5-mini", api_key="sk-test")
        >>> (model.provider, model.model)
        ('openai', 'gpt-5-mini')
    """

    #: the structured-output mode a typed run with tools uses by default
    #: (``Agent(output_mode=None)``, see helikon.core.retries): OpenAI chat completions take
    #: ``response_format`` together with ``tools``
    output_mode: ClassVar[str] = "native"

    _factory_name: ClassVar[str] = "OpenAIModel.chat"

    chat = BuildsOwner()
    """A model on the Chat Completions API: ``OpenAIModel.chat(model_id, **connection)``
    with the :class:`~helikon.providers.openai._client.OpenAIConnection` settings (see the
    class).

    Raises:
        ConfigError: no API key (argument or ``OPENAI_API_KEY``), or a bad argument.
    """

    responses: ClassVar[type[OpenAIResponsesModel]] = OpenAIResponsesModel
    """A model on the Responses API: ``OpenAIModel.responses(model_id, ...)`` builds an
    :class:`~helikon.providers.openai.responses.OpenAIResponsesModel` (see its arguments)."""

    # ------------------------------------------------------------------ Model protocol

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
            vision=True,
            prompt_caching=True,
        )

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body this model sends for ``request`` (for inspection and tests)."""
        return build_chat_body(self._model_id, request, stream=self._stream)

    # ------------------------------------------------------------------ skeleton hooks

    def _new_turn(self, body: Any, sent: Any) -> TurnDecoder:
        """The decoder of one answer of this API."""
        return ChatTurn()

    async def _create(
        self, client: openai.AsyncOpenAI, model: str, payload: dict[str, Any], stream: bool
    ) -> Any:
        messages = cast("list[ChatCompletionMessageParam]", payload.pop("messages"))
        create = client.chat.completions.create
        if stream:
            return await create(model=model, messages=messages, stream=True, extra_body=payload)
        return await create(model=model, messages=messages, stream=False, extra_body=payload)


OpenAIModel.register(OpenAIResponsesModel)
