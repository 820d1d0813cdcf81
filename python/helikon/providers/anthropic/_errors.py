"""Translate ``anthropic`` SDK exceptions into the helikon model-error tree.

The mapping (HTTP status first, then the error envelope's ``error.type`` and message; an
``event: error`` inside a 200 stream is mapped by its envelope alone):

=============================================  ==============================================
provider answer                                helikon error
=============================================  ==============================================
429, or ``rate_limit_error``                   :class:`~helikon.errors.RateLimited` with
                                               ``retry_after`` (seconds) from
                                               ``retry-after-ms`` / ``retry-after``
400 "prompt is too long" (or another context-  :class:`~helikon.errors.ContextLengthExceeded`
window message), 413 ``request_too_large``
401 / 403 (``authentication_error``,           :class:`~helikon.errors.ModelOther`; the message
``permission_error``)                          names ``ANTHROPIC_API_KEY``
529 / ``overloaded_error``, 5xx / ``api_error``,  :class:`~helikon.errors.ModelUnavailable`
408 / ``timeout_error``
connection refused / reset, timeouts, a        :class:`~helikon.errors.TransportError`
malformed or truncated stream
anything else (400 / 404 / 422 ...)            :class:`~helikon.errors.ModelOther` with the
                                               provider's own message
=============================================  ==============================================

The message of a mapped error is the provider's ``error.message`` unchanged (auth errors add
a hint naming the key's variable), so tests and logs see what the provider said. Key-shaped
strings are masked.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping
from typing import Any

import anthropic

from helikon.errors import (
    ContextLengthExceeded,
    ModelError,
    ModelOther,
    ModelUnavailable,
    RateLimited,
    TransportError,
)

__all__ = ["map_anthropic_error", "parse_retry_after", "transport_error"]

_KEY_SHAPED = re.compile(r"\b(sk-ant-[A-Za-z0-9]{0,4}|sk-[A-Za-z0-9]{4})[A-Za-z0-9_*\-]+")
_CONTEXT_MESSAGE = re.compile(
    r"prompt is too long|context[_ ]length|context window|maximum context|too many tokens",
    re.IGNORECASE,
)
_UNAVAILABLE_TYPES = frozenset({"overloaded_error", "api_error", "timeout_error"})
_TRANSPORT_MODULES = frozenset({"httpx", "httpx2", "httpcore", "httpcore2", "h11", "anyio"})


def _mask(text: str) -> str:
    return _KEY_SHAPED.sub(r"\1***", text)


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """Seconds to wait according to ``retry-after-ms`` or ``retry-after``.

    Args:
        headers: response headers (httpx headers look names up case-insensitively).
        now: the current time (seconds since the epoch) for HTTP-date values; defaults to
            :func:`time.time`.

    Returns:
        A non-negative float of seconds, or ``None`` when neither header is usable.

    Example:
        >>> parse_retry_after({"retry-after": "7"})
        7.0
        >>> parse_retry_after({"retry-after-ms": "250"})
        0.25
        >>> parse_retry_after({}) is None
        True
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


def _provider_message(exc: anthropic.APIError, envelope: Mapping[str, Any]) -> str:
    message = envelope.get("message")
    if isinstance(message, str) and message:
        return _mask(message)
    if isinstance(exc, anthropic.APIStatusError):
        try:
            text = exc.response.text.strip()
        except Exception:  # the body may be unread (a stream) or undecodable
            text = ""
        if text:
            return _mask(text[:500])
    return _mask(exc.message)


def transport_error(exc: BaseException) -> TransportError | None:
    """A :class:`~helikon.errors.TransportError` when ``exc`` is a network or stream failure
    raised below the SDK (an HTTP library error, an ``OSError``), else ``None``."""
    module = type(exc).__module__.split(".", 1)[0]
    if module in _TRANSPORT_MODULES or isinstance(exc, OSError):
        detail = str(exc) or type(exc).__name__
        return TransportError(_mask(f"Anthropic stream broke off: {detail}"))
    return None


def map_anthropic_error(exc: BaseException) -> ModelError:
    """The helikon :class:`~helikon.errors.ModelError` for an ``anthropic`` SDK exception.

    Args:
        exc: an exception raised by the ``anthropic`` SDK (a network error from below it maps
            to :class:`~helikon.errors.TransportError`, anything else to
            :class:`~helikon.errors.ModelOther`).

    Returns:
        The mapped error (not raised); chain it with ``raise ... from exc``.
    """
    if isinstance(exc, anthropic.APIConnectionError):  # includes APITimeoutError
        kind = "timed out" if isinstance(exc, anthropic.APITimeoutError) else "connection failed"
        cause = exc.__cause__
        detail = f": {cause}" if cause is not None and str(cause) else ""
        return TransportError(_mask(f"Anthropic request {kind}{detail}"))
    if not isinstance(exc, anthropic.APIError):
        transport = transport_error(exc)
        if transport is not None:
            return transport
        return ModelOther(_mask(f"Anthropic client error: {exc}"))

    envelope = _envelope(exc.body)
    message = _provider_message(exc, envelope)
    kind = str(envelope.get("type") or "")
    status = exc.status_code if isinstance(exc, anthropic.APIStatusError) else None
    if status is not None and status < 400:
        status = None  # an `event: error` inside a 200 stream: the envelope decides

    if status == 429 or kind == "rate_limit_error":
        headers = exc.response.headers if isinstance(exc, anthropic.APIStatusError) else None
        return RateLimited(
            message, retry_after=parse_retry_after(headers), status_code=status or 429
        )
    if status == 413 or kind == "request_too_large":
        return ContextLengthExceeded(message, status_code=status)
    if status in (400, None) and _CONTEXT_MESSAGE.search(message) is not None:
        return ContextLengthExceeded(message, status_code=status)
    if status in (401, 403) or kind in ("authentication_error", "permission_error"):
        return ModelOther(
            f"Anthropic authentication failed (HTTP {status or kind}): {message}. Check "
            "ANTHROPIC_API_KEY (or the api_key argument) and the workspace it belongs to.",
            status_code=status,
        )
    if status is not None and (status >= 500 or status == 408):
        return ModelUnavailable(message, status_code=status)
    if kind in _UNAVAILABLE_TYPES:
        return ModelUnavailable(message, status_code=status)
    return ModelOther(message, status_code=status)
