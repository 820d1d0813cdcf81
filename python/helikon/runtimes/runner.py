"""The asyncio :class:`Runner`: runs an agent with a session, recording the run.

Lifecycle of ``Runner.run(agent, input, session=...)``:

1. Load the session's conversation with :func:`~helikon.sessions.load_conversation` — a read
   failure is a hard error (:class:`~helikon.errors.SessionError`, nothing runs), and a log
   a crash left provider-invalid is repaired first (the repairs are appended as events).
2. Run the agent on history + input, observing every event with a
   :class:`~helikon.sessions.SessionRecorder`.
3. Before the terminal event reaches the caller, append the run's events (input first; a
   tool call interrupted mid-flight gets a synthesized error result, so the log always
   projects to a provider-valid conversation). The write is shielded from cancellation and
   best effort: a failure is logged and the run's result stands.

``RunConfig.timeout`` and cancellation follow the best-effort rule of the loop. Wrap the
model in :class:`~helikon.RetryingModel` for retries; the runner itself never retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any, Never

from helikon.agents.pause import prepare_resume
from helikon.core.agent import Agent
from helikon.core.compaction import Compaction
from helikon.core.context import RunConfig, RunContext
from helikon.core.decisions import Decision, edited_args
from helikon.core.event_stream import EventStream
from helikon.core.events import AgentEvent, RunCompleted, RunFailed, RunInterrupted
from helikon.core.items import Item
from helikon.core.pause import ItemTrail, with_edits
from helikon.core.result import RunResult, RunResultStreaming
from helikon.core.run_state import RunState
from helikon.core.runnable import AgentInput, Runnable, check_run_args, input_items
from helikon.core.spellings import refuse_other_spellings
from helikon.errors import AgentOther, ConfigError
from helikon.runtimes.either_call import either_call
from helikon.runtimes.resume import claim_resume, human_denials, session_position
from helikon.sessions import MemorySession, Session, SessionRecorder, load_conversation
from helikon.sessions.shield import complete

__all__ = ["Runner"]

log = logging.getLogger("helikon.runtimes")

_RUN_KWARGS = ("session", "ctx", "run_config")


class Runner:
    """Runs agents on sessions (the spec's ``TokioRunner``, for asyncio).

    The runner holds no state: ``Runner.run(agent, input)`` (the OpenAI Agents SDK's
    spelling) and ``Runner().run(agent, input)`` are the same call, and so are the other
    methods. ``context=`` is helikon's ``ctx=RunContext.ephemeral(obj)`` and ``max_turns=``
    is ``run_config=RunConfig(max_turns=N)``; either keyword is refused with that fix.

    Example:
        >>> import asyncio
        >>> from helikon import Agent
        >>> from helikon.sessions import MemorySession
        >>> from helikon.testing import MockModel, Text
        >>> session = MemorySession()
        >>> agent = Agent(name="a", model=MockModel([[Text("hi")], [Text("again")]]))
        >>> asyncio.run(Runner().run(agent, "hello", session=session)).final_output
        'hi'
        >>> [i.type for i in asyncio.run(session.snapshot())]
        ['user_message', 'assistant_message']
    """

    @either_call
    async def run(
        self,
        /,
        agent: Agent | Runnable,
        input: AgentInput,
        *,
        session: Session | None = None,
        ctx: RunContext[Any] | None = None,
        run_config: RunConfig | None = None,
        **unexpected: Never,
    ) -> RunResult[Any]:
        """Run to completion; see the module doc for the lifecycle.

        Raises:
            SessionError: the session could not be read before the run.
            RunError: the run failed (its events are still recorded in the session).
            ConfigError: ``session`` is not a :class:`~helikon.sessions.Session`, ``ctx``
                not a :class:`RunContext` or ``run_config`` not a :class:`RunConfig`
                (nothing runs); ``context=``, ``deps=`` or ``max_turns=`` (the message gives
                helikon's spelling).
        """
        _check_args("Runner.run", session, ctx, run_config, unexpected)
        stream = self.run_streamed(agent, input, session=session, ctx=ctx, run_config=run_config)
        result: RunResult[Any] = await RunResultStreaming(stream, agent=agent).collect()
        result._input = input_items(input)  # checked by the stream already
        return result  # typed by the answering agent's output_type in collect()

    @either_call
    def run_sync(
        self,
        /,
        agent: Agent | Runnable,
        input: AgentInput,
        *,
        session: Session | None = None,
        ctx: RunContext[Any] | None = None,
        run_config: RunConfig | None = None,
        **unexpected: Never,
    ) -> RunResult[Any]:
        """:meth:`run` for synchronous code: starts an event loop (not from inside one).

        Raises:
            RuntimeError: called from a running event loop (use ``await Runner.run(...)``).
            SessionError, RunError, ConfigError: as :meth:`run`.
        """
        _check_args("Runner.run_sync", session, ctx, run_config, unexpected)
        _refuse_in_loop("Runner.run_sync", "await Runner.run()")
        return asyncio.run(self.run(agent, input, session=session, ctx=ctx, run_config=run_config))

    @either_call
    def run_streamed(
        self,
        /,
        agent: Agent | Runnable,
        input: AgentInput,
        *,
        session: Session | None = None,
        ctx: RunContext[Any] | None = None,
        run_config: RunConfig | None = None,
        **unexpected: Never,
    ) -> EventStream:
        """Run, yielding every event; the session is written before the terminal event.

        To stop early, close the stream: leave an ``async with contextlib.aclosing(...)``
        block or call ``await stream.aclose()``. Closing records what the run did so far
        (an unfinished tool call gets an "interrupted" result) before it returns. A bare
        ``break`` without closing leaves the stream suspended; Python closes it only when it
        is garbage-collected, so its events may reach the session after a later run's.

        Example:
            >>> # async with contextlib.aclosing(runner.run_streamed(agent, q, session=s)) as st:
            >>> #     async for event in st:
            >>> #         if event.type == "token_delta": break   # recorded on leaving the block

        Returns:
            An :class:`~helikon.core.event_stream.EventStream`: the events themselves
            (``async for e in stream``; the OpenAI Agents SDK's ``stream_events()`` is
            answered with that spelling). Once iterated to the end it holds the result:
            ``stream.final_output``, ``last_agent``, ``usage``, ``to_input_list()``.

        Raises:
            SessionError: the session could not be read (raised at the first iteration).
            ConfigError: as :meth:`run` (raised at the first iteration).
        """
        return EventStream(
            self._run_streamed(
                agent, input, session=session, ctx=ctx, run_config=run_config, **unexpected
            ),
            agent=agent,
            input=_items_or_none(input),
        )

    async def _run_streamed(
        self,
        agent: Agent | Runnable,
        input: AgentInput,
        *,
        session: Session | None,
        ctx: RunContext[Any] | None,
        run_config: RunConfig | None,
        **unexpected: Never,
    ) -> AsyncGenerator[AgentEvent, None]:
        _check_args("Runner.run_streamed", session, ctx, run_config, unexpected)
        durable = session is not None
        session = session if session is not None else MemorySession()
        new_items = input_items(input)
        history = await load_conversation(session)
        recorder = SessionRecorder(agent.name)
        ctx = _recording(_with_live_compaction(ctx, session), recorder)
        recorder.record_input(new_items)
        stream = agent.stream([*history, *new_items], ctx, run_config=run_config)
        trail = ItemTrail(new_items)  # a pause keeps this run's input, not the session's history
        # closed explicitly: a GeneratorExit here does not reach a nested generator by itself
        drive = self._drive(stream, recorder, session, durable, trail)
        async with contextlib.aclosing(drive) as events:
            async for ev in events:
                yield ev

    @either_call
    async def resume(
        self,
        agent: Agent | Runnable,
        state: RunState | None = None,
        *,
        decisions: Mapping[str, Decision] | None = None,
        session: Session | None = None,
        ctx: RunContext[Any] | None = None,
        run_config: RunConfig | None = None,
    ) -> RunResult[Any]:
        """Continue a paused run, or a session with no new input.

        With ``state`` (the :class:`~helikon.RunState` of a run that paused for approval,
        perhaps loaded in another process with ``RunState.from_json``), ``decisions`` maps
        every waiting call id to ``Approve()``, ``Deny(reason)`` or ``Edit(args)``: denied
        calls return the denial to the model, approved and edited ones run (an edit after
        the permission pipeline checks the new arguments again), and the run goes on. A
        state resumes once: a second resume is refused and runs nothing (see
        :mod:`helikon.runtimes.resume`). Without ``run_config`` the run goes on under the
        config it paused under (``state.run_config``; for a state without one, the agent's
        own with ``approval="defer"``), so a later ask pauses again; a ``run_config`` that
        differs from the stored one in any field but ``approval`` is refused.

        Without ``state``: continue ``session`` from its repaired history (e.g. after a crash
        mid-run); the model answers from there.

        Raises:
            ResumeRefused: the state was already resumed, the session changed since the
                pause, the agent is not the one that paused, ``run_config`` differs from the
                one the run paused under (the message names the fields), or the decisions do
                not answer exactly the waiting calls (nothing ran).
            RunInterruptedError: the resumed run paused again (``.state`` resumes it).
            SessionError: the session could not be read.
            RunError: the run failed.
            ConfigError: as :meth:`run`.
        """
        _check_args("Runner.resume", session, ctx, run_config)
        if state is None:
            if session is None:
                raise ConfigError(
                    "Runner.resume needs the paused run's state (resume(agent, state, "
                    "decisions=...)) or a session to continue (resume(agent, session=...))"
                )
            return await self.run(agent, [], session=session, ctx=ctx, run_config=run_config)
        stream = self.resume_streamed(
            agent, state, decisions=decisions, session=session, ctx=ctx, run_config=run_config
        )
        collector = RunResultStreaming(
            stream, agent=agent, resumed=with_edits(state, decisions or {})
        )
        return await collector.collect()  # typed as in run()

    @either_call
    def resume_sync(
        self,
        /,
        agent: Agent | Runnable,
        state: RunState | None = None,
        *,
        decisions: Mapping[str, Decision] | None = None,
        session: Session | None = None,
        ctx: RunContext[Any] | None = None,
        run_config: RunConfig | None = None,
    ) -> RunResult[Any]:
        """:meth:`resume` for synchronous code: starts an event loop (not from inside one).

        Raises:
            RuntimeError: called from a running event loop (use ``await Runner.resume(...)``).
            ResumeRefused, RunInterruptedError, SessionError, RunError, ConfigError: as
                :meth:`resume`.
        """
        _check_args("Runner.resume_sync", session, ctx, run_config)
        _refuse_in_loop("Runner.resume_sync", "await Runner.resume()")
        return asyncio.run(
            self.resume(
                agent, state, decisions=decisions, session=session, ctx=ctx, run_config=run_config
            )
        )

    @either_call
    async def resume_streamed(
        self,
        agent: Agent | Runnable,
        state: RunState,
        *,
        decisions: Mapping[str, Decision] | None = None,
        session: Session | None = None,
        ctx: RunContext[Any] | None = None,
        run_config: RunConfig | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """:meth:`resume` a paused run, yielding every event (the decided calls' results
        first); the session is written before the terminal event.

        The events are the resumed part's only. Collect them with
        ``RunResultStreaming(stream, agent=agent, resumed=state)`` for the result
        :meth:`resume` returns: its ``new_items`` and ``to_input_list()`` include what the
        run did before the pause.

        Raises:
            ResumeRefused, SessionError, ConfigError: as :meth:`resume` (at the first
                iteration, before any event).
        """
        _check_args("Runner.resume_streamed", session, ctx, run_config)
        state = with_edits(state, decisions or {})  # the history shows the edited calls
        start = prepare_resume(agent, state, decisions or {}, run_config)
        await claim_resume(session, state, decisions or {})
        durable = session is not None
        session = session if session is not None else MemorySession()
        recorder = SessionRecorder(agent.name, edited=edited_args(decisions or {}))
        log = await session.events() if durable else []
        for denial in human_denials(state, decisions or {}, log):
            recorder.record(denial)
        stream = start(_recording(_with_live_compaction(ctx, session), recorder))
        drive = self._drive(stream, recorder, session, durable, ItemTrail(None, state))
        async with contextlib.aclosing(drive) as events:
            async for ev in events:
                yield ev

    async def _drive(
        self,
        stream: AsyncIterator[AgentEvent],
        recorder: SessionRecorder,
        session: Session,
        durable: bool,
        trail: ItemTrail,
    ) -> AsyncGenerator[AgentEvent, None]:
        persisted = False
        try:
            async for ev in stream:
                recorder.observe(ev)
                trail.note(ev)
                if isinstance(ev, RunCompleted | RunFailed):
                    persisted = True
                    for note in await _persist_watching(session, recorder):
                        yield note
                elif isinstance(ev, RunInterrupted):
                    persisted = True
                    ev = ev.model_copy(update={"state": trail.keep(ev.state)})
                    ev = await _record_pause(ev, session, recorder, durable)
                yield ev
        finally:
            try:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:  # ends the run (its timer, its spans) before recording
                    await aclose()
            finally:
                if not persisted:
                    await _persist(session, recorder)


def _with_live_compaction(ctx: RunContext[Any] | None, session: Session) -> RunContext[Any]:
    """``ctx`` with the session's live compaction (a :class:`~helikon.sessions.CompactingSession`),
    unless it has its own."""
    ctx = ctx if ctx is not None else RunContext.ephemeral(None)
    compaction = getattr(session, "compaction", None)
    if ctx.compaction is None and isinstance(compaction, Compaction):
        return ctx.with_compaction(compaction)
    return ctx


def _recording(ctx: RunContext[Any], recorder: SessionRecorder) -> RunContext[Any]:
    """``ctx`` reporting its permission decisions to ``recorder`` (``permission_decided``)."""
    return dataclasses.replace(ctx, decision_log=recorder.record_decision)


def _check_args(
    where: str, session: Any, ctx: Any, run_config: Any, unexpected: dict[str, Any] | None = None
) -> None:
    """Reject another library's keyword arguments (``unexpected``: ``deps=`` ...) and
    arguments of the wrong type before anything runs.

    Raises:
        ConfigError: the message names the argument and what to pass instead.
    """
    if unexpected is not None:
        refuse_other_spellings(where, unexpected, _RUN_KWARGS)
    if session is not None and not isinstance(session, Session):
        hint = "e.g. session=MemorySession()"
        if inspect.iscoroutine(session):
            session.close()  # never awaited: close it so Python does not warn
            hint = "did you forget to await the open call (await SqliteSession.open(...))?"
        raise ConfigError(
            f"{where}(session=...) must be a Session (MemorySession, SqliteSession, "
            f"RedisSession, PostgresSession, ...), got {type(session).__name__}; {hint}"
        )
    check_run_args(where, ctx, run_config)


async def _record_pause(
    ev: RunInterrupted, session: Session, recorder: SessionRecorder, durable: bool
) -> RunInterrupted | RunFailed:
    """Record a pause (the waiting calls stay open) and note where in the session it is.

    Unlike the end of a run this write is not best effort: a pause the session does not
    hold could not be resumed, so a failed write fails the run instead.
    """
    state = ev.state
    waiting = {p.call_id for p in state.pending}
    try:
        await complete(session.append(recorder.drain(keep_open=waiting)))
        if durable:
            state = state.model_copy(
                update={
                    "session_id": getattr(session, "session_id", None),
                    "session_position": await session_position(session),
                }
            )
    except Exception as exc:
        error = AgentOther(f"could not record the paused run in the session: {exc}")
        return RunFailed(error=error.to_dict(), usage=ev.usage)
    return ev.model_copy(update={"state": state})


async def _persist_watching(session: Session, recorder: SessionRecorder) -> list[AgentEvent]:
    """:func:`_persist`, returning the compaction events the session layer reported (a
    :class:`~helikon.sessions.CompactingSession` compacting after the append)."""
    notes: list[AgentEvent] = []
    listen = getattr(session, "listen", None)
    stop = listen(notes.append) if callable(listen) else None
    try:
        await _persist(session, recorder)
    finally:
        if stop is not None:
            stop()
    return notes


async def _persist(session: Session, recorder: SessionRecorder) -> None:
    events = recorder.drain()
    if not events:
        return
    try:
        await complete(session.append(events))
    except Exception as exc:  # best effort: the run's outcome stands
        log.warning("could not record the run in the session: %s", exc)


def _items_or_none(input: AgentInput) -> list[Item] | None:
    """The run's input items for the stream's result; ``None`` for a bad input (the stream
    raises its ConfigError at the first iteration)."""
    try:
        return input_items(input)
    except ConfigError:
        return None


def _refuse_in_loop(call: str, fix: str) -> None:
    """Raise ``RuntimeError`` when an event loop runs in this thread (``call`` starts one)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return  # no loop running: the normal case
    raise RuntimeError(f"{call}() cannot run inside an event loop; use {fix}")
