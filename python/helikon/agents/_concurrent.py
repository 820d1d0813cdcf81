"""Concurrent children for ParallelAgent and GraphAgent: tasks, one queue, ordered forwarding.

Children run as asyncio tasks (cooperative: IO-bound model calls interleave; a CPU-bound child
starves its siblings). Their events are forwarded so that each child's events stay one
contiguous block, introduced by ``AgentUpdated(child)``: the first child to produce an event
streams live; the others are buffered and flushed, in the order they started producing, when
the live one ends. So every event is attributable to the last ``AgentUpdated``, and a session
recording the stream projects each child's tool calls right before their results.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from helikon.agents.base import ChildOutcome, PatternRun, Runnable, run_child
from helikon.core.events import AgentEvent
from helikon.core.items import Item

__all__ = ["ChildDone", "Concurrent"]


@dataclass(slots=True)
class ChildDone:
    """A child finished (yielded by :meth:`Concurrent.events` besides events to forward)."""

    outcome: ChildOutcome


@dataclass(slots=True)
class _Child:
    key: str
    outcome: ChildOutcome
    buffer: list[AgentEvent] = field(default_factory=list)
    finished: bool = False


class Concurrent:
    """Runs children concurrently and merges their events (see the module doc)."""

    def __init__(self, run: PatternRun) -> None:
        self.run = run
        self.queue: asyncio.Queue[tuple[str, AgentEvent | None]] = asyncio.Queue()
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.children: dict[str, _Child] = {}
        self.live: str | None = None
        self.waiting: list[str] = []  # children with buffered events, in first-event order

    def start(self, key: str, agent: Runnable, items: list[Item]) -> None:
        """Start ``agent`` as child ``key`` on ``items``."""
        outcome = ChildOutcome(key, agent.name)
        self.children[key] = _Child(key, outcome)
        self.tasks[key] = asyncio.get_running_loop().create_task(
            self._pump(key, agent, items, outcome)
        )

    async def _pump(
        self, key: str, agent: Runnable, items: list[Item], outcome: ChildOutcome
    ) -> None:
        try:
            async for ev in run_child(self.run, key, agent, items, outcome):
                self.queue.put_nowait((key, ev))
        finally:
            self.queue.put_nowait((key, None))

    @property
    def running(self) -> int:
        return sum(1 for c in self.children.values() if not c.finished)

    async def events(self) -> AsyncIterator[AgentEvent | ChildDone]:
        """Events to forward, and a :class:`ChildDone` as each child ends, until all ended.

        The caller may :meth:`start` more children while iterating (a graph's successors).
        """
        while self.running:
            key, ev = await self.queue.get()
            child = self.children[key]
            if ev is not None:
                if self.live is None:
                    self.live = key
                if self.live == key:
                    yield ev
                else:
                    if not child.buffer:
                        self.waiting.append(key)
                    child.buffer.append(ev)
                continue
            child.finished = True
            self.tasks.pop(key, None)
            yield ChildDone(child.outcome)
            if self.live == key:
                self.live = None
                for out in self._promote():
                    yield out

    def _promote(self) -> list[AgentEvent]:
        """Flush waiting children in order until one still running becomes live."""
        out: list[AgentEvent] = []
        while self.waiting:
            key = self.waiting.pop(0)
            child = self.children[key]
            out.extend(child.buffer)
            child.buffer = []
            if not child.finished:
                self.live = key
                break
        return out

    async def aclose(self) -> None:
        """Cancel every child still running and wait for them to end."""
        tasks = list(self.tasks.values())
        self.tasks.clear()
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
