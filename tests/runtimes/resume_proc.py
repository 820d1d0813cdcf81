"""A child process that runs the refund conversation of :mod:`tests.runtimes._refunds` up
to its approval pause and writes the paused run's state.

``python -m tests.runtimes.resume_proc STATE_FILE [SQLITE_PATH SESSION_ID]``: exit 2 when
the run paused (state written), 1 otherwise.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from helikon import RunConfig, RunInterruptedError, Runner
from helikon.sessions.sqlite import SqliteSession
from tests.runtimes import _refunds as r


async def main(state_file: str, db: str | None, session_id: str | None) -> int:
    triage, _ = r.agents(r.TRIAGE, r.BEFORE_PAUSE)
    session = SqliteSession(session_id, db) if db and session_id else None
    try:
        await Runner.run(
            triage,
            "Please refund order A7.",
            session=session,
            ctx=r.ctx(),
            run_config=RunConfig(approval="defer"),
        )
    except RunInterruptedError as paused:
        Path(state_file).write_text(paused.state.to_json(), encoding="utf-8")
        return 2
    return 1


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(asyncio.run(main(args[0], *(args[1:3] if len(args) > 2 else (None, None)))))
