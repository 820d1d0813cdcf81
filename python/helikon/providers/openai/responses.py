"""OpenAI Responses API behind the helikon :class:`~helikon.core.model.Model` protocol.

:class:`OpenAIResponsesModel` (built with ``OpenAIModel.responses(model_id)``) drives
``POST /v1/responses`` through the official ``openai`` SDK and turns the answer into model
events: :class:`TokenDelta` per ``output_text`` fragment, :class:`ReasoningDelta` per
reasoning-summary (or raw reasoning) fragment, :class:`ToolCallDelta` per function-call
fragment, one :class:`UsageReported`, one :class:`ProviderMetadata` and one terminal
:class:`Finish`.

Where each part is documented:
    * the request body (:meth:`OpenAIResponsesModel.request_body`, :func:`build_responses_body`):
      ``helikon.providers.openai._responses_request``;
    * replaying earlier turns exactly as the API returned them (reasoning items, message
      phases, item ids) and chaining with ``previous_response_id``:
      ``helikon.providers.openai._responses_replay``;
    * reading the answer (finish values, refusals, in-band errors, usage, the turn's
      :data:`PROVIDER_DATA_KEY` state): ``helikon.providers.openai._responses_events`` and
      ``_responses_output``;
    * error mapping: ``helikon.providers.openai._errors``.

Limitations:
    * Only function tools are translated from ``ToolDef``; hosted tools (web search, file
      search ...) go in ``ModelSettings.extra["tools"]``, which is appended to the function
      tools. Their output items are kept verbatim in ``provider_data`` and sent back.
    * Audio input needs base64 data; files are not supported as input parts.
    * Cancellation, the call loop and client handling are the provider skeleton's
      (``helikon.providers._base``) and the shared OpenAI client module's
      (``helikon.providers.openai._client``), as for the Chat Completions adapter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal, cast

import openai
from typing_extensions import Unpack

from helikon.core.model import ModelCapabilities, ModelRequest
from helikon.errors import ConfigError
from helikon.providers._base import require_model_id
from helikon.providers.openai._client import OpenAIClientModel, OpenAIConnection
from helikon.providers.openai._responses_events import ResponsesTurn
from helikon.providers.openai._responses_replay import PROVIDER_DATA_KEY
from helikon.providers.openai._responses_request import build_responses_body

__all__ = ["PROVIDER_DATA_KEY", "OpenAIResponsesModel", "build_responses_body"]


class OpenAIResponsesModel(OpenAIClientModel):
    """An OpenAI model on the Responses API. Build it with ``OpenAIModel.responses(...)``.

    It shares ``OpenAIClientModel`` with the Chat Completions adapter and is registered as a
    virtual subclass of :class:`~helikon.providers.openai.chat.OpenAIModel`.

    Args:
        model_id: the model name, e.g. ``"gpt-5-mini"``.
        server_state: chain requests with ``previous_response_id`` (from the last
            assistant turn) and send only the newer items.
        store: the request's ``store`` flag; ``None`` keeps the API default (stored).
        include: extra outputs, e.g. ``["reasoning.encrypted_content"]`` to carry
            reasoning across turns without server state.
        reasoning: the ``reasoning`` request field, e.g. ``{"effort": "low"}``.
        **connection: how it reaches the API, as for ``OpenAIModel.chat``
            (:class:`~helikon.providers.openai._client.OpenAIConnection`).

    Raises:
        ConfigError: no API key, ``server_state=True`` with ``store=False``, or a bad
            argument.

    Example:
        >>> from helikon.providers.openai import OpenAIModel
        >>> model = OpenAIModel.responses("gpt-5-mini", api_key="sk-test", server_state=True)
        >>> (model.provider, model.model, model.api, model.capabilities().server_managed_state)
        ('openai', 'gpt-5-mini', 'responses', True)
    """

    #: the structured-output mode a typed run with tools uses by default
    #: (``Agent(output_mode=None)``, see helikon.core.retries): the Responses API takes
    #: ``text.format`` together with ``tools``
    output_mode: ClassVar[str] = "native"

    _factory_name: ClassVar[str] = "OpenAIModel.responses"

    def __init__(
        self,
        model_id: str,
        *,
        server_state: bool = False,
        store: bool | None = None,
        include: Sequence[str] = (),
        reasoning: Mapping[str, Any] | None = None,
        **connection: Unpack[OpenAIConnection],
    ) -> None:
        label = self._factory_name
        require_model_id(label, model_id)
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
        super().__init__(model_id, **connection)
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

    def __repr__(self) -> str:
        return (
            f"OpenAIModel.responses({self._model_id!r}, stream={self._stream}, "
            f"server_state={self._server_state})"
        )

    def _new_turn(self, body: Any, sent: Any) -> ResponsesTurn:
        return ResponsesTurn()

    async def _create(
        self, client: openai.AsyncOpenAI, model: str, payload: dict[str, Any], stream: bool
    ) -> Any:
        items = cast("Any", payload.pop("input"))
        create = client.responses.create
        if stream:
            return await create(model=model, input=items, stream=True, extra_body=payload)
        return await create(model=model, input=items, stream=False, extra_body=payload)
