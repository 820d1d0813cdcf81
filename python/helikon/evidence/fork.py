"""Fork a recorded run: a new session holding a log's events up to a point.

:func:`fork` copies the events of ``session`` up to and including event ``at`` into
``target`` (a new, empty session) and appends a ``session_forked`` event naming the parent
and ``at``; a run on ``target`` then continues from that state with a live model and live
tools (and, if you like, another model or instructions). The original session is only read.

The copy is repaired like any history (a call whose result lies after ``at`` gets a
"did not complete" result when the next run loads it; see :mod:`helikon.sessions.repair`).

Example:
    >>> import asyncio
    >>> from helikon.sessions import MemorySession, assistant_message, user_message
    >>> parent = MemorySession()
    >>> _ = asyncio.run(parent.append([user_message("hi"), assistant_message("yo", "a"),
    ...                                 user_message("more")]))
    >>> child = MemorySession()
    >>> forked = asyncio.run(fork(parent, at=1, target=child))
    >>> (forked.copied, [e.type for e in asyncio.run(child.events())])
    (2, ['user_message', 'assistant_message', 'session_forked'])
"""

from __future__ import annotations

from dataclasses import dataclass

from helikon.errors import ConfigError
from helikon.evidence.runs import find_run
from helikon.sessions.events import SessionForked
from helikon.sessions.protocol import Session

__all__ = ["ForkedSession", "fork"]


@dataclass(frozen=True, slots=True)
class ForkedSession:
    """A fork: ``session`` holds the first ``copied`` events of ``parent_id``'s log.

    Attributes:
        session: the new session (run on it to continue from the fork point).
        session_id: its id (``None`` for a backend without ids).
        parent_id: the forked session's id.
        at: the last copied event of the parent.
        copied: how many events were copied (``at + 1``).
    """

    session: Session
    session_id: str | None
    parent_id: str | None
    at: int
    copied: int


async def fork(
    session: Session, run_id: int | None = None, *, at: int, target: Session
) -> ForkedSession:
    """Copy ``session``'s events ``0..at`` (inclusive) into the empty ``target``, then a
    ``session_forked`` marker. With ``run_id`` (a run of the log, see
    :func:`~helikon.evidence.runs.runs_of`), ``at`` must be one of that run's events.

    Raises:
        ConfigError: ``at`` is not an event of ``session`` (or of the run), or ``target`` is
            not empty (a fork never appends to a log that has events).
        SessionError: a backend failed.
    """
    events = await session.events()
    if isinstance(at, bool) or not isinstance(at, int) or not 0 <= at < len(events):
        raise ConfigError(
            "fork(at=...) must be the sequence of an event of the session "
            f"(0..{len(events) - 1}), got {at!r}"
        )
    if run_id is not None:
        run = find_run(events, run_id)
        if not run.run_id <= at < run.end:
            raise ConfigError(
                f"fork(at={at}) is not in run {run_id}, whose events are "
                f"{run.run_id}..{run.end - 1}"
            )
    if await target.events():
        raise ConfigError("fork(target=...) must be an empty session; this one has events")
    parent = getattr(session, "session_id", None)
    await target.append([*events[: at + 1], SessionForked(parent=parent, at=at)])
    return ForkedSession(target, getattr(target, "session_id", None), parent, at, at + 1)
