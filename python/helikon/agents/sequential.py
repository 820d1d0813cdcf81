"""SequentialAgent: run sub-agents one after another, failing fast.

Each step gets the pattern's input; after a step completes, its final text is written to
``ctx.state[key]`` (``key`` defaults to the step's name), where a later step reads it, e.g.
through an instructions function. The last step's answer is the pattern's answer. The first
step that fails ends the run with that step's error; later steps do not run.

Events: ``RunStarted(pattern)``, then per step ``AgentUpdated(step)`` and the step's events
(its own ``RunStarted`` and terminal event are folded in), then one ``RunCompleted`` whose
usage sums every step.

With ``RunConfig(approval="defer")`` a step that asks pauses the pattern
(``RunInterrupted``); ``Runner.resume(pattern, state, decisions=...)`` continues inside that
step, without running the earlier steps again (their answers are back in ``ctx.state``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from helikon.agents.base import ChildOutcome, PatternFailed, PatternRun, StepsPattern, run_child
from helikon.agents.pause import PatternPaused
from helikon.core.context import RunConfig
from helikon.core.events import AgentEvent
from helikon.core.items import Item

__all__ = ["SequentialAgent"]


class SequentialAgent(StepsPattern):
    """Runs its steps in order; fails fast on the first failure.

    Args:
        name: the pattern's name (``RunStarted.agent``).
        description: what it does (shown when it is wrapped as a tool).
        steps: initial steps (agents or patterns); add more with :meth:`then` /
            :meth:`then_keyed` (use a key when two steps share a name).
        run_config: the pattern's own knobs: ``timeout`` bounds the whole pipeline,
            ``max_agent_depth`` its nesting.

    Raises:
        ConfigError: an empty name, or a step that is not an agent.

    Example:
        >>> from helikon import Agent
        >>> from helikon.testing import MockModel, Text
        >>> a = Agent(name="a", model=MockModel([[Text("one")]]))
        >>> b = Agent(name="b", model=MockModel([[Text("two")]]))
        >>> SequentialAgent("pipe", steps=[a, b]).run_sync("go").final_output
        'two'
    """

    kind = "sequential"

    def __init__(
        self,
        name: str,
        description: str = "",
        *,
        steps: Sequence[Any] = (),
        run_config: RunConfig | None = None,
    ) -> None:
        self._init_base(name, description, run_config)
        self._init_steps(steps)

    async def _drive(self, items: list[Item], run: PatternRun) -> AsyncIterator[AgentEvent]:
        done = run.restore_done()
        for key, agent in self.steps:
            if key in done:  # finished before a pause: not run again
                continue
            run.fail_if_cancelled()
            outcome = ChildOutcome(key, agent.name)
            async for ev in run_child(run, key, agent, items, outcome):
                yield ev
            if outcome.paused is not None:
                raise PatternPaused({"done": done}, {key: outcome.paused})
            if outcome.error is not None:
                raise PatternFailed(outcome.error)
            run.state[key] = done[key] = outcome.final_text
