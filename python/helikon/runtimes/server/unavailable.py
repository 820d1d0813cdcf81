"""Which failures mean "the session backend is unavailable" (answered 503, not 500).

A session store that cannot be reached, or whose connection pool is exhausted, is a
transient condition of the server, not a fault of the request: the server answers 503
``session_unavailable`` with ``Retry-After`` so that status-code monitoring and load
balancers see it. The drivers' own error classes are recognised without importing them
(they are optional extras).
"""

from __future__ import annotations

import sys

from helikon.errors import SessionUnavailable

__all__ = ["backend_unavailable"]

_DRIVER_ERRORS = {
    # redis-py: refused/reset connections and "Too many connections" from a full pool
    "redis.exceptions": ("ConnectionError", "TimeoutError"),
    # asyncpg: server out of connection slots, starting up or shutting down
    "asyncpg.exceptions": (
        "TooManyConnectionsError",
        "CannotConnectNowError",
        "ConnectionDoesNotExistError",
    ),
}


def backend_unavailable(exc: BaseException) -> bool:
    """True when ``exc`` says the session backend cannot be reached right now:
    :class:`~helikon.errors.SessionUnavailable`, a ``ConnectionError`` or ``TimeoutError``
    (a pool's acquire timeout), or the same from the redis-py and asyncpg drivers."""
    if isinstance(exc, SessionUnavailable | ConnectionError | TimeoutError):
        return True
    for module, names in _DRIVER_ERRORS.items():
        loaded = sys.modules.get(module)
        if loaded is None:
            continue
        classes = tuple(c for n in names if isinstance(c := getattr(loaded, n, None), type))
        if classes and isinstance(exc, classes):
            return True
    return False
