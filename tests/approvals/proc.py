"""A child process that pauses a run or resumes one (the cross-process approval tests).

``python -m tests.approvals.proc pause|resume|pause-pattern|resume-pattern`` with the
environment (the ``-pattern`` modes run :func:`tests.approvals._support.pipeline`;
``pause-bare`` pauses without a session, ``resume-bare`` resumes without one and
``resume-ledger`` resumes with the backend's session as the ledger):

* ``APPROVAL_BACKEND``: ``sqlite`` (``HELIKON_TEST_SQLITE_PATH``) or ``postgres``
  (``HELIKON_TEST_POSTGRES_DSN``, ``HELIKON_TEST_POSTGRES_SCHEMA``);
* ``APPROVAL_SESSION``: the session id; ``APPROVAL_STATE``: the state file;
* ``APPROVAL_RAN``: a file each tool execution appends a line to;
* ``APPROVAL_DECISIONS``: for ``resume``, JSON ``{call_id: "approve" | "deny:<reason>" |
  {"edit": args}}``.

Exit 0 with the final output on stdout, 2 when the run paused (state written), 3 when the
resume was refused (the message on stdout).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from helikon import Approve, Deny, Edit, RunConfig, RunState
from helikon.errors import ResumeRefused, RunInterruptedError
from helikon.runtimes.runner import Runner
from helikon.testing import Call, Text
from tests.approvals import _support as s
from tests.sessions import backends


def _flush_ran() -> None:
    with open(os.environ["APPROVAL_RAN"], "a", encoding="utf-8") as f:
        for name, args in s.RAN:
            f.write(json.dumps([name, args]) + "\n")


async def _session() -> Any:
    sid = os.environ["APPROVAL_SESSION"]
    if os.environ["APPROVAL_BACKEND"] == "sqlite":
        return await backends.open_sqlite(sid)
    return await backends.open_postgres(sid)


def _decision(value: Any) -> Any:
    if value == "approve":
        return Approve()
    if isinstance(value, str) and value.startswith("deny:"):
        return Deny(value[5:])
    return Edit(value["edit"])


async def main(mode: str) -> int:
    if mode == "pause-bare":
        mode, session = "pause", None
    elif mode == "resume-bare":
        mode, session = "resume", None
    else:
        session = await _session()
    state_file = Path(os.environ["APPROVAL_STATE"])
    if mode == "pause-pattern":
        pipe = s.pipeline(
            [[Call("k1", "lookup", {"order": "A7"})], [Text("A7 exists")]],
            [[Call("c2", "refund", {"order": "A7", "amount": 40})]],
            [[Text("audit ok")]],
        )
        try:
            await Runner().run(
                pipe,
                "refund A7",
                session=session,
                ctx=s.ctx(),
                run_config=RunConfig(approval="defer"),
            )
        except RunInterruptedError as err:
            state_file.write_text(err.state.to_json(), encoding="utf-8")
            return 2
        return 1
    if mode == "resume-pattern":
        state = RunState.from_json(state_file.read_text(encoding="utf-8"))
        decisions = {
            k: _decision(v) for k, v in json.loads(os.environ["APPROVAL_DECISIONS"]).items()
        }
        pipe = s.pipeline([], [[Text("Refunded.")]], [])  # check and audit must not run again
        ctx = s.ctx()
        try:
            result = await Runner().resume(
                pipe, state, decisions=decisions, session=session, ctx=ctx
            )
        except ResumeRefused as exc:
            print(f"refused: {exc}")
            return 3
        print(json.dumps({"output": result.final_output, "state": dict(ctx.state)}))
        return 0
    if mode == "pause":
        agent = s.agent([s.first_turn(), [Text("unused")]])
        try:
            await Runner().run(
                agent,
                "refund A7",
                session=session,
                ctx=s.ctx(),
                run_config=RunConfig(approval="defer"),
            )
        except RunInterruptedError as err:
            state_file.write_text(err.state.to_json(), encoding="utf-8")
            return 2
        return 1
    state = RunState.from_json(state_file.read_text(encoding="utf-8"))
    decisions = {k: _decision(v) for k, v in json.loads(os.environ["APPROVAL_DECISIONS"]).items()}
    agent = s.agent([[Text("Refunded.")]])
    try:
        result = await Runner().resume(
            agent, state, decisions=decisions, session=session, ctx=s.ctx()
        )
    except ResumeRefused as exc:
        print(f"refused: {exc}")
        return 3
    last = agent.model.requests[0].messages[-1]  # type: ignore[attr-defined]
    print(json.dumps({"output": result.final_output, "last": last.model_dump(mode="json")}))
    return 0


if __name__ == "__main__":
    code = asyncio.run(main(sys.argv[1]))
    _flush_ran()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # the session pools stay open (see tests.sessions.backends)
