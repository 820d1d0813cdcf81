"""Replayable runs: each run drains into a :class:`Run` log that transports subscribe to.

A run executes in its own task, whatever the transport that started it, so a one-shot
request, an SSE stream and any number of WebSocket observers read the same log. Transports
that own the run (one-shot, SSE) cancel it when their client goes away; the async mode and
observers never do.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from helikon.core.cancel import CancellationToken
from helikon.core.events import AgentEvent, RunFailed, RunInterrupted
from helikon.core.run_state import RunState

__all__ = ["NO_TERMINAL", "RecordedEvent", "Run", "RunRegistry", "RunStatus"]

RunStatus: TypeAlias = Literal[
    "queued", "running", "needs_approval", "completed", "failed", "incomplete"
]

NO_TERMINAL = "run ended without a terminal event"
_TERMINAL = ("run_completed", "run_failed")


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """One event of a run: its position, type, JSON value and JSON text."""

    id: int
    type: str
    data: dict[str, Any]
    text: str


def _record(index: int, data: dict[str, Any]) -> RecordedEvent:
    return RecordedEvent(
        index, str(data["type"]), data, json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    )


class Run:
    """One run's event log, status and cancellation token."""

    def __init__(self, agent: str, session_id: str | None) -> None:
        self.id = str(uuid.uuid4())
        self.agent = agent
        self.session_id = session_id
        self.cancel = CancellationToken()
        self.status: RunStatus = "queued"
        self.events: list[RecordedEvent] = []
        self.start_error: dict[str, Any] | None = None
        """Why the run never produced a terminal event (a session read failure, ...)."""
        self.finished_at: float | None = None
        self.task: asyncio.Task[None] | None = None
        self.paused: RunState | None = None
        """While ``needs_approval``: the state ``POST .../approvals`` resumes."""
        self.resume_with: dict[str, Any] = {}
        """What a resume needs besides the state (agent, session, context, config)."""
        self.approval_timer: asyncio.TimerHandle | None = None
        self.stored = False
        """Whether the pause is in the server's paused-run store (answering takes it)."""
        self.accepted_at = time.monotonic()
        """When the request that started the run arrived (monotonic seconds)."""
        self.on_first_event: Callable[[Run], None] | None = None
        self.on_finish: Callable[[Run], None] | None = None
        """Called once when the run is over (the registry indexes finished runs with it)."""
        self.behind_session = False
        """Whether the run waited for another run on its session before it started."""
        self._changed = asyncio.Event()

    @classmethod
    def restore(
        cls, run_id: str, agent: str, session_id: str | None, state: RunState, events: list[Any]
    ) -> Run:
        """A run paused in another process (or before a restart), waiting for approval
        again here: its events so far, status ``needs_approval``."""
        run = cls(agent, session_id)
        run.id = run_id
        run.events = [_record(i, data) for i, data in enumerate(events)]
        run.status = "needs_approval"
        run.paused = state
        run.stored = True
        return run

    # ------------------------------------------------------------------ writing

    def push(self, event: AgentEvent) -> None:
        """Append an event and wake the subscribers."""
        data = event.model_dump(mode="json", by_alias=True)
        self.events.append(_record(len(self.events), data))
        if len(self.events) == 1 and self.on_first_event is not None:
            self.on_first_event(self)
        if self.status == "queued":
            self.status = "running"
        if data["type"] == "run_completed":
            self.status = "completed"
        elif data["type"] == "run_failed":
            self.status = "failed"
        elif isinstance(event, RunInterrupted):
            self.status = "needs_approval"
            self.paused = event.state
        self._wake()

    def take_pause(self) -> RunState | None:
        """The paused state, once: the run is ``running`` again (``None`` when not paused)."""
        state, self.paused = self.paused, None
        if state is not None:
            self.status = "running"
            if self.approval_timer is not None:
                self.approval_timer.cancel()
                self.approval_timer = None
            self._wake()
        return state

    def finish(self, error: dict[str, Any] | None = None) -> None:
        """Mark the run over; without a terminal event it is ``incomplete``. A run paused
        for approval stays open (its streams wait for the next events) unless ``error``."""
        if self.finished_at is not None:
            return
        if self.status == "needs_approval" and error is None:
            self._wake()
            return
        if self.status not in ("completed", "failed"):
            self.status = "incomplete"
            self.start_error = error if error is not None else self.start_error
        self.finished_at = time.monotonic()
        if self.on_finish is not None:
            self.on_finish(self)
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    # ------------------------------------------------------------------ reading

    @property
    def done(self) -> bool:
        """True once the run's task has finished (its events are all in the log)."""
        return self.finished_at is not None

    @property
    def terminal(self) -> RecordedEvent | None:
        """The ``run_completed`` / ``run_failed`` event, once there is one."""
        last = self.events[-1] if self.events else None
        return last if last is not None and last.type in _TERMINAL else None

    def synthetic_failure(self) -> RecordedEvent:
        """The ``run_failed`` frame streaming transports send when the log has no terminal."""
        error = self.start_error or {"kind": "Other", "message": NO_TERMINAL}
        data = RunFailed(error=error).model_dump(mode="json", by_alias=True)
        return _record(len(self.events), data)

    def wait_behind_session(self) -> None:
        """Note that the run waits for another run on its session (wakes :meth:`wait_opened`)."""
        self.behind_session = True
        self._wake()

    async def wait_opened(self) -> None:
        """Return once the run has an event, is over, or waits behind its session: a
        stream answered after this starts with the run's first frame, and a run that could
        not start (its session unreadable) is known before any header is sent."""
        while not (self.events or self.done or self.behind_session):
            await self._changed.wait()

    async def wait_done(self) -> None:
        """Return once the run is over or waits for approval."""
        while not self.done and self.status != "needs_approval":
            await self._changed.wait()

    async def subscribe(self, after: int = -1) -> AsyncGenerator[RecordedEvent, None]:
        """Replay the events after position ``after`` (exclusive), then tail live ones.

        Ends after the run's last event; when the run ended without a terminal event the
        last frame is :meth:`synthetic_failure`.
        """
        index = max(after + 1, 0)
        while True:
            changed = self._changed
            while index < len(self.events):
                yield self.events[index]
                index += 1
            if self.done:
                break
            await changed.wait()
        if self.terminal is None and index <= len(self.events):
            yield self.synthetic_failure()

    def summary(self) -> dict[str, Any]:
        """The run as JSON: status, final text, usage, error and every event so far."""
        output = ""
        usage: Any = None
        error: Any = None
        for ev in self.events:
            if ev.type == "message_output":
                parts = ev.data["item"].get("content", [])
                output = "".join(p.get("text", "") for p in parts if p.get("type") == "text")
            elif ev.type in _TERMINAL:
                usage = ev.data.get("usage")
                error = ev.data.get("error")
        if self.terminal is None and self.done:
            error = self.start_error or {"kind": "Other", "message": NO_TERMINAL}
        return {
            "run_id": self.id,
            "agent": self.agent,
            "session_id": self.session_id,
            "status": self.status,
            "output": output,
            "usage": usage,
            "error": error,
            "pending": [p.model_dump(mode="json") for p in self.paused.pending]
            if self.paused is not None
            else [],
            "events": [ev.data for ev in self.events],
        }


class RunRegistry:
    """The server's runs: in flight ones, and finished ones for ``retention`` seconds.

    Finished runs beyond ``max_retained`` are dropped oldest first. Pruning happens on
    every registration and lookup (and in :meth:`AgentServer.serve`'s sweeper). Finished
    runs are indexed in the order they finished, so a prune looks only at the runs it
    drops (and one more): the cost of a request does not grow with the runs retained.
    """

    def __init__(
        self,
        *,
        retention: float,
        max_retained: int,
        grace: float,
        on_finish: Callable[[Run], None] | None = None,
    ) -> None:
        self._on_finish = on_finish
        self._runs: dict[str, Run] = {}
        self._finished: OrderedDict[str, Run] = OrderedDict()
        """Finished runs, oldest first (``finished_at`` never decreases along it)."""
        self._retention = retention
        self._max_retained = max_retained
        self._grace = grace

    def __len__(self) -> int:
        return len(self._runs)

    @property
    def active(self) -> int:
        """Runs not finished yet (queued, running, or paused for approval)."""
        return len(self._runs) - len(self._finished)

    def get(self, run_id: str) -> Run | None:
        """The run with ``run_id``, unless unknown or expired."""
        self.prune()
        return self._runs.get(run_id)

    def listed(self) -> list[Run]:
        """Every run not expired, in the order they were registered."""
        self.prune()
        return list(self._runs.values())

    def adopt(self, run: Run) -> Run:
        """Register a restored run (no task yet); the one already registered wins."""
        known = self._runs.get(run.id)
        if known is not None:
            return known
        self._register(run)
        return run

    def start(self, run: Run, body: Callable[[Run], Awaitable[None]]) -> None:
        """Register ``run`` and run ``body(run)`` in its own task; the run is finished after."""
        self.prune()
        self._register(run)
        self.proceed(run, body)

    def _register(self, run: Run) -> None:
        self._runs[run.id] = run
        run.on_finish = self._finished_one
        if run.done:
            self._finished_one(run)

    def _finished_one(self, run: Run) -> None:
        if self._runs.get(run.id) is run:
            self._finished[run.id] = run
            if self._on_finish is not None:
                self._on_finish(run)

    def by_status(self) -> dict[str, int]:
        """How many runs the registry holds in each status (a scan: for scrapes, not
        requests)."""
        return dict(collections.Counter(run.status for run in self._runs.values()))

    def proceed(self, run: Run, body: Callable[[Run], Awaitable[None]]) -> None:
        """Run ``body(run)`` in a new task for a registered run (a resume after a pause)."""

        async def drive() -> None:
            try:
                await body(run)
            except asyncio.CancelledError:
                run.finish({"kind": "Cancelled", "message": "run task cancelled"})
                raise
            except Exception as exc:
                run.finish({"kind": "Other", "message": f"{type(exc).__name__}: {exc}"})
            finally:
                run.finish()

        run.task = asyncio.create_task(drive(), name=f"helikon-run-{run.id}")

    def cancel(self, run: Run, reason: str) -> None:
        """Fire the run's token; cancel its task if it has not ended ``grace`` seconds later."""
        if run.done:
            return
        run.cancel.cancel(reason)
        task = run.task
        if task is not None:
            handle = asyncio.get_running_loop().call_later(self._grace, task.cancel)
            task.add_done_callback(lambda _: handle.cancel())

    def prune(self, now: float | None = None) -> None:
        """Drop finished runs older than ``retention`` and those past ``max_retained``."""
        now = time.monotonic() if now is None else now
        finished = self._finished
        while finished:
            run_id, run = next(iter(finished.items()))
            ended = run.finished_at
            fresh = ended is None or now - ended < self._retention
            if len(finished) <= self._max_retained and fresh:
                break  # the oldest stays, so every later one does too
            del finished[run_id]
            del self._runs[run_id]

    async def aclose(self) -> None:
        """Cancel every run in flight and wait (bounded) for them to be recorded."""
        pending = [r for r in self._runs.values() if not r.done]
        for run in pending:
            self.cancel(run, "server shutting down")
        tasks = [r.task for r in pending if r.task is not None]
        if tasks:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.gather(*tasks, return_exceptions=True), self._grace * 2
                )
