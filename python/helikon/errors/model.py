"""Model provider errors: a provider call failed (``ModelError`` and its kinds).

Part of the one tree of :mod:`helikon.errors` (import from there).
"""

from __future__ import annotations

from helikon.errors.base import HelikonError

__all__ = [
    "ContextLengthExceeded",
    "ModelError",
    "ModelOther",
    "ModelUnavailable",
    "RateLimited",
    "Refused",
    "TransportError",
]


class ModelError(HelikonError):
    """A model provider call failed. ``kind`` is the spec's variant name.

    Attributes:
        message: the provider's own message (or helikon's, for a local failure).
        status_code: the HTTP status, when the failure was an HTTP answer.
        error_type: the provider's own error type, as sent (``invalid_request_error``,
            ``authentication_error``), else ``None``.
        error_code: the provider's own error code, as a string (``invalid_api_key``,
            ``unsupported_parameter``, Gemini's ``NOT_FOUND``, Bedrock's
            ``ValidationException``), else ``None``. Branch on these to tell apart errors
            that share a class.
    """

    kind: str = "Other"

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        error_type: str | None = None,
        error_code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.error_type = error_type
        self.error_code = error_code


class ModelUnavailable(ModelError):
    """The provider is overloaded or answered 5xx."""

    kind = "Unavailable"


class RateLimited(ModelError):
    """The provider answered 429. ``retry_after`` is in seconds when the provider said."""

    kind = "RateLimited"

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        status_code: int | None = 429,
        error_type: str | None = None,
        error_code: str | None = None,
    ) -> None:
        super().__init__(
            message, status_code=status_code, error_type=error_type, error_code=error_code
        )
        self.retry_after = retry_after


class ContextLengthExceeded(ModelError):
    """The request does not fit the model's context window."""

    kind = "ContextLengthExceeded"


class Refused(ModelError):
    """The provider refused to answer (safety refusal or policy block)."""

    kind = "Refused"


class TransportError(ModelError, ConnectionError):
    """The connection failed or the stream broke off."""

    kind = "Transport"


class ModelOther(ModelError):
    """Any other model failure, e.g. a MockModel whose script has run out."""

    kind = "Other"
