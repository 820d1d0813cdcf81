"""Translate Gemini HTTP failures into the helikon model-error tree.

Gemini answers errors with a Google RPC envelope::

    {"error": {"code": 429, "message": "...", "status": "RESOURCE_EXHAUSTED",
               "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                            "retryDelay": "30s"}]}}

(the streaming endpoint may wrap it in a one-element list, or send it as an SSE ``data:``
payload mid-stream). The mapping, HTTP status first, then the envelope's ``status``:

========================================  =========================================
provider answer                           helikon error
========================================  =========================================
429 / ``RESOURCE_EXHAUSTED``              :class:`~helikon.errors.RateLimited`;
                                          ``retry_after`` from ``RetryInfo.retryDelay``
                                          (else a ``Retry-After`` header), in seconds
400 ``INVALID_ARGUMENT`` about the token  :class:`~helikon.errors.ContextLengthExceeded`
count / context window
401 / 403, ``UNAUTHENTICATED``,           :class:`~helikon.errors.ModelOther` naming the
``PERMISSION_DENIED``, an invalid key     credential to check
5xx, 408, ``UNAVAILABLE``, ``INTERNAL``,  :class:`~helikon.errors.ModelUnavailable`
``DEADLINE_EXCEEDED``
connection refused / reset, timeouts,     :class:`~helikon.errors.TransportError`
a malformed or truncated stream
anything else                             :class:`~helikon.errors.ModelOther` with the
                                          provider's own message
========================================  =========================================

Every mapped envelope carries its ``status`` as ``error_code``. The message of a mapped error
is the provider's ``error.message`` unchanged (auth errors add a hint); API-key-shaped strings
are masked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from helikon.errors import (
    ContextLengthExceeded,
    ModelError,
    ModelOther,
    ModelUnavailable,
    RateLimited,
    TransportError,
)
from helikon.providers._errors import retry_after_seconds, with_codes

__all__ = ["envelope_of", "map_envelope", "map_http_error", "map_transport_error", "retry_delay"]

_KEY_SHAPED = re.compile(r"\b(AIza[A-Za-z0-9_\-]{4})[A-Za-z0-9_\-]+|\b(ya29\.)[A-Za-z0-9_.\-]+")
_CONTEXT_MESSAGE = re.compile(
    r"token count|too many tokens|maximum number of tokens|context (?:length|window)"
    r"|exceeds the (?:maximum|limit)|input is too long|prompt is too long",
    re.IGNORECASE,
)
_UNAVAILABLE = frozenset({"UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED", "UNKNOWN"})
_AUTH = frozenset({"UNAUTHENTICATED", "PERMISSION_DENIED"})
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*s\s*$")


def _mask(text: str) -> str:
    return _KEY_SHAPED.sub(lambda m: (m.group(1) or m.group(2)) + "***", text)


def retry_delay(details: Any) -> float | None:
    """Seconds from a ``google.rpc.RetryInfo`` detail (``"retryDelay": "1.5s"``), if any.

    Example:
        >>> retry_delay([{"@type": "type.googleapis.com/google.rpc.RetryInfo",
        ...               "retryDelay": "37s"}])
        37.0
    """
    if not isinstance(details, list):
        return None
    for detail in details:
        if not isinstance(detail, Mapping):
            continue
        if not str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            continue
        delay = detail.get("retryDelay")
        if isinstance(delay, Mapping):  # the proto form {"seconds": 1, "nanos": 5e8}
            try:
                seconds = float(delay.get("seconds", 0)) + float(delay.get("nanos", 0)) / 1e9
            except (TypeError, ValueError):
                continue
            return max(seconds, 0.0)
        match = _DURATION.match(str(delay)) if delay is not None else None
        if match:
            return max(float(match.group(1)), 0.0)
    return None


def envelope_of(body: Any) -> Mapping[str, Any] | None:
    """The ``error`` object of a parsed error body (bare, or wrapped in a list)."""
    if isinstance(body, list) and body:
        body = body[0]
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping):
            return inner
    return None


def map_envelope(
    envelope: Mapping[str, Any],
    *,
    http_status: int | None,
    headers: Mapping[str, str] | None = None,
    credential_hint: str = "the API key",
) -> ModelError:
    """The helikon error for a Google RPC ``error`` object.

    Args:
        envelope: the ``error`` object (``code``, ``message``, ``status``, ``details``).
        http_status: the HTTP status, or ``None`` for an error sent inside a stream (then the
            envelope's ``code`` stands in for it).
        headers: the response headers (for ``Retry-After``).
        credential_hint: what to tell the user to check on an auth failure.

    Returns:
        The mapped error (not raised), whose ``error_code`` is the envelope's ``status``
        (``NOT_FOUND``, ``RESOURCE_EXHAUSTED``, ...).
    """
    error = _classify(
        envelope, http_status=http_status, headers=headers, credential_hint=credential_hint
    )
    return with_codes(error, None, envelope.get("status"))


def _classify(
    envelope: Mapping[str, Any],
    *,
    http_status: int | None,
    headers: Mapping[str, str] | None,
    credential_hint: str,
) -> ModelError:
    raw_code = envelope.get("code")
    code = raw_code if isinstance(raw_code, int) else None
    status = http_status if http_status is not None else code
    rpc_status = str(envelope.get("status") or "")
    message = _mask(str(envelope.get("message") or f"Gemini error (HTTP {status})"))
    details = envelope.get("details")
    if status == 429 or rpc_status == "RESOURCE_EXHAUSTED":
        after = retry_delay(details)
        if after is None and headers is not None:
            after = retry_after_seconds(headers.get("retry-after"))
        return RateLimited(message, retry_after=after, status_code=status)
    if status in (401, 403) or rpc_status in _AUTH or "API key not valid" in message:
        return ModelOther(
            f"Gemini authentication failed (HTTP {status}, {rpc_status or 'no status'}): "
            f"{message}. Check {credential_hint}.",
            status_code=status,
        )
    if (status == 400 or rpc_status == "INVALID_ARGUMENT") and _CONTEXT_MESSAGE.search(message):
        return ContextLengthExceeded(message, status_code=status)
    if status is not None and (status >= 500 or status == 408):
        return ModelUnavailable(message, status_code=status)
    if rpc_status in _UNAVAILABLE:
        return ModelUnavailable(message, status_code=status)
    return ModelOther(message, status_code=status)


def map_http_error(
    status: int,
    raw: bytes,
    headers: Mapping[str, str] | None = None,
    *,
    credential_hint: str = "the API key",
) -> ModelError:
    """The helikon error for an HTTP error answer (status >= 400) and its raw body."""
    text = raw.decode("utf-8", errors="replace")
    try:
        body = json.loads(text) if text.strip() else None
    except ValueError:
        body = None
    envelope = envelope_of(body)
    if envelope is None:
        snippet = text.strip()[:500] or f"HTTP {status} with no body"
        envelope = {"code": status, "message": snippet}
    return map_envelope(
        envelope, http_status=status, headers=headers, credential_hint=credential_hint
    )


def map_transport_error(exc: BaseException) -> TransportError:
    """A :class:`~helikon.errors.TransportError` for an ``httpx`` network failure."""
    kind = "timed out" if "Timeout" in type(exc).__name__ else "connection failed"
    detail = str(exc)
    text = f"Gemini request {kind} ({type(exc).__name__})"
    if detail:
        text = f"{text}: {detail}"
    return TransportError(_mask(text))
