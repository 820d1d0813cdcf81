"""``helikon serve [AGENTS_TOML] [--host] [--port] [--agent NAME ...] [--ui] [--token]``.

Serves the sidecar's agents with :class:`~helikon.runtimes.server.AgentServer` (the same
Starlette app as the Python API: ``POST /agents/{name}/runs`` and the rest, see the server
guide). It prints the server's URL on stdout, then uvicorn's request lines (``--log-level``,
default ``info``), and stops gracefully on SIGTERM or Ctrl-C: runs in flight are cancelled
and recorded, then the process exits 0. Needs the ``server`` extra.
"""

from __future__ import annotations

import asyncio
import hmac
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from helikon.cli.common import (
    AGENTS_OPTION,
    DEFAULT_AGENTS,
    EXIT_FAILED,
    EXIT_USAGE,
    consoles,
    drive,
    fail,
    load_or_exit,
)
from helikon.cli.sidecar import Sidecar
from helikon.core.agent import Agent
from helikon.errors import AuthRejection, ConfigError, ServerBindError

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

    from helikon.runtimes.server import AgentServer

__all__ = ["BearerToken", "serve"]

_LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


class BearerToken:
    """An :data:`~helikon.runtimes.server.AuthCallable` admitting requests that carry
    ``Authorization: Bearer TOKEN`` (compared in constant time); any other request is
    refused with 401 ``unauthorized``.

    Raises:
        ConfigError: ``token`` is empty or has whitespace.
    """

    def __init__(self, token: str) -> None:
        if not token or any(c.isspace() for c in token):
            raise ConfigError(
                "--token: the token is empty or contains whitespace. "
                "Fix: --token $(python -c 'import secrets; print(secrets.token_urlsafe())')"
            )
        self._token = token.encode()

    def __call__(self, conn: HTTPConnection) -> None:
        scheme, _, given = conn.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not given:
            raise AuthRejection("missing bearer token: send 'Authorization: Bearer TOKEN'")
        if not hmac.compare_digest(given.strip().encode(), self._token):
            raise AuthRejection("wrong bearer token")


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def _build_agents(sidecar: Sidecar, names: list[str] | None) -> dict[str, Agent]:
    """Every agent of the sidecar (or the ``--agent`` ones), built.

    Raises:
        ConfigError: an unknown agent name (naming the known ones) or a broken agent table.
    """
    wanted = names or sorted(sidecar.agents)
    unknown = [n for n in wanted if n not in sidecar.agents]
    if unknown:
        raise ConfigError(
            f"{sidecar.path}: no agent {unknown[0]!r}. "
            f"Fix: use --agent with one of {sorted(sidecar.agents)}"
        )
    return {name: sidecar.build(name) for name in dict.fromkeys(wanted)}


class _Stop:
    """SIGTERM/SIGINT before and after uvicorn's own handlers: ask the server to stop and
    remember the signal, so the process exits 0 (uvicorn re-raises a signal it handled once
    it has shut down; this handler receives it instead of the default one)."""

    def __init__(self, server: AgentServer) -> None:
        self.server = server
        self.signal: int | None = None

    def __call__(self, sig: int, frame: FrameType | None) -> None:
        self.signal = sig
        self.server.shutdown()

    def install(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self)


async def _serve(
    server: AgentServer,
    sidecar: Sidecar,
    host: str,
    port: int,
    log_level: str,
    out: Console,
    err: Console,
) -> int:
    stop = _Stop(server)
    stop.install()
    async with sidecar.mcp_connector() as mcp:
        try:
            for agent in server.agents.values():
                await mcp.attach(agent)
        except ConfigError as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
            return EXIT_USAGE
        serving = asyncio.create_task(server.serve(host, port, log_level=log_level))
        ready = asyncio.create_task(server.wait_ready())
        await asyncio.wait([serving, ready], return_when=asyncio.FIRST_COMPLETED)
        if ready.done():
            url = _url(host, ready.result())
            out.print(f"helikon server at {url} (Ctrl-C to stop)", markup=False)
            for name in server.agents:
                out.print(f"  {name}: POST {url}/agents/{name}/runs", markup=False)
            if server.config.ui:
                out.print(f"  inspector: {url}/ui", markup=False)
            sys.stdout.flush()
            if stop.signal is not None:  # a signal came while starting up
                server.shutdown()
        else:
            ready.cancel()
        try:
            await serving
        except ServerBindError as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
            return EXIT_FAILED
    if stop.signal is not None:
        err.print(f"stopped ({signal.Signals(stop.signal).name})", markup=False)
    return 0


def _sidecar_file(err: Console, positional: Path | None, agents: Path | None) -> Path:
    if positional is not None and agents is not None:
        fail(
            err,
            f"the sidecar is given twice ({positional} and --agents {agents}). "
            f"Fix: helikon serve {agents}",
        )
    return positional or agents or DEFAULT_AGENTS


def serve(
    positional: Annotated[
        Path | None,
        typer.Argument(
            metavar="[AGENTS_TOML]",
            help="The agents.toml sidecar (default: ./agents.toml).",
            show_default=False,
        ),
    ] = None,
    agents: AGENTS_OPTION = None,
    agent: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            help="Serve only this agent (repeat for more; default: every agent of the file).",
        ),
    ] = None,
    host: Annotated[
        str, typer.Option("--host", help="The address to bind (0.0.0.0: every interface).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="The port (0: a free one).")] = 8000,
    ui: Annotated[bool, typer.Option("--ui", help="Serve the run inspector at /ui.")] = False,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="HELIKON_SERVER_TOKEN",
            help="Require 'Authorization: Bearer TOKEN' on every request except /healthz "
            "(also read from HELIKON_SERVER_TOKEN).",
            show_default=False,
        ),
    ] = None,
    log_level: Annotated[
        str,
        typer.Option("--log-level", help=f"uvicorn's log level: {', '.join(_LOG_LEVELS)}."),
    ] = "info",
) -> None:
    """Serve the sidecar's agents over HTTP, SSE and WebSocket until SIGTERM or Ctrl-C.

    Exit code: 0 stopped by a signal, 1 the address cannot be bound, 2 bad arguments,
    sidecar or missing 'server' extra.
    """
    out, err = consoles()
    if log_level not in _LOG_LEVELS:
        fail(err, f"--log-level {log_level!r}: expected one of {', '.join(_LOG_LEVELS)}")
    if not 0 <= port <= 65535:
        fail(err, f"--port {port}: expected 0 to 65535 (0 picks a free port)")
    try:
        from helikon.runtimes.server import AgentServer, ServerConfig
    except ImportError as exc:
        missing = getattr(exc.__cause__, "name", None) or exc.name or "starlette"
        fail(
            err,
            f"helikon serve needs the 'server' extra ({missing} is not installed). "
            "Fix: pip install 'helikon[server]'",
        )
    sidecar = load_or_exit(err, _sidecar_file(err, positional, agents))
    try:
        auth = BearerToken(token) if token is not None else None
        built = _build_agents(sidecar, agent)
        sessions: Any = None
        if sidecar.session is not None and sidecar.session.backend != "memory":
            sessions = sidecar.session.open
        server = AgentServer(
            built,
            session_factory=sessions,
            context_factory=lambda conn, session, cancel: sidecar.context().with_cancel(cancel),
            auth=auth,
            config=ServerConfig(ui=ui),
        )
    except ConfigError as exc:
        fail(err, str(exc))
    raise typer.Exit(drive(_serve(server, sidecar, host, port, log_level, out, err)))
