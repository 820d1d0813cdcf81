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

Every mapped API error carries the envelope's ``error.type`` as ``error_type`` (Anthropic
sends no code). The message of a mapped error is the provider's ``error.message`` unchanged
(auth errors add
a hint naming the key's variable), so tests and logs see what the provider said. Key-shaped
strings are masked.
"""

from __future__ import annotations

import re
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
from helikon.providers._errors import parse_retry_after, read_sdk_error, with_codes

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
        exc: an exception raised by the ``anthropic`` SDK (a network error from below it, or a
            JSON error from decoding its stream, maps to :class:`~helikon.errors.TransportError`,
            anything else to :class:`~helikon.errors.ModelOther`).

    Returns:
        The mapped error (not raised); chain it with ``raise ... from exc``.
    """
    read = read_sdk_error(exc, anthropic, "Anthropic", _mask, below=transport_error)
    if isinstance(read, ModelError):
        return read
    kind = str(read.envelope.get("type") or "")
    status = read.status
    if status is not None and status < 400:
        status = None  # an `event: error` inside a 200 stream: the envelope decides

    return with_codes(_classify(kind, read.message, status, read.response), kind or None, None)


def _classify(kind: str, message: str, status: int | None, response: Any) -> ModelError:
    if status == 429 or kind == "rate_limit_error":
        headers = response.headers if response is not None else None
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
