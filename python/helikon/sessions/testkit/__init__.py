"""The session backend conformance suite: every :class:`~helikon.sessions.Session` passes it.

Use it from pytest by subclassing :class:`SessionConformance` (a class whose name starts
with ``Test``) and providing a ``backend`` fixture that returns a :class:`Backend`::

    import pytest
    from helikon.sessions.testkit import Backend, SessionConformance

    class TestMyStore(SessionConformance):
        @pytest.fixture
        async def backend(self):
            store = await MyStore.connect(...)
            yield Backend(lambda sid: MySession.open(store, sid),
                          subprocess_open="myproject.testing:open_session")
            await store.close()

or without pytest: ``await run_all(backend)``. The checks: empty sessions, empty appends,
ordering and contiguous positions, ``since`` exclusivity, round-trips of every event type,
snapshot = projection, isolation between ids, concurrent writers without gaps or
duplicates, a failed append persisting nothing, a cancelled append persisting a whole batch
or nothing, reopening, and reading/writing across process restarts.
"""

from helikon.sessions.testkit.checks import (
    CHECKS,
    Backend,
    check_cancelled_append,
    check_concurrent_writers,
    check_empty_append,
    check_empty_session,
    check_failed_append,
    check_isolation,
    check_ordering,
    check_process_restart,
    check_reopen,
    check_round_trip,
    check_since_exclusive,
    check_snapshot_is_projection,
    run_all,
)
from helikon.sessions.testkit.samples import BASE_TS, every_event_type, numbered
from helikon.sessions.testkit.suite import SessionConformance

__all__ = [
    "BASE_TS",
    "CHECKS",
    "Backend",
    "SessionConformance",
    "check_cancelled_append",
    "check_concurrent_writers",
    "check_empty_append",
    "check_empty_session",
    "check_failed_append",
    "check_isolation",
    "check_ordering",
    "check_process_restart",
    "check_reopen",
    "check_round_trip",
    "check_since_exclusive",
    "check_snapshot_is_projection",
    "every_event_type",
    "numbered",
    "run_all",
]
