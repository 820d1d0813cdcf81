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

The message of a mapped error is the provider's ``error.message`` unchanged (auth errors add
a hint), so tests and logs see what the provider said. Key-shaped strings are masked.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping
from typing import Any

import openai

from helikon.errors import (
    ContextLengthExceeded,
    ModelError,
    ModelOther,
    ModelUnavailable,
    RateLimited,
    Refused,
    TransportError,
)

__all__ = ["map_openai_error", "parse_retry_after"]

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


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """Seconds to wait according to ``retry-after-ms`` or ``retry-after``.

    Args:
        headers: response headers (case-insensitive lookup is the caller's concern; httpx
            headers already are).
        now: the current time (seconds since the epoch) for HTTP-date values; defaults to
            :func:`time.time`.

    Returns:
        A non-negative float of seconds, or ``None`` when neither header is usable.

    Example:
        >>> parse_retry_after({"retry-after-ms": "1500"})
        1.5
        >>> parse_retry_after({"retry-after": "2"})
        2.0
    """
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    current = time.time() if now is None else now
    return max(when.timestamp() - current, 0.0)


def _envelope(body: object) -> Mapping[str, Any]:
    if isinstance(body, Mapping):
        inner = body.get("error")
        return inner if isinstance(inner, Mapping) else body
    return {}


def _provider_message(exc: openai.APIError, envelope: Mapping[str, Any]) -> str:
    message = envelope.get("message")
    if isinstance(message, str) and message:
        return _mask(message)
    if isinstance(exc, openai.APIStatusError):
        try:
            text = exc.response.text.strip()
        except Exception:  # the body may be unread or undecodable
            text = ""
        if text:
            return _mask(text[:500])
    return _mask(exc.message)


def _code(envelope: Mapping[str, Any]) -> str:
    code = envelope.get("code")
    return "" if code is None else str(code)


def map_openai_error(exc: BaseException) -> ModelError:
    """The helikon :class:`~helikon.errors.ModelError` for an ``openai`` SDK exception.

    Args:
        exc: an exception raised by the ``openai`` SDK (any other exception maps to
            :class:`~helikon.errors.ModelOther`).

    Returns:
        The mapped error (not raised); chain it with ``raise ... from exc``.
    """
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        kind = "timed out" if isinstance(exc, openai.APITimeoutError) else "connection failed"
        cause = exc.__cause__
        detail = f": {cause}" if cause is not None and str(cause) else ""
        return TransportError(f"OpenAI request {kind}{_mask(detail)}")
    if not isinstance(exc, openai.APIError):
        return ModelOther(_mask(f"OpenAI client error: {exc}"))

    envelope = _envelope(exc.body)
    message = _provider_message(exc, envelope)
    code = _code(envelope)
    kind = str(envelope.get("type") or "")
    status = exc.status_code if isinstance(exc, openai.APIStatusError) else None

    if status == 429 or code == "rate_limit_exceeded" or kind == "rate_limit_error":
        headers = exc.response.headers if isinstance(exc, openai.APIStatusError) else None
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
