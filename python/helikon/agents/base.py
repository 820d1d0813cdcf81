"""What every multi-agent pattern shares: the :class:`Runnable` protocol and its base class.

A *runnable* is anything that runs like an :class:`~helikon.Agent`: it has a ``name``, a
``description`` and ``stream(input, ctx=None, *, run_config=None)``, an async iterator of
:data:`~helikon.AgentEvent` that starts with ``RunStarted`` and ends with exactly one
``RunCompleted`` or ``RunFailed``. An :class:`~helikon.Agent` is one, and so is every pattern
in :mod:`helikon.agents`, so patterns nest, run under :class:`~helikon.runtimes.Runner` and
wrap as :class:`~helikon.agents.AgentAsTool`.

:class:`PatternAgent` gives a pattern ``run`` / ``run_sync`` / ``typed_result`` and the
run frame: one ``RunStarted``, a child cancellation token (``RunConfig.timeout`` cancels it),
the children's usage summed into the one terminal event, and failures as ``RunFailed``.

A child runs on the caller's context with the pattern's token as its ``ctx.cancel`` and
``agent_depth + 1`` (checked against ``max_agent_depth``, like a handoff); ``ctx.state`` is
the same dict, so children see each other's results.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, cast

from helikon.agents.pause import (
    PatternPaused,
    Resuming,
    Starter,
    check_pattern_state,
    child_run_config,
    pattern_state,
    prepare_resume,
    share_decisions,
)
from helikon.core.cancel import CancellationToken
from helikon.core.context import RunConfig, RunContext
from helikon.core.decisions import Decision
from helikon.core.events import (
    AgentEvent,
    AgentUpdated,
    MessageOutput,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunStarted,
)
from helikon.core.items import AssistantMessage, Item, TextPart, text_of
from helikon.core.result import RunResult
from helikon.core.resume_config import resume_config
from helikon.core.run_state import RunState
from helikon.core.runnable import (
    AgentInput,
    Runnable,
    check_run_args,
    check_runnable,
    collect_run,
    input_items,
    run_blocking,
)
from helikon.core.usage import Usage
from helikon.errors import (
    AgentError,
    AgentOther,
    Cancelled,
    ConfigError,
    MaxAgentDepthExceeded,
    ResumeRefused,
    RunError,
    RunTimeout,
)

__all__ = [
    "ChildOutcome",
    "PatternAgent",
    "PatternFailed",
    "PatternRun",
    "Runnable",
    "agent_list",
    "check_runnable",
    "final_message",
    "run_child",
]


class PatternFailed(Exception):
    """Raised inside a pattern's ``_drive`` to end the run with ``RunFailed(error)``."""

    def __init__(self, error: AgentError | dict[str, Any]) -> None:
        super().__init__(str(error))
        self.error = error.to_dict() if isinstance(error, AgentError) else error


@dataclass(slots=True)
class ChildOutcome:
    """How one child run ended: its answer text, usage and error (``None`` on success)."""

    key: str
    name: str
    final_text: str = ""
    usage: Usage = field(default_factory=Usage)
    error: dict[str, Any] | None = None
    done: bool = False
    paused: RunState | None = None
    """The child's state when it paused for approval (``error`` stays ``None``)."""

    @property
    def failed(self) -> bool:
        return self.error is not None

    def describe_error(self) -> str:
        """``"kind: message"`` of the failure."""
        err = self.error or {}
        return f"{err.get('kind', 'Other')}: {err.get('message', '')}"


@dataclass(slots=True)
class PatternRun:
    """One run of a pattern: the children's context, the config and the usage so far."""

    ctx: RunContext[Any]
    """The context children run on: the pattern's token, ``agent_depth + 1``, shared state."""
    config: RunConfig
    child_config: RunConfig | None
    token: CancellationToken
    usage: Usage = field(default_factory=Usage)
    resuming: Resuming | None = None
    """Set when the run resumes a pause: the progress then, the paused steps' starters."""

    @property
    def state(self) -> dict[str, Any]:
        return self.ctx.state

    def config_for(self, agent: Any) -> RunConfig | None:
        """The run config ``agent`` runs under as a step (see
        :func:`helikon.agents.pause.child_run_config`)."""
        return child_run_config(self.config, self.child_config, agent)

    def restore_done(self) -> dict[str, str]:
        """On a resume: the finished steps' answers, written back to ``state``."""
        done = self.resuming.done if self.resuming is not None else {}
        self.state.update(done)
        return dict(done)

    def cancel_error(self) -> AgentError:
        """``RunTimeout`` when the pattern's deadline fired, else ``Cancelled``."""
        if self.token.reason == "timeout" and self.config.timeout is not None:
            return RunTimeout(self.config.timeout)
        return Cancelled()

    def fail_if_cancelled(self) -> None:
        if self.token.cancelled:
            raise PatternFailed(self.cancel_error())


async def run_child(
    run: PatternRun, key: str, agent: Runnable, items: list[Item], outcome: ChildOutcome
) -> AsyncIterator[AgentEvent]:
    """Run ``agent`` as a child: yield its events to forward, fill in ``outcome``.

    The child's ``RunStarted`` becomes ``AgentUpdated(agent=name)`` (the active agent
    changed); its terminal event is not forwarded: its usage is added to ``run.usage`` and
    its error, if any, lands in ``outcome``; a child that paused for approval leaves its
    state in ``outcome.paused``. A child stream that raises is a failure too. On a resume, a
    step that paused continues from its pause (once) instead of starting again.
    """
    start = run.resuming.steps.pop(key, None) if run.resuming is not None else None
    if start is not None:
        stream = start(run.ctx)
    else:
        stream = agent.stream(list(items), run.ctx, run_config=run.config_for(agent))
    try:
        async with contextlib.aclosing(stream):  # type: ignore[type-var]
            async for ev in stream:
                if isinstance(ev, RunStarted):
                    yield AgentUpdated(agent=agent.name)
                elif isinstance(ev, RunCompleted):
                    outcome.usage = ev.usage
                    break
                elif isinstance(ev, RunFailed):
                    outcome.usage = ev.usage
                    outcome.error = dict(ev.error)
                    break
                elif isinstance(ev, RunInterrupted):  # the waiting calls never ran
                    outcome.usage = ev.usage
                    outcome.paused = ev.state
                    break
                else:
                    if isinstance(ev, MessageOutput):
                        outcome.final_text = text_of(ev.item.content)
                    yield ev
            else:
                outcome.error = AgentOther(
                    f"agent {agent.name!r} ended its stream without a terminal event"
                ).to_dict()
    except (ConfigError, RunError) as exc:
        outcome.error = AgentOther(f"agent {agent.name!r}: {exc}").to_dict()
    except Exception as exc:  # a child bug must not escape the pattern's stream
        outcome.error = AgentOther(
            f"agent {agent.name!r} raised {type(exc).__name__}: {exc}"
        ).to_dict()
    finally:
        outcome.done = True
        run.usage = run.usage + outcome.usage
    if outcome.error is not None and run.token.cancelled:
        # a child cut short by the pattern's own deadline reports Cancelled; say why
        outcome.error = run.cancel_error().to_dict()


def agent_list(where: str, agents: Any) -> Iterable[Any]:
    """``agents`` when it is a list (any iterable but a string) of would-be agents.

    ``where`` names the argument in the message, e.g. ``"ParallelAgent(branches=...)"``;
    each item is checked by whoever adds it.

    Raises:
        ConfigError: ``agents`` is a string, bytes or not iterable.
    """
    if isinstance(agents, str | bytes) or not hasattr(agents, "__iter__"):
        raise ConfigError(f"{where} must be a list of agents, got {type(agents).__name__}")
    return cast("Iterable[Any]", agents)


def final_message(agent_name: str, text: str) -> list[AgentEvent]:
    """The pattern's own closing answer: ``AgentUpdated`` back to it, then the message."""
    return [
        AgentUpdated(agent=agent_name),
        MessageOutput(item=AssistantMessage(content=[TextPart(text=text)], agent=agent_name)),
    ]


class PatternAgent:
    """Base of the orchestration patterns: the run frame around :meth:`_drive`.

    Subclasses set ``name``, ``description`` and ``run_config`` and implement ``_drive``,
    which yields the events to forward and raises :class:`PatternFailed` to fail.

    Children get the ``run_config`` passed to the pattern's run call (its ``timeout`` is the
    pattern's own deadline, so it is removed); without one, each child uses its own default.
    """

    name: str
    description: str
    run_config: RunConfig
    kind: str = "pattern"
    """The pattern's kind in a paused :class:`~helikon.RunState` (``state.pattern["kind"]``)."""

    def _init_base(self, name: str, description: str, run_config: RunConfig | None) -> None:
        kind = type(self).__name__
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"{kind}(name=...) must be a non-empty string")
        if not isinstance(description, str):
            raise ConfigError(
                f"{kind}(description=...) must be a str, got {type(description).__name__}"
            )
        check_run_args(kind, None, run_config)
        self.name = name
        self.description = description
        self.run_config = run_config or RunConfig()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    # ------------------------------------------------------------------ subclass hook

    def _drive(self, items: list[Item], run: PatternRun) -> AsyncIterator[AgentEvent]:
        raise NotImplementedError

    def _precheck(self) -> AgentError | None:
        """A problem that fails the run before any child starts (``None``: none)."""
        return None

    def _children(self) -> list[tuple[str, Runnable]]:
        """The steps as ``(key, agent)`` pairs (a paused state names steps by key)."""
        raise NotImplementedError

    def _shape(self) -> Any:
        """What a resume must find unchanged: the steps' keys and names (and the kind's
        own structure, e.g. a graph's edges)."""
        return [[key, agent.name] for key, agent in self._children()]

    # ------------------------------------------------------------------ resuming

    def prepare_resume(
        self,
        state: RunState,
        decisions: Mapping[str, Decision],
        run_config: RunConfig | None = None,
    ) -> Starter:
        """Check a paused state of this pattern and ``decisions`` (down through every paused
        step; nothing runs); return the function that starts the resumed run on a context.
        ``Runner.resume(pattern, state, decisions=...)`` calls it.

        Raises:
            ResumeRefused: not this pattern's pause, its steps changed, a paused step's
                agent cannot resume it, or the decisions do not answer exactly the calls.
        """
        check_pattern_state(self.kind, self.name, self._shape(), state)
        if state.run_config is not None:  # the pattern ran on a given config: the same again
            run_config = resume_config(state, run_config, self.run_config)
        config = run_config or replace(self.run_config, approval="defer")
        child_config = None if run_config is None else replace(run_config, timeout=None)
        children = dict(self._children())
        starters: dict[str, Starter] = {}
        for key, share in share_decisions(state, decisions).items():
            child = children.get(key)
            if child is None:
                raise ResumeRefused(f"{self.kind} pattern {self.name!r} has no step {key!r}")
            sub = state.steps[key]
            starters[key] = prepare_resume(
                child, sub, share, child_run_config(config, child_config, child)
            )
        resuming = Resuming(dict(state.pattern or {}), starters, dict(state.remembered))
        items = list(state.conversation or [])

        def start(ctx: RunContext[Any]) -> AsyncIterator[AgentEvent]:
            return self._frame(items, ctx, config, resuming, explicit=run_config is not None)

        return start

    # ------------------------------------------------------------------ running

    def stream(
        self,
        input: AgentInput,
        ctx: RunContext[Any] | None = None,
        *,
        run_config: RunConfig | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run the pattern, yielding every event (``RunStarted`` first, one terminal last).

        Failures never raise out of the iterator; a bad ``input`` raises
        :class:`ConfigError` at the first iteration, as for an Agent.

        Raises:
            ConfigError: ``ctx`` is not a :class:`RunContext` or ``run_config`` not a
                :class:`RunConfig` (raised by this call).
        """
        check_run_args(f"{type(self).__name__}.stream", ctx, run_config)
        ctx = ctx if ctx is not None else RunContext.ephemeral(None)
        return self._frame(input, ctx, run_config)

    async def _frame(
        self,
        input: AgentInput,
        ctx: RunContext[Any],
        run_config: RunConfig | None,
        resuming: Resuming | None = None,
        *,
        explicit: bool = True,
    ) -> AsyncIterator[AgentEvent]:
        items = input_items(input)
        config = run_config or self.run_config
        child_config = (
            None if run_config is None or not explicit else replace(run_config, timeout=None)
        )
        yield RunStarted(agent=self.name)
        token = ctx.cancel.child()
        timer: asyncio.TimerHandle | None = None
        if config.timeout is not None:
            timer = asyncio.get_running_loop().call_later(config.timeout, token.cancel, "timeout")
        remembered = ctx.remembered_answers  # an outer pattern's: shared with it
        if remembered is None:
            remembered = {}
        if resuming is not None:
            remembered.update(resuming.remembered)
        sub = replace(
            ctx, cancel=token, agent_depth=ctx.agent_depth + 1, remembered_answers=remembered
        )
        run = PatternRun(sub, config, child_config, token, resuming=resuming)
        if resuming is not None:
            run.usage = Usage.model_validate(resuming.progress.get("usage") or {})
        finished = False
        try:
            problem = self._precheck()
            if problem is not None:
                raise PatternFailed(problem)
            if sub.agent_depth >= config.max_agent_depth:
                raise PatternFailed(MaxAgentDepthExceeded(config.max_agent_depth))
            async for ev in self._drive(items, run):
                yield ev
            finished = True
            yield RunCompleted(usage=run.usage)
        except PatternPaused as paused:
            finished = True
            try:
                state = pattern_state(
                    kind=self.kind,
                    name=self.name,
                    shape=self._shape(),
                    items=items,
                    usage=run.usage,
                    paused=paused,
                    run_config=run_config if explicit else None,
                    remembered=remembered,
                )
            except ResumeRefused as exc:
                yield RunFailed(error=AgentOther(str(exc)).to_dict(), usage=run.usage)
            else:
                yield RunInterrupted(state=state, usage=run.usage)
        except PatternFailed as exc:
            finished = True
            yield RunFailed(error=exc.error, usage=run.usage)
        except Exception as exc:  # a pattern bug must still end the stream with RunFailed
            finished = True
            yield RunFailed(
                error=AgentOther(f"internal error: {type(exc).__name__}: {exc}").to_dict(),
                usage=run.usage,
            )
        finally:
            if timer is not None:
                timer.cancel()
            if not finished:  # closed early: stop every child still running
                token.cancel()

    async def run(
        self,
        input: AgentInput,
        ctx: RunContext[Any] | None = None,
        *,
        run_config: RunConfig | None = None,
    ) -> RunResult[Any]:
        """Run to completion; ``final_output`` is the pattern's answer text.

        Raises:
            RunError: the run failed; ``.error`` is the cause.
            ConfigError: a bad argument (as :meth:`Agent.run <helikon.Agent.run>`).
        """
        return await collect_run(self, f"{type(self).__name__}.run", input, ctx, run_config)

    def typed_result(self, result: RunResult[Any]) -> RunResult[Any]:
        """``result`` unchanged: a pattern's answer is text (matches ``Agent.typed_result``)."""
        return result

    def run_sync(
        self,
        input: AgentInput,
        ctx: RunContext[Any] | None = None,
        *,
        run_config: RunConfig | None = None,
    ) -> RunResult[Any]:
        """:meth:`run` for synchronous code (starts an event loop; not from inside one).

        Raises:
            RunError: as :meth:`run`.
            ConfigError: as :meth:`run`.
            RuntimeError: called from a running event loop.
        """
        return run_blocking(self, f"{type(self).__name__}.run_sync", input, ctx, run_config)


class StepsPattern(PatternAgent):
    """A pattern over an ordered list of ``(key, agent)`` steps (Sequential, Loop)."""

    steps: list[tuple[str, Runnable]]

    def _init_steps(self, steps: Any) -> None:
        self.steps = []
        for agent in agent_list(f"{type(self).__name__}(steps=...)", steps):
            self.then(agent)

    def then(self, agent: Any) -> Any:
        """Add ``agent`` as the next step; its result goes to ``state[agent.name]``.

        Returns:
            ``self``, for chaining.

        Raises:
            ConfigError: ``agent`` does not run like an Agent, or a step already writes
                ``state[agent.name]`` (use :meth:`then_keyed`).
        """
        checked = check_runnable(f"{type(self).__name__}.then(...)", agent)
        self._check_new_key(checked.name, "then")
        self.steps.append((checked.name, checked))
        return self

    def _check_new_key(self, key: str, method: str) -> None:
        """Two steps writing one state key would overwrite each other's result silently.

        Raises:
            ConfigError: a step already writes ``state[key]``.
        """
        if any(k == key for k, _ in self.steps):
            raise ConfigError(
                f"{type(self).__name__} {self.name!r}: a step already writes state[{key!r}]; "
                f"give this one its own key: .then_keyed('{key}_2', agent)"
                if method == "then"
                else f"{type(self).__name__} {self.name!r}: a step already writes "
                f"state[{key!r}]; pick another key"
            )

    def then_keyed(self, key: str, agent: Any) -> Any:
        """Add ``agent`` as the next step, its result going to ``state[key]``.

        Returns:
            ``self``, for chaining.

        Raises:
            ConfigError: ``key`` is not a non-empty str or is taken by another step, or
                ``agent`` is not an agent.
        """
        if not isinstance(key, str) or not key:
            raise ConfigError(f"{type(self).__name__}.then_keyed(key, ...) needs a non-empty str")
        checked = check_runnable(f"{type(self).__name__}.then_keyed(...)", agent)
        self._check_new_key(key, "then_keyed")
        self.steps.append((key, checked))
        return self

    def _children(self) -> list[tuple[str, Runnable]]:
        return list(self.steps)

    def _precheck(self) -> AgentError | None:
        if not self.steps:
            kind = type(self).__name__
            return AgentOther(f"{kind} {self.name!r} has no steps; add one with .then(agent)")
        return None
