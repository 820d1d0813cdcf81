"""Where each run starts and ends in a session log.

The runner appends one run's events as one batch that starts with the run's input (its user
messages), so a log is a sequence of runs: a run starts at a ``user_message`` that follows
anything but another ``user_message`` (or at the first event), and at an
``approvals_answered`` event (a resume of a paused run). A run's id is the
:data:`~helikon.sessions.SequenceId` of its first event; it ends where the next run starts,
or at a ``session_forked`` marker (which belongs to no run).

Example:
    >>> from helikon.sessions import assistant_message, user_message
    >>> log = [user_message("hi"), assistant_message("hello", "a"), user_message("bye"),
    ...        assistant_message("ciao", "a")]
    >>> [(r.run_id, r.end) for r in runs_of(log)]
    [(0, 2), (2, 4)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from helikon.errors import ConfigError
from helikon.sessions.events import SessionEvent

__all__ = ["RecordedRun", "find_run", "runs_of"]


@dataclass(frozen=True, slots=True)
class RecordedRun:
    """One run of a log.

    Attributes:
        run_id: the sequence of its first event.
        end: the sequence after its last event (exclusive).
        resumed: it is the resume of a paused run (starts with ``approvals_answered``).
    """

    run_id: int
    end: int
    resumed: bool = False


def runs_of(events: Sequence[SessionEvent]) -> list[RecordedRun]:
    """The runs of ``events`` in order (see the module doc for where one starts)."""
    starts: list[tuple[int, bool]] = []
    previous = ""
    for seq, event in enumerate(events):
        if event.type == "approvals_answered":
            starts.append((seq, True))
        elif event.type == "user_message" and (seq == 0 or previous != "user_message"):
            starts.append((seq, False))
        elif seq == 0:
            starts.append((0, False))
        previous = event.type
    ends = [s for s, _ in starts[1:]] + [len(events)]
    marks = [seq for seq, e in enumerate(events) if e.type == "session_forked"]
    return [
        RecordedRun(s, min([e, *(m for m in marks if s <= m < e)]), resumed)
        for (s, resumed), e in zip(starts, ends, strict=True)
        if s not in marks
    ]


def find_run(events: Sequence[SessionEvent], run_id: int) -> RecordedRun:
    """The run that starts at ``run_id``.

    Raises:
        ConfigError: no run starts there; the message lists the runs that do.
    """
    runs = runs_of(events)
    for run in runs:
        if run.run_id == run_id:
            return run
    ids = ", ".join(str(r.run_id) for r in runs) or "none: the log is empty"
    raise ConfigError(f"no run starts at event {run_id} of this session; runs start at: {ids}")
