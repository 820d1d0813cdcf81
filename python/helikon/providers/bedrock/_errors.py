"""Translate boto3 / botocore exceptions into the helikon model-error tree.

A Bedrock error reaches the client in two ways: as an HTTP error response (botocore raises
``ClientError`` with ``Error.Code`` from the ``x-amzn-ErrorType`` header or the body) or, in a
ConverseStream, as an exception event inside a 200 stream (botocore raises
``EventStreamError``, a ``ClientError`` whose code is the event's ``:exception-type``, e.g.
``throttlingException``). Both go through one table, matched on the code without its case and
without an ``Exception`` suffix, then on the HTTP status:

=============================================  ==============================================
Bedrock answer                                 helikon error
=============================================  ==============================================
``ThrottlingException``, HTTP 429,             :class:`~helikon.errors.RateLimited`
``ServiceQuotaExceededException``              (``retry_after`` from ``retry-after`` if sent)
``ValidationException`` / 400 whose message    :class:`~helikon.errors.ContextLengthExceeded`
says the input is too long / has too many
tokens / exceeds the context window
``ServiceUnavailableException``,               :class:`~helikon.errors.ModelUnavailable`
``ModelNotReadyException``,
``InternalServerException``,
``ModelStreamErrorException``,
``ModelTimeoutException``, any 5xx
``AccessDeniedException``,                     :class:`~helikon.errors.ModelOther`; the message
``UnrecognizedClientException``, expired       says to check the AWS credentials and model
tokens, missing credentials                    access
connection refused / reset, timeouts, an       :class:`~helikon.errors.TransportError`
``EndpointConnectionError``, a broken or
malformed event stream
anything else (other 400s, 404, 424 ...)       :class:`~helikon.errors.ModelOther` with the
                                               service's own message
=============================================  ==============================================

A mapped service error carries the SDK's error ``Code`` (``ValidationException``,
``ThrottlingException``, ...) as ``error_code``. The message of a mapped error is the
service's message unchanged (credential errors add a
hint), so tests and logs see what Bedrock said; ``status_code`` is the HTTP status when there
was one.
"""

from __future__ import annotations

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
from helikon.providers._errors import with_codes
from helikon.providers.bedrock._sdk import botocore_exceptions

__all__ = ["map_bedrock_error"]

_CONTEXT_MESSAGE = re.compile(
    r"input is too long|prompt is too long|too many (?:input |total )?tokens|"
    r"context[_ ](?:length|window)|input length|maximum context|exceeds? the context",
    re.IGNORECASE,
)
_RATE_CODES = frozenset({"throttling", "servicequotaexceeded", "toomanyrequests"})
_UNAVAILABLE_CODES = frozenset(
    {
        "serviceunavailable",
        "modelnotready",
        "internalserver",
        "internalfailure",
        "modelstreamerror",
        "modeltimeout",
    }
)
_AUTH_CODES = frozenset(
    {
        "accessdenied",
        "unrecognizedclient",
        "expiredtoken",
        "invalidsignature",
        "incompletesignature",
        "missingauthenticationtoken",
        "invalidclienttokenid",
        "signaturedoesnotmatch",
    }
)
_AUTH_HINT = (
    "Check the AWS credentials (environment, ~/.aws, SSO, role) and that the account has "
    "access to this model in this region."
)


def _normalized(code: str) -> str:
    low = code.strip().lower()
    return low.removesuffix("exception") if low.endswith("exception") else low


def _retry_after(headers: Mapping[str, Any]) -> float | None:
    value = headers.get("retry-after")
    try:
        return max(float(value), 0.0) if value is not None else None
    except (TypeError, ValueError):
        return None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _client_error(exc: Any) -> ModelError:
    error = _mapping(_mapping(exc.response).get("Error"))
    return with_codes(_classify_client_error(exc), None, error.get("Code"))


def _classify_client_error(exc: Any) -> ModelError:
    response = _mapping(exc.response)
    error = _mapping(response.get("Error"))
    meta = _mapping(response.get("ResponseMetadata"))
    raw_status = meta.get("HTTPStatusCode")
    status = raw_status if isinstance(raw_status, int) and raw_status >= 400 else None
    code = str(error.get("Code") or "")
    message = str(error.get("Message") or "") or str(exc)
    kind = _normalized(code)
    if not status and kind.isdigit():  # a recorder dropped x-amzn-ErrorType: the code is "400"
        status = int(kind)

    if kind in _RATE_CODES or (status == 429 and kind != "modelnotready"):
        headers = meta.get("HTTPHeaders")
        retry = _retry_after(headers) if isinstance(headers, Mapping) else None
        return RateLimited(message, retry_after=retry, status_code=status or 429)
    if kind in _UNAVAILABLE_CODES or (status is not None and status >= 500):
        return ModelUnavailable(message, status_code=status)
    if kind in _AUTH_CODES or status in (401, 403):
        return ModelOther(
            f"Bedrock refused the credentials ({code or status}): {message}. {_AUTH_HINT}",
            status_code=status,
        )
    if kind in ("validation", "400", "") and _CONTEXT_MESSAGE.search(message) is not None:
        return ContextLengthExceeded(message, status_code=status)
    if status == 413:
        return ContextLengthExceeded(message, status_code=status)
    return ModelOther(message, status_code=status)


def map_bedrock_error(exc: BaseException) -> ModelError:
    """The helikon :class:`~helikon.errors.ModelError` for a boto3 / botocore exception.

    Args:
        exc: an exception raised by a ``bedrock-runtime`` client call or while reading its
            event stream.

    Returns:
        The mapped error (not raised); chain it with ``raise ... from exc``.
    """
    errors = botocore_exceptions
    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, errors.ClientError):
        return _client_error(exc)
    if isinstance(exc, errors.NoCredentialsError | errors.PartialCredentialsError):
        return ModelOther(f"Bedrock call has no usable AWS credentials: {exc}. {_AUTH_HINT}")
    if isinstance(exc, errors.NoRegionError):
        return ModelOther(f"{exc}: pass region= or set AWS_REGION")
    if isinstance(exc, errors.ConnectTimeoutError | errors.ReadTimeoutError):
        return TransportError(f"Bedrock request timed out: {exc}")
    if isinstance(exc, errors.ConnectionError | errors.HTTPClientError):
        return TransportError(f"Bedrock connection failed: {exc}")
    if isinstance(exc, errors.ParamValidationError):
        return ModelOther(f"Bedrock request rejected by the SDK: {exc}")
    module = type(exc).__module__
    if (
        isinstance(exc, OSError)
        or module == "botocore.eventstream"
        or module.split(".", 1)[0] in ("urllib3", "http")
    ):
        return TransportError(f"Bedrock stream broke off: {exc or type(exc).__name__}")
    return ModelOther(f"Bedrock client error: {type(exc).__name__}: {exc}")
