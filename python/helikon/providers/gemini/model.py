"""Gemini (Developer API and Vertex AI) behind the helikon :class:`~helikon.core.model.Model`.

:class:`GeminiModel` speaks Gemini's REST API directly over ``httpx``:
``POST .../models/{id}:streamGenerateContent?alt=sse`` (a ``data:``-only SSE stream of
``GenerateContentResponse`` chunks) or, with ``stream=False``, ``POST ...:generateContent``.
Both produce the same model events (see ``helikon.providers.gemini._response``); how the
request body is built is documented in ``helikon.providers.gemini._request``.

Transports:
    * Developer API (``GeminiModel.developer`` / ``GeminiModel.from_env``):
      ``https://generativelanguage.googleapis.com/v1beta/models/{id}``, the key sent as the
      ``x-goog-api-key`` header (never in the URL), read from ``api_key=``, ``GEMINI_API_KEY``
      or ``GOOGLE_API_KEY``.
    * Vertex AI (``GeminiModel.vertex``): ``https://{location}-aiplatform.googleapis.com/v1/
      projects/{project}/locations/{location}/publishers/google/models/{id}`` (host
      ``aiplatform.googleapis.com`` for ``location="global"``) with ``Authorization: Bearer``.
      The token is a fixed ``bearer_token`` or comes from ``token_provider`` - a callable
      (sync or async) called before every request, so it can refresh.
    * ``base_url`` replaces the scheme and host (tests point it at a local replay server).

Cancellation: the token is checked between chunks, and the wait for the token provider, the
response headers and each next chunk races ``cancel.wait()``; when it fires the HTTP response
is closed and the iterator ends without a ``Finish``.

Limitations:
    * Only the first candidate is read (``candidateCount`` > 1 is not surfaced).
    * Video and document parts have no helikon content type; files are reached by URL through
      image/audio parts (``fileData``).
    * Tool results carry text (plus base64 images as following ``inlineData`` parts); other
      non-text parts are replaced by a note.
    * Thought text is not sent back to Gemini (it takes none); thought signatures are.
    * Explicit context caches (``cachedContents``) are not managed; pass a cache name with
      ``ModelSettings(extra={"cachedContent": name})``.
    * An ``httpx.AsyncClient`` created by the model is bound to the event loop that first used
      it; a new loop gets a new client. Call :meth:`GeminiModel.aclose` when done.

Test strategy: ``tests/providers/test_gemini_wire.py`` replays every Gemini recording of the
shared wire corpus through this class on a local replay server, checking the extracted events
against the index's ``expected`` and the sent bodies against the recorded ones, and drives
synthesized errors, blocks, cut streams and cancellations; ``test_gemini_agent_run.py`` runs
whole agents (the recorded tool loop, field cases BR-03 and BR-08).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Literal, TypeAlias

import httpx
from typing_extensions import TypedDict, Unpack

from helikon.core.model import ModelCapabilities, ModelRequest
from helikon.errors import ConfigError, ModelError, ModelOther
from helikon.providers._base import Call, ProviderModel, Pull, require_api_key
from helikon.providers._stream import Cancelled
from helikon.providers.gemini._errors import map_http_error, map_transport_error
from helikon.providers.gemini._request import SchemaMode, build_gemini_body
from helikon.providers.gemini._response import GeminiTurn
from helikon.providers.gemini._sse import SseReader, parse_json

__all__ = ["GeminiModel", "GeminiOptions", "TokenProvider"]

TokenProvider: TypeAlias = Callable[[], str | Awaitable[str]]
"""Returns a current OAuth access token for Vertex AI (sync or async); called per request."""


class GeminiOptions(TypedDict, total=False):
    """The settings both Gemini factories take (``developer`` and ``vertex``); each key is
    documented under :meth:`GeminiModel.developer`."""

    base_url: str | None
    stream: bool
    timeout: float | None
    schema_mode: SchemaMode
    http_client: httpx.AsyncClient | None
    headers: dict[str, str] | None


_DEVELOPER_URL = "https://generativelanguage.googleapis.com"
_DEVELOPER_KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")


class GeminiModel(ProviderModel):
    """A Gemini model on the Developer API or Vertex AI.

    Build it with :meth:`developer`, :meth:`from_env` or :meth:`vertex`.

    Example:
        >>> model = GeminiModel.developer("gemini-2.5-flash", api_key="test-key")
        >>> (model.provider, model.model)
        ('gcp.gemini', 'gemini-2.5-flash')
    """

    #: the structured-output mode a typed run with tools uses by default
    #: (``Agent(output_mode=None)``, see helikon.core.retries): Gemini 2.x refuses a response
    #: schema together with function declarations
    output_mode: ClassVar[str] = "tool"

    _error_types: ClassVar[tuple[type[BaseException], ...]] = (
        httpx.TransportError,
        httpx.StreamError,
    )
    """Network failures (mapped to ``TransportError``); HTTP errors are read from the status."""

    def __init__(
        self,
        model_id: str,
        *,
        platform: Literal["developer", "vertex"],
        url_prefix: str,
        api_key: str | None = None,
        bearer_token: str | None = None,
        token_provider: TokenProvider | None = None,
        base_url: str | None = None,
        stream: bool = True,
        timeout: float | None = 120.0,
        schema_mode: SchemaMode = "openapi",
        http_client: httpx.AsyncClient | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(
            model_id, label=f"GeminiModel.{platform}", stream=stream, client=http_client
        )
        if schema_mode not in ("openapi", "json_schema"):
            raise ConfigError("GeminiModel: schema_mode must be 'openapi' or 'json_schema'")
        self._platform = platform
        self._base_url = base_url.rstrip("/") if base_url else None
        self._url_prefix = url_prefix
        self._api_key = api_key
        self._bearer_token = bearer_token
        self._token_provider = token_provider
        self._timeout = timeout
        self._schema_mode: SchemaMode = schema_mode
        self._headers = dict(headers or {})

    # ------------------------------------------------------------------ constructors

    @classmethod
    def developer(
        cls,
        model_id: str,
        api_key: str | None = None,
        *,
        api_version: str = "v1beta",
        **options: Unpack[GeminiOptions],
    ) -> GeminiModel:
        """A model on the Gemini Developer API (Google AI Studio keys).

        Args:
            model_id: the model name, e.g. ``"gemini-2.5-flash"`` (``models/...`` and
                ``tunedModels/...`` names are used as given).
            api_key: the API key; defaults to ``GEMINI_API_KEY``, then ``GOOGLE_API_KEY``.
            base_url: replaces ``https://generativelanguage.googleapis.com``.
            api_version: the URL's API version segment.
            stream: stream the answer (SSE) or fetch it whole; events are the same.
            timeout: seconds for connect / each read (``None``: no limit).
            schema_mode: ``"openapi"`` sends sanitized ``parameters`` / ``responseSchema``;
                ``"json_schema"`` sends schemas unchanged as ``parametersJsonSchema`` /
                ``responseJsonSchema`` (Gemini 2.5 and later).
            http_client: an ``httpx.AsyncClient`` to use (not closed by :meth:`aclose`).
            headers: extra request headers.

        Returns:
            The model.

        Raises:
            ConfigError: no API key, or a bad argument.
        """
        key = require_api_key("GeminiModel.developer", api_key, _DEVELOPER_KEYS)
        name = (
            model_id if model_id.startswith(("models/", "tunedModels/")) else f"models/{model_id}"
        )
        return cls(
            model_id,
            platform="developer",
            url_prefix=f"{_DEVELOPER_URL}/{api_version}/{name}",
            api_key=key,
            **options,
        )

    @classmethod
    def from_env(cls, model_id: str, **options: Any) -> GeminiModel:
        """A Developer API model keyed from ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``.

        Args:
            model_id: the model name.
            **options: as for :meth:`developer` (except ``api_key``).

        Raises:
            ConfigError: neither variable is set.
        """
        if "api_key" in options:
            raise ConfigError("GeminiModel.from_env reads the key from the environment only")
        return cls.developer(model_id, **options)

    @classmethod
    def vertex(
        cls,
        model_id: str,
        project: str | None = None,
        location: str | None = None,
        *,
        bearer_token: str | None = None,
        token_provider: TokenProvider | None = None,
        api_version: str = "v1",
        **options: Unpack[GeminiOptions],
    ) -> GeminiModel:
        """A model on Vertex AI.

        Args:
            model_id: the model name, e.g. ``"gemini-2.5-flash"`` (a ``publishers/...`` name
                is placed under the project and location; ``projects/...`` is used as given).
            project: the Google Cloud project; defaults to ``GOOGLE_CLOUD_PROJECT``.
            location: the region, e.g. ``"us-central1"``; defaults to
                ``GOOGLE_CLOUD_LOCATION``, then ``"global"``.
            bearer_token: a fixed OAuth access token.
            token_provider: returns a current access token (sync or async); called before every
                request, so it can refresh. Takes precedence over ``bearer_token``.
            base_url: replaces the ``https://{location}-aiplatform.googleapis.com`` root.
            api_version, stream, timeout, schema_mode, http_client, headers: as for
                :meth:`developer`.

        Returns:
            The model.

        Raises:
            ConfigError: no project, or neither ``bearer_token`` nor ``token_provider``.
        """
        project = project or os.environ.get("GOOGLE_CLOUD_PROJECT") or None
        location = location or os.environ.get("GOOGLE_CLOUD_LOCATION") or "global"
        if not project:
            raise ConfigError(
                "GeminiModel.vertex: no project. Pass project=... or set GOOGLE_CLOUD_PROJECT."
            )
        if not bearer_token and token_provider is None:
            raise ConfigError(
                "GeminiModel.vertex: pass bearer_token=... or token_provider=... (a callable "
                "returning a current access token, e.g. from google.auth)"
            )
        if token_provider is not None and not callable(token_provider):
            raise ConfigError("GeminiModel.vertex: token_provider must be callable")
        host = (
            "https://aiplatform.googleapis.com"
            if location == "global"
            else f"https://{location}-aiplatform.googleapis.com"
        )
        scope = f"projects/{project}/locations/{location}"
        if model_id.startswith("projects/"):
            name = model_id
        elif model_id.startswith("publishers/"):
            name = f"{scope}/{model_id}"
        else:
            name = f"{scope}/publishers/google/models/{model_id}"
        return cls(
            model_id,
            platform="vertex",
            url_prefix=f"{host}/{api_version}/{name}",
            bearer_token=bearer_token,
            token_provider=token_provider,
            **options,
        )

    # ------------------------------------------------------------------ Model protocol

    @property
    def provider(self) -> str:
        """``"gcp.gemini"`` (Developer API) or ``"gcp.vertex_ai"`` (GenAI semantic conventions)."""
        return "gcp.vertex_ai" if self._platform == "vertex" else "gcp.gemini"

    @property
    def platform(self) -> Literal["developer", "vertex"]:
        """Which Gemini endpoint family this instance calls."""
        return self._platform

    def capabilities(self) -> ModelCapabilities:
        """Streaming (as configured), tools, parallel calls, structured output, reasoning
        (thought summaries), vision, audio input and prompt caching; no server-managed state."""
        return ModelCapabilities(
            streaming=self._stream,
            tools=True,
            parallel_tool_calls=True,
            structured_output=True,
            reasoning=True,
            vision=True,
            audio=True,
            prompt_caching=True,
        )

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body this model sends for ``request`` (for inspection and tests).

        Raises:
            ModelOther: structured output combined with function calling.
        """
        return build_gemini_body(request, schema_mode=self._schema_mode)

    def url(self, *, stream: bool | None = None) -> str:
        """The endpoint this model posts to (``stream`` defaults to the model's setting)."""
        streaming = self._stream if stream is None else stream
        prefix = self._url_prefix
        if self._base_url is not None:
            _, _, rest = prefix.partition("://")
            _, _, path = rest.partition("/")
            prefix = f"{self._base_url}/{path}"
        if streaming:
            return f"{prefix}:streamGenerateContent?alt=sse"
        return f"{prefix}:generateContent"

    # ------------------------------------------------------------------ skeleton hooks

    def _build_body(self, request: ModelRequest) -> dict[str, Any]:
        return self.request_body(request)

    async def _send(self, body: dict[str, Any], call: Call) -> Any:
        headers = await call.step(self._auth_headers())
        if isinstance(headers, Cancelled):
            return headers
        client = self._clients.get()
        http_request = client.build_request("POST", self.url(), json=body, headers=headers)
        response = await call.step(client.send(http_request, stream=True))
        if isinstance(response, Cancelled):
            return response
        call.on_close(response.aclose)
        if response.status_code >= 400:
            raw = await call.step(response.aread())
            if isinstance(raw, Cancelled):
                return raw
            raise map_http_error(
                response.status_code, raw, response.headers, credential_hint=self._credential_hint()
            )
        return response

    def _new_turn(self, body: Any, sent: Any) -> GeminiTurn:
        return GeminiTurn(streamed=self._stream, credential_hint=self._credential_hint())

    async def _read_whole(self, sent: httpx.Response) -> Any:
        raw = await sent.aread()
        return parse_json(raw.decode("utf-8", errors="replace"))

    def _pull(self, sent: httpx.Response, call: Call) -> Pull:
        return SseReader(sent.aiter_lines()).next

    def _map_error(self, exc: BaseException) -> ModelError:
        return map_transport_error(exc)

    def _credential_hint(self) -> str:
        if self._platform == "vertex":
            return "the Vertex AI access token (bearer_token / token_provider) and its project"
        return "GEMINI_API_KEY / GOOGLE_API_KEY (or the api_key argument)"

    async def _auth_headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", **self._headers}
        if self._platform == "developer":
            if self._api_key:
                headers["x-goog-api-key"] = self._api_key
            return headers
        token = self._bearer_token
        if self._token_provider is not None:
            try:
                produced = self._token_provider()
                if inspect.isawaitable(produced):
                    produced = await produced
            except ModelError:
                raise
            except Exception as exc:
                raise ModelOther(f"Vertex AI token provider failed: {exc}") from exc
            if not isinstance(produced, str) or not produced:
                raise ModelOther("Vertex AI token provider returned no token")
            token = produced
        headers["authorization"] = f"Bearer {token}"
        return headers

    def _new_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=httpx.Timeout(self._timeout))
