"""Running a uvicorn server so that cancelling the caller stops it cleanly.

``await uvicorn.Server.serve()`` cancelled from outside skips uvicorn's own shutdown: its
listening sockets stay registered with the event loop. Closing such a socket by hand frees
its file descriptor while the loop still watches it, and the next server of that loop that
gets the same descriptor accepts connections but never answers them.

:func:`run_uvicorn` runs ``serve()`` on an inner task. When the caller is cancelled it sets
``should_exit`` and waits (bounded) for uvicorn's own shutdown, which closes the listeners
and the sockets, then re-raises the cancellation. Whatever happens, the listeners are
unregistered before any socket is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import math
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from helikon.errors import ConfigError

__all__ = ["check_settings", "listening_socket", "loop_factory", "run_uvicorn"]

HTTP_IMPLEMENTATIONS = ("auto", "h11", "httptools")
LOOPS = ("auto", "asyncio", "uvloop")
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


def check_settings(*, backlog: object, keep_alive: object, http: object, log_level: object) -> None:
    """Check :meth:`AgentServer.serve`'s uvicorn settings before anything is bound.

    Raises:
        ConfigError: a value is out of range, or ``http="httptools"`` without httptools
            installed (the message names the setting and the fix).
    """
    if isinstance(backlog, bool) or not isinstance(backlog, int) or backlog < 1:
        raise ConfigError(f"AgentServer.serve(backlog=...) must be an int >= 1, got {backlog!r}")
    ok = isinstance(keep_alive, int | float) and not isinstance(keep_alive, bool)
    if not ok or not math.isfinite(keep_alive) or keep_alive <= 0:  # type: ignore[arg-type,operator]
        raise ConfigError(
            f"AgentServer.serve(keep_alive=...) must be seconds > 0, got {keep_alive!r}"
        )
    if http not in HTTP_IMPLEMENTATIONS:
        raise ConfigError(
            f"AgentServer.serve(http=...) must be one of {HTTP_IMPLEMENTATIONS}, got {http!r}"
        )
    if http == "httptools" and importlib.util.find_spec("httptools") is None:
        raise ConfigError(
            "AgentServer.serve(http='httptools') needs httptools: pip install httptools "
            "(or uvicorn[standard]), or use http='h11'"
        )
    if log_level not in LOG_LEVELS:
        raise ConfigError(
            f"AgentServer.serve(log_level=...) must be one of {LOG_LEVELS}, got {log_level!r}"
        )


def loop_factory(loop: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The event loop factory for ``loop``: ``"asyncio"`` (``None``: the default policy),
    ``"uvloop"``, or ``"auto"`` (uvloop when installed).

    Raises:
        ConfigError: an unknown ``loop``, or ``"uvloop"`` without uvloop installed.
    """
    if loop not in LOOPS:
        raise ConfigError(f"AgentServer.serve_sync(loop=...) must be one of {LOOPS}, got {loop!r}")
    if loop == "asyncio":
        return None
    try:
        import uvloop  # type: ignore[import-not-found]
    except ImportError:
        if loop == "uvloop":
            raise ConfigError(
                "AgentServer.serve_sync(loop='uvloop') needs uvloop: pip install uvloop, "
                "or use loop='asyncio'"
            ) from None
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def listening_socket(host: str, port: int, *, backlog: int = 128) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening.

    It is created with ``proto=IPPROTO_TCP`` so that the connections it accepts inherit
    it and asyncio turns Nagle's algorithm off on them (``TCP_NODELAY``; asyncio only
    does so for sockets whose protocol is TCP by number). With ``proto=0`` a small SSE
    frame written after the response headers waits for the client's delayed ACK (~40 ms
    on Linux) before it leaves.

    Raises:
        OSError: the address cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock


async def run_uvicorn(
    server: Any,
    sockets: list[socket.socket] | None = None,
    *,
    stop_timeout: float = 10.0,
    on_cancel: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Run ``server.serve(sockets)`` until it returns; on cancellation, shut it down first.

    Args:
        server: a ``uvicorn.Server``.
        sockets: bound, listening sockets to serve on (``None``: uvicorn binds its own).
        stop_timeout: seconds uvicorn may take to shut down after a cancellation before
            it is forced (``force_exit``), then cancelled.
        on_cancel: awaited alongside the shutdown after a cancellation (e.g. to end the
            runs whose streams keep connections open).

    Raises:
        asyncio.CancelledError: the caller was cancelled (after the shutdown).
    """
    serving = asyncio.ensure_future(server.serve(sockets=sockets))
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        server.should_exit = True
        helper = asyncio.ensure_future(on_cancel()) if on_cancel is not None else None
        await _stop(server, serving, stop_timeout)
        if helper is not None and not helper.done():
            helper.cancel()
        raise
    finally:
        if not serving.done():  # a second cancellation: stop waiting, still clean up
            serving.cancel()
        _close_listeners(server)
        for sock in sockets or []:
            sock.close()


async def _stop(server: Any, serving: asyncio.Future[None], timeout: float) -> None:
    """Wait for uvicorn's shutdown; force it after ``timeout``, cancel it after 2 s more."""
    done, _ = await asyncio.wait([serving], timeout=timeout)
    if not done:
        server.force_exit = True
        done, _ = await asyncio.wait([serving], timeout=2.0)
    if not done:
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await serving
    elif not serving.cancelled():
        serving.exception()  # retrieved: an error while stopping is not the caller's concern


def _close_listeners(server: Any) -> None:
    """Unregister uvicorn's listeners from the loop (idempotent; closes their sockets)."""
    for listener in getattr(server, "servers", None) or []:
        listener.close()
