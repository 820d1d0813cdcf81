"""ParallelAgent: run branches concurrently, collect every failure, answer deterministically.

Every branch gets the pattern's input and runs as an asyncio task (cooperative concurrency:
suited to IO-bound model calls; a CPU-bound branch starves its siblings between awaits).
Each finished branch's final text is written to ``ctx.state[key]``. The answer is one final
``MessageOutput`` from the pattern holding the sorted-key JSON object ``{key: text}``
(compact, non-ASCII kept), whatever order the branches finished in.

Failure is collect-all: a failed branch lets its siblings finish, then one ``RunFailed``
names every failed branch (``AgentOther``). Cancellation and ``RunConfig.timeout`` stop every
branch (their tokens are children of the pattern's) and fail with ``Cancelled`` / ``Timeout``.
Branch keys must be unique: a duplicate fails the run before any branch starts.

With ``RunConfig(approval="defer")`` a branch that asks pauses the pattern once every
branch has ended: finished branches keep their answers (in the paused state, not run again
on resume), paused ones continue where they asked; a failed branch fails the pattern.

Events: each branch's events form one contiguous block after ``AgentUpdated(branch)`` (see
:mod:`helikon.agents._concurrent`); the final message follows ``AgentUpdated(pattern)``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from helikon.agents._concurrent import ChildDone, Concurrent
from helikon.agents.base import (
    ChildOutcome,
    PatternAgent,
    PatternFailed,
    PatternRun,
    Runnable,
    agent_list,
    check_runnable,
    final_message,
)
from helikon.agents.pause import PatternPaused
from helikon.core.context import RunConfig
from helikon.core.events import AgentEvent
from helikon.core.items import Item
from helikon.errors import AgentError, AgentOther, ConfigError

__all__ = ["ParallelAgent", "sorted_json"]


def sorted_json(values: dict[str, str]) -> str:
    """``values`` as compact JSON with sorted keys and non-ASCII kept.

    Example:
        >>> sorted_json({"b": "2", "a": "ü"})
        '{"a":"ü","b":"2"}'
    """
    return json.dumps(values, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def aggregate_failure(what: str, name: str, failed: list[ChildOutcome], total: int) -> AgentOther:
    """One error naming every failed child, in key order."""
    parts = "; ".join(f"{o.key}: {o.describe_error()}" for o in sorted(failed, key=lambda o: o.key))
    return AgentOther(f"{what} {name!r}: {len(failed)} of {total} failed: {parts}")


class ParallelAgent(PatternAgent):
    """Runs branches concurrently; collect-all failure; sorted-key JSON answer.

    Args:
        name: the pattern's name.
        description: what it does.
        branches: initial branches (keyed by their names); add more with :meth:`add` or
            :meth:`branch` (an explicit key).
        run_config: the pattern's own knobs (``timeout`` bounds all branches together).

    Raises:
        ConfigError: an empty name, or a branch that is not an agent.

    Example:
        >>> from helikon import Agent
        >>> from helikon.testing import MockModel, Text
        >>> a = Agent(name="a", model=MockModel([[Text("1")]]))
        >>> b = Agent(name="b", model=MockModel([[Text("2")]]))
        >>> ParallelAgent("fan").branch("y", b).branch("x", a).run_sync("go").final_output
        '{"x":"1","y":"2"}'
    """

    kind = "parallel"

    def __init__(
        self,
        name: str,
        description: str = "",
        *,
        branches: Sequence[Any] = (),
        run_config: RunConfig | None = None,
    ) -> None:
        self._init_base(name, description, run_config)
        self.branches: list[tuple[str, Runnable]] = []
        for agent in agent_list("ParallelAgent(branches=...)", branches):
            self.add(agent)

    def add(self, agent: Any) -> ParallelAgent:
        """Add a branch keyed by the agent's name. Returns ``self``.

        Raises:
            ConfigError: ``agent`` does not run like an Agent.
        """
        checked = check_runnable("ParallelAgent.add(...)", agent)
        self.branches.append((checked.name, checked))
        return self

    def branch(self, key: str, agent: Any) -> ParallelAgent:
        """Add a branch whose result goes to ``state[key]``. Returns ``self``.

        Raises:
            ConfigError: ``key`` is not a non-empty str, or ``agent`` is not an agent.
        """
        if not isinstance(key, str) or not key:
            raise ConfigError("ParallelAgent.branch(key, ...) needs a non-empty str key")
        checked = check_runnable("ParallelAgent.branch(...)", agent)
        self.branches.append((key, checked))
        return self

    def _children(self) -> list[tuple[str, Runnable]]:
        return list(self.branches)

    def _precheck(self) -> AgentError | None:
        if not self.branches:
            return AgentOther(f"ParallelAgent {self.name!r} has no branches; add one with .add")
        keys = [k for k, _ in self.branches]
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:
            return AgentOther(
                f"ParallelAgent {self.name!r}: duplicate branch key(s) "
                f"{', '.join(map(repr, dupes))}; concurrent branches would race on state[key]: "
                "use .branch(key, agent)"
            )
        return None

    async def _drive(self, items: list[Item], run: PatternRun) -> AsyncIterator[AgentEvent]:
        group = Concurrent(run)
        done = run.restore_done()
        outcomes: list[ChildOutcome] = [
            ChildOutcome(key, agent.name, final_text=done[key], done=True)
            for key, agent in self.branches
            if key in done
        ]
        try:
            for key, agent in self.branches:
                if key not in done:  # a branch that finished before a pause is not run again
                    group.start(key, agent, items)
            async for ev in group.events():
                if isinstance(ev, ChildDone):
                    outcomes.append(ev.outcome)
                    if not ev.outcome.failed and ev.outcome.paused is None:
                        run.state[ev.outcome.key] = ev.outcome.final_text
                else:
                    yield ev
        finally:
            await group.aclose()
        run.fail_if_cancelled()
        failed = [o for o in outcomes if o.failed]
        if failed:
            raise PatternFailed(
                aggregate_failure("ParallelAgent", self.name, failed, len(self.branches))
            )
        paused = {o.key: o.paused for o in outcomes if o.paused is not None}
        if paused:
            finished = {o.key: o.final_text for o in outcomes if o.paused is None}
            raise PatternPaused({"done": finished}, dict(sorted(paused.items())))
        answer = sorted_json({o.key: o.final_text for o in outcomes})
        for ev in final_message(self.name, answer):
            yield ev
