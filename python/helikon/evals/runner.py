""":class:`EvalRun`: run an agent over a dataset, score every case, build the report."""

from __future__ import annotations

import asyncio
import inspect
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from helikon.core.agent import Agent
from helikon.core.context import RunConfig, RunContext
from helikon.core.events import (
    AgentEvent,
    AgentUpdated,
    MessageOutput,
    RunCompleted,
    RunFailed,
    RunStarted,
    ToolCallItem,
)
from helikon.core.items import text_of
from helikon.errors import ConfigError
from helikon.evals.dataset import EvalCase, EvalDataset
from helikon.evals.errors import TraceSinkError
from helikon.evals.evaluator import CaseOutcome, Evaluator, Score
from helikon.evals.report import CaseResult, EvalReport, EvaluatorResult
from helikon.evals.sinks.base import TraceSink
from helikon.runtimes.runner import Runner
from helikon.sessions import MemorySession

__all__ = ["AgentFactory", "CtxFactory", "EvalRun"]

AgentFactory = Callable[[EvalCase], Agent | Awaitable[Agent]]
"""Builds a fresh agent for one case (select a per-case MockModel script by ``case.id``)."""
CtxFactory = Callable[[EvalCase], RunContext[Any]]
"""Builds the :class:`RunContext` for one case."""

_RUN_ID = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


class EvalRun:
    """Runs every case of ``dataset`` through an agent and scores it with ``evaluators``.

    Each case runs on a fresh :class:`~helikon.sessions.MemorySession` through ``runner``
    (default :class:`~helikon.Runner`) with ``ctx_factory(case)`` (default: a fresh
    ephemeral context). Up to ``concurrency`` cases run at once (default 1: sequential);
    results come back in dataset order either way. When the whole run is done, every sink
    records the report, in dataset order.

    Failures stay with their case: an agent factory or run that fails makes that case's
    ``error`` (no evaluator runs on it) and an evaluator that raises makes that evaluator's
    error for that case; the other cases and evaluators are unaffected.

    Give either ``agent`` (shared by every case: only for stateless or live agents) or
    ``agent_factory`` (a fresh agent per case; use it whenever the model is a
    :class:`~helikon.testing.MockModel`, which pops scripts and so would depend on the
    order cases run in).

    Args:
        dataset: the cases.
        evaluators: scorers, with distinct ``name``\\ s.
        agent: one agent for every case.
        agent_factory: ``fn(case) -> Agent`` (or an awaitable of one), called per case.
        ctx_factory: ``fn(case) -> RunContext`` for runs that need user context.
        runner: anything with the :meth:`helikon.Runner.run_streamed` signature.
        run_config: the runs' :class:`RunConfig` (default: each agent's own).
        concurrency: how many cases run at once (>= 1).
        sinks: :class:`TraceSink`\\ s that record the finished run.
        run_id: the run's id (letters, digits, ``_.-``); a random hex id by default.

    Raises:
        ConfigError: neither or both of ``agent`` / ``agent_factory``; an evaluator without
            ``name`` / ``evaluate``; two evaluators with one name; ``concurrency`` < 1; a
            bad ``run_id``; a sink without ``record``.

    Example:
        >>> from helikon import Agent
        >>> from helikon.evals import EvalDataset, ExactMatch
        >>> from helikon.testing import MockModel, Text
        >>> ds = EvalDataset.from_jsonl_str('{"id": "hi", "input": "hi", "expected": "hello"}')
        >>> def build(case):
        ...     return Agent(name="a", model=MockModel([[Text("hello")]]))
        >>> run = EvalRun(dataset=ds, evaluators=[ExactMatch()], agent_factory=build)
        >>> run.run_sync().passed()
        True
    """

    def __init__(
        self,
        *,
        dataset: EvalDataset | Sequence[EvalCase],
        evaluators: Sequence[Evaluator],
        agent: Agent | None = None,
        agent_factory: AgentFactory | None = None,
        ctx_factory: CtxFactory | None = None,
        runner: Any = None,
        run_config: RunConfig | None = None,
        concurrency: int = 1,
        sinks: Sequence[TraceSink] = (),
        run_id: str | None = None,
    ) -> None:
        self.dataset = dataset if isinstance(dataset, EvalDataset) else EvalDataset(dataset)
        if (agent is None) == (agent_factory is None):
            raise ConfigError(
                "EvalRun needs exactly one of agent=... (shared by every case) or "
                "agent_factory=lambda case: Agent(...) (fresh per case; use it with MockModel)"
            )
        if agent is not None and not isinstance(agent, Agent):
            raise ConfigError(f"EvalRun(agent=...) must be an Agent, got {type(agent).__name__}")
        if agent_factory is not None and not callable(agent_factory):
            raise ConfigError("EvalRun(agent_factory=...) must be a function fn(case) -> Agent")
        self.evaluators = list(evaluators)
        names: set[str] = set()
        for i, ev in enumerate(self.evaluators):
            name = getattr(ev, "name", None)
            if not isinstance(name, str) or not callable(getattr(ev, "evaluate", None)):
                raise ConfigError(
                    f"EvalRun(evaluators=...): evaluators[{i}] ({type(ev).__name__}) is not an "
                    "Evaluator: it needs a str `name` and an async `evaluate(case, outcome)`"
                )
            if name in names:
                raise ConfigError(f"EvalRun(evaluators=...): two evaluators are named {name!r}")
            names.add(name)
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ConfigError(f"EvalRun(concurrency=...) must be an int >= 1, got {concurrency!r}")
        run_id = run_id if run_id is not None else uuid.uuid4().hex
        if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
            raise ConfigError(
                f"EvalRun(run_id=...) must be 1-128 letters, digits, '_', '.' or '-', got "
                f"{run_id!r}"
            )
        self.sinks = list(sinks)
        for i, sink in enumerate(self.sinks):
            if not callable(getattr(sink, "record", None)):
                raise ConfigError(
                    f"EvalRun(sinks=...): sinks[{i}] ({type(sink).__name__}) has no "
                    "record(report) method"
                )
        self.run_id = run_id
        self.concurrency = concurrency
        self._agent = agent
        self._factory = agent_factory
        self._ctx_factory = ctx_factory
        self._runner = runner if runner is not None else Runner()
        self._run_config = run_config

    async def run(self) -> EvalReport:
        """Run every case, then record the report in every sink.

        Raises:
            TraceSinkError: a sink failed; ``.report`` still holds every result.
        """
        started = datetime.now(UTC)
        gate = asyncio.Semaphore(self.concurrency)
        results: list[CaseResult | None] = [None] * len(self.dataset)

        async def one(index: int, case: EvalCase) -> None:
            async with gate:
                results[index] = await self._case(index, case)

        async with asyncio.TaskGroup() as group:
            for index, case in enumerate(self.dataset):
                group.create_task(one(index, case))
        report = EvalReport(
            run_id=self.run_id,
            started_at=started,
            finished_at=datetime.now(UTC),
            evaluators=[ev.name for ev in self.evaluators],
            cases=[r for r in results if r is not None],
        )
        for sink in self.sinks:
            try:
                await sink.record(report)
            except Exception as exc:
                raise TraceSinkError(
                    f"could not record run {self.run_id}: {type(exc).__name__}: {exc}",
                    report=report,
                    sink=type(sink).__name__,
                ) from exc
        return report

    def run_sync(self) -> EvalReport:
        """:meth:`run` for synchronous code (not from inside an event loop).

        Raises:
            TraceSinkError: as :meth:`run`.
        """
        return asyncio.run(self.run())

    async def _case(self, index: int, case: EvalCase) -> CaseResult:
        start = time.perf_counter()
        session = MemorySession()
        events: list[AgentEvent] = []
        error: str | None = None
        try:
            agent = await self._agent_for(case)
            ctx = self._ctx_factory(case) if self._ctx_factory is not None else None
            stream: Any = self._runner.run_streamed(
                agent, case.input, session=session, ctx=ctx, run_config=self._run_config
            )
            try:
                async for ev in stream:
                    events.append(ev)
            finally:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:
                    await aclose()
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        terminal = events[-1] if events else None
        if error is None and isinstance(terminal, RunFailed):
            kind = terminal.error.get("kind", "Other")
            error = terminal.message if kind == "Other" else f"{kind}: {terminal.message}"
        elif error is None and not isinstance(terminal, RunCompleted):
            error = "the run ended without a terminal event"
        session_events = await session.events()
        if error is not None:
            return CaseResult(
                index=index,
                case=case,
                error=error,
                duration_ms=_ms(start),
                session_events=session_events,
            )
        assert isinstance(terminal, RunCompleted)
        outcome = CaseOutcome(
            final_response=_final_text(events),
            tool_calls=[ev.item for ev in events if isinstance(ev, ToolCallItem)],
            agent=_last_agent(events),
            usage=terminal.usage,
            events=events,
        )
        scored = [await _evaluate(ev, case, outcome) for ev in self.evaluators]
        return CaseResult(
            index=index,
            case=case,
            outcome=outcome,
            results=scored,
            duration_ms=_ms(start),
            session_events=session_events,
        )

    async def _agent_for(self, case: EvalCase) -> Agent:
        if self._factory is None:
            assert self._agent is not None
            return self._agent
        made = self._factory(case)
        if inspect.isawaitable(made):
            made = await made
        if not isinstance(made, Agent):
            raise ConfigError(f"agent_factory returned {type(made).__name__}, not an Agent")
        return made


async def _evaluate(ev: Evaluator, case: EvalCase, outcome: CaseOutcome) -> EvaluatorResult:
    try:
        score = await ev.evaluate(case, outcome)
    except Exception as exc:
        return EvaluatorResult(evaluator=ev.name, error=f"{type(exc).__name__}: {exc}")
    if not isinstance(score, Score):
        return EvaluatorResult(
            evaluator=ev.name, error=f"evaluate() returned {type(score).__name__}, not a Score"
        )
    return EvaluatorResult(evaluator=ev.name, score=score)


def _final_text(events: list[AgentEvent]) -> str:
    for ev in reversed(events):
        if isinstance(ev, MessageOutput):
            return text_of(ev.item.content)
    return ""


def _last_agent(events: list[AgentEvent]) -> str:
    for ev in reversed(events):
        if isinstance(ev, RunStarted | AgentUpdated):
            return ev.agent
    return ""


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)
