"""Session errors: a session read or write failed.

Part of the one tree of :mod:`helikon.errors` (import from there).
"""

from __future__ import annotations

from helikon.errors.base import HelikonError

__all__ = [
    "SessionBackendError",
    "SessionError",
    "SessionOther",
    "SessionTampered",
    "SessionUnavailable",
]


class SessionError(HelikonError):
    """A session read or write failed. ``kind`` is the spec's variant name.

    A failed ``append`` persists nothing and leaves the session usable.
    """

    kind: str = "Other"


class SessionUnavailable(SessionError, ConnectionError):
    """The session store cannot be reached (connection refused, pool closed, timeout)."""

    kind = "Unavailable"


class SessionBackendError(SessionError):
    """The session store answered with an error, e.g. SQLite's ``database is locked``."""

    kind = "Backend"


class SessionOther(SessionError):
    """Any other session failure: an event that cannot be serialized, a corrupt stored row."""

    kind = "Other"


class SessionTampered(SessionError):
    """A session log's hash chain does not verify: a stored record was edited, removed or
    reordered. ``sequence`` is the first record whose hash does not match."""

    kind = "Tampered"

    def __init__(self, message: str, *, sequence: int) -> None:
        super().__init__(message)
        self.sequence = sequence
