""":class:`AgentServer`: agents over HTTP, Server-Sent Events and WebSocket.

Routes (flat, no base path; mount :attr:`AgentServer.app` under a prefix to add one):

* ``POST /agents/{name}/runs``: start a run. One-shot JSON by default; ``?stream=sse`` streams
  the events as SSE; ``?mode=async`` answers 202 and the run continues in the background.
* ``GET /agents/{name}/runs/{run_id}``: the run's status, output and events so far.
* ``GET /agents/{name}/runs/{run_id}/events``: a WebSocket (or, without an upgrade, an SSE
  stream) replaying the run's events, then tailing live ones.
* ``GET /openapi.json``: the OpenAPI 3.1 schema (``ServerConfig.openapi``).
* ``GET /healthz``: ``ok`` (``ServerConfig.health_path``; exempt from auth).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeAlias

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response

from helikon.core.agent import Agent
from helikon.core.cancel import CancellationToken
from helikon.core.context import RunConfig, RunContext
from helikon.core.decisions import Decision, check_decisions
from helikon.core.events import RunInterrupted
from helikon.core.items import Item
from helikon.core.run_state import RunState
from helikon.core.runnable import Runnable, check_runnable
from helikon.errors import ConfigError, ResumeRefused, ServerBindError, ServerError
from helikon.runtimes.runner import Runner
from helikon.runtimes.server.admission import RunSlots
from helikon.runtimes.server.agui import agui_routes
from helikon.runtimes.server.approvals import deny_after
from helikon.runtimes.server.config import ServerConfig
from helikon.runtimes.server.metrics import HttpErrorCounter, ServerMetrics
from helikon.runtimes.server.paused import MemoryPausedRuns, PausedRun, PausedRunStore
from helikon.runtimes.server.routes import build_routes
from helikon.runtimes.server.runs import Run, RunRegistry
from helikon.runtimes.server.serving import (
    check_settings,
    listening_socket,
    loop_factory,
    run_uvicorn,
)
from helikon.runtimes.server.sessions import (
    MemorySessions,
    SessionFactory,
    SessionLocks,
    resolve_session,
    session_id_header,
)
from helikon.runtimes.server.unavailable import backend_unavailable
from helikon.sessions import MemorySession, Session

__all__ = ["AgentServer", "AuthCallable", "ContextFactory"]

log = logging.getLogger("helikon.server")

AuthCallable: TypeAlias = Callable[[HTTPConnection], Awaitable[None] | None]
"""``auth(conn)``: return to admit the request, raise :class:`AuthRejection` to refuse it.
It may store an identity in ``conn.state`` for the context factory to read."""

ContextFactory: TypeAlias = Callable[
    [HTTPConnection, Session, CancellationToken], RunContext[Any] | Awaitable[RunContext[Any]]
]
"""``factory(conn, session, cancel) -> RunContext``: the per-request run context (the spec's
``ContextProvider``). Build it with ``RunContext.ephemeral(...).with_cancel(cancel)``; the
server enforces ``cancel`` as the run's token either way."""


class AgentServer:
    """Serve agents over HTTP, SSE and WebSocket (the spec's axum ``AgentServer``).

    Args:
        agents: the agents to serve, keyed by route name, or a sequence (keyed by
            ``agent.name``): an :class:`~helikon.Agent` or anything that runs like one
            (a pattern from :mod:`helikon.agents`, see :class:`~helikon.agents.Runnable`).
        session_factory: ``factory(session_id) -> Session`` for requests carrying
            ``X-Session-Id`` (default :class:`MemorySessions`: one in-memory session per
            id). Runs on the same session id are serialised.
        context_factory: builds each run's :class:`~helikon.RunContext` (default
            ``RunContext.ephemeral()``: core default permissions; see the guide's security
            note).
        auth: called before every request (except the health route); raise
            :class:`AuthRejection` to refuse. ``None`` admits everyone.
        config: limits and switches (:class:`ServerConfig`).
        runner: the :class:`~helikon.runtimes.Runner` (default ``Runner()``).
        paused_runs: where runs paused for approval are kept (default
            :class:`~helikon.runtimes.server.MemoryPausedRuns`: this process only). A
            durable store (``SqlitePausedRuns(pool)``, ``PostgresPausedRuns(pool)``,
            ``RedisPausedRuns(client)``) with a durable ``session_factory`` lets a paused
            run be answered after a restart, or by another server on the same store.

    Raises:
        ConfigError: no agents, a duplicate or unusable name, or an argument of the
            wrong type.

    Example:
        >>> from helikon import Agent
        >>> from helikon.testing import MockModel, Text
        >>> server = AgentServer([Agent(name="echo", model=MockModel([[Text("hi")]]))])
        >>> sorted(server.agents)
        ['echo']
        >>> # asyncio.run(server.serve("127.0.0.1", 8080))
    """

    def __init__(
        self,
        agents: Mapping[str, Runnable] | Sequence[Runnable],
        *,
        session_factory: SessionFactory | None = None,
        context_factory: ContextFactory | None = None,
        auth: AuthCallable | None = None,
        config: ServerConfig | None = None,
        runner: Runner | None = None,
        paused_runs: PausedRunStore | None = None,
    ) -> None:
        self.agents = _check_agents(agents)
        for arg, value in (
            ("session_factory", session_factory),
            ("context_factory", context_factory),
            ("auth", auth),
        ):
            if value is not None and not callable(value):
                raise ConfigError(f"AgentServer({arg}=...) must be callable, got {value!r}")
        if config is not None and not isinstance(config, ServerConfig):
            raise ConfigError(
                f"AgentServer(config=...) must be a ServerConfig, got {type(config).__name__}"
            )
        if paused_runs is not None and not isinstance(paused_runs, PausedRunStore):
            raise ConfigError(
                "AgentServer(paused_runs=...) must be a paused-run store (MemoryPausedRuns, "
                "SqlitePausedRuns, PostgresPausedRuns, RedisPausedRuns), got "
                f"{type(paused_runs).__name__}"
            )
        self.paused_runs: PausedRunStore = paused_runs or MemoryPausedRuns()
        self.config = config or ServerConfig()
        self.session_factory: SessionFactory = session_factory or MemorySessions()
        self.context_factory = context_factory
        self.auth = auth
        self.runner = runner or Runner()
        self.metrics = ServerMetrics()
        """What the server counts (served as ``ServerConfig.metrics_path``)."""
        self.runs = RunRegistry(
            retention=self.config.retention,
            max_retained=self.config.max_retained_runs,
            grace=self.config.cancel_grace,
            on_finish=self._count_finished,
        )
        self.port: int | None = None
        """The bound port once :meth:`serve` listens (useful with ``port=0``)."""
        self.slots = RunSlots(
            self.config.max_concurrent_runs,
            self.config.max_queued_runs,
            self.config.queue_timeout,
        )
        """The run cap and its queue (``slots.running``, ``slots.queued``)."""
        self._locks = SessionLocks()
        self._uvicorn: Any = None
        self._ready = asyncio.Event()
        self._serving = False
        self._app: Starlette | None = None

    # ------------------------------------------------------------------ the ASGI app

    @property
    def app(self) -> Starlette:
        """The ASGI app (built once): run it with any ASGI server or mount it."""
        if self._app is None:
            self._app = Starlette(
                routes=[*build_routes(self), *agui_routes(self)],
                lifespan=self._lifespan,
                exception_handlers={HTTPException: _http_error},
                middleware=[Middleware(HttpErrorCounter, metrics=self.metrics)],
            )
        return self._app

    def metrics_text(self) -> str:
        """The metrics in the Prometheus text format (see :mod:`.metrics`)."""
        return self.metrics.render(
            runs=self.runs.by_status(),
            queue_depth=self.slots.queued,
            slots_in_use=self.slots.running,
        )

    def _count_finished(self, run: Run) -> None:
        self.metrics.finished[run.status] += 1
        if run.finished_at is not None:
            self.metrics.duration.observe(run.finished_at - run.accepted_at)
        terminal = run.terminal
        if terminal is not None and terminal.type == "run_failed":
            error = terminal.data.get("error") or {}
            self.metrics.run_errors[str(error.get("kind", "Other"))] += 1
        elif terminal is None:
            self.metrics.run_errors[str((run.start_error or {}).get("kind", "Incomplete"))] += 1

    def _count_first_event(self, run: Run) -> None:
        self.metrics.first_event.observe(time.monotonic() - run.accepted_at)

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        yield
        await self.aclose()

    async def aclose(self) -> None:
        """Cancel every run in flight and wait (bounded) until each is recorded."""
        await self.runs.aclose()

    # ------------------------------------------------------------------ requests

    async def authenticate(self, conn: HTTPConnection) -> None:
        """Run the auth callable.

        Raises:
            AuthRejection: the request is refused.
            ServerError: the auth callable itself failed (500).
        """
        if self.auth is None:
            return
        try:
            made = self.auth(conn)
            if inspect.isawaitable(made):
                await made
        except ServerError:
            raise
        except Exception as exc:
            raise ServerError(
                f"authentication failed: {type(exc).__name__}: {exc}", code="auth_failed"
            ) from exc

    def agent(self, name: str) -> Runnable:
        """The agent served as ``name``.

        Raises:
            ServerError: 404 ``unknown_agent``, naming the known agents.
        """
        agent = self.agents.get(name)
        if agent is None:
            known = sorted(self.agents)
            raise ServerError(
                f"no agent named {name!r}; known agents: {', '.join(map(repr, known))}",
                status=404,
                code="unknown_agent",
                details={"agents": known},
            )
        return agent

    async def run(self, name: str, run_id: str) -> Run:
        """The run ``run_id`` of agent ``name``: one of this server's, or one paused for
        approval in the paused-run store (by another process, or before a restart), which
        then waits here.

        Raises:
            ServerError: 404 ``unknown_run`` (never started, another agent's, or expired);
                500 when the paused-run store fails.
        """
        run = self.runs.get(run_id)
        if run is None:
            record = await self.paused_runs.load(run_id)
            if record is not None and record.agent == name:
                run = self.runs.adopt(
                    Run.restore(
                        record.run_id, record.agent, record.session_id, record.state, record.events
                    )
                )
                if run.approval_timer is None and run.paused is not None:
                    deny_after(self, run)
        if run is None or run.agent != name:
            raise ServerError(
                f"agent {name!r} has no run {run_id!r} (unknown, or expired after "
                f"{self.config.retention:g}s)",
                status=404,
                code="unknown_run",
            )
        return run

    async def start_run(self, conn: HTTPConnection, name: str, items: list[Item]) -> Run:
        """Register a run of agent ``name`` on ``items`` and start it in the background.

        Raises:
            ServerError: 404 unknown agent, 400 bad ``X-Session-Id``, 503 when the queue
                for a run slot is full or the wait timed out, 500 when the session or the
                context cannot be made.
        """
        accepted = time.monotonic()
        agent = self.agent(name)
        session_id = session_id_header(conn.headers)
        await self.slots.acquire()
        try:
            session = await resolve_session(self.session_factory, session_id)
            run = Run(name, session_id)
            run.accepted_at = accepted
            run.on_first_event = self._count_first_event
            ctx = await self._context(conn, session, run.cancel)
            run_config = self._run_config(agent)
            self.metrics.started += 1
            self.runs.start(
                run,
                lambda r: self._drive(r, agent, items, session, ctx, run_config),
            )
        except BaseException:
            self.slots.release()
            raise
        if run.task is not None:  # always: start() made it; the slot is held until it ends
            run.task.add_done_callback(lambda _: self.slots.release())
        return run

    async def _context(
        self, conn: HTTPConnection, session: Session, cancel: CancellationToken
    ) -> RunContext[Any]:
        if self.context_factory is None:
            return RunContext.ephemeral(None).with_cancel(cancel)
        try:
            made = self.context_factory(conn, session, cancel)
            ctx = await made if inspect.isawaitable(made) else made
        except ServerError:
            raise
        except Exception as exc:
            raise ServerError(
                f"the context factory failed: {type(exc).__name__}: {exc}", code="context_failed"
            ) from exc
        if not isinstance(ctx, RunContext):
            raise ServerError(
                f"the context factory returned {type(ctx).__name__}, not a RunContext",
                code="context_failed",
            )
        return ctx if ctx.cancel is cancel else ctx.with_cancel(cancel)

    def _run_config(self, agent: Runnable) -> RunConfig | None:
        """The run's config: the agent's own, with ``run_timeout`` as a ceiling.

        A pattern gets ``None`` (its children keep their own configs) unless the ceiling
        applies; then it gets its own config with the shorter timeout, which its children
        inherit (without the timeout), as for any explicit ``run_config``.
        """
        own = getattr(agent, "run_config", None)
        run_config: RunConfig | None = own if isinstance(own, RunConfig) else None
        limit = self.config.run_timeout
        if limit is None:
            return run_config if isinstance(agent, Agent) else None
        base = run_config or RunConfig()
        if base.timeout is None or base.timeout > limit:
            return dataclasses.replace(base, timeout=limit)
        return run_config if isinstance(agent, Agent) else None

    async def _drive(
        self,
        run: Run,
        agent: Runnable,
        items: list[Item],
        session: Session,
        ctx: RunContext[Any],
        run_config: RunConfig | None,
    ) -> None:
        async with self._locks.hold(
            run.session_id, run.cancel, run.wait_behind_session
        ) as acquired:
            if not acquired:
                reason = run.cancel.reason or "cancelled"
                run.finish({"kind": "Cancelled", "message": f"cancelled before start: {reason}"})
                return
            run.status = "running"
            run.resume_with = {"agent": agent, "session": session, "ctx": ctx, "config": run_config}
            stream = self.runner.run_streamed(
                agent, items, session=session, ctx=ctx, run_config=run_config
            )
            await self._pump(run, stream)

    async def _pump(self, run: Run, stream: Any) -> None:
        """Push a run's events into its log; a pause starts the approval timer."""
        try:
            try:
                async for event in stream:
                    if isinstance(event, RunInterrupted):  # stored before anyone sees it
                        await self._store_pause(run, event)
                    run.push(event)
            finally:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:  # records the run when it ended early
                    await aclose()
        except Exception as exc:
            kind = getattr(exc, "kind", None) or (
                "Unavailable" if backend_unavailable(exc) else "Other"
            )
            run.finish({"kind": str(kind), "message": f"{type(exc).__name__}: {exc}"})
        if run.status == "needs_approval":
            deny_after(self, run)

    async def _store_pause(self, run: Run, pause: RunInterrupted) -> None:
        """Write the pause (the events so far and ``pause``) to the paused-run store; a
        failure leaves it in this process only (logged)."""
        record = PausedRun(
            run_id=run.id,
            agent=run.agent,
            session_id=run.session_id,
            state=pause.state,
            events=[*(ev.data for ev in run.events), pause.model_dump(mode="json", by_alias=True)],
        )
        try:
            await self.paused_runs.save(record)
            run.stored = True
        except Exception as exc:
            log.warning("run %s waits in this process only: %s", run.id, exc)

    async def answer_approvals(
        self,
        name: str,
        run_id: str,
        decisions: Mapping[str, Decision],
        conn: HTTPConnection | None = None,
    ) -> Run:
        """Resume the paused run ``run_id`` with ``decisions``; its log goes on.

        ``conn`` is the answering request: a run paused in another process (or before a
        restart) gets its context from the context factory with it.

        Raises:
            ServerError: 404 unknown run, 409 ``not_waiting`` (the run does not wait for
                approval, or another answer came first, here or in another server sharing
                the paused-run store), 400 ``invalid_decisions`` (they do not answer exactly
                the waiting calls; the run keeps waiting).
        """
        run = await self.run(name, run_id)
        state = run.paused
        if state is None:
            raise ServerError(
                f"run {run_id} does not wait for approval (status {run.status})",
                status=409,
                code="not_waiting",
            )
        try:
            check_decisions(state.pending, decisions)
        except ResumeRefused as exc:
            raise ServerError(str(exc), status=400, code="invalid_decisions") from None
        resume_with = run.resume_with or await self._restored_resume_with(run, conn)
        if run.stored:
            if await self.paused_runs.take(run_id) is None:
                if run.paused is state:  # not answered here: another server took it
                    run.take_pause()
                    run.finish(
                        {
                            "kind": "Other",
                            "message": "answered by another server sharing the paused-run "
                            "store; the run continues there",
                        }
                    )
                raise ServerError(
                    f"run {run_id} was answered already (here or by another server)",
                    status=409,
                    code="not_waiting",
                )
            run.stored = False
        if run.paused is not state:
            raise ServerError(
                f"run {run_id} was answered already (status {run.status})",
                status=409,
                code="not_waiting",
            )
        run.take_pause()
        run.resume_with = resume_with
        self.runs.proceed(run, lambda r: self._resume(r, state, decisions))
        return run

    async def _restored_resume_with(self, run: Run, conn: HTTPConnection | None) -> dict[str, Any]:
        """What a run restored from the paused-run store resumes with: the served agent,
        its session reopened by id (a fresh one for an anonymous run, which then resumes
        from the state's conversation), a context built for the answering request."""
        agent = self.agent(run.agent)
        session = await resolve_session(self.session_factory, run.session_id)
        if conn is None:  # the approval timer: no request answers
            conn = HTTPConnection({"type": "http", "headers": [], "path": "/", "method": "POST"})
        ctx = await self._context(conn, session, run.cancel)
        return {
            "agent": agent,
            "session": session,
            "ctx": ctx,
            "config": self._run_config(agent),
            "anonymous": run.session_id is None,
        }

    async def _resume(self, run: Run, state: RunState, decisions: Mapping[str, Decision]) -> None:
        w = run.resume_with
        if w.get("anonymous") and isinstance(w["session"], MemorySession):
            # the anonymous session died with the process that paused: the state's own
            # conversation resumes it, and the store's take was the claim
            state = state.model_copy(update={"session_id": None, "session_position": None})
        async with self._locks.hold(run.session_id, run.cancel) as acquired:
            if not acquired:
                run.finish({"kind": "Cancelled", "message": "cancelled before the resume"})
                return
            stream = self.runner.resume_streamed(
                w["agent"],
                state,
                decisions=decisions,
                session=w["session"],
                ctx=w["ctx"],
                run_config=w["config"],
            )
            await self._pump(run, stream)

    # ------------------------------------------------------------------ serving

    async def serve(
        self,
        host: str = "127.0.0.1",
        port: int = 8080,
        *,
        backlog: int = 2048,
        keep_alive: float = 5.0,
        http: str = "auto",
        log_level: str = "warning",
    ) -> None:
        """Serve on ``http://host:port`` with uvicorn until :meth:`shutdown` or cancellation.

        ``port=0`` picks a free port; :attr:`port` holds the bound one once the socket
        listens, and :meth:`wait_ready` returns it once the server accepts requests. A
        sweeper drops expired runs while serving. Cancelling the task that runs
        ``serve()`` stops the server like :meth:`shutdown` (runs in flight are cancelled and
        recorded, the socket is closed by uvicorn) before the cancellation propagates. One
        server serves once at a time: a second ``serve()`` while one runs is refused.

        Args:
            host: the address to bind (``"0.0.0.0"`` for every interface, ``"::"`` for IPv6).
            port: the port (0: a free one).
            backlog: connections the kernel queues before they are accepted.
            keep_alive: seconds an idle keep-alive connection stays open (uvicorn's
                ``timeout_keep_alive``).
            http: ``"auto"``, ``"h11"`` or ``"httptools"`` (uvicorn's HTTP implementation).
            log_level: uvicorn's log level (``"warning"``; ``"info"`` logs every request).
                The event loop is the caller's: pick it with :meth:`serve_sync`.

        Raises:
            ServerBindError: the address cannot be bound.
            ConfigError: a setting is out of range, or this server is already serving.
        """
        import uvicorn

        check_settings(backlog=backlog, keep_alive=keep_alive, http=http, log_level=log_level)
        if self._serving:
            where = f"port {self.port}" if self.port is not None else "a port (starting)"
            raise ConfigError(
                f"AgentServer.serve(): this server is already serving on {where}; call "
                "shutdown() and await the running serve() first, or create another AgentServer"
            )
        self._serving = True
        try:
            try:
                sock = listening_socket(host, port, backlog=backlog)
            except OSError as exc:
                raise ServerBindError(f"cannot bind {host}:{port}: {exc}") from exc
            self.port = int(sock.getsockname()[1])
            config = uvicorn.Config(
                self.app,
                log_level=log_level,
                lifespan="on",
                timeout_keep_alive=keep_alive,  # type: ignore[arg-type]  # a float works
                http=http,
                backlog=backlog,
            )
            self._uvicorn = uvicorn.Server(config)
            self._signal_ready(self._uvicorn, host)
            sweeper = asyncio.create_task(self._sweep())
            try:
                await run_uvicorn(
                    self._uvicorn,
                    [sock],
                    stop_timeout=self.config.cancel_grace * 2 + 5.0,
                    on_cancel=self.aclose,
                )
            finally:
                sweeper.cancel()
                self._uvicorn = None
        finally:
            self._serving = False
            self._ready.clear()

    def serve_sync(
        self, host: str = "127.0.0.1", port: int = 8080, *, loop: str = "auto", **settings: Any
    ) -> None:
        """Run :meth:`serve` on a new event loop until :meth:`shutdown` or Ctrl-C.

        ``loop`` is ``"auto"`` (uvloop when installed), ``"asyncio"`` or ``"uvloop"``;
        ``settings`` are :meth:`serve`'s keywords.

        Raises:
            ConfigError: an unknown ``loop``, or uvloop asked for but not installed; as
                :meth:`serve`.
            ServerBindError: as :meth:`serve`.
        """
        factory = loop_factory(loop)
        with asyncio.Runner(loop_factory=factory) as runner, contextlib.suppress(KeyboardInterrupt):
            runner.run(self.serve(host, port, **settings))

    async def wait_ready(self) -> int:
        """Wait until :meth:`serve` accepts requests; return the bound port."""
        await self._ready.wait()
        return self.port or 0  # set before the server starts

    def _signal_ready(self, server: Any, host: str) -> None:
        """Set the readiness event once uvicorn's startup (lifespan, listeners) is done."""
        startup = server.startup

        async def started(sockets: Any = None) -> None:
            await startup(sockets=sockets)
            if server.started and not server.should_exit:
                self._ready.set()
                log.info("helikon server ready on http://%s:%s", host, self.port)

        server.startup = started

    def shutdown(self) -> None:
        """Ask :meth:`serve` to stop; runs in flight are cancelled and recorded."""
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(min(self.config.retention, 30.0))
            self.runs.prune()


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 / 405 as the server's JSON error body."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    codes = {404: "not_found", 405: "method_not_allowed"}
    error = ServerError(
        f"{request.method} {request.url.path}: {getattr(exc, 'detail', exc)}",
        status=status,
        code=codes.get(status, "http_error"),
    )
    headers = dict(getattr(exc, "headers", None) or {})
    return JSONResponse(error.body(), status_code=status, headers=headers)


def _check_agents(agents: Mapping[str, Runnable] | Sequence[Runnable]) -> dict[str, Runnable]:
    pairs: list[tuple[Any, Any]]
    if isinstance(agents, Mapping):
        pairs = list(agents.items())
    elif isinstance(agents, Sequence) and not isinstance(agents, str):
        pairs = [(getattr(a, "name", None), a) for a in agents]
    else:
        raise ConfigError(
            "AgentServer(agents=...) must be a dict {name: agent} or a list of agents (Agent "
            f"or a pattern from helikon.agents), got {type(agents).__name__}"
        )
    if not pairs:
        raise ConfigError("AgentServer(agents=...) is empty; serve at least one agent")
    out: dict[str, Runnable] = {}
    for name, agent in pairs:
        checked = check_runnable(f"AgentServer(agents=...): {name!r}", agent)
        if not isinstance(name, str) or not name or "/" in name:
            raise ConfigError(
                f"AgentServer(agents=...): route name {name!r} must be a non-empty string "
                "without '/'"
            )
        if name in out:
            raise ConfigError(f"AgentServer(agents=...): two agents are named {name!r}")
        out[name] = checked
    return out
