"""MCP errors: an MCP connection or server failed.

Part of the one tree of :mod:`helikon.errors` (import from there).
"""

from __future__ import annotations

from helikon.errors.base import HelikonError

__all__ = [
    "McpBindError",
    "McpConnectError",
    "McpError",
    "McpOther",
    "McpServeError",
    "McpServiceError",
    "McpSpawnError",
]


class McpError(HelikonError):
    """An MCP connection or server failed. ``kind`` is the spec's variant name."""

    kind: str = "Other"


class McpConnectError(McpError, ConnectionError):
    """Connecting to an MCP server (transport or ``initialize`` handshake) failed."""

    kind = "Connect"


class McpSpawnError(McpError, OSError):
    """The stdio MCP server's process could not be started (command not found, ...)."""

    kind = "Spawn"


class McpServiceError(McpError):
    """An MCP request outside a tool call failed, e.g. ``tools/list`` during connect."""

    kind = "Service"


class McpBindError(McpError, OSError):
    """The streamable-HTTP MCP server could not bind its address."""

    kind = "Bind"


class McpServeError(McpError):
    """Serving an agent over MCP ended abnormally."""

    kind = "Serve"


class McpOther(McpError):
    """Any other MCP failure."""

    kind = "Other"
