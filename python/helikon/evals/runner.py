""":class:`EvalRun`: run an agent over a dataset, score every case, build the report."""

from __future__ import annotations

import asyncio
import inspect
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from helikon.core.context import RunConfig, RunContext
from helikon.core.decisions import decision_from_json
from helikon.core.events import (
    AgentEvent,
    AgentUpdated,
    MessageOutput,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunStarted,
    ToolCallItem,
)
from helikon.core.items import text_of
from helikon.core.runnable import Runnable, check_runnable
from helikon.errors import ConfigError, TraceSinkError
from helikon.evals.dataset import EvalCase, EvalDataset
from helikon.evals.evaluator import CaseOutcome, Evaluator, Score
from helikon.evals.report import CaseResult, EvalReport, EvaluatorResult
from helikon.evals.sinks.base import TraceSink
from helikon.runtimes.runner import Runner
from helikon.sessions import MemorySession

__all__ = ["AgentFactory", "CtxFactory", "EvalRun"]

AgentFactory = Callable[[EvalCase], Runnable | Awaitable[Runnable]]
"""Builds a fresh agent (an Agent or a pattern from :mod:`helikon.agents`) for one case
(select a per-case MockModel script by ``case.id``)."""
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
    order cases run in). The agent is anything that runs like an Agent: an
    :class:`~helikon.Agent` or a pattern from :mod:`helikon.agents` (``SequentialAgent``...).

    Args:
        dataset: the cases: an :class:`EvalDataset` (load a file with
            :meth:`EvalDataset.from_jsonl_path`) or a list of :class:`EvalCase`.
        evaluators: a list of scorers, with distinct ``name``\\ s and ``async def evaluate``.
        agent: one agent (or pattern) for every case.
        agent_factory: ``fn(case) -> Agent`` or a pattern (or an awaitable of one), called
            per case.
        ctx_factory: ``fn(case) -> RunContext`` for runs that need user context.
        runner: anything with the :meth:`helikon.Runner.run_streamed` signature.
        run_config: the runs' :class:`RunConfig` (default: each agent's own).
        concurrency: how many cases run at once (>= 1).
        sinks: :class:`TraceSink`\\ s that record the finished run.
        run_id: the run's id (letters, digits, ``_.-``); a random hex id by default.
        on_case: called with each :class:`CaseResult` as soon as its case is scored (in
            the order cases finish), e.g. for a progress display or to keep the finished
            cases when the run is interrupted.

    Raises:
        ConfigError: an argument of the wrong type (e.g. a file path as ``dataset``); neither
            or both of ``agent`` / ``agent_factory``; an evaluator without ``name`` or an
            ``async def evaluate``; two evaluators with one name; ``concurrency`` < 1; a bad
            ``run_id``; a sink without ``record``.

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
        dataset: EvalDataset | Iterable[EvalCase],
        evaluators: Sequence[Evaluator],
        agent: Runnable | None = None,
        agent_factory: AgentFactory | None = None,
        ctx_factory: CtxFactory | None = None,
        runner: Any = None,
        run_config: RunConfig | None = None,
        concurrency: int = 1,
        sinks: Sequence[TraceSink] = (),
        run_id: str | None = None,
        on_case: Callable[[CaseResult], None] | None = None,
    ) -> None:
        self.dataset = _check_dataset(dataset)
        if (agent is None) == (agent_factory is None):
            raise ConfigError(
                "EvalRun needs exactly one of agent=... (shared by every case) or "
                "agent_factory=lambda case: Agent(...) (fresh per case; use it with MockModel)"
            )
        if agent is not None:
            check_runnable("EvalRun(agent=...)", agent)
        if agent_factory is not None and not callable(agent_factory):
            raise ConfigError(
                "EvalRun(agent_factory=...) must be a function fn(case) -> Agent (or a pattern), "
                f"got {type(agent_factory).__name__}"
            )
        if ctx_factory is not None and not callable(ctx_factory):
            raise ConfigError(
                "EvalRun(ctx_factory=...) must be a function fn(case) -> RunContext, got "
                f"{type(ctx_factory).__name__}"
            )
        if runner is not None and not callable(getattr(runner, "run_streamed", None)):
            raise ConfigError(
                f"EvalRun(runner=...) has no run_streamed(agent, input, ...) method: got "
                f"{type(runner).__name__}; pass a helikon.Runner (or leave it out)"
            )
        if run_config is not None and not isinstance(run_config, RunConfig):
            raise ConfigError(
                f"EvalRun(run_config=...) must be a RunConfig, got {type(run_config).__name__}"
            )
        self.evaluators = _check_evaluators(evaluators)
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ConfigError(f"EvalRun(concurrency=...) must be an int >= 1, got {concurrency!r}")
        run_id = run_id if run_id is not None else uuid.uuid4().hex
        if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
            raise ConfigError(
                f"EvalRun(run_id=...) must be 1-128 letters, digits, '_', '.' or '-', got "
                f"{run_id!r}"
            )
        self.sinks = _check_list("sinks", sinks, "sinks=[SqliteTraceSink(path)]")
        for i, sink in enumerate(self.sinks):
            if not callable(getattr(sink, "record", None)):
                raise ConfigError(
                    f"EvalRun(sinks=...): sinks[{i}] ({type(sink).__name__}) has no "
                    "record(report) method"
                )
        if on_case is not None and not callable(on_case):
            raise ConfigError(
                f"EvalRun(on_case=...) must be a function fn(result), got {type(on_case).__name__}"
            )
        self.run_id = run_id
        self.concurrency = concurrency
        self._on_case = on_case
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
                result = results[index] = await self._case(index, case)
            if self._on_case is not None:
                self._on_case(result)

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
            RuntimeError: called from a running event loop (use ``await run.run()``).
            TraceSinkError: as :meth:`run`.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass  # no loop running: the normal case
        else:
            raise RuntimeError(
                "EvalRun.run_sync() cannot run inside an event loop; use await EvalRun.run()"
            )
        # outside the except block, so a failure does not chain the RuntimeError above;
        # the coroutine is only created here, so the error above leaves none unawaited
        return asyncio.run(self.run())

    async def _case(self, index: int, case: EvalCase) -> CaseResult:
        start = time.perf_counter()
        session = MemorySession()
        events: list[AgentEvent] = []
        error: str | None = None
        try:
            agent = await self._agent_for(case)
            ctx = self._ctx_factory(case) if self._ctx_factory is not None else None
            if case.decisions is not None:
                await self._decided(agent, case, session, ctx, events)
            else:
                stream: Any = self._runner.run_streamed(
                    agent, case.input, session=session, ctx=ctx, run_config=self._run_config
                )
                await _drain(stream, events)
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

    async def _decided(
        self,
        agent: Runnable,
        case: EvalCase,
        session: MemorySession,
        ctx: RunContext[Any] | None,
        events: list[AgentEvent],
    ) -> None:
        """Run a case with scripted approval answers: every pause is answered from
        ``case.decisions`` and resumed (the events of every leg go to ``events``).

        Raises:
            ConfigError: the runner cannot resume, or a waiting call has no answer in the
                case (it fails: an ask is never approved by default).
        """
        resume = getattr(self._runner, "resume_streamed", None)
        if not callable(resume):
            raise ConfigError(
                f"case {case.id!r} has decisions but the runner {type(self._runner).__name__} "
                "has no resume_streamed(...); use helikon.Runner"
            )
        own = self._run_config or getattr(agent, "run_config", None) or RunConfig()
        config = replace(own, approval="defer")
        answers = {k: decision_from_json(v) for k, v in (case.decisions or {}).items()}
        stream: Any = self._runner.run_streamed(
            agent, case.input, session=session, ctx=ctx, run_config=config
        )
        await _drain(stream, events)
        while events and isinstance(paused := events[-1], RunInterrupted):
            events.pop()
            state = paused.state
            missing = [p.call_id for p in state.pending if p.call_id not in answers]
            if missing:
                raise ConfigError(
                    f"call(s) {', '.join(missing)} wait for approval and case {case.id!r} has "
                    f'no decision for them; add e.g. "decisions": {{"{missing[0]}": '
                    '{"decision": "approve"}}'
                )
            decisions = {p.call_id: answers[p.call_id] for p in state.pending}
            stream = resume(
                agent, state, decisions=decisions, session=session, ctx=ctx, run_config=config
            )
            await _drain(stream, events)

    async def _agent_for(self, case: EvalCase) -> Runnable:
        if self._factory is None:
            assert self._agent is not None
            return self._agent
        made: Any = self._factory(case)
        if inspect.isawaitable(made):
            made = await made
        return check_runnable(f"EvalRun(agent_factory=...) returned {type(made).__name__}", made)


async def _drain(stream: Any, events: list[AgentEvent]) -> None:
    try:
        async for ev in stream:
            events.append(ev)
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


def _check_list(arg: str, value: Any, example: str) -> list[Any]:
    if isinstance(value, str | bytes | Path | Mapping) or not isinstance(value, Iterable):
        raise ConfigError(
            f"EvalRun({arg}=...) must be a list, got {type(value).__name__}; e.g. {example}"
        )
    return list(value)


def _check_dataset(dataset: Any) -> EvalDataset:
    if isinstance(dataset, EvalDataset):
        return dataset
    if isinstance(dataset, str | Path):
        raise ConfigError(
            f"EvalRun(dataset=...) got the path {str(dataset)!r}, not a dataset; load it first: "
            f"dataset=EvalDataset.from_jsonl_path({str(dataset)!r})"
        )
    if isinstance(dataset, bytes | Mapping) or not isinstance(dataset, Iterable):
        raise ConfigError(
            f"EvalRun(dataset=...) must be an EvalDataset (EvalDataset.from_jsonl_path(path)) "
            f"or a list of EvalCase, got {type(dataset).__name__}"
        )
    cases = list(dataset)
    for i, case in enumerate(cases):
        if not isinstance(case, EvalCase):
            raise ConfigError(
                f"EvalRun(dataset=...): dataset[{i}] is a {type(case).__name__}, not an "
                "EvalCase; pass EvalDataset.from_jsonl_path(path) or a list of "
                "EvalCase(id=..., input=...)"
            )
    return EvalDataset(cases)


def _check_evaluators(evaluators: Any) -> list[Evaluator]:
    checked: list[Evaluator] = _check_list("evaluators", evaluators, "evaluators=[ExactMatch()]")
    names: set[str] = set()
    for i, ev in enumerate(checked):
        where = f"EvalRun(evaluators=...): evaluators[{i}]"
        if isinstance(ev, type):
            raise ConfigError(
                f"{where} is the class {ev.__name__}, not an evaluator; pass an instance: "
                f"{ev.__name__}(...)"
            )
        name = getattr(ev, "name", None)
        evaluate = getattr(ev, "evaluate", None)
        if not isinstance(name, str) or not callable(evaluate):
            raise ConfigError(
                f"{where} ({type(ev).__name__}) is not an Evaluator: it needs a str `name` "
                "and an `async def evaluate(self, case, outcome) -> Score`"
            )
        if not inspect.iscoroutinefunction(evaluate):
            raise ConfigError(
                f"{where} ({type(ev).__name__}, name {name!r}): evaluate is a plain `def`; "
                "the run awaits it, so declare it `async def evaluate(self, case, outcome) "
                "-> Score`"
            )
        if name in names:
            raise ConfigError(f"EvalRun(evaluators=...): two evaluators are named {name!r}")
        names.add(name)
    return checked


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
