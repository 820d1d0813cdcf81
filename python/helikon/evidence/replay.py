"""Replay a recorded run with no model and no tool called, and report the first divergence.

:func:`replay` takes one run of a session log (see :mod:`helikon.evidence.runs`) and runs
the current code of ``agent`` over it:

* the model is a scripted model serving the recorded model turns, in order (a turn is the
  run of ``assistant_message`` and ``tool_called`` events between tool results);
* each of the agent's tools is replaced by one that returns the recorded result of the call
  with the same call id (an error result raises :class:`~helikon.errors.ToolError` with its
  text); nothing real runs, and no network is used;
* the run starts from the log's history before the run (in a :class:`MemorySession`: the
  recorded session is only read) with the run's recorded input.

The events the replay records are then compared, one by one, with the recorded ones
(timestamps and the providers' opaque ``provider_data`` left out). The permission pipeline,
hooks and guardrails are the current ones: a changed policy, a tool the code no longer has,
different arguments or an extra model turn all show as a :class:`Divergence` naming the
first differing event.

A run can be written to a self-contained JSON fixture (:func:`write_fixture`, or
``helikon replay SESSION_URL RUN_ID --out tests/regressions/NAME.json``) and replayed from it
in a test (:func:`replay_fixture`).

Not replayed (:class:`~helikon.errors.ConfigError` names the reason): a run that resumes a
paused run, and a run with a handoff (each agent would need its own recorded turns).
Recorded reasoning and ``provider_data`` are not served back.

Example:
    >>> import asyncio
    >>> from helikon import Agent
    >>> from helikon.runtimes import Runner
    >>> from helikon.sessions import MemorySession
    >>> from helikon.testing import MockModel, Text
    >>> session = MemorySession()
    >>> agent = Agent(name="a", model=MockModel([[Text("hi")]]))
    >>> _ = asyncio.run(Runner().run(agent, "hello", session=session))
    >>> asyncio.run(replay(session, 0, agent)).ok
    True
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from helikon.core.context import RunContext, ToolContext
from helikon.core.items import TextPart, UserMessage
from helikon.core.tool import Tool, ToolEffect, ToolOutput
from helikon.errors import ConfigError, RunError, ToolError
from helikon.evidence.runs import find_run
from helikon.providers.scripted.model import MockModel
from helikon.providers.scripted.script import Call, Step, Text
from helikon.runtimes.runner import Runner
from helikon.sessions.events import (
    AssistantMessageEvent,
    SessionEvent,
    ToolCalled,
    ToolReturned,
    UserMessageEvent,
    event_from_json,
    event_to_json,
)
from helikon.sessions.memory import MemorySession
from helikon.sessions.protocol import Session

__all__ = [
    "FIXTURE_FORMAT",
    "Divergence",
    "ReplayReport",
    "load_fixture",
    "replay",
    "replay_events",
    "replay_fixture",
    "write_fixture",
]

FIXTURE_FORMAT = "helikon-replay/1"
"""The ``format`` key of a replay fixture."""

_IGNORED = {"ts", "provider_data"}
_SHORT = "script exhausted"  # the scripted model's words when asked for one turn too many


def comparable(event: SessionEvent) -> dict[str, Any]:
    """An event as replay compares it: its JSON form without ``ts`` and ``provider_data``."""
    data: dict[str, Any] = json.loads(event_to_json(event))
    return {k: v for k, v in data.items() if k not in _IGNORED}


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first event where the replay differs from the recording.

    Attributes:
        step: its position in the run (0 is the run's first event).
        sequence: its position in the recorded log (``run_id + step``).
        expected: the recorded event (``None``: the replay recorded more events).
        got: the replayed event (``None``: the replay stopped short).
    """

    step: int
    sequence: int
    expected: dict[str, Any] | None
    got: dict[str, Any] | None

    def __str__(self) -> str:
        def show(e: dict[str, Any] | None) -> str:
            return "nothing" if e is None else json.dumps(e, sort_keys=True, ensure_ascii=False)

        lines = [f"replay diverged at step {self.step} of the run (event {self.sequence}):"]
        lines.append(f"  recorded: {show(self.expected)}")
        lines.append(f"  replayed: {show(self.got)}")
        if self.expected is not None and self.got is not None:
            keys = sorted(set(self.expected) | set(self.got))
            differ = [k for k in keys if self.expected.get(k) != self.got.get(k)]
            lines.append(f"  differs in: {', '.join(differ)}")
        return "\n".join(lines)


@dataclass(slots=True)
class ReplayReport:
    """What a replay did.

    Attributes:
        run_id: the replayed run.
        steps: how many events the run recorded.
        divergence: the first difference, ``None`` when the replay matches.
        events: the events the replay recorded.
        error: the replayed run's error message when it failed (e.g. the code asked the
            model for a turn the recording does not have).
    """

    run_id: int
    steps: int
    divergence: Divergence | None
    events: list[SessionEvent] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        """The replay recorded exactly the recorded events."""
        return self.divergence is None

    def check(self) -> None:
        """Raise ``AssertionError`` with the divergence when the replay differs (for tests)."""
        if self.divergence is not None:
            extra = f"\n  the replayed run failed: {self.error}" if self.error else ""
            raise AssertionError(f"{self.divergence}{extra}")


class _RecordedTool:
    """A tool answering each call with the recorded result of the same call id."""

    def __init__(self, tool: Tool, results: dict[str, ToolReturned]) -> None:
        self.name: str = tool.name
        self.description: str = tool.description
        self.parameters: dict[str, Any] = tool.parameters
        self.effect: ToolEffect = tool.effect
        self._results = results

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        recorded = self._results.get(ctx.call_id)
        if recorded is None:
            raise ToolError(f"replay: the recording has no result for call {ctx.call_id!r}")
        if recorded.is_error:
            raise ToolError("".join(p.text for p in recorded.content if isinstance(p, TextPart)))
        return ToolOutput(content=list(recorded.content))


def _turns(run: Sequence[SessionEvent]) -> list[list[Step]]:
    """The recorded model turns: each run of assistant messages and tool calls."""
    turns: list[list[Step]] = []
    current: list[Step] = []
    for event in run:
        if isinstance(event, AssistantMessageEvent):
            current.append(Text("".join(p.text for p in event.content if isinstance(p, TextPart))))
        elif isinstance(event, ToolCalled):
            current.append(Call(event.call_id, event.name, event.args))
        elif current and not isinstance(event, UserMessageEvent):
            turns.append(current)
            current = []
    if current:
        turns.append(current)
    return turns


def _replayable(agent: Any, run: Sequence[SessionEvent]) -> None:
    kinds = {e.type for e in run}
    if "approvals_answered" in kinds:
        raise ConfigError(
            "replay: this run resumes a paused run, which replay does not cover yet; replay "
            "the run that paused"
        )
    if "handoff_occurred" in kinds:
        raise ConfigError(
            "replay: this run hands off to another agent, which replay does not cover yet"
        )
    if not hasattr(agent, "tools") or not hasattr(agent, "model"):
        raise ConfigError(f"replay(agent=...) must be an Agent, got {type(agent).__name__}")


async def replay_events(
    history: Sequence[SessionEvent],
    run: Sequence[SessionEvent],
    agent: Any,
    *,
    ctx: RunContext[Any] | None = None,
    run_id: int | None = None,
) -> ReplayReport:
    """Replay the recorded ``run`` (its events) after ``history`` with ``agent``'s code.

    ``ctx`` carries the permission configuration, hooks and redaction the replay runs under
    (default: :meth:`RunContext.ephemeral`).

    Raises:
        ConfigError: the run cannot be replayed (see the module doc).
    """
    _replayable(agent, run)
    results = {e.call_id: e for e in run if isinstance(e, ToolReturned)}
    double = copy.copy(agent)
    double.model = MockModel(_turns(run), model="replay")
    double.tools = [_RecordedTool(t, results) for t in agent.tools]
    if hasattr(double, "_native_configs"):
        double._native_configs = {}
    inputs = []
    for event in run:
        if not isinstance(event, UserMessageEvent):
            break
        inputs.append(UserMessage(content=list(event.content)))
    session = MemorySession()
    if history:
        await session.append(list(history))
    error = None
    try:
        await Runner().run(double, inputs, session=session, ctx=ctx)
    except RunError as exc:
        error = str(exc)
    got = (await session.events())[len(history) :]
    start = run_id if run_id is not None else len(history)
    divergence = _first_difference(run, got, start)
    if divergence is None and error is not None and _SHORT in error:
        turns = len(_turns(run))
        divergence = Divergence(
            len(got),
            start + len(got),
            None,
            {
                "type": "model_turn",
                "detail": f"the code asked the model for more turns than the {turns} recorded",
            },
        )
    return ReplayReport(start, len(run), divergence, got, error)


def _first_difference(
    recorded: Sequence[SessionEvent], replayed: Sequence[SessionEvent], start: int
) -> Divergence | None:
    for step in range(max(len(recorded), len(replayed))):
        want = comparable(recorded[step]) if step < len(recorded) else None
        have = comparable(replayed[step]) if step < len(replayed) else None
        if want != have:
            return Divergence(step, start + step, want, have)
    return None


async def replay(
    session: Session, run_id: int, agent: Any, *, ctx: RunContext[Any] | None = None
) -> ReplayReport:
    """Replay the run of ``session`` that starts at event ``run_id`` (see
    :func:`~helikon.evidence.runs.runs_of`) with ``agent``'s current code.

    Raises:
        ConfigError: no run starts at ``run_id``, or the run cannot be replayed.
        SessionError: the session could not be read.
    """
    events = await session.events()
    found = find_run(events, run_id)
    return await replay_events(
        events[: found.run_id], events[found.run_id : found.end], agent, ctx=ctx, run_id=run_id
    )


def write_fixture(
    path: str | PathLike[str],
    history: Sequence[SessionEvent],
    run: Sequence[SessionEvent],
    *,
    session_id: str = "",
    run_id: int = 0,
) -> None:
    """Write a self-contained replay fixture (JSON: the history and the run's events)."""
    doc = {
        "format": FIXTURE_FORMAT,
        "session_id": session_id,
        "run_id": run_id,
        "history": [json.loads(event_to_json(e)) for e in history],
        "run": [json.loads(event_to_json(e)) for e in run],
    }
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def load_fixture(path: str | PathLike[str]) -> tuple[list[SessionEvent], list[SessionEvent], int]:
    """``(history, run, run_id)`` from a fixture :func:`write_fixture` wrote.

    Raises:
        ConfigError: the file is not a replay fixture (the message names what is wrong).
    """
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"replay fixture {str(path)!r}: cannot read it: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != FIXTURE_FORMAT:
        raise ConfigError(
            f"replay fixture {str(path)!r}: not a {FIXTURE_FORMAT} fixture (its 'format' key "
            "must be that; write one with `helikon replay SESSION_URL RUN_ID --out FILE`)"
        )
    try:
        history = [event_from_json(json.dumps(e)) for e in doc["history"]]
        run = [event_from_json(json.dumps(e)) for e in doc["run"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"replay fixture {str(path)!r}: a bad event: {exc}") from exc
    return history, run, int(doc.get("run_id", len(history)))


async def replay_fixture(
    path: str | PathLike[str], agent: Any, *, ctx: RunContext[Any] | None = None
) -> ReplayReport:
    """Replay a fixture's run with ``agent`` (in a test: ``(await replay_fixture(p,
    agent)).check()``).

    Raises:
        ConfigError: the file is not a fixture, or the run cannot be replayed.
    """
    history, run, run_id = load_fixture(path)
    return await replay_events(history, run, agent, ctx=ctx, run_id=run_id)
