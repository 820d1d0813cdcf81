"""Approval pauses inside multi-agent patterns: what a paused pattern records, how it resumes.

A pattern run with ``RunConfig(approval="defer")`` passes the deferral on to its steps (with
no explicit ``run_config``, each step runs on its own config with ``approval="defer"``).
When a step pauses, the pattern stops starting new steps, lets the steps already running
end (a parallel branch or a graph node that finishes keeps its answer; one that fails fails
the pattern, closed: no waiting call ever ran), and ends with ``RunInterrupted`` carrying a
:class:`~helikon.RunState` whose

* ``pattern`` is the pattern's progress: ``kind``, ``done`` (finished steps' answers by
  key), ``usage`` (what the finished steps spent) and per kind ``iteration``/``index``/
  ``escalated`` (``LoopAgent``) or ``handoffs`` (``SwarmAgent``);
* ``steps`` holds, per step key, the state of every step that paused (an agent's or a
  nested pattern's); their waiting calls are all in ``pending``;
* ``agent_path`` runs from the pattern through the (first) paused step to the agent that
  asked; ``conversation`` is the pattern's input (later steps start from it).

:func:`prepare_resume` checks a state against the agent or pattern and the decisions
before anything runs, recursively, and returns the function that starts the resumed
stream: finished steps are not run again (their answers go back to ``ctx.state``), paused
steps continue where they asked, and the pattern goes on from there.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from helikon.core.agent import Agent
from helikon.core.context import RunConfig, RunContext
from helikon.core.decisions import Decision, check_decisions
from helikon.core.driver import resume_agent
from helikon.core.events import AgentEvent
from helikon.core.pause import check_paused, plan_resume
from helikon.core.resume_config import config_fields, resume_config
from helikon.core.run_state import RunState, config_fingerprint
from helikon.core.usage import Usage
from helikon.errors import ResumeRefused

__all__ = [
    "PatternPaused",
    "Resuming",
    "Starter",
    "check_pattern_state",
    "child_run_config",
    "pattern_state",
    "prepare_resume",
    "share_decisions",
]

Starter = Callable[[RunContext[Any]], AsyncIterator[AgentEvent]]
"""Starts a checked resume on a context (what :func:`prepare_resume` returns)."""


class PatternPaused(Exception):
    """Raised inside a pattern's ``_drive``: steps paused; the run ends ``RunInterrupted``."""

    def __init__(self, progress: dict[str, Any], steps: dict[str, RunState]) -> None:
        super().__init__(f"paused at {', '.join(steps)}")
        self.progress = progress
        self.steps = steps


@dataclass(slots=True)
class Resuming:
    """A pattern's resume: its progress at the pause and, per paused step key, the starter
    of that step's checked resume (taken, once, when the step runs again)."""

    progress: dict[str, Any]
    steps: dict[str, Starter] = field(default_factory=dict)
    remembered: dict[str, str] = field(default_factory=dict)
    """Answers remembered for the run at the pause (``RunState.remembered``)."""

    @property
    def done(self) -> dict[str, str]:
        """Finished steps' answers by key."""
        done = self.progress.get("done") or {}
        return {str(k): str(v) for k, v in done.items()}


class _Resumable(Protocol):
    name: str

    def prepare_resume(
        self, state: RunState, decisions: Mapping[str, Decision], run_config: RunConfig | None
    ) -> Starter: ...


def child_run_config(
    config: RunConfig, child_config: RunConfig | None, agent: Any
) -> RunConfig | None:
    """The run config a pattern's step runs under: the one passed to the pattern's run
    (without its timeout); else, when the pattern defers asks, the step's own config with
    ``approval="defer"``; else ``None`` (the step's own)."""
    if child_config is not None:
        return child_config
    if config.approval == "defer":
        own = getattr(agent, "run_config", None)
        return replace(own if isinstance(own, RunConfig) else RunConfig(), approval="defer")
    return None


def fingerprint(kind: str, name: str, shape: Any) -> str:
    """A digest of a pattern's kind, name and structure (its steps' keys and names)."""
    return config_fingerprint(name, json.dumps({"kind": kind, "shape": shape}, sort_keys=True))


def pattern_state(
    *,
    kind: str,
    name: str,
    shape: Any,
    items: list[Any],
    usage: Usage,
    paused: PatternPaused,
    run_config: RunConfig | None = None,
    remembered: dict[str, str] | None = None,
) -> RunState:
    """The :class:`RunState` of a pattern that paused (see the module doc); ``run_config``
    is the config passed to the pattern's run, if one was (a resume then uses it);
    ``remembered`` the answers remembered for the run (``remember=True``) so far.

    Raises:
        ResumeRefused: two paused steps wait on calls with the same id (the decisions could
            not tell them apart; the pattern fails instead of pausing).
    """
    pending = [p for sub in paused.steps.values() for p in sub.pending]
    ids = [p.call_id for p in pending]
    clash = sorted({i for i in ids if ids.count(i) > 1})
    if clash:
        raise ResumeRefused(
            f"steps of {kind} pattern {name!r} wait on calls sharing the id(s) "
            f"{', '.join(clash)}; decisions could not tell them apart (nothing that waits ran)"
        )
    spent = Usage()
    for sub in paused.steps.values():
        spent = spent + sub.usage
    first = next(iter(paused.steps.values()))
    progress = {"kind": kind, **paused.progress, "usage": _minus(usage, spent).model_dump()}
    return RunState(
        agent=name,
        agent_path=[name, *(first.agent_path or [first.agent])],
        config_fingerprint=fingerprint(kind, name, shape),
        loop_state={"state": "NeedsApproval", "pattern": kind},
        conversation=list(items),
        usage=usage,
        pending=pending,
        pattern=progress,
        steps=dict(paused.steps),
        run_config=config_fields(run_config) if run_config is not None else None,
        remembered={k: v for k, v in (remembered or {}).items() if v in ("approve", "deny")},  # type: ignore[misc]
    )


def check_pattern_state(kind: str, name: str, shape: Any, state: RunState) -> None:
    """Refuse a state that is not this pattern's pause.

    Raises:
        ResumeRefused: not a paused run, paused by another agent or kind of pattern, or the
            pattern's steps changed since (the message says which).
    """
    check_paused(state)
    if state.agent != name:
        raise ResumeRefused(
            f"the RunState was paused by {state.agent!r}; resume it with that agent or "
            f"pattern, not {name!r}"
        )
    if state.pattern is None or state.pattern.get("kind") != kind:
        was = "an agent" if state.pattern is None else f"a {state.pattern.get('kind')} pattern"
        raise ResumeRefused(f"the RunState of {name!r} was paused by {was}, not a {kind} pattern")
    if state.config_fingerprint != fingerprint(kind, name, shape):
        raise ResumeRefused(
            f"{kind} pattern {name!r} changed since the pause (its steps' keys or agents "
            "differ); resume with the pattern as it was when the run paused"
        )


def share_decisions(
    state: RunState, decisions: Mapping[str, Decision]
) -> dict[str, dict[str, Decision]]:
    """Per paused step key, the decisions answering that step's waiting calls.

    Raises:
        ResumeRefused: the decisions do not answer exactly the waiting calls.
    """
    checked = check_decisions(state.pending, decisions)
    return {
        key: {p.call_id: checked[p.call_id] for p in sub.pending}
        for key, sub in state.steps.items()
    }


def prepare_resume(
    agent: Any,
    state: RunState,
    decisions: Mapping[str, Decision],
    run_config: RunConfig | None,
) -> Starter:
    """Check ``state`` against ``agent`` (an Agent or a pattern) and ``decisions``, down
    through every paused step; nothing runs. Returns the function that starts the resumed
    stream on a context.

    Without ``run_config`` the config the run paused under is used
    (:func:`~helikon.core.resume_config.resume_config`), else the agent's (pattern's) own
    with ``approval="defer"``, so a later ask pauses again.

    Raises:
        ResumeRefused: as :func:`helikon.core.pause.plan_resume`, for the agent or any
            paused step; or ``agent`` cannot resume (not an Agent or a pattern).
    """
    if isinstance(agent, Agent):
        config = resume_config(state, run_config, replace(agent.run_config, approval="defer"))
        plan = plan_resume(agent, state, decisions, config.max_turns)

        def start(ctx: RunContext[Any]) -> AsyncIterator[AgentEvent]:
            return resume_agent(agent, plan, ctx, config)

        return start
    prepare = getattr(agent, "prepare_resume", None)
    if prepare is None:
        raise ResumeRefused(
            f"{type(agent).__name__} {getattr(agent, 'name', '')!r} cannot resume a paused run; "
            "resume with the Agent or pattern that paused"
        )
    resumable: _Resumable = agent
    return resumable.prepare_resume(state, decisions, run_config)


def _minus(a: Usage, b: Usage) -> Usage:
    """Field-wise ``a - b``, never below zero."""
    other = b.model_dump()
    return Usage.model_validate({k: max(0, v - other.get(k, 0)) for k, v in a.model_dump().items()})
