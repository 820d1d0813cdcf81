"""AgentCore HTTP protocol: ``POST /invocations`` and ``GET /ping`` on port 8080.

The container contract AWS Bedrock AgentCore Runtime expects of an HTTP-protocol agent:

* ``GET /ping`` answers ``{"status": "Healthy" | "HealthyBusy", "time_of_last_update": <unix
  seconds>}``: ``HealthyBusy`` while a run is in flight, so the platform does not reclaim a
  busy session; the time is when the status last changed.
* ``POST /invocations`` takes a JSON object: ``{"prompt": "text"}`` (or ``{"input": text or a
  list of item dicts}``). The platform's session id arrives in the
  ``X-Amzn-Bedrock-AgentCore-Runtime-Session-Id`` header; runs with the same id share one
  :class:`~helikon.sessions.Session` (from ``session_factory``), and the id is echoed back.
  The answer is JSON (``{"output", "usage", "session_id"}``) or, when the request accepts
  ``text/event-stream``, a Server-Sent Events stream of every agent event (``event: <type>``,
  ``data: <event JSON>``), the last one terminal.
* A failed run answers 500 with ``{"error": {"kind", "message"}, "session_id"}`` (the SSE
  stream ends with its ``run_failed`` event instead); a bad request answers 400.

Both transports drive the run on a detached task: a client that disconnects mid-run cancels
it, and the run still finalizes its partial turn into the session. There is no per-session
lock (AgentCore pins a session to one container). Termination is abrupt (no SIGTERM
contract): keep durable state in a Session backend, not in container memory.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pydantic
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from helikon.core.agent import Agent
from helikon.core.cancel import CancellationToken
from helikon.core.context import RunConfig, RunContext
from helikon.core.events import AgentEvent
from helikon.core.result import RunResultStreaming
from helikon.core.runnable import AgentInput, Runnable, check_runnable
from helikon.errors import ConfigError, RunError
from helikon.runtimes.runner import Runner
from helikon.runtimes.server.serving import run_uvicorn
from helikon.sessions import MemorySession, Session

__all__ = ["HTTP_PORT", "SESSION_HEADER", "AgentCoreServer"]


def _utf8_header(raw: str) -> str:
    """A header value as the UTF-8 text the client sent.

    ASGI servers hand header values over as bytes and Starlette decodes them as latin-1, so
    a session id ``café`` sent as UTF-8 would read ``cafÃ©`` (and name another session); the
    bytes are decoded again as UTF-8.

    Raises:
        _BadRequest: the bytes are not UTF-8.
    """
    try:
        return raw.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        raise _BadRequest(f"{SESSION_HEADER} must be UTF-8 text") from None


log = logging.getLogger("helikon.runtimes")

HTTP_PORT = 8080
SESSION_HEADER = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id"

SessionFactory = Callable[[str], Session | Awaitable[Session]]
CtxFactory = Callable[[Request], RunContext[Any]]


class _BadRequest(Exception):
    pass


class AgentCoreServer:
    """Hosts ``agent`` behind AgentCore's HTTP contract (a hosting shim around a Runner).

    Args:
        agent: the agent to serve: an :class:`~helikon.Agent` or anything that runs like one
            (a pattern from :mod:`helikon.agents`).
        runner: runs the agent (default: :class:`~helikon.Runner`).
        session_factory: ``fn(session_id) -> Session`` (may be async); default: one
            :class:`~helikon.sessions.MemorySession` per id, kept in this process (lost when
            the container stops: use SQLite/Postgres/Redis in production).
        ctx_factory: ``fn(request) -> RunContext`` for each run (default: ephemeral).
        run_config: the runs' :class:`~helikon.RunConfig` (default: the agent's).

    Raises:
        ConfigError: a bad argument.

    Example:
        >>> from helikon import Agent
        >>> from helikon.testing import MockModel, Text
        >>> server = AgentCoreServer(Agent(name="a", model=MockModel([[Text("hi")]])))
        >>> [r.path for r in server.app().routes]
        ['/invocations', '/ping']
        >>> # server.serve()   # 0.0.0.0:8080, the AgentCore HTTP protocol port
    """

    def __init__(
        self,
        agent: Agent | Runnable,
        *,
        runner: Runner | None = None,
        session_factory: SessionFactory | None = None,
        ctx_factory: CtxFactory | None = None,
        run_config: RunConfig | None = None,
    ) -> None:
        agent = check_runnable("AgentCoreServer(agent=...)", agent)
        if session_factory is not None and not callable(session_factory):
            raise ConfigError("AgentCoreServer(session_factory=...) must be fn(session_id)")
        if ctx_factory is not None and not callable(ctx_factory):
            raise ConfigError("AgentCoreServer(ctx_factory=...) must be fn(request)")
        if run_config is not None and not isinstance(run_config, RunConfig):
            raise ConfigError("AgentCoreServer(run_config=...) must be a RunConfig")
        self.agent: Agent | Runnable = agent
        self.runner = runner or Runner()
        # a pattern without an explicit run_config keeps its children's own configs
        self.run_config: RunConfig | None = run_config or (
            agent.run_config if isinstance(agent, Agent) else None
        )
        self._session_factory = session_factory
        self._ctx_factory = ctx_factory
        self._sessions: dict[str, Session] = {}
        self._runs: set[asyncio.Task[Any]] = set()
        self._status = "Healthy"
        self._since = int(time.time())
        self._uvicorn: Any = None

    # ------------------------------------------------------------------ health

    @property
    def status(self) -> str:
        """``Healthy``, or ``HealthyBusy`` while a run is in flight."""
        return self._status

    def _set_status(self) -> None:
        status = "HealthyBusy" if self._runs else "Healthy"
        if status != self._status:
            self._status, self._since = status, int(time.time())

    async def _ping(self, request: Request) -> Response:
        return JSONResponse({"status": self._status, "time_of_last_update": self._since})

    # ------------------------------------------------------------------ invocations

    async def _session(self, session_id: str) -> Session:
        if self._session_factory is None:
            session = self._sessions.get(session_id)
            if session is None:
                session = self._sessions[session_id] = MemorySession()
            return session
        made = self._session_factory(session_id)
        if inspect.isawaitable(made):
            made = await made
        if not isinstance(made, Session):
            raise ConfigError(
                f"AgentCoreServer(session_factory=...) returned {type(made).__name__}, not a "
                "Session"
            )
        return made

    @staticmethod
    async def _input(request: Request) -> AgentInput:
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError as exc:
            raise _BadRequest(f"the body is not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise _BadRequest('the body must be a JSON object, e.g. {"prompt": "hello"}')
        value = body.get("prompt", body.get("input"))
        if isinstance(value, str | list) and value and not _unicode_ok(value):
            raise _BadRequest(
                "the body holds text that is not valid Unicode (a lone surrogate such as "
                "\\ud800, which cannot be stored as UTF-8)"
            )
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value:
            return value
        raise _BadRequest('the body needs "prompt": a non-empty string (or "input": items)')

    def _start(
        self, input: AgentInput, session: Session, ctx: RunContext[Any], sink: asyncio.Queue[Any]
    ) -> asyncio.Task[None]:
        """The run on a detached task: it outlives a disconnected client, so the session
        still gets the (partial) turn; events go to ``sink``, then ``None``."""

        async def drive() -> None:
            stream = self.runner.run_streamed(
                self.agent, input, session=session, ctx=ctx, run_config=self.run_config
            )
            try:
                async for ev in stream:
                    sink.put_nowait(ev)
            except Exception as exc:
                sink.put_nowait(exc)
            finally:
                try:
                    aclose = getattr(stream, "aclose", None)
                    if aclose is not None:
                        await aclose()
                finally:
                    sink.put_nowait(None)

        task = asyncio.ensure_future(drive())
        self._runs.add(task)
        self._set_status()

        def done(t: asyncio.Task[None]) -> None:
            self._runs.discard(t)
            self._set_status()

        task.add_done_callback(done)
        return task

    async def _invocations(self, request: Request) -> Response:
        raw_session = request.headers.get(SESSION_HEADER) or ""
        # echoed as received (Starlette's latin-1 str re-encodes to the client's bytes)
        headers = {SESSION_HEADER: raw_session} if raw_session else {}
        try:
            session_id = _utf8_header(raw_session)
            input = await self._input(request)
        except _BadRequest as exc:
            return JSONResponse({"error": {"kind": "BadRequest", "message": str(exc)}}, 400)
        session = await self._session(session_id or "default")
        base = self._ctx_factory(request) if self._ctx_factory else RunContext.ephemeral(None)
        token = CancellationToken()
        ctx = base.with_cancel(token)
        sink: asyncio.Queue[Any] = asyncio.Queue()
        self._start(input, session, ctx, sink)
        if "text/event-stream" in request.headers.get("accept", ""):
            return StreamingResponse(
                _sse(sink, token), media_type="text/event-stream", headers=headers
            )
        return await self._buffered(request, sink, token, session_id, headers)

    async def _buffered(
        self,
        request: Request,
        sink: asyncio.Queue[Any],
        token: CancellationToken,
        session_id: str,
        headers: dict[str, str],
    ) -> Response:
        async def collect() -> list[Any]:
            items: list[Any] = []
            while (item := await sink.get()) is not None:
                items.append(item)
            return items

        result = asyncio.ensure_future(collect())
        gone = asyncio.ensure_future(_disconnected(request))
        try:
            await asyncio.wait({result, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
        if not result.done():  # the client walked away: cancel the run (it still records)
            token.cancel("client disconnected")
            result.cancel()
            return Response(status_code=499)
        items = result.result()
        sid = session_id or None
        crashed = next((i for i in items if isinstance(i, Exception)), None)
        if crashed is not None:
            error = {"kind": "Other", "message": f"{type(crashed).__name__}: {crashed}"}
            return JSONResponse({"error": error, "session_id": sid}, 500, headers=headers)
        try:
            run = await RunResultStreaming(_replay(items)).collect()
            typed = getattr(self.agent, "typed_result", None)  # a pattern may have none
            run = typed(run) if typed is not None else run
        except RunError as exc:
            return JSONResponse(
                {"error": exc.error.to_dict(), "session_id": sid}, 500, headers=headers
            )
        output = run.final_output
        if isinstance(output, pydantic.BaseModel):
            output = output.model_dump(mode="json")
        return JSONResponse(
            {"output": output, "usage": run.usage.model_dump(), "session_id": sid},
            headers=headers,
        )

    # ------------------------------------------------------------------ app

    def app(self) -> Starlette:
        """The ASGI app (``/invocations``, ``/ping``), to run with any ASGI server."""
        return Starlette(
            routes=[
                Route("/invocations", self._invocations, methods=["POST"]),
                Route("/ping", self._ping, methods=["GET"]),
            ]
        )

    async def serve(self, host: str = "0.0.0.0", port: int = HTTP_PORT) -> None:
        """Serve on ``host:port`` (AgentCore: ``0.0.0.0:8080``) until :meth:`shutdown`.

        Cancelling the task running ``serve()`` shuts uvicorn down (its socket closed and
        unregistered from the loop) before the cancellation propagates.

        Raises:
            ConfigError: this server is already serving.
        """
        import uvicorn

        if self._uvicorn is not None:
            raise ConfigError(
                "AgentCoreServer.serve(): this server is already serving; call shutdown() "
                "and await the running serve() first"
            )
        config = uvicorn.Config(self.app(), host=host, port=port, log_level="warning")
        self._uvicorn = uvicorn.Server(config)
        try:
            await run_uvicorn(self._uvicorn)
        finally:
            self._uvicorn = None

    def shutdown(self) -> None:
        """Ask :meth:`serve` to stop."""
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True


def _unicode_ok(value: Any) -> bool:
    """True when every string (key or value) under ``value`` can be encoded as UTF-8."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def _replay(events: list[AgentEvent]) -> AsyncIterator[AgentEvent]:
    for ev in events:
        yield ev


async def _disconnected(request: Request) -> None:
    """Return once the client has disconnected (the body was already read)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def _sse(sink: asyncio.Queue[Any], token: CancellationToken) -> AsyncIterator[bytes]:
    """The events as SSE; leaving early (a disconnect) cancels the run."""
    finished = False
    try:
        while (item := await sink.get()) is not None:
            if isinstance(item, Exception):
                data = {"type": "run_failed", "error": {"kind": "Other", "message": str(item)}}
                yield _frame("run_failed", data)
                continue
            data = item.model_dump(mode="json", by_alias=True, exclude_none=True)
            yield _frame(item.type, data)
        finished = True
    finally:
        if not finished:
            token.cancel("client disconnected")


def _frame(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()
