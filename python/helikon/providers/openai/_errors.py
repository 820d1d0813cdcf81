"""Translate ``openai`` SDK exceptions into the helikon model-error tree.

The mapping (HTTP status first, then the error envelope's ``code`` / ``type``):

========================================  =========================================
provider answer                           helikon error
========================================  =========================================
429, or ``rate_limit_exceeded``           :class:`~helikon.errors.RateLimited` with
                                          ``retry_after`` from ``retry-after-ms`` /
                                          ``retry-after`` (seconds, float)
400 ``context_length_exceeded`` (or a     :class:`~helikon.errors.ContextLengthExceeded`
message about the context length)
400 ``content_filter`` /                  :class:`~helikon.errors.Refused`
``content_policy_violation``
401 / 403                                 :class:`~helikon.errors.ModelOther` (auth; the
                                          message says to check ``OPENAI_API_KEY``)
408, 5xx (incl. 529), ``server_error``    :class:`~helikon.errors.ModelUnavailable`
connection refused / reset, timeouts,     :class:`~helikon.errors.TransportError`
a malformed or truncated stream
anything else (400 / 404 / 422 ...)       :class:`~helikon.errors.ModelOther` with the
                                          provider's own message
========================================  =========================================

Every mapped HTTP or in-band error carries the envelope's ``type`` and ``code`` as
``error_type`` / ``error_code``. The message of a mapped error is the provider's
``error.message`` unchanged (auth errors add a hint), so tests and logs see what the provider
said. Key-shaped strings are masked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar

import openai

from helikon.errors import (
    ContextLengthExceeded,
    ModelError,
    ModelOther,
    ModelUnavailable,
    RateLimited,
    Refused,
)
from helikon.providers._errors import (
    guard,
    parse_retry_after,
    provider_message,
    read_sdk_error,
    with_codes,
)

__all__ = ["guarded", "map_inband_error", "map_openai_error", "parse_retry_after"]

_T = TypeVar("_T")

_KEY_SHAPED = re.compile(r"\b(sk-[A-Za-z0-9_*\-]{4})[A-Za-z0-9_*\-]+")
_CONTEXT_MESSAGE = re.compile(
    r"context[_ ]length|maximum context|context window|too many tokens|prompt is too long",
    re.IGNORECASE,
)
_REFUSAL_CODES = frozenset({"content_filter", "content_policy_violation"})
_UNAVAILABLE_CODES = frozenset(
    {"server_error", "overloaded", "overloaded_error", "service_unavailable"}
)


def _mask(text: str) -> str:
    return _KEY_SHAPED.sub(r"\1***", text)


def map_openai_error(exc: BaseException) -> ModelError:
    """The helikon :class:`~helikon.errors.ModelError` for an ``openai`` SDK exception.

    Args:
        exc: an exception raised by the ``openai`` SDK, or a JSON error from decoding its
            stream (:class:`~helikon.errors.TransportError`); any other exception maps to
            :class:`~helikon.errors.ModelOther`.

    Returns:
        The mapped error (not raised); chain it with ``raise ... from exc``.
    """
    read = read_sdk_error(exc, openai, "OpenAI", _mask)
    if isinstance(read, ModelError):
        return read
    envelope = read.envelope
    return with_codes(
        _classify(envelope, read.message, read.status, read.response),
        envelope.get("type"),
        envelope.get("code"),
    )


def map_inband_error(envelope: Mapping[str, Any], fallback: str) -> ModelError:
    """The :class:`~helikon.errors.ModelError` for an error reported inside a 200 response.

    Args:
        envelope: the error object (``code``, ``type``, ``message``) of a
            ``response.failed`` or ``error`` stream event.
        fallback: the message when the envelope has none.

    It maps like an HTTP error without a status (the table above, ``status`` absent).
    """
    message = provider_message(envelope, None, fallback, _mask)
    return with_codes(
        _classify(envelope, message, None, None), envelope.get("type"), envelope.get("code")
    )


def _classify(
    envelope: Mapping[str, Any], message: str, status: int | None, response: Any
) -> ModelError:
    code = "" if envelope.get("code") is None else str(envelope.get("code"))
    kind = str(envelope.get("type") or "")

    if status == 429 or code == "rate_limit_exceeded" or kind == "rate_limit_error":
        headers = response.headers if response is not None else None
        return RateLimited(message, retry_after=parse_retry_after(headers), status_code=status)
    if code == "context_length_exceeded" or (
        status in (400, 413, None) and _CONTEXT_MESSAGE.search(message) is not None
    ):
        return ContextLengthExceeded(message, status_code=status)
    if code in _REFUSAL_CODES:
        return Refused(message, status_code=status)
    if status in (401, 403):
        return ModelOther(
            f"OpenAI authentication failed (HTTP {status}): {message}. Check OPENAI_API_KEY "
            "(or the api_key argument) and the organization/project it belongs to.",
            status_code=status,
        )
    if status is not None and (status >= 500 or status == 408):
        return ModelUnavailable(message, status_code=status)
    if status is None and (code in _UNAVAILABLE_CODES or kind in _UNAVAILABLE_CODES):
        return ModelUnavailable(message)
    return ModelOther(message, status_code=status)


def guarded(awaitable: Awaitable[_T]) -> Awaitable[_T]:
    """``awaitable`` with SDK failures and malformed stream data raised as ModelErrors."""
    return guard(awaitable, map_openai_error, (openai.OpenAIError, json.JSONDecodeError))
