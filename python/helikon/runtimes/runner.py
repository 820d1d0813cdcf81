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

import contextlib
import inspect
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any

from helikon.core.agent import Agent
from helikon.core.context import RunConfig, RunContext
from helikon.core.events import AgentEvent, RunCompleted, RunFailed
from helikon.core.items import Item
from helikon.core.result import RunResult, RunResultStreaming
from helikon.core.runnable import AgentInput, Runnable, check_run_args, input_items
from helikon.errors import ConfigError
from helikon.sessions import MemorySession, Session, SessionRecorder, load_conversation
from helikon.sessions.shield import complete

__all__ = ["Runner"]

log = logging.getLogger("helikon.runtimes")


class Runner:
    """Runs agents on sessions (the spec's ``TokioRunner``, for asyncio).

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

    async def run(
        self,
        agent: Agent | Runnable,
        input: AgentInput,
        *,
        session: Session | None = None,
        ctx: RunContext[Any] | None = None,
        run_config: RunConfig | None = None,
    ) -> RunResult[Any]:
        """Run to completion; see the module doc for the lifecycle.

        Raises:
            SessionError: the session could not be read before the run.
            RunError: the run failed (its events are still recorded in the session).
            ConfigError: ``session`` is not a :class:`~helikon.sessions.Session`, ``ctx``
                not a :class:`RunContext` or ``run_config`` not a :class:`RunConfig`
                (nothing runs).
        """
        _check_args("Runner.run", session, ctx, run_config)
        stream = self.run_streamed(agent, input, session=session, ctx=ctx, run_config=run_config)
        result: RunResult[Any] = await RunResultStreaming(stream).collect()
        typed = getattr(agent, "typed_result", None)  # a pattern without one returns text
        return typed(result) if typed is not None else result

    async def run_streamed(
        self,
        agent: Agent | Runnable,
        input: AgentInput,
        *,
        session: Session | None = None,
        ctx: RunContext[Any] | None = None,
        run_config: RunConfig | None = None,
    ) -> AsyncIterator[AgentEvent]:
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

        Raises:
            SessionError: the session could not be read (raised at the first iteration).
            ConfigError: as :meth:`run` (raised at the first iteration).
        """
        _check_args("Runner.run_streamed", session, ctx, run_config)
        session = session if session is not None else MemorySession()
        new_items = input_items(input)
        history = await load_conversation(session)
        # closed explicitly: a GeneratorExit here does not reach a nested generator by itself
        async with contextlib.aclosing(
            self._drive(agent, history, new_items, session, ctx, run_config)
        ) as events:
            async for ev in events:
                yield ev

    async def resume(
        self,
        agent: Agent | Runnable,
        *,
        session: Session,
        ctx: RunContext[Any] | None = None,
        run_config: RunConfig | None = None,
    ) -> RunResult[Any]:
        """Continue a session with no new input (e.g. after a crash mid-run).

        The repaired history is sent as it is; the model answers from there.

        Raises:
            SessionError: the session could not be read.
            RunError: the run failed.
            ConfigError: as :meth:`run`.
        """
        _check_args("Runner.resume", session, ctx, run_config)
        return await self.run(agent, [], session=session, ctx=ctx, run_config=run_config)

    async def _drive(
        self,
        agent: Agent | Runnable,
        history: list[Item],
        new_items: Sequence[Item],
        session: Session,
        ctx: RunContext[Any] | None,
        run_config: RunConfig | None,
    ) -> AsyncGenerator[AgentEvent, None]:
        recorder = SessionRecorder(agent.name)
        recorder.record_input(new_items)
        persisted = False
        stream = agent.stream([*history, *new_items], ctx, run_config=run_config)
        try:
            async for ev in stream:
                recorder.observe(ev)
                if isinstance(ev, RunCompleted | RunFailed):
                    persisted = True
                    await _persist(session, recorder)
                yield ev
        finally:
            try:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:  # ends the run (its timer, its spans) before recording
                    await aclose()
            finally:
                if not persisted:
                    await _persist(session, recorder)


def _check_args(where: str, session: Any, ctx: Any, run_config: Any) -> None:
    """Reject arguments of the wrong type before anything runs.

    Raises:
        ConfigError: the message names the argument and what to pass instead.
    """
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


async def _persist(session: Session, recorder: SessionRecorder) -> None:
    events = recorder.drain()
    if not events:
        return
    try:
        await complete(session.append(events))
    except Exception as exc:  # best effort: the run's outcome stands
        log.warning("could not record the run in the session: %s", exc)
