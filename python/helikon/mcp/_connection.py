"""One live MCP session, owned by a background task, and the calls made on it.

The ``mcp`` package's transports and ``ClientSession`` are anyio context managers that must
be entered and left in one task, while a helikon handle lives across many calls from other
tasks. So :meth:`Connection.start` starts an owner task that enters the transport and the
session, runs ``initialize`` and the paginated ``tools/list`` sweep, and then waits for
:meth:`Connection.close` (or the server process's exit). Leaving the contexts runs the
package's bounded shutdown (stdio: close stdin, wait, SIGTERM, SIGKILL, reap).

Every call races three things: the answer, the run's cancellation token, and the server
dying. A dead server fails the pending call with its exit status and every later call at
once, without a round trip.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import warnings
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.client._transport import TransportStreams
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from helikon.core.cancel import CancellationToken
from helikon.core.tool_args import arguments_object
from helikon.errors import (
    McpConnectError,
    McpError,
    McpOther,
    McpServiceError,
    McpSpawnError,
    ToolOther,
)
from helikon.mcp import _process
from helikon.mcp._stdio import StdioState
from helikon.mcp._transport import HttpErrorLog

__all__ = ["Connection", "SessionExpired"]


class SessionExpired(ToolOther):
    """A ``tools/call`` the HTTP server refused with 404 (an unknown session): the call was
    not processed, so the tool retries it once on a new connection."""


T = TypeVar("T")

ProgressCallback = Callable[[str, float, float | None, str | None], Awaitable[None]]
"""``await on_progress(tool, progress, total, message)`` for each ``notifications/progress``
the server sends about a ``tools/call`` (``tool``: the name the agent sees)."""

_log = logging.getLogger("helikon.mcp")

_MAX_PAGES = 1000  # a server whose cursor never ends cannot hang connect
_EXIT_POLL = 0.05
_EXIT_WAIT = 1.0  # how long a closed pipe may precede the exit status
_CLOSE_TIMEOUT = 10.0  # the package's own stdio shutdown needs at most ~6.5 s
_KILL_GRACE = 1.0  # after a connect timeout: SIGTERM, this long, then SIGKILL
_STDERR_SETTLE = 0.05


def _client_info() -> types.Implementation:
    from helikon._version import __version__

    return types.Implementation(name="helikon", version=__version__)


class Connection:
    """A session with one MCP server (see the module docstring)."""

    def __init__(
        self,
        label: str,
        open_transport: Callable[[], AbstractAsyncContextManager[TransportStreams]],
        *,
        stdio: StdioState | None,
        http_log: HttpErrorLog | None = None,
        call_timeout: float | None = None,
        on_list_changed: Callable[[str], None] | None = None,
        session_callbacks: dict[str, Any] | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> None:
        self.label = label
        self._on_progress = on_progress
        self._on_list_changed = on_list_changed
        self._callbacks = dict(session_callbacks or {})
        self._open = open_transport
        self._stdio = stdio
        self._http_log = http_log
        self._call_timeout = call_timeout
        self._session: ClientSession | None = None
        self._process: _process.SpawnedProcess | None = None
        self._closing = asyncio.Event()
        self._dead = asyncio.Event()
        self._dead_reason: str | None = None
        self._owner: asyncio.Task[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._transport_error: str | None = None

    # ------------------------------------------------------------------ lifetime

    @property
    def pid(self) -> int | None:
        """The stdio server's process id (``None`` over HTTP)."""
        return None if self._process is None else int(self._process.pid)

    @property
    def dead_reason(self) -> str | None:
        """Why the connection is unusable (closed, server exited), or ``None`` while live."""
        return self._dead_reason

    @property
    def capabilities(self) -> types.ServerCapabilities | None:
        """What the server declared at ``initialize`` (``None`` before)."""
        session = self._session
        return None if session is None else session.server_capabilities

    @property
    def started(self) -> bool:
        """:meth:`start` has run (whatever its outcome); a connection starts only once."""
        return self._owner is not None

    async def start(self, timeout: float) -> list[types.Tool]:
        """Connect, ``initialize`` and list every tool; within ``timeout`` seconds.

        ``timeout`` bounds the whole connect: spawn, ``initialize`` and every
        ``tools/list`` page. When it passes, the stdio server's process group is killed
        (SIGTERM, then SIGKILL after :data:`_KILL_GRACE`) and reaped, and the transport is
        closed, before the error is raised.

        Raises:
            McpSpawnError: the stdio command could not be started.
            McpConnectError: the transport or the handshake failed, or ``timeout`` passed.
            McpServiceError: ``tools/list`` failed.
        """
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[list[types.Tool]] = loop.create_future()
        self._owner = loop.create_task(self._own(ready), name=f"helikon-mcp {self.label}")
        try:
            return await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            ready.cancel()  # the owner must not report a late outcome nobody reads
            await self._abort()
            raise McpConnectError(
                f"MCP server {self.label}: no answer to initialize/tools/list within "
                f"connect_timeout={timeout:g}s; the server was stopped"
            ) from None
        except BaseException:
            if not ready.done():
                ready.cancel()
            await self._abort()
            raise

    async def _abort(self) -> None:
        """Stop a connect that will not finish: kill the server, then unwind the owner."""
        self._mark_dead("the connection is closed")
        self._closing.set()
        await self._kill_process()
        scope = self._scope
        if scope is not None:
            scope.cancel()  # an anyio cancel: the transport's shielded shutdown still runs
        await self.close()

    async def _kill_process(self) -> None:
        """SIGTERM the stdio server's process group, SIGKILL it after a grace; bounded."""
        proc = self._process
        if proc is None or proc.returncode is not None or sys.platform == "win32":
            return
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(int(proc.pid), sig)  # the pid is the group id (start_new_session)
            deadline = loop.time() + _KILL_GRACE
            while proc.returncode is None and loop.time() < deadline:
                await asyncio.sleep(0.01)
            if proc.returncode is not None:
                return

    async def close(self) -> None:
        """End the session and stop the server; bounded, idempotent."""
        self._mark_dead("the connection is closed")
        self._closing.set()
        owner = self._owner
        if owner is None or owner.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(owner), _CLOSE_TIMEOUT)
        except TimeoutError:
            if self._scope is not None:
                self._scope.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(owner), 2.0)
            if not owner.done():
                owner.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(owner, 2.0)

    def _mark_dead(self, reason: str) -> None:
        if self._dead_reason is None:
            self._dead_reason = reason
            self._dead.set()

    async def _own(self, ready: asyncio.Future[list[types.Tool]]) -> None:
        failure: McpError | None = None
        try:
            # An anyio scope, so that _abort can interrupt a stuck handshake while the
            # transport's own (shielded) shutdown still runs when the stack unwinds.
            with anyio.CancelScope() as scope:
                self._scope = scope
                async with AsyncExitStack() as stack:
                    try:
                        read, write = await stack.enter_async_context(self._open())
                    except OSError as exc:
                        failure = self._spawn_failure(exc)
                    if self._stdio is not None and self._stdio.process is not None:
                        self._process = self._stdio.process
                        _process.track(self._process)
                    if failure is None:
                        session = ClientSession(
                            read,
                            write,
                            client_info=_client_info(),
                            message_handler=self._on_message,
                            **self._callbacks,
                        )
                        await stack.enter_async_context(session)
                        failure = await self._handshake(session, ready)
                    if failure is None:
                        await self._serve_until_done()
        except Exception as exc:  # a transport task failed (ExceptionGroup, ...)
            kind = McpOther if ready.done() else McpConnectError
            failure = failure or kind(f"MCP server {self.label}: {_leaf(exc)}")
            self._transport_error = f"{type(_leaf(exc)).__name__}: {_leaf(exc)}"
        finally:
            self._scope = None
            self._mark_dead(self._exit_reason() or self._end_reason())
            self._session = None
            if self._process is not None and self._process.returncode is not None:
                _process.untrack(self._process)
            if not ready.done():
                ready.set_exception(
                    failure or McpConnectError(f"MCP server {self.label}: connection ended")
                )

    def _end_reason(self) -> str:
        """Why the session ended when no exit status says it: closed here, or dropped."""
        if self._closing.is_set():
            return "the connection is closed"
        cause = f" ({self._transport_error})" if self._transport_error else ""
        return f"MCP server {self.label} dropped the connection{cause}"

    def _spawn_failure(self, exc: OSError) -> McpError:
        if self._stdio is not None:
            return McpSpawnError(f"MCP server {self.label}: cannot start: {exc}")
        return McpConnectError(f"MCP server {self.label}: {exc}")

    async def _handshake(
        self, session: ClientSession, ready: asyncio.Future[list[types.Tool]]
    ) -> McpError | None:
        try:
            await session.initialize()
        except Exception as exc:
            closed = isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED
            exited = await self._await_exit() if closed and self._stdio is not None else None
            if exited is not None:
                return McpConnectError(f"{exited} before answering initialize")
            return McpConnectError(
                f"MCP server {self.label}: initialize failed: {self._describe(exc, 'initialize')}"
            )
        try:
            tools = await self._list_all(session)
        except McpServiceError as exc:
            return exc
        if ready.done():  # connect gave up meanwhile
            return McpConnectError(f"MCP server {self.label}: connect was abandoned")
        self._session = session
        ready.set_result(tools)
        return None

    async def _list_all(self, session: ClientSession) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        try:
            for _ in range(_MAX_PAGES):
                params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await session.list_tools(params=params)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    return tools
        except Exception as exc:
            raise McpServiceError(
                f"MCP server {self.label}: tools/list failed: {self._describe(exc, 'tools/list')}"
            ) from None
        raise McpServiceError(
            f"MCP server {self.label}: tools/list did not end after {_MAX_PAGES} pages"
        )

    async def list_tools(self) -> list[types.Tool]:
        """Every page of ``tools/list`` again (after ``notifications/tools/list_changed``).

        Raises:
            McpServiceError: the connection is gone, or ``tools/list`` failed.
        """
        session = self._session
        if session is None or self._dead_reason is not None:
            raise McpServiceError(
                f"MCP server {self.label}: {self._dead_reason or 'not connected'}"
            )
        return await self._list_all(session)

    async def send_roots_changed(self) -> None:
        """``notifications/roots/list_changed`` (nothing when not connected)."""
        session = self._session
        if session is not None and self._dead_reason is None:
            with contextlib.suppress(Exception), warnings.catch_warnings():
                # deprecated by the 2026-07-28 revision, which this session does not speak
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await session.send_roots_list_changed()

    async def _on_message(self, message: Any) -> None:
        """The session's message handler: list-change notifications go to the handle."""
        method = getattr(message, "method", None)
        if (
            isinstance(method, str)
            and method.endswith("/list_changed")
            and self._on_list_changed is not None
        ):
            self._on_list_changed(method)

    async def _serve_until_done(self) -> None:
        """Wait for :meth:`close`; notice the server process exiting meanwhile."""
        while not self._closing.is_set():
            reason = self._exit_reason()
            if reason is not None:
                self._mark_dead(reason)
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), _EXIT_POLL)

    def _exit_reason(self) -> str | None:
        """Why the stdio server is gone: a transport fault, or its exit status (with the
        tail of its stderr); ``None`` while it runs."""
        state = self._stdio
        if state is not None and state.fault is not None:
            return state.fault
        proc = self._process
        if proc is None or proc.returncode is None:
            return None
        reason = f"MCP server {self.label} {_process.exit_description(proc.returncode)}"
        tail = state.stderr_tail() if state is not None else ""
        return f"{reason} (stderr: {tail})" if tail else reason

    # ------------------------------------------------------------------ calls

    async def _raced(
        self, request: Awaitable[T], cancel: CancellationToken | None
    ) -> asyncio.Future[T]:
        """``request`` run until it ends, the server dies or ``cancel`` fires, whichever is
        first; the task, done or (when it was still running) cancelled and given 2 s to end.
        Every request to the server goes through here."""
        task = asyncio.ensure_future(request)
        watchers: list[asyncio.Future[Any]] = [asyncio.ensure_future(self._dead.wait())]
        if cancel is not None:
            watchers.append(asyncio.ensure_future(cancel.wait()))
        try:
            await asyncio.wait([task, *watchers], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in watchers:
                w.cancel()
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(task, 2.0)
        return task

    async def request(
        self,
        what: str,
        send: Callable[[ClientSession], Awaitable[T]],
        cancel: CancellationToken | None = None,
    ) -> T:
        """Any other request (``resources/read``, ``prompts/get``, ...), raced against the
        server's death and ``cancel``; ``what`` names it in errors (``"resources/read"``).

        Raises:
            McpServiceError: the connection is gone, the request failed or was cancelled
                (the message names the request and the cause).
        """
        session = self._session
        if self._dead_reason is not None or session is None:
            raise McpServiceError(
                f"MCP server {self.label}: {what} unavailable: {self._dead_reason}"
            )
        task = await self._raced(send(session), cancel)
        if task.done() and not task.cancelled():
            exc = task.exception()
            if exc is None:
                return task.result()
            if (
                isinstance(exc, MCPError)
                and exc.code == CONNECTION_CLOSED
                and self._stdio is not None
            ):
                self._mark_dead(
                    await self._await_exit() or f"MCP server {self.label} closed the connection"
                )
                cause = self._dead_reason
            else:
                cause = self._describe(exc, what)
            raise McpServiceError(f"MCP server {self.label}: {what} failed: {cause}")
        if cancel is not None and cancel.cancelled:
            raise McpServiceError(
                f"MCP server {self.label}: {what} cancelled: {cancel.reason or 'cancelled'}"
            )
        raise McpServiceError(f"MCP server {self.label}: {what} failed: {self._dead_reason}")

    async def call(
        self, wire_name: str, display: str, args: Any, cancel: CancellationToken
    ) -> types.CallToolResult:
        """``tools/call``, raced against ``cancel`` and the server's death.

        Raises:
            InvalidArgs: ``args`` is not a JSON object.
            ToolOther: anything else went wrong; the message names the tool and the cause.
        """
        arguments = arguments_object(args)
        session = self._session
        if self._dead_reason is not None or session is None:
            raise ToolOther(f"MCP tool {display!r} unavailable: {self._dead_reason}")
        if cancel.cancelled:
            raise ToolOther(f"MCP tool {display!r} not called: the run was cancelled")
        on_progress = None
        if self._on_progress is not None:
            report = self._on_progress

            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                try:
                    await report(display, progress, total, message)
                except Exception:  # a failing observer never fails the call
                    _log.warning("MCP on_progress callback raised", exc_info=True)

        call = await self._raced(
            session.call_tool(
                wire_name,
                arguments,
                read_timeout_seconds=self._call_timeout,
                progress_callback=on_progress,
            ),
            cancel,
        )
        if call.done() and not call.cancelled():
            exc = call.exception()
            if exc is None:
                self._forget_http_failure(wire_name)
                return call.result()
            expired = self._session_expired(wire_name)
            cause = await self._call_failure(exc, wire_name)
            if expired:
                self._mark_dead(f"MCP server {self.label}: {cause}")
                raise SessionExpired(
                    f"MCP tool {display!r} failed: {cause} (the server no longer knows this "
                    "session; it was not processed)"
                )
            raise ToolOther(f"MCP tool {display!r} failed: {cause}")
        if cancel.cancelled:
            raise ToolOther(f"MCP tool {display!r} cancelled: {cancel.reason or 'cancelled'}")
        raise ToolOther(f"MCP tool {display!r} failed: {self._dead_reason}")

    def _session_expired(self, wire_name: str) -> bool:
        """The HTTP server answered 404 to the call: per the streamable HTTP transport, it
        no longer knows the session (it restarted), and the client must start a new one."""
        log = self._http_log
        failure = log.peek(f"tools/call:{wire_name}") if log is not None else None
        return failure is not None and failure.status == 404

    async def _call_failure(self, exc: BaseException, wire_name: str) -> str:
        closed = isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED
        if closed and self._stdio is not None:
            reason = await self._await_exit()
            self._mark_dead(reason or f"MCP server {self.label} closed the connection")
            return self._dead_reason or "connection closed"
        if closed:  # HTTP: the transport ended; its owner names the cause as it unwinds
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._dead.wait(), _EXIT_WAIT)
            self._mark_dead(self._end_reason())
            return self._dead_reason or "connection closed"
        return self._describe(exc, f"tools/call:{wire_name}")

    async def _await_exit(self) -> str | None:
        """The exit reason, waiting briefly: the closed pipe may precede the exit status."""
        deadline = asyncio.get_running_loop().time() + _EXIT_WAIT
        while self._exit_reason() is None:
            if self._process is None or asyncio.get_running_loop().time() >= deadline:
                return None
            await asyncio.sleep(0.01)
        await asyncio.sleep(_STDERR_SETTLE)  # the stderr reader may trail the exit status
        return self._exit_reason()

    def _forget_http_failure(self, wire_name: str) -> None:
        if self._http_log is not None:
            self._http_log.pop(f"tools/call:{wire_name}")

    def _describe(self, exc: BaseException, key: str) -> str:
        http = self._http_log.pop(key) if self._http_log is not None else None
        if http is not None:
            return http.describe()
        if isinstance(exc, MCPError) and exc.code == REQUEST_TIMEOUT and self._call_timeout:
            return f"no answer within call_timeout={self._call_timeout:g}s (MCP error {exc.code})"
        if isinstance(exc, MCPError):
            return f"{exc.message} (MCP error {exc.code})"
        return f"{type(exc).__name__}: {_leaf(exc)}"


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside ``exc`` (``exc`` itself when it is no group)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
