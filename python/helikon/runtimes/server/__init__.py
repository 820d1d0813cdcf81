"""A self-hosted agent server: HTTP, Server-Sent Events and WebSocket (extra ``server``).

:class:`AgentServer` mounts agents on a Starlette app (:attr:`AgentServer.app`, an ASGI app
to run or mount) and serves it with uvicorn (:meth:`AgentServer.serve`). Every run drains
into a replayable in-memory log, whatever the transport that started it. See
``docs/guides/server.md``.
"""

from __future__ import annotations

from helikon._extras import require_extra

require_extra("helikon.runtimes.server", "server", "starlette", "starlette")

from helikon.errors import (  # noqa: E402
    AuthRejection,
    ServerBindError,
    ServerError,
)
from helikon.runtimes.server.app import AgentServer, AuthCallable, ContextFactory  # noqa: E402
from helikon.runtimes.server.config import ServerConfig  # noqa: E402
from helikon.runtimes.server.paused import (  # noqa: E402
    MemoryPausedRuns,
    PausedRun,
    PausedRunStore,
)
from helikon.runtimes.server.paused_stores import (  # noqa: E402
    PostgresPausedRuns,
    RedisPausedRuns,
    SqlitePausedRuns,
)
from helikon.runtimes.server.sessions import MemorySessions, SessionFactory  # noqa: E402

__all__ = [
    "AgentServer",
    "AuthCallable",
    "AuthRejection",
    "ContextFactory",
    "MemoryPausedRuns",
    "MemorySessions",
    "PausedRun",
    "PausedRunStore",
    "PostgresPausedRuns",
    "RedisPausedRuns",
    "ServerBindError",
    "ServerConfig",
    "ServerError",
    "SessionFactory",
    "SqlitePausedRuns",
]
