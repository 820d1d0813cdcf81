"""``helikon replay``: list a session's runs, write one as a regression fixture, or replay it.

* ``helikon replay URL`` lists the runs of the session (its id, events, the first input).
* ``helikon replay URL RUN_ID --out FILE.json`` writes the run (and the history before it)
  as a self-contained fixture; ``helikon.evidence.replay_fixture(FILE, agent)`` replays it
  in a test.
* ``helikon replay URL RUN_ID --agents agents.toml [--agent NAME]`` replays the run with the
  sidecar's agent and its ``[permissions]``: no model and no tool is called. Exit 0 when
  the replay records the same events, 1 with the first divergence, 2 on a bad argument.

``URL`` names one session (``sqlite:///PATH.db#ID``, ``redis://HOST:PORT/DB#ID``,
``postgresql://USER@HOST/DB#ID``; see ``helikon policy check``); the store is only read.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer

from helikon.cli.common import AGENT_OPTION, EXIT_FAILED, consoles, fail, load_or_exit
from helikon.cli.policy_sessions import read_sessions
from helikon.core.items import TextPart
from helikon.errors import ConfigError, SessionError
from helikon.evidence.replay import replay_events, write_fixture
from helikon.evidence.runs import find_run, runs_of
from helikon.sessions.events import SessionEvent, UserMessageEvent

__all__ = ["replay"]


def _one_session(url: str) -> tuple[str, list[SessionEvent]]:
    logs = asyncio.run(read_sessions(url))
    if len(logs) != 1:
        names = ", ".join(sorted(logs)) or "none"
        raise ConfigError(
            f"replay needs one session: add #SESSION_ID to the URL (sessions there: {names})"
        )
    [(sid, events)] = logs.items()
    return sid, events


def _first_text(events: list[SessionEvent]) -> str:
    for e in events:
        if isinstance(e, UserMessageEvent):
            text = "".join(p.text for p in e.content if isinstance(p, TextPart))
            return text if len(text) <= 60 else text[:57] + "..."
    return ""


def replay(
    url: Annotated[str, typer.Argument(metavar="SESSION_URL", help="One session (#ID).")],
    run_id: Annotated[
        int | None,
        typer.Argument(metavar="[RUN_ID]", help="The run: the sequence of its first event."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the run as a replay fixture (JSON).")
    ] = None,
    agents: Annotated[
        Path | None,
        typer.Option("--agents", "-a", metavar="AGENTS_TOML", help="Replay with this sidecar."),
    ] = None,
    agent: AGENT_OPTION = None,
) -> None:
    """List a session's runs, write one as a fixture (--out), or replay it (--agents)."""
    stdout, err = consoles()
    try:
        sid, events = _one_session(url)
        if run_id is None:
            stdout.print("RUN  EVENTS  INPUT", markup=False)
            for r in runs_of(events):
                text = "(resume)" if r.resumed else _first_text(events[r.run_id : r.end])
                stdout.print(f"{r.run_id:<4} {r.end - r.run_id:<7} {text}", markup=False)
            return
        found = find_run(events, run_id)
    except (ConfigError, SessionError) as exc:
        fail(err, str(exc))
    history, run = events[: found.run_id], events[found.run_id : found.end]
    if out is None and agents is None:
        fail(err, "give --out FILE.json to write a fixture, or --agents agents.toml to replay")
    if out is not None:
        write_fixture(out, history, run, session_id=sid, run_id=run_id)
        stdout.print(f"wrote run {run_id} ({len(run)} events) of {sid} to {out}", markup=False)
    if agents is None:
        return
    sidecar = load_or_exit(err, agents)
    try:
        built: Any = sidecar.build(agent)
        report = asyncio.run(
            replay_events(history, run, built, ctx=sidecar.context(), run_id=run_id)
        )
    except ConfigError as exc:
        fail(err, str(exc))
    if report.divergence is None:
        stdout.print(f"replayed run {run_id}: {len(run)} events, identical", markup=False)
        return
    stdout.print(str(report.divergence), markup=False)
    if report.error:
        stdout.print(f"  the replayed run failed: {report.error}", markup=False)
    raise typer.Exit(EXIT_FAILED)
