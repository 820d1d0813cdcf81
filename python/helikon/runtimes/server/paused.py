"""Paused runs that outlive the server process: :class:`PausedRun` and its stores.

A run that pauses for approval (status ``needs_approval``) is written to the server's
paused-run store (``AgentServer(paused_runs=...)``): the :class:`~helikon.RunState`, the
route name, the session id and the events so far. After a restart (a new process, a new
:class:`~helikon.runtimes.server.AgentServer` on the same store), ``GET
/agents/{name}/runs/{id}`` finds the run there and reports ``needs_approval``, ``GET
.../approvals`` lists its waiting calls, and ``POST .../approvals`` resumes the same run id.

Exactly once: answering a paused run first :meth:`PausedRunStore.take` s its record, an
atomic read-and-delete. Of two answers (in one process or in two servers sharing the
store) only one gets the record; the other is refused (409) and nothing runs twice. A
session that records the run (``X-Session-Id``) is a second guard: the runner's resume
claims the pause in the session log too.

The stores:

* :class:`MemoryPausedRuns` (the default): in this process only, like the runs themselves;
* :class:`~helikon.runtimes.server.paused_stores.SqlitePausedRuns`,
  :class:`~helikon.runtimes.server.paused_stores.PostgresPausedRuns`,
  :class:`~helikon.runtimes.server.paused_stores.RedisPausedRuns`: on the pool or client
  your sessions use (one table ``helikon_paused_runs``, created on first use; or one Redis
  key per run).
"""

from __future__ import annotations

import json
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from helikon.core.run_state import RunState
from helikon.errors import RunStateError, ServerError

__all__ = ["MemoryPausedRuns", "PausedRun", "PausedRunStore"]


class PausedRun(BaseModel):
    """What a server needs to take up a paused run again, in any process.

    Attributes:
        run_id: the server's run id (the same id continues after the answer).
        agent: the route name the run was started under.
        session_id: the ``X-Session-Id`` the run recorded into (``None``: an anonymous
            in-memory session, which a restart loses; the state's conversation is used).
        state: the paused :class:`~helikon.RunState`.
        events: the run's events so far as JSON values (replayed to new streams).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    agent: str
    session_id: str | None = None
    state: RunState
    events: list[dict[str, Any]]

    def to_json(self) -> str:
        """The record as JSON text."""
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str | bytes) -> PausedRun:
        """Load a record :meth:`to_json` wrote.

        Raises:
            ServerError: 500 ``paused_run_unreadable``: the stored text is not a paused run
                this helikon reads (the message names the field, or the state's version).
        """
        try:
            raw = json.loads(text)
            state = RunState.from_json(json.dumps(raw.get("state")))
            return cls.model_validate({**raw, "state": state})
        except RunStateError as exc:
            raise _unreadable(str(exc)) from exc
        except (ValueError, TypeError, AttributeError, ValidationError) as exc:
            raise _unreadable(f"not a paused run record ({exc})") from exc


def _unreadable(message: str) -> ServerError:
    return ServerError(
        f"the stored paused run is unreadable: {message}", code="paused_run_unreadable"
    )


@runtime_checkable
class PausedRunStore(Protocol):
    """Where a server keeps its paused runs (see the module doc).

    Implementations must make :meth:`take` atomic: of any number of concurrent calls for
    one run id, across processes, at most one returns the record.
    """

    async def save(self, run: PausedRun) -> None:
        """Store ``run``, replacing a record of the same run id (a run that paused again)."""
        ...

    async def load(self, run_id: str) -> PausedRun | None:
        """The record of ``run_id``, or ``None``; nothing changes."""
        ...

    async def take(self, run_id: str) -> PausedRun | None:
        """Remove and return the record of ``run_id`` (``None``: absent or taken already)."""
        ...


class MemoryPausedRuns:
    """The default store: a dict in this process (a restart loses the paused runs).

    Example:
        >>> import asyncio
        >>> store = MemoryPausedRuns()
        >>> asyncio.run(store.take("nope")) is None
        True
    """

    def __init__(self) -> None:
        self._runs: dict[str, str] = {}

    async def save(self, run: PausedRun) -> None:
        self._runs[run.run_id] = run.to_json()

    async def load(self, run_id: str) -> PausedRun | None:
        text = self._runs.get(run_id)
        return PausedRun.from_json(text) if text is not None else None

    async def take(self, run_id: str) -> PausedRun | None:
        text = self._runs.pop(run_id, None)
        return PausedRun.from_json(text) if text is not None else None
