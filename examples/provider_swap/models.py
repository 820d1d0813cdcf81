"""The model lines: the one place the provider-swap example names a provider.

``make_model(name, endpoint)`` returns the model for ``name``; each branch is a single
constructor call, and that call is the only difference between the runs of ``main.py``.
``Endpoint`` says where the model connects: the local replay server (offline, the default)
or the real API (``--live``, keys and credentials from the usual environment variables).

Every model streams (the default); the offline traffic in ``traffic.py`` is each provider's
streaming wire format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import boto3  # type: ignore[import-untyped]

from helikon import Model
from helikon.errors import ConfigError
from helikon.providers.anthropic import AnthropicModel
from helikon.providers.bedrock import BedrockModel
from helikon.providers.gemini import GeminiModel
from helikon.providers.openai import OpenAIModel

__all__ = ["PROVIDERS", "ClosableModel", "Endpoint", "make_model"]

PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "gemini", "bedrock")

OFFLINE_KEY = "offline-replay"
"""The API key sent to the replay server (it checks none)."""


class ClosableModel(Model, Protocol):
    """A :class:`helikon.Model` that owns a client: close it with :meth:`aclose`."""

    async def aclose(self) -> None:
        """Close the model's HTTP client."""
        ...


@dataclass(frozen=True)
class Endpoint:
    """Where a model connects.

    Attributes:
        base_url: the replay server's ``http://127.0.0.1:<port>``; ``None`` for the real APIs.
    """

    base_url: str | None = None

    @property
    def api_key(self) -> str | None:
        """A dummy key offline; ``None`` live, so each SDK reads its own variable."""
        return OFFLINE_KEY if self.base_url else None

    def url(self, suffix: str = "") -> str | None:
        """The replay server's URL plus ``suffix`` (e.g. ``/v1``); ``None`` live."""
        return None if self.base_url is None else self.base_url + suffix

    def aws_session(self) -> Any:
        """Offline, a boto3 session with dummy credentials (nothing reaches AWS); live,
        ``None`` (the standard AWS chain)."""
        if self.base_url is None:
            return None
        return boto3.session.Session(
            aws_access_key_id=OFFLINE_KEY,
            aws_secret_access_key=OFFLINE_KEY,
            region_name="us-east-1",
        )


def make_model(name: str, endpoint: Endpoint) -> ClosableModel:
    """The model called ``name`` (one of :data:`PROVIDERS`), connected to ``endpoint``.

    Raises:
        ConfigError: an unknown name (or, live, a missing API key).
    """
    e = endpoint
    if name == "openai-chat":
        return OpenAIModel.chat("gpt-4o", api_key=e.api_key, base_url=e.url("/v1"))
    if name == "openai-responses":
        return OpenAIModel.responses("gpt-4o", api_key=e.api_key, base_url=e.url("/v1"))
    if name == "anthropic":
        return AnthropicModel.messages("claude-sonnet-4-5", api_key=e.api_key, base_url=e.url())
    if name == "gemini":
        return GeminiModel.developer("gemini-2.5-flash", api_key=e.api_key, base_url=e.url())
    if name == "bedrock":
        return BedrockModel.converse(
            "us.amazon.nova-micro-v1:0", session=e.aws_session(), endpoint_url=e.url()
        )
    raise ConfigError(f"unknown provider {name!r}; choose one of {', '.join(PROVIDERS)}")
