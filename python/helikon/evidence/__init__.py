"""Runs as evidence: the runs recorded in a session log, replayed with no model and no tool
called (:func:`replay`), forked into a new session from any point (:func:`fork`).

* :mod:`helikon.evidence.runs`: where each run starts and ends in a log.
* :mod:`helikon.evidence.replay`: replay one run against the current code and report the
  first event that differs; regression fixtures (``helikon replay ... --out``).
* :mod:`helikon.evidence.fork`: a new session holding a run's history up to a point.
"""

from helikon.evidence.fork import ForkedSession, fork
from helikon.evidence.replay import (
    Divergence,
    ReplayReport,
    load_fixture,
    replay,
    replay_events,
    replay_fixture,
    write_fixture,
)
from helikon.evidence.runs import RecordedRun, find_run, runs_of

__all__ = [
    "Divergence",
    "ForkedSession",
    "RecordedRun",
    "ReplayReport",
    "find_run",
    "fork",
    "load_fixture",
    "replay",
    "replay_events",
    "replay_fixture",
    "runs_of",
    "write_fixture",
]
