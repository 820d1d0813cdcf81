"""A paused run's log edited before the resume (the waiting refund's amount raised) refuses
the resume with SessionTampered naming the edited record; nothing runs."""

from __future__ import annotations

import pytest

pytest.importorskip("blake3", reason="the hash chain needs blake3 (the sqlite extra has it)")

from helikon.core.decisions import Approve
from helikon.errors import SessionTampered
from helikon.sessions import MemorySession
from helikon.testing import Text

from . import _support as s
from .test_pause_resume import _pause, _resume


async def test_an_edited_pause_is_not_resumed() -> None:
    session = MemorySession()
    state = (await _pause(session)).state
    rows = session._rows
    [at] = [i for i, row in enumerate(rows) if '"amount":40' in row and "tool_called" in row]
    rows[at] = rows[at].replace('"amount":40', '"amount":4000')
    with pytest.raises(SessionTampered, match=rf"breaks at record {at}: ") as exc:
        await _resume(state, {"c2": Approve()}, [[Text("x")]], session=session)
    assert exc.value.sequence == at
    assert s.RAN == [("lookup", "A7")]  # the refund did not run
    assert "approvals_answered" not in [e.type for e in await session.events()]


async def test_an_untouched_pause_resumes() -> None:
    session = MemorySession()
    state = (await _pause(session)).state
    _, result = await _resume(state, {"c2": Approve()}, [[Text("Refunded.")]], session=session)
    assert result.final_output == "Refunded."
