"""What the two OpenAI APIs share: the ``AsyncOpenAI`` client, its settings and the error map.

:class:`OpenAIClientModel` is the base of the Chat Completions adapter
(:class:`~helikon.providers.openai.chat.OpenAIModel`) and of the Responses adapter
(:class:`~helikon.providers.openai.responses.OpenAIResponsesModel`). It resolves the key
(``api_key=`` or ``OPENAI_API_KEY``), the API root (``base_url=`` or ``OPENAI_BASE_URL``), makes
one SDK client per event loop (SDK retries 0 by default: retrying is a composition concern),
maps SDK errors with ``helikon.providers.openai._errors`` and closes an SDK stream however the
call ends. Each API adds its request body, its ``create`` call and its answer decoder.
"""

from __future__ import annotations

import json
import os
from abc import abstractmethod
from typing import Any, ClassVar, Literal

import openai
from typing_extensions import TypedDict, Unpack

from helikon.core.model import ModelRequest
from helikon.errors import ModelError
from helikon.providers._base import Call, ProviderModel, require_api_key, require_retries
from helikon.providers._stream import Cancelled
from helikon.providers.openai._errors import map_openai_error

__all__ = ["OpenAIClientModel", "OpenAIConnection"]


class OpenAIConnection(TypedDict, total=False):
    """How an OpenAI model reaches its API: the keyword arguments both OpenAI factories take.

    Keys:
        api_key: the API key; defaults to ``OPENAI_API_KEY``.
        base_url: the API root (``.../v1``); defaults to ``OPENAI_BASE_URL``, then the SDK's.
        organization: the OpenAI organization id, if any.
        client: a ready ``AsyncOpenAI`` to use instead (then ``api_key``, ``base_url``,
            ``organization``, ``max_retries`` and ``timeout`` are not used, and the client
            is not closed by ``aclose``).
        max_retries: SDK-level retries; 0 by default because retrying is a composition
            concern (wrap the model in a retrying model).
        timeout: request timeout in seconds; ``None`` keeps the SDK default.
        stream: stream the answer (SSE) or fetch it whole (default ``True``); the events are
            the same.
    """

    api_key: str | None
    base_url: str | None
    organization: str | None
    client: openai.AsyncOpenAI | None
    max_retries: int
    timeout: float | None
    stream: bool


class OpenAIClientModel(ProviderModel):
    """An OpenAI model on one of its APIs (the shared constructor and transport).

    Args:
        model_id: the model name, e.g. ``"gpt-5-mini"``.
        **connection: the :class:`OpenAIConnection` settings.

    Raises:
        ConfigError: an empty ``model_id``, no API key and no client, ``max_retries < 0``.
    """

    _error_types: ClassVar[tuple[type[BaseException], ...]] = (
        openai.OpenAIError,
        json.JSONDecodeError,
    )

    _factory_name: ClassVar[str]
    """The factory's name for messages and ``repr`` (``"OpenAIModel.chat"``)."""

    def __init__(self, model_id: str, **connection: Unpack[OpenAIConnection]) -> None:
        label = self._factory_name
        client = connection.get("client")
        super().__init__(
            model_id, label=label, stream=connection.get("stream", True), client=client
        )
        self._api_key = require_api_key(
            label,
            connection.get("api_key"),
            ("OPENAI_API_KEY",),
            client_given=client is not None,
            client_hint="client=AsyncOpenAI(...)",
        )
        self._max_retries = require_retries(label, connection.get("max_retries", 0))
        self._base_url = connection.get("base_url") or os.environ.get("OPENAI_BASE_URL") or None
        self._organization = connection.get("organization")
        self._timeout = connection.get("timeout")

    @property
    def provider(self) -> str:
        """``"openai"``."""
        return "openai"

    @property
    @abstractmethod
    def api(self) -> Literal["chat_completions", "responses"]:
        """Which OpenAI API this instance speaks."""

    @abstractmethod
    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body this model sends for ``request`` (for inspection and tests)."""

    @abstractmethod
    async def _create(
        self, client: openai.AsyncOpenAI, model: str, payload: dict[str, Any], stream: bool
    ) -> Any:
        """The API's ``create`` call: ``model``, the API's main field popped from
        ``payload`` by the subclass, the rest sent as ``extra_body``."""

    def _build_body(self, request: ModelRequest) -> dict[str, Any]:
        return self.request_body(request)

    async def _send(self, body: dict[str, Any], call: Call) -> Any:
        payload = dict(body)
        model = payload.pop("model")
        stream = bool(payload.pop("stream"))
        sent = await call.step(self._create(self._clients.get(), model, payload, stream))
        if stream and not isinstance(sent, Cancelled):
            call.on_close(sent.close)
        return sent

    def _map_error(self, exc: BaseException) -> ModelError:
        return map_openai_error(exc)

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

    async def _close_client(self, client: Any) -> None:
        await client.close()
