"""``helikon mcp serve [--agents agents.toml] [--agent NAME] [--http HOST:PORT]``.

Serves one sidecar agent as an MCP server, over stdio by default (the client starts this
command and speaks MCP on its stdin/stdout); ``--http`` serves streamable HTTP at
``http://HOST:PORT/mcp`` instead. Needs the ``mcp`` extra. Messages go to stderr only: on
stdio, stdout belongs to the protocol.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from helikon.cli.common import (
    AGENT_OPTION,
    AGENTS_OPTION,
    EXIT_FAILED,
    EXIT_USAGE,
    OLD_SIDECAR_ARGUMENT,
    consoles,
    drive,
    fail,
    load_or_exit,
    sidecar_path,
)
from helikon.errors import ConfigError, McpBindError, McpServeError

if TYPE_CHECKING:
    from helikon.cli.sidecar_mcp import McpConnector
    from helikon.mcp.server import McpAgentServer

__all__ = ["mcp_app", "parse_address"]

mcp_app = typer.Typer(
    name="mcp",
    help="Serve a sidecar agent over the Model Context Protocol.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_ADDR_FIX = "Fix: e.g. --http 127.0.0.1:8000 (port 0 picks a free port)"


def parse_address(value: str) -> tuple[str, int] | None:
    """``HOST:PORT`` (``[v6]:PORT``; an empty host is ``127.0.0.1``), or ``None``."""
    host, sep, port_text = value.rpartition(":")
    if not sep or not port_text.isdigit():
        return None
    port = int(port_text)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        return None  # a bare IPv6 address is ambiguous: [::1]:8000
    if not 0 <= port <= 65535:
        return None
    return host or "127.0.0.1", port


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/mcp"


async def _with_mcp(
    server: McpAgentServer, mcp: McpConnector, err: Console, serve: Coroutine[Any, Any, int]
) -> int:
    """Start the sidecar's MCP servers the agent names, then ``serve``; stop them after."""
    async with mcp:
        try:
            await mcp.attach(server.agent)
        except ConfigError as exc:
            serve.close()
            err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
            return EXIT_USAGE
        return await serve


async def _stdio(server: McpAgentServer, err: Console) -> int:
    err.print(f"serving MCP tool {server.tool_name!r} over stdio", markup=False)
    try:
        await server.serve_stdio()
    except McpServeError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        return EXIT_FAILED
    return 0


async def _http(server: McpAgentServer, host: str, port: int, err: Console) -> int:
    serving = asyncio.create_task(server.serve_streamable_http(host, port))
    while server.port is None and not serving.done():
        await asyncio.sleep(0.01)
    if server.port is not None:
        url = _url(host, server.port)
        err.print(f"serving MCP tool {server.tool_name!r} at {url}", markup=False)
    try:
        await serving
    except (McpBindError, McpServeError) as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        return EXIT_FAILED
    return 0


@mcp_app.command("serve")
def serve(
    positional: OLD_SIDECAR_ARGUMENT = None,
    agents: AGENTS_OPTION = None,
    agent: AGENT_OPTION = None,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar="ADDR",
            help="Serve streamable HTTP at HOST:PORT (endpoint /mcp) instead of stdio.",
        ),
    ] = None,
) -> None:
    """Serve one agent as an MCP tool taking {"input": string}, over stdio or HTTP.

    Exit code: 0 the client disconnected (stdio) or the server stopped, 1 serving failed
    (e.g. the address is in use), 2 bad arguments, sidecar or missing 'mcp' extra.
    """
    _, err = consoles()
    address = None
    if http is not None:
        address = parse_address(http)
        if address is None:
            fail(err, f"--http {http!r}: expected HOST:PORT. {_ADDR_FIX}")
    try:
        from helikon.mcp.server import McpAgentServer
    except ImportError as exc:
        missing = getattr(exc.__cause__, "name", None) or exc.name or "mcp"
        fail(
            err,
            f"helikon mcp serve needs the 'mcp' extra ({missing} is not installed). "
            "Fix: pip install 'helikon[mcp]'",
        )
    sidecar = load_or_exit(err, sidecar_path(err, agents, positional, "mcp serve"))
    try:
        server = McpAgentServer(sidecar.build(agent), ctx_factory=sidecar.context)
    except ConfigError as exc:
        fail(err, str(exc))
    serve = _stdio(server, err) if address is None else _http(server, *address, err)
    raise typer.Exit(drive(_with_mcp(server, sidecar.mcp_connector(), err, serve)))
