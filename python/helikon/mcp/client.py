""":class:`McpServerHandle`: an external MCP server's tools as helikon tools."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import weakref
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import httpx2
import mcp_types as types
from mcp.client._transport import TransportStreams
from typing_extensions import Unpack

from helikon.core.model import Model
from helikon.core.tool import Tool
from helikon.core.usage import Usage
from helikon.errors import ConfigError, McpError, McpOther
from helikon.mcp._connection import Connection
from helikon.mcp._context_tools import GetPromptTool, ReadResourceTool
from helikon.mcp._lazy import SearchTools
from helikon.mcp._naming import SEARCH_TOOLS, display_name
from helikon.mcp._options import (
    DEFAULT_CONNECT_TIMEOUT,
    HandleOptions,
    checked_options,
    stdio_label,
)
from helikon.mcp._reconnect import ConnectionFactory, Reconnecting
from helikon.mcp._requests import AGENT_MODEL, Caller, ServerRequests
from helikon.mcp._resources import ResourcesAndPrompts
from helikon.mcp._roots import WORKSPACE
from helikon.mcp._stdio import DEFAULT_MAX_MESSAGE_BYTES, StdioState, open_stdio
from helikon.mcp._tool import DEFAULT_MAX_RESULT_CHARS, McpTool
from helikon.mcp._transport import HttpErrorLog, http_transport, stdio_transport

__all__ = ["McpServerHandle"]


class McpServerHandle(Reconnecting, ResourcesAndPrompts):
    """A connection to one MCP server whose tools an agent can call.

    Build one with :meth:`stdio` or :meth:`streamable_http`, then :meth:`connect` (or use
    it as ``async with``), hand :meth:`tools` to an agent, and :meth:`close` it. Discovery
    happens at connect (``initialize`` plus every ``tools/list`` page) and again when the
    server says its list changed, so :meth:`tools` is synchronous.

    Each tool is named ``tool_prefix + the server's name``, keeps the server's description
    and input schema, and is ``READ_ONLY`` only when the server declares
    ``readOnlyHint: true`` (else ``SIDE_EFFECT``; never ``WRITE``, since annotations are
    untrusted). With ``lazy=True`` every tool advertises a placeholder schema and an extra
    ``<prefix>search_tools`` tool returns the real ones on demand.

    A failing call is a :class:`~helikon.errors.ToolError` the model reads, never an
    :class:`~helikon.errors.McpError`: an ``isError`` result, a server that dies mid-call
    (named with its exit code), an HTTP error answer (named with its status), or the run's
    cancellation.

    The tool list follows the server: on ``notifications/tools/list_changed`` the handle
    lists the tools again in the background, and :meth:`tools` (and every tool object
    already handed out, which keeps its identity) reflects the new list; :meth:`refresh`
    does the same on demand. A server that dies or drops the connection is reconnected at
    the next call, up to ``max_reconnects`` tries per outage, waiting ``reconnect_delay``
    seconds before the first and doubling (at most 8 s) after each failure; the call that
    was in flight when it died is never retried (it fails naming the exit code or HTTP
    status). When every try fails, that call and the calls of the next :attr:`retry_after`
    seconds (30) fail at once; the first call after that starts a new round of tries.

    Example:
        >>> import sys
        >>> fs = McpServerHandle.stdio(sys.executable, args=["server.py"], tool_prefix="fs_")
        >>> # async with fs:
        >>> #     agent = Agent(name="a", model=model, tools=fs.tools())
    """

    def __init__(
        self,
        make: ConnectionFactory,
        *,
        tool_prefix: str | None = None,
        lazy: bool = False,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        max_reconnects: int = 3,
        reconnect_delay: float = 0.5,
        sampling_model: Model | Literal["agent"] | None = "agent",
        roots: Sequence[str | Path] | Literal["workspace"] | None = "workspace",
        default_root: Path | None = None,
    ) -> None:
        if isinstance(roots, str | Path) and roots != WORKSPACE:
            raise ConfigError(
                f"McpServerHandle(roots=...) must be a list of directories, 'workspace' (the "
                f"calling agent's) or None (no roots), got {roots!r}; pass roots=[{roots!r}]"
            )
        if sampling_model not in (None, AGENT_MODEL) and not callable(
            getattr(sampling_model, "invoke", None)
        ):
            raise ConfigError(
                "McpServerHandle(sampling_model=...) must be a Model, 'agent' (the calling "
                f"agent's model) or None (no sampling), got {sampling_model!r}"
            )
        self._requests = ServerRequests(
            tool_prefix, sampling_model=sampling_model, roots=roots, default_root=default_root
        )
        self._make = make
        self._connection = make(self._list_changed, self._requests.callbacks())
        self.tool_prefix = tool_prefix
        self.lazy = lazy
        self.connect_timeout = connect_timeout
        self.max_result_chars = max_result_chars
        self.max_reconnects = max_reconnects
        self.reconnect_delay = reconnect_delay
        self.reconnects = 0
        """How many times the handle reconnected to the server."""
        self._remote: list[types.Tool] | None = None
        self._tools: list[Tool] = []
        self._adapted: dict[str, McpTool] = {}
        self._listings = 0  # tool listings adopted; each tool knows the one that added it
        self._search: SearchTools | None = None
        self._closed = False
        self._gave_up: str | None = None
        self._gave_up_at = 0.0
        self.retry_after = 30.0
        """Seconds after a failed round of reconnect tries during which calls fail at once;
        the first call after it starts a new round."""
        self._lock: asyncio.Lock | None = None
        self._refreshing: set[asyncio.Task[None]] = set()
        self._read_tool: weakref.WeakSet[ReadResourceTool] = weakref.WeakSet()
        self._prompt_tool: weakref.WeakSet[GetPromptTool] = weakref.WeakSet()

    # ------------------------------------------------------------------ constructors

    @classmethod
    def stdio(
        cls,
        command: str,
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        **options: Unpack[HandleOptions],
    ) -> McpServerHandle:
        """A server started as a child process speaking MCP over stdin/stdout.

        The server is untrusted: a stdout line that is not UTF-8 or not a JSON-RPC message
        is logged (logger ``helikon.mcp``) and skipped; a message longer than
        ``max_message_bytes`` closes the connection (pending and later calls fail with a
        tool error naming the limit); its stderr is kept as a bounded tail that the error
        for its exit quotes, never copied to this process's stderr.

        Args:
            command: the executable.
            args: its arguments.
            env: extra environment variables, merged over a safe default (``PATH``,
                ``HOME``, ...); the parent's full environment is NOT inherited.
            cwd: the working directory.
            tool_prefix: prepended to every tool name (``"fs_"`` -> ``fs_read``).
            lazy: advertise placeholder schemas plus a ``search_tools`` meta-tool.
            connect_timeout: seconds allowed for start-up, ``initialize`` and ``tools/list``.
            call_timeout: seconds allowed per ``tools/call`` (``None``: the run's own
                cancellation and timeout bound it).
            max_message_bytes: the longest stdout line (one JSON-RPC message) accepted,
                in bytes (default 32 MiB).
            max_result_chars: a tool result's text for the model is cut to this many
                characters, with a note saying how long it was (default 100 000).
            max_reconnects: tries to restart a server that died, per outage (0: never;
                the handle then fails every later call at once).
            reconnect_delay: seconds before the first try; doubled after each failure.
            sampling_model: the model that answers the server's ``sampling/createMessage``
                requests, under the calling run's permissions as the pseudo-tool
                ``<prefix>mcp_sampling``: ``"agent"`` (default) the model of the agent
                whose tool call is in flight (a request outside a run is refused), or a
                :class:`~helikon.Model`; ``None``: sampling is not offered. Inside a run,
                its usage is added to the run's and counted against its usage limits.
            roots: the client's roots (``roots/list``): a list of directories (change
                them with :meth:`set_roots`); ``"workspace"`` (default) the workspace of
                the agent whose tool call is in flight (the root of each sandbox its tools
                work in; the server is notified when it changes), this server's working
                directory (``cwd``, else this process's) until such an agent has called;
                ``None``: roots are not offered.
            on_progress: ``await on_progress(tool, progress, total, message)`` for each
                progress notification the server sends while a tool call runs (the call
                then carries a ``progressToken``); an exception it raises is logged.

        Raises:
            ConfigError: a bad argument (the message names it).
        """
        handle_args = checked_options(options, max_message_bytes)
        if not isinstance(command, str) or not command:
            raise ConfigError("McpServerHandle.stdio(command=...) must be a non-empty string")
        if isinstance(args, str):
            raise ConfigError(
                f"McpServerHandle.stdio(args=...) must be a list of strings, got the string "
                f"{args!r}; pass args=[{args!r}]"
            )
        arg_list = [str(a) for a in args]
        env_map = dict(env) if env is not None else None
        label = stdio_label(command, arg_list)

        def make(on_list_changed: Callable[[str], None], callbacks: dict[str, Any]) -> Connection:
            state = StdioState(label, max_message_bytes)

            def open_transport() -> AbstractAsyncContextManager[TransportStreams]:
                if sys.platform == "win32":  # pragma: no cover - POSIX process groups below
                    return stdio_transport(command, arg_list, env_map, cwd)
                return open_stdio(state, command, arg_list, env_map, cwd)

            return Connection(
                label,
                open_transport,
                stdio=state,
                call_timeout=options.get("call_timeout"),
                on_list_changed=on_list_changed,
                session_callbacks=callbacks,
                on_progress=options.get("on_progress"),
            )

        return cls(
            make,
            **handle_args,
            default_root=Path(cwd if cwd is not None else os.getcwd()).resolve(),
        )

    @classmethod
    def streamable_http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx2.Auth | None = None,
        **options: Unpack[HandleOptions],
    ) -> McpServerHandle:
        """A server reached over streamable HTTP at ``url`` (e.g. ``http://host:8000/mcp``).

        Args:
            url: the MCP endpoint.
            headers: sent with every request (e.g. ``{"Authorization": "Bearer ..."}``).
            auth: an ``httpx2`` auth flow for every request; for OAuth, the ``mcp``
                package's ``mcp.client.auth.OAuthClientProvider(server_url,
                client_metadata, storage=<your TokenStorage>, redirect_handler=...,
                callback_handler=...)``, which discovers the authorization server, registers
                the client, runs the authorization-code flow with PKCE, refreshes tokens and
                keeps them in the token store you supply.
            tool_prefix, lazy, connect_timeout, call_timeout, max_result_chars,
                max_reconnects, reconnect_delay, sampling_model, roots, on_progress: as for
                :meth:`stdio`.

        Raises:
            ConfigError: a bad argument (the message names it).
        """
        handle_args = checked_options(options, DEFAULT_MAX_MESSAGE_BYTES)
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(
                f"McpServerHandle.streamable_http(url=...) must be an http(s) URL, got {url!r}"
            )
        header_map = dict(headers or {})

        def make(on_list_changed: Callable[[str], None], callbacks: dict[str, Any]) -> Connection:
            log = HttpErrorLog()
            return Connection(
                repr(url),
                lambda: http_transport(url, header_map, log, auth),
                stdio=None,
                http_log=log,
                call_timeout=options.get("call_timeout"),
                on_list_changed=on_list_changed,
                session_callbacks=callbacks,
                on_progress=options.get("on_progress"),
            )

        return cls(make, **handle_args)

    # ------------------------------------------------------------------ lifetime

    async def connect(self) -> McpServerHandle:
        """Start (or dial) the server, run ``initialize`` and list its tools. Returns self.

        Raises:
            McpSpawnError: the stdio command could not be started.
            McpConnectError: the transport or handshake failed or took longer than
                ``connect_timeout``.
            McpServiceError: ``tools/list`` failed.
            McpOther: the handle is connected, or it was connected once (a handle connects
                only once: after :meth:`close` or a failed connect, build a new handle;
                tools taken from the old one stay unavailable).
        """
        label = self._connection.label
        if self._connection.started or self._closed:
            ended = self._connection.dead_reason
            if ended is None:
                raise McpOther(f"MCP server {label}: already connected")
            raise McpOther(
                f"MCP server {label}: this handle is closed ({ended}); a handle connects "
                "only once, so create a new one (McpServerHandle.stdio(...) or "
                ".streamable_http(...)) to reconnect"
            )
        self._apply(await self._connection.start(self.connect_timeout))
        return self

    async def close(self) -> None:
        """Stop the session and the server process. Bounded: a stdio server that ignores
        stdin EOF and SIGTERM is killed; idempotent. No reconnect happens afterwards."""
        self._closed = True
        for task in list(self._refreshing):
            task.cancel()
        await self._connection.close()

    async def refresh(self) -> list[Tool]:
        """List the server's tools again and update :meth:`tools`; returns the new list.

        Tools whose server name stays keep their object (with the new description and
        schema); new ones are added, removed ones dropped (an agent still holding one gets
        the server's answer for an unknown tool).

        Raises:
            McpServiceError: the connection is gone or ``tools/list`` failed.
            McpOther: :meth:`connect` has not run.
        """
        if self._remote is None:
            raise McpOther(f"MCP server {self._connection.label}: connect before refresh()")
        self._apply(await self._connection.list_tools())
        return list(self._tools)

    def _list_changed(self, method: str) -> None:
        """A ``notifications/*/list_changed`` arrived: re-list in the background (tools; or
        resources/prompts when :meth:`context_tools` built tools describing them)."""
        if self._closed or self._remote is None:
            return
        task = asyncio.get_running_loop().create_task(self._background_refresh(method))
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)

    async def _background_refresh(self, method: str) -> None:
        with contextlib.suppress(McpError):
            if method == "notifications/tools/list_changed":
                await self.refresh()
            elif method == "notifications/resources/list_changed" and self._read_tool:
                resources = await self.list_resources()
                templates = await self.list_resource_templates()
                for tool in self._read_tool:
                    tool.relist(resources, templates)
            elif method == "notifications/prompts/list_changed" and self._prompt_tool:
                prompts = await self.list_prompts()
                for ptool in self._prompt_tool:
                    ptool.relist(prompts)

    # ------------------------------------------------------------------ server requests

    @property
    def sampling_usage(self) -> Usage:
        """Tokens the ``sampling_model`` used answering this server, summed."""
        return self._requests.sampling_usage

    @property
    def roots(self) -> list[str | Path] | None:
        """The roots ``roots/list`` answers now (``None``: roots are not offered)."""
        roots = self._requests.roots
        return roots.current() if roots.offered else None

    async def set_roots(self, roots: Sequence[str | Path]) -> None:
        """Replace the declared roots (the calling agent's workspace is no longer followed)
        and send ``notifications/roots/list_changed``.

        Raises:
            ConfigError: the handle was built with ``roots=None`` (the capability is
                declared at connect, so it cannot be added later).
        """
        if not self._requests.roots.offered:
            raise ConfigError(
                "McpServerHandle.set_roots(...): the handle was built with roots=None; pass "
                "roots=[] (or leave the default, 'workspace') to declare the capability"
            )
        self._requests.roots.set(roots)
        await self._connection.send_roots_changed()

    @contextlib.asynccontextmanager
    async def calls_from(self, caller: Caller | None) -> AsyncIterator[None]:
        """While the block runs, server requests are decided under the calling run's
        permissions, sampled by its agent's model and counted in its usage (``caller``:
        :func:`helikon.mcp._requests.calling` in the tool call, ``None`` outside a run).
        With ``roots="workspace"``, a caller whose agent has another workspace than the
        server was told first gets ``notifications/roots/list_changed`` sent."""
        if caller is None:
            yield
            return
        if self._requests.roots.follow(caller.agent):
            await self._connection.send_roots_changed()
        self._requests.active.append(caller)
        try:
            yield
        finally:
            self._requests.active.remove(caller)

    async def __aenter__(self) -> McpServerHandle:
        return await self.connect()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # ------------------------------------------------------------------ tools

    @property
    def closed(self) -> bool:
        """:meth:`close` has run."""
        return self._closed

    @property
    def pid(self) -> int | None:
        """The stdio server's process id once connected (``None`` over HTTP)."""
        return self._connection.pid

    @property
    def remote_tools(self) -> list[types.Tool]:
        """The server's tool list as last listed (``mcp_types.Tool``)."""
        return list(self._remote or [])

    def tools(self) -> list[Tool]:
        """The server's tools as helikon tools (plus ``search_tools`` in lazy mode).

        Raises:
            McpOther: :meth:`connect` has not run.
        """
        if self._remote is None:
            raise McpOther(
                f"MCP server {self._connection.label}: call `await handle.connect()` (or use "
                "`async with handle`) before handle.tools()"
            )
        return list(self._tools)

    def _apply(self, remote: list[types.Tool]) -> None:
        """Adopt a tool listing: keep tool objects by server name, add and drop the rest."""
        self._listings += 1
        adapted: dict[str, McpTool] = {}
        for t in remote:
            tool = self._adapted.get(t.name)
            if tool is None:
                tool = McpTool(
                    self,
                    t,
                    display_name(self.tool_prefix, t.name),
                    lazy=self.lazy,
                    max_result_chars=self.max_result_chars,
                )
                tool.listed_in = self._listings
            else:
                tool.update(t)
            adapted[t.name] = tool
        self._remote = list(remote)
        self._adapted = adapted
        tools: list[Tool] = list(adapted.values())
        if self.lazy:
            if self._search is None:
                search_name = display_name(self.tool_prefix, SEARCH_TOOLS)
                self._search = SearchTools(search_name, [])
                self._search.tool_source = self
            self._search.relist(list(adapted.values()))
            tools.append(self._search)
        self._tools = tools

    async def live_tools(self) -> list[Tool]:
        """:meth:`tools` once a re-listing under way (after ``list_changed``) has ended
        (bounded by ``connect_timeout``). A run calls it before each model turn, so the
        turn offers what the server lists now (see :mod:`helikon.core.live_tools`)."""
        pending = [t for t in self._refreshing if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=self.connect_timeout)
        return list(self._tools)

    def __repr__(self) -> str:
        return f"McpServerHandle({self._connection.label!r}, tool_prefix={self.tool_prefix!r})"
