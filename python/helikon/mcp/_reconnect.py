"""Reconnecting a handle whose server died or dropped the connection.

:class:`Reconnecting` is a part of :class:`~helikon.mcp.McpServerHandle`: the next call after an
outage starts a new connection, up to ``max_reconnects`` tries, waiting ``reconnect_delay``
seconds before the first and doubling (at most 8 s) after each failure; after a failed round,
calls fail at once for ``retry_after`` seconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import mcp_types as types

from helikon.errors import McpError, ToolOther
from helikon.mcp._connection import Connection
from helikon.mcp._requests import ServerRequests

__all__ = ["ConnectionFactory", "Reconnecting"]

ConnectionFactory = Callable[[Callable[[str], None], dict[str, Any]], Connection]
"""Builds a fresh, unstarted connection: list-change notifications go to the callback, the
dict holds the ``ClientSession`` callbacks for server requests."""

_MAX_BACKOFF = 8.0


class Reconnecting:
    """The reconnect part of a handle (its state is set by the handle's constructor)."""

    _connection: Connection
    _make: ConnectionFactory
    _requests: ServerRequests
    _closed: bool
    _lock: asyncio.Lock | None
    _gave_up: str | None
    _gave_up_at: float
    connect_timeout: float
    max_reconnects: int
    reconnect_delay: float
    reconnects: int
    retry_after: float

    def _list_changed(self, method: str) -> None:
        raise NotImplementedError

    def _apply(self, remote: list[types.Tool]) -> None:
        raise NotImplementedError

    async def live_connection(self, display: str) -> Connection:
        """The connection a call should use: the current one while it lives, else a new one
        (see the class docstring on reconnecting).

        Raises:
            ToolOther: the handle was closed, or every reconnect try failed.
        """
        conn = self._connection
        if conn.dead_reason is None or self._closed or self.max_reconnects == 0:
            return conn
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._connection is not conn:  # another call reconnected meanwhile
                return self._connection
            now = asyncio.get_running_loop().time()
            if self._gave_up is not None and now < self._gave_up_at + self.retry_after:
                raise ToolOther(f"MCP tool {display!r} unavailable: {self._gave_up}")
            failures: list[str] = []
            delay = self.reconnect_delay
            for _ in range(self.max_reconnects):
                await asyncio.sleep(delay)
                if self._closed:
                    return conn
                fresh = self._make(self._list_changed, self._requests.callbacks())
                try:
                    remote = await fresh.start(self.connect_timeout)
                except McpError as exc:
                    failures.append(str(exc))
                    await fresh.close()
                    delay = min(delay * 2, _MAX_BACKOFF)
                    continue
                self._connection = fresh
                self.reconnects += 1
                self._apply(remote)
                return fresh
            self._gave_up = (
                f"{conn.dead_reason}; reconnecting failed {len(failures)} times "
                f"(last: {failures[-1]})"
            )
            self._gave_up_at = asyncio.get_running_loop().time()
            raise ToolOther(f"MCP tool {display!r} unavailable: {self._gave_up}")
