"""Error-mapping pieces that every provider adapter shares.

Each adapter keeps its own table (which status, code or message means which helikon error:
see its ``_errors`` module); what is the same everywhere lives here:

* :func:`guard` awaits one SDK or network step and turns what it raises into a
  :class:`~helikon.errors.ModelError` through the adapter's mapper (a ``ModelError`` passes
  through unchanged).
* :func:`parse_retry_after` / :func:`retry_after_seconds` read ``retry-after-ms`` and
  ``retry-after`` (seconds or an HTTP date).
* :func:`with_codes` attaches the provider's own error type and code to a mapped error.
* :func:`read_sdk_error` takes the first steps for an exception of the two HTTP SDKs built on
  the same generator (``openai``, ``anthropic``): malformed stream data, connection failures
  and client-side errors become a ``ModelError``; an API error is read into an
  :class:`ApiFailure` (:func:`error_envelope`, :func:`provider_message`) for the adapter's
  table.

Test strategy: every function here is reached through the adapters' wire tests (HTTP errors,
in-band stream errors, refused connections); the retry-after parsing also has doctests.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from helikon.errors import ModelError, ModelOther, TransportError

__all__ = [
    "ApiFailure",
    "connection_error",
    "error_envelope",
    "guard",
    "parse_retry_after",
    "provider_message",
    "read_sdk_error",
    "retry_after_seconds",
    "with_codes",
]

_T = TypeVar("_T")


async def guard(
    awaitable: Awaitable[_T],
    mapper: Callable[[BaseException], ModelError],
    catch: type[BaseException] | tuple[type[BaseException], ...] = Exception,
) -> _T:
    """Await ``awaitable``; an exception of a ``catch`` type is raised as ``mapper(exc)``.

    A :class:`~helikon.errors.ModelError` (already mapped) propagates unchanged, and so does
    anything outside ``catch``. The mapped error is chained to the original.
    """
    try:
        return await awaitable
    except ModelError:
        raise
    except catch as exc:
        raise mapper(exc) from exc


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from one ``Retry-After`` value: a number of seconds or an HTTP date.

    Args:
        value: the header's value (``None`` when absent).
        now: the current time (seconds since the epoch) for an HTTP date; defaults to
            :func:`time.time`.

    Returns:
        A non-negative float, or ``None`` when the value is absent or unreadable.

    Example:
        >>> retry_after_seconds("2")
        2.0
        >>> retry_after_seconds("Thu, 01 Jan 1970 00:00:10 GMT", now=4.0)
        6.0
    """
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


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """Seconds to wait according to ``retry-after-ms``, else ``retry-after``.

    Args:
        headers: response headers (httpx headers look names up case-insensitively).
        now: the current time for HTTP-date values; defaults to :func:`time.time`.

    Returns:
        A non-negative float of seconds, or ``None`` when neither header is usable.

    Example:
        >>> parse_retry_after({"retry-after-ms": "1500"})
        1.5
        >>> parse_retry_after({"retry-after": "7"})
        7.0
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
    return retry_after_seconds(headers.get("retry-after"), now=now)


def _code_text(value: object) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (str, int)):
        text = str(value)
        return text or None
    return None


def with_codes(error: ModelError, error_type: object, error_code: object) -> ModelError:
    """``error`` carrying the provider's own error type and code (as strings; ``None`` when
    absent or not a string/number), for callers to branch on.

    Example:
        >>> from helikon.errors import ModelOther
        >>> e = with_codes(ModelOther("bad"), "invalid_request_error", "invalid_api_key")
        >>> (e.error_type, e.error_code)
        ('invalid_request_error', 'invalid_api_key')
        >>> with_codes(ModelOther("x"), None, 429).error_code
        '429'
    """
    error.error_type = _code_text(error_type)
    error.error_code = _code_text(error_code)
    return error


def error_envelope(body: object) -> Mapping[str, Any]:
    """The ``error`` object of an error body (the body itself when it has none)."""
    if isinstance(body, Mapping):
        inner = body.get("error")
        return inner if isinstance(inner, Mapping) else body
    return {}


class _Response(Protocol):
    @property
    def text(self) -> str: ...


def provider_message(
    envelope: Mapping[str, Any],
    response: _Response | None,
    fallback: str,
    mask: Callable[[str], str],
) -> str:
    """The provider's own words: the envelope's ``message``, else the start of the raw body
    (a plain-text error page), else ``fallback``; key-shaped strings masked."""
    message = envelope.get("message")
    if isinstance(message, str) and message:
        return mask(message)
    if response is not None:
        try:
            text = response.text.strip()
        except Exception:  # the body may be unread (a stream) or undecodable
            text = ""
        if text:
            return mask(text[:500])
    return mask(fallback)


def connection_error(
    provider: str, exc: BaseException, *, timed_out: bool, mask: Callable[[str], str]
) -> TransportError:
    """The :class:`~helikon.errors.TransportError` for an SDK's connection failure, naming the
    underlying cause when there is one."""
    kind = "timed out" if timed_out else "connection failed"
    cause = exc.__cause__
    detail = f": {cause}" if cause is not None and str(cause) else ""
    return TransportError(mask(f"{provider} request {kind}{detail}"))


@dataclass(frozen=True, slots=True)
class ApiFailure:
    """An SDK's API error, read: its error ``envelope``, the HTTP ``response`` and ``status``
    (``None`` for an error event inside a stream) and the provider's ``message``."""

    envelope: Mapping[str, Any]
    response: Any
    message: str
    status: int | None


def read_sdk_error(
    exc: BaseException,
    sdk: Any,
    provider: str,
    mask: Callable[[str], str],
    below: Callable[[BaseException], ModelError | None] | None = None,
) -> ModelError | ApiFailure:
    """The first steps of mapping an exception of a generated HTTP SDK (``openai``,
    ``anthropic``, passed as ``sdk``).

    Malformed stream data and connection failures become a
    :class:`~helikon.errors.TransportError`; another exception that is not the SDK's
    ``APIError`` becomes what ``below`` makes of it (errors of the HTTP library under the SDK),
    else a :class:`~helikon.errors.ModelOther` naming the provider; an ``APIError`` is read
    into an :class:`ApiFailure` for the adapter's table. Key-shaped strings are masked.
    """
    if isinstance(exc, json.JSONDecodeError):
        return TransportError(f"{provider} sent malformed stream data: {exc}")
    if isinstance(exc, sdk.APIConnectionError):  # includes APITimeoutError
        timed_out = isinstance(exc, sdk.APITimeoutError)
        return connection_error(provider, exc, timed_out=timed_out, mask=mask)
    if not isinstance(exc, sdk.APIError):
        mapped = below(exc) if below is not None else None
        return mapped if mapped is not None else ModelOther(mask(f"{provider} client error: {exc}"))
    with_status = isinstance(exc, sdk.APIStatusError)
    envelope = error_envelope(exc.body)
    response = exc.response if with_status else None
    message = provider_message(envelope, response, exc.message, mask)
    return ApiFailure(envelope, response, message, exc.status_code if with_status else None)
