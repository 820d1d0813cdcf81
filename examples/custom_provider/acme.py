"""A whole provider adapter on helikon's skeleton, for a small made-up JSON API ("Acme").

The Acme API (invented for this example; only its shape matters):

* ``POST {base_url}/v1/complete`` with ``{"model": ..., "messages": [{"role", "text"}],
  "stream": bool}`` and the key in ``authorization: Bearer ...``;
* a whole answer: ``{"id", "model", "text", "stop": "end" | "length", "usage": {"in", "out"}}``;
* a streamed answer: JSON lines, ``{"delta": "..."}`` for each fragment, then one closing
  line ``{"id", "model", "stop", "usage"}``;
* an error: a 4xx/5xx status with ``{"error": {"code", "message"}}`` (429 adds ``retry-after``).

An in-tree adapter is the same code split into the files every provider folder has:
``_request.py`` (``build_body``), ``_response.py`` (``AcmeTurn``), ``_errors.py``
(``map_http_error``, ``map_transport_error``) and ``model.py`` (``AcmeModel``). See
docs/guides/adding-a-provider.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import httpx

from helikon.core.events import TokenDelta
from helikon.core.items import AssistantMessage, SystemMessage, UserMessage, text_of
from helikon.core.model import (
    Finish,
    FinishReason,
    ModelCapabilities,
    ModelEvent,
    ModelRequest,
    UsageReported,
)
from helikon.core.usage import Usage
from helikon.errors import ModelError, ModelOther, ModelUnavailable, RateLimited, TransportError
from helikon.providers._base import Call, ProviderModel, Pull, require_api_key
from helikon.providers._errors import parse_retry_after
from helikon.providers._stream import Cancelled

# --------------------------------------------------------------------------- _request.py

_ROLES = {UserMessage: "user", AssistantMessage: "assistant", SystemMessage: "system"}


def build_body(model_id: str, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
    """The Acme body for ``request``: each message's text under its role."""
    messages = [
        {"role": _ROLES[type(item)], "text": text_of(item.content)}
        for item in request.messages
        if isinstance(item, (UserMessage, AssistantMessage, SystemMessage))
    ]
    return {"model": model_id, "messages": messages, "stream": stream}


# --------------------------------------------------------------------------- _response.py

_STOPS = {"end": FinishReason.STOP, "length": FinishReason.LENGTH}


class AcmeTurn:
    """The decoder of one Acme answer (the ``TurnDecoder`` protocol)."""

    def __init__(self) -> None:
        self._closing: Mapping[str, Any] | None = None

    @property
    def finished(self) -> bool:
        return self._closing is not None

    def whole(self, response: Mapping[str, Any]) -> Iterator[ModelEvent]:
        if response.get("text"):
            yield TokenDelta(text=response["text"])
        self._closing = response

    def chunk(self, line: Mapping[str, Any]) -> Iterator[ModelEvent]:
        if "delta" in line:
            yield TokenDelta(text=line["delta"])
        elif "stop" in line:
            self._closing = line

    def ending(self) -> Iterator[ModelEvent]:
        closing = self._closing
        if closing is None:
            raise TransportError("Acme stream ended before its closing line")
        usage = closing.get("usage") or {}
        yield UsageReported(
            usage=Usage(
                input_tokens=usage.get("in", 0),
                output_tokens=usage.get("out", 0),
                total_tokens=usage.get("in", 0) + usage.get("out", 0),
            )
        )
        raw = closing.get("stop")
        yield Finish(
            reason=_STOPS.get(raw, FinishReason.OTHER),
            raw=raw,
            model=closing.get("model"),
            response_id=closing.get("id"),
        )


# --------------------------------------------------------------------------- _errors.py


def map_http_error(status: int, body: bytes, headers: Mapping[str, str]) -> ModelError:
    """The helikon error for an Acme error answer."""
    try:
        error = json.loads(body).get("error", {})
    except (ValueError, AttributeError):
        error = {}
    message = error.get("message") or f"Acme answered {status}"
    code = error.get("code")
    if status == 429:
        return RateLimited(message, retry_after=parse_retry_after(headers), error_code=code)
    if status >= 500:
        return ModelUnavailable(message, status_code=status, error_code=code)
    if status in (401, 403):
        message += " (check ACME_API_KEY)"
    return ModelOther(message, status_code=status, error_code=code)


def map_transport_error(exc: BaseException) -> ModelError:
    """The helikon error for a network failure."""
    return TransportError(f"Acme request failed: {exc}")


# --------------------------------------------------------------------------- model.py


class AcmeModel(ProviderModel):
    """A model on the Acme API.

    Args:
        model_id: the model name, e.g. ``"acme-1"``.
        api_key: the key; defaults to ``ACME_API_KEY``.
        base_url: the API root.
        http_client: a ready ``httpx.AsyncClient`` (not closed by ``aclose``).
        stream: stream the answer or fetch it whole; the events are the same.

    Raises:
        ConfigError: an empty model id, or no key.
    """

    _error_types: ClassVar[tuple[type[BaseException], ...]] = (httpx.TransportError,)

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | None = None,
        base_url: str = "https://api.acme.example",
        http_client: httpx.AsyncClient | None = None,
        stream: bool = True,
    ) -> None:
        super().__init__(model_id, label="AcmeModel", stream=stream, client=http_client)
        self._api_key = require_api_key("AcmeModel", api_key, ("ACME_API_KEY",))
        self._base_url = base_url.rstrip("/")

    @property
    def provider(self) -> str:
        return "acme"

    def capabilities(self) -> ModelCapabilities:
        return ModelCapabilities(streaming=self._stream)

    def _build_body(self, request: ModelRequest) -> dict[str, Any]:
        return build_body(self._model_id, request, stream=self._stream)

    async def _send(self, body: dict[str, Any], call: Call) -> Any:
        client = self._clients.get()
        request = client.build_request(
            "POST",
            f"{self._base_url}/v1/complete",
            json=body,
            headers={"authorization": f"Bearer {self._api_key}"},
        )
        response = await call.step(client.send(request, stream=True))
        if isinstance(response, Cancelled):
            return response
        call.on_close(response.aclose)  # released however the call ends
        if response.status_code >= 400:
            raw = await call.step(response.aread())
            if isinstance(raw, Cancelled):
                return raw
            raise map_http_error(response.status_code, raw, response.headers)
        return response

    def _new_turn(self, body: Any, sent: Any) -> AcmeTurn:
        return AcmeTurn()

    async def _read_whole(self, sent: httpx.Response) -> Any:
        return json.loads(await sent.aread())

    def _pull(self, sent: httpx.Response, call: Call) -> Pull:
        lines = sent.aiter_lines()

        async def pull() -> tuple[bool, Any]:
            async for line in lines:
                if line.strip():
                    return True, json.loads(line)
            return False, None

        return pull

    def _map_error(self, exc: BaseException) -> ModelError:
        return map_transport_error(exc)

    def _new_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=60.0)
