"""Agent server errors.

Part of the one tree of :mod:`helikon.errors` (import from there).
"""

from __future__ import annotations

from typing import Any

from helikon.errors.base import HelikonError

__all__ = ["AuthRejection", "ServerBindError", "ServerError"]


class ServerError(HelikonError):
    """A request the server cannot serve; becomes a JSON error response.

    ``status`` is the HTTP status, ``code`` the machine-readable ``error`` field of the body.
    Raise it from a session factory or a context factory to answer with that status
    (default 500). ``details`` are extra fields of the body (e.g. ``{"field": "input"}``).

    The body is ``{"error": code, "message": message, **details}``.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int = 500,
        code: str = "server_error",
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details = dict(details or {})

    def body(self) -> dict[str, Any]:
        """The JSON error body."""
        return {"error": self.code, "message": self.message, **self.details}


class AuthRejection(ServerError):
    """Raised by an auth callable to reject a request (default 401 Unauthorized).

    Example:
        >>> AuthRejection("missing bearer token").status
        401
    """

    def __init__(self, message: str, *, status: int = 401) -> None:
        code = "unauthorized" if status == 401 else "forbidden"
        super().__init__(message, status=status, code=code)


class ServerBindError(ServerError, OSError):
    """:meth:`AgentServer.serve` could not bind its address (in use, no permission)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=500, code="bind_failed")
