""":class:`McpAgentServer`: one helikon agent (or multi-agent pattern) served as one MCP tool.

Built on the ``mcp`` package's low-level ``Server``: ``tools/list`` answers the single tool,
``tools/call`` runs the agent. Transports are the package's: ``stdio_server`` for stdio,
``streamable_http_app`` (Starlette) under uvicorn for streamable HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from starlette.applications import Starlette

from helikon.core.context import RunConfig, RunContext
from helikon.core.hooks import HookRegistry
from helikon.core.result import RunResult, RunResultStreaming
from helikon.core.runnable import Runnable, check_runnable
from helikon.core.tool import ToolOutput
from helikon.errors import ConfigError, McpBindError, McpServeError, RunError, RunTimeout
from helikon.mcp._elicit_approval import ElicitedApproval
from helikon.mcp._naming import server_tool_name
from helikon.mcp._progress import ProgressHook, Send

__all__ = ["McpAgentServer"]

_TIMEOUT_GRACE = 5.0  # the driver enforces RunConfig.timeout; this backstop never should
_CANCEL_WAIT = 5.0  # how long a cancelled run may take to wind down
_STOP_GRACE = 5.0  # a cancelled serve: graceful uvicorn shutdown, then forced


_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "reasoning_tokens",
    "total_tokens",
    "cache_write_input_tokens",
)

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "final_output": {"description": "The run's final output (text, or the typed value)."},
        "usage": {
            "type": "object",
            "description": "The run's token usage, summed over its model turns.",
            "properties": {f: {"type": "integer", "minimum": 0} for f in _USAGE_FIELDS},
            "required": list(_USAGE_FIELDS),
        },
    },
    "required": ["final_output", "usage"],
}
"""The served tool's ``outputSchema``: the shape of every successful result's
``structuredContent``."""


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _version() -> str:
    from helikon._version import __version__

    return __version__


class McpAgentServer:
    """Serve ``agent`` as one MCP tool that takes ``{"input": string}`` and returns the
    agent's final text, with ``structuredContent`` ``{"final_output": ..., "usage": {...}}``
    (the tool's ``outputSchema`` is :data:`OUTPUT_SCHEMA`).

    A client that sends a ``progressToken`` gets ``notifications/progress`` while the agent
    runs: one per model turn, tool call, tool result and handoff (``progress`` 1, 2, ...;
    ``message`` such as ``"turn 1"`` or ``"calling tool lookup"``).

    ``agent`` is an :class:`~helikon.Agent` or anything that runs like one (a
    :class:`~helikon.agents.base.Runnable`: every pattern in :mod:`helikon.agents`, such as
    ``SequentialAgent``); all run the same way, through ``run`` (or ``stream``).

    The tool is named after the agent: each character outside ``[A-Za-z0-9_-]`` becomes one
    ``_`` (``"triage helper"`` -> ``triage_helper``, ``"日本"`` -> ``__``). It is described by
    ``agent.description``.

    Args:
        agent: the agent or pattern to serve.
        ctx_factory: called once per tool call for that run's context: return a
            :class:`~helikon.RunContext` (permissions, hooks, ...) or any other value, used
            as the ``user_ctx`` of a fresh ``RunContext``. ``None``: ``RunContext.ephemeral()``.
        name: the server name reported at ``initialize`` (default: the agent's name).
        version: the server version reported at ``initialize`` (default: helikon's).
        instructions: optional MCP instructions for the client.
        run_config: the :class:`~helikon.RunConfig` of each run (default: the agent's own,
            or a default ``RunConfig`` for a runnable without one).
            Its ``timeout`` ends a call with an MCP error result instead of hanging.

    A tool call inside the run that asks for approval (an ``AskUser`` of the permission
    pipeline) is answered by the run context's approval handler; without one, when the
    client declares the ``elicitation`` capability, the client is asked through
    ``elicitation/create`` (a form: accept with ``approve`` true runs the call; anything else
    denies it, see :mod:`helikon.mcp._elicit_approval`); else the call is denied (the
    agent's model reads the denial). An agent run with ``approval="defer"`` ends the call
    with an error result saying it paused (nothing that waits ran).

    A failed run (timeout, max turns, a model error) is an MCP error result (``isError``)
    whose text says why. A client cancelling the request, or disconnecting, cancels the run.

    Raises:
        ConfigError: ``agent`` does not run like an Agent, or a bad argument.

    Example:
        >>> from helikon import Agent
        >>> from helikon.testing import MockModel, Text
        >>> server = McpAgentServer(Agent(name="triage helper", model=MockModel([[Text("hi")]])))
        >>> server.tool_name
        'triage_helper'
        >>> # asyncio.run(server.serve_stdio())
    """

    def __init__(
        self,
        agent: Runnable,
        *,
        ctx_factory: Callable[[], Any] | None = None,
        name: str | None = None,
        version: str | None = None,
        instructions: str | None = None,
        run_config: RunConfig | None = None,
    ) -> None:
        check_runnable("McpAgentServer(agent=...)", agent)
        if ctx_factory is not None and not callable(ctx_factory):
            raise ConfigError("McpAgentServer(ctx_factory=...) must be a function fn() -> ctx")
        if run_config is not None and not isinstance(run_config, RunConfig):
            raise ConfigError(
                "McpAgentServer(run_config=...) must be a RunConfig, got "
                f"{type(run_config).__name__}"
            )
        self.agent = agent
        self.tool_name = server_tool_name(agent.name)
        own = getattr(agent, "run_config", None)
        self.run_config = run_config or (own if isinstance(own, RunConfig) else RunConfig())
        """The effective run config (its ``timeout`` bounds each call)."""
        self._run_config = run_config  # None: the agent applies its own, as in agent.run()
        self.port: int | None = None
        """The bound port once :meth:`serve_streamable_http` listens (useful with port 0)."""
        self._ctx_factory = ctx_factory
        self._uvicorn: Any = None
        self.server: Server[Any] = Server(
            name or agent.name,
            version=_version() if version is None else version,
            instructions=instructions,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        """The ``mcp`` low-level server (for transports this class does not wrap)."""

    # ------------------------------------------------------------------ the tool

    @property
    def tool(self) -> types.Tool:
        """The one tool this server lists."""
        return types.Tool(
            name=self.tool_name,
            description=self.agent.description,
            input_schema={
                "type": "object",
                "properties": {"input": {"type": "string", "description": "The agent's input."}},
                "required": ["input"],
            },
            output_schema=OUTPUT_SCHEMA,
        )

    async def _list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[self.tool])

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name != self.tool_name:
            return _error(f"unknown tool {params.name!r}; this server has {self.tool_name!r}")
        text = (params.arguments or {}).get("input")
        if not isinstance(text, str):
            return _error('invalid arguments: "input" must be a string')
        token = progress_token_from_params(getattr(ctx, "params", None))
        approver = None
        session = getattr(ctx, "session", None)
        if session is not None and session.check_client_capability(
            types.ClientCapabilities(elicitation=types.ElicitationCapability())
        ):
            approver = ElicitedApproval(session, ctx.request_id, self.agent.name)
        progress: Send | None = None
        if token is not None:
            session, request_id = ctx.session, ctx.request_id

            async def progress(done: float, message: str) -> None:
                await session.send_progress_notification(
                    token, done, message=message, related_request_id=request_id
                )

        return await self.call(text, progress=progress, approver=approver)

    def _new_ctx(self) -> RunContext[Any]:
        made = self._ctx_factory() if self._ctx_factory is not None else None
        return made if isinstance(made, RunContext) else RunContext.ephemeral(made)

    async def call(
        self, input: str, *, progress: Send | None = None, approver: Any = None
    ) -> types.CallToolResult:
        """Run the agent on ``input`` as one ``tools/call`` would; the MCP result.

        ``approver`` (an approval handler) answers the run's asks when the context has no
        handler of its own (the server passes one asking the client through elicitation).

        ``progress(done, message)`` is awaited for each reported step of the run (see the
        class docstring). Cancelling the awaiting task (the MCP client's
        ``notifications/cancelled`` or disconnect) cancels the run and waits (bounded) for
        it to wind down.
        """
        ctx = self._new_ctx()
        if approver is not None and ctx.permissions.approval_handler is None:
            ctx = ctx.with_approval_handler(approver)
        if progress is not None:
            ctx = ctx.with_hooks(HookRegistry([*ctx.hooks, ProgressHook(progress)]))
        run = asyncio.ensure_future(self._run(input, ctx))
        timeout = self.run_config.timeout
        try:
            if timeout is None:
                result = await asyncio.shield(run)
            else:
                result = await asyncio.wait_for(asyncio.shield(run), timeout + _TIMEOUT_GRACE)
        except asyncio.CancelledError:
            ctx.cancel.cancel("the MCP client cancelled the call")
            await _wind_down(run)
            raise
        except TimeoutError:
            ctx.cancel.cancel("timeout")
            await _wind_down(run)
            return _error(f"agent {self.agent.name!r} timed out after {timeout:g}s")
        except RunError as exc:
            if isinstance(exc.error, RunTimeout):
                return _error(f"agent {self.agent.name!r} timed out after {exc.error.seconds:g}s")
            return _error(f"agent {self.agent.name!r} failed: {exc.error}")
        except Exception as exc:
            return _error(f"agent {self.agent.name!r} failed: {type(exc).__name__}: {exc}")
        out = ToolOutput.from_value(result.final_output)
        text = out.content[0].text  # type: ignore[union-attr]
        structured = {
            "final_output": json.loads(text) if not isinstance(out.value, str) else out.value,
            "usage": {f: getattr(result.usage, f) for f in _USAGE_FIELDS},
        }
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=structured
        )

    async def _run(self, input: str, ctx: RunContext[Any]) -> RunResult[Any]:
        """``agent.run`` when it has one (typed output); else its drained ``stream``."""
        run = getattr(self.agent, "run", None)
        if callable(run):
            result: RunResult[Any] = await run(input, ctx, run_config=self._run_config)
            return result
        events = self.agent.stream(input, ctx, run_config=self._run_config)
        return await RunResultStreaming(events).collect()

    # ------------------------------------------------------------------ transports

    async def serve_stdio(self) -> None:
        """Serve over this process's stdin/stdout until the client disconnects.

        Raises:
            McpServeError: serving ended abnormally.
        """
        try:
            async with stdio_server() as (read, write):
                await self.server.run(read, write, self.server.create_initialization_options())
        except Exception as exc:
            raise McpServeError(f"serving {self.tool_name!r} over stdio failed: {exc}") from exc

    def streamable_http_app(self, *, path: str = "/mcp", host: str = "127.0.0.1") -> Starlette:
        """An ASGI app serving the MCP endpoint at ``path``, to mount in your own server.

        The app's lifespan runs the MCP session manager: run the app with its lifespan (a
        ``Mount`` inside a Starlette app needs ``lifespan=`` forwarding). ``host`` turns on
        DNS-rebinding protection when it is a loopback name. One app per call; each app
        can be started once.
        """
        return self.server.streamable_http_app(streamable_http_path=path, host=host)

    async def serve_streamable_http(
        self, host: str = "127.0.0.1", port: int = 8000, *, path: str = "/mcp"
    ) -> None:
        """Serve streamable HTTP at ``http://host:port/mcp`` until :meth:`shutdown`.

        ``port=0`` picks a free port; :attr:`port` holds the bound one, set once the socket
        listens (connections made from then on are served).

        Raises:
            McpBindError: the address cannot be bound (in use, no permission).
            McpServeError: serving ended abnormally.
        """
        import uvicorn

        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.listen(128)  # connections queue from here on, before uvicorn starts
        except OSError as exc:
            sock.close()
            raise McpBindError(f"cannot bind {host}:{port}: {exc}") from exc
        self.port = int(sock.getsockname()[1])
        app = self.streamable_http_app(path=path, host=host)
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        server = uvicorn.Server(config)
        self._uvicorn = server
        serving = asyncio.ensure_future(server.serve(sockets=[sock]))
        try:
            await asyncio.shield(serving)
        except asyncio.CancelledError:
            await _stop_uvicorn(server, serving)
            raise
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            raise McpServeError(f"serving {self.tool_name!r} over HTTP failed: {exc}") from exc
        finally:
            _close_listener(sock)
            self._uvicorn = None

    def shutdown(self) -> None:
        """Ask :meth:`serve_streamable_http` to stop (it returns once connections close).

        Cancelling the serving task also stops it cleanly: uvicorn is shut down (listener
        closed, connections asked to close, forced after a few seconds) before the
        cancellation propagates, so a later server on the same event loop works."""
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True


async def _wind_down(run: asyncio.Future[Any]) -> None:
    """Wait (bounded, shielded from the caller's cancellation) for a cancelled run to end."""
    with (
        anyio.CancelScope(shield=True),
        anyio.move_on_after(_CANCEL_WAIT),
        contextlib.suppress(Exception),
    ):
        await run
    if not run.done():
        run.cancel()


async def _stop_uvicorn(server: Any, serving: asyncio.Future[None]) -> None:
    """Shut a cancelled serve down through uvicorn itself (bounded, cancellation-proof)."""
    server.should_exit = True
    for force in (False, True):
        if force:
            server.force_exit = True  # stop waiting for open connections
        with contextlib.suppress(BaseException):
            await asyncio.wait({serving}, timeout=_STOP_GRACE)
        if serving.done():
            break
    if not serving.done():
        serving.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait({serving}, timeout=_STOP_GRACE)
    for listener in getattr(server, "servers", []):
        listener.close()  # idempotent; unregisters the socket from the loop first
    if serving.done() and not serving.cancelled():
        serving.exception()  # retrieved: the caller sees its own cancellation


def _close_listener(sock: socket.socket) -> None:
    """Close ``sock`` unless uvicorn already did, unregistering it from the loop first.

    Closing a socket the loop still watches lets the next socket reuse the descriptor
    while the stale registration swallows its connections.
    """
    if sock.fileno() == -1:
        return
    with contextlib.suppress(Exception):
        asyncio.get_running_loop().remove_reader(sock.fileno())
    sock.close()
