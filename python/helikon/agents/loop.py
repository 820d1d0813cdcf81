"""LoopAgent: repeat sub-agents in order until a tool escalates, up to ``max_iterations``.

Each pass runs the sub-agents in order on the pattern's input (fail fast, like
:class:`~helikon.agents.SequentialAgent`), writing each one's final text to
``ctx.state[key]``, so a later pass sees the previous one's results.

A tool stops the loop by calling :func:`escalate` with its :class:`~helikon.ToolContext`
(the spec's ``ctx.actions().escalate()``). The active sub-agent always finishes its current
run; after each sub-agent the loop checks for an escalation and, if there was one, completes
successfully at once (a mid-pass escalation skips the rest of that pass). Running
``max_iterations`` passes without one fails with ``MaxIterationsExceeded``.

The escalation is recorded in the run's shared ``state`` under :data:`ESCALATE_KEY` (the
innermost enclosing loop consumes it; each loop clears it before every sub-agent), so it
reaches the loop from any depth of nesting inside it, but not from inside an
:class:`~helikon.agents.AgentAsTool` sub-run, whose state is its own.

With ``RunConfig(approval="defer")`` a sub-agent that asks pauses the loop; the paused
state keeps the pass (``iteration``), the sub-agent's position in it (``index``), the
answers written so far and a pending escalation, so ``Runner.resume`` continues inside that
sub-agent and the loop's count goes on from there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from helikon.agents.base import ChildOutcome, PatternFailed, PatternRun, StepsPattern, run_child
from helikon.agents.pause import PatternPaused
from helikon.core.context import RunConfig
from helikon.core.events import AgentEvent
from helikon.core.items import Item
from helikon.errors import ConfigError, MaxIterationsExceeded

__all__ = ["ESCALATE_KEY", "LoopAgent", "escalate"]

ESCALATE_KEY = "__helikon_escalate__"
"""The ``state`` key :func:`escalate` sets (reserved)."""


def escalate(ctx: Any) -> None:
    """Ask the enclosing :class:`LoopAgent` to stop after the current sub-agent's run.

    Args:
        ctx: the tool's :class:`~helikon.ToolContext` (or a :class:`~helikon.RunContext`).

    Example:
        >>> from helikon import RunContext
        >>> ctx = RunContext.ephemeral(None)
        >>> escalate(ctx)
        >>> ctx.state[ESCALATE_KEY]
        True
    """
    ctx.state[ESCALATE_KEY] = True


class LoopAgent(StepsPattern):
    """Repeats its sub-agents until one of their tools escalates.

    Args:
        name: the pattern's name.
        description: what it does.
        max_iterations: passes before the run fails with ``MaxIterationsExceeded`` (>= 1).
        steps: initial sub-agents; add more with :meth:`then` / :meth:`then_keyed`.
        run_config: the pattern's own knobs (``timeout`` bounds every pass together).

    Raises:
        ConfigError: an empty name, ``max_iterations`` < 1, or a step that is not an agent.
    """

    kind = "loop"

    def __init__(
        self,
        name: str,
        description: str = "",
        max_iterations: int = 10,
        *,
        steps: Sequence[Any] = (),
        run_config: RunConfig | None = None,
    ) -> None:
        self._init_base(name, description, run_config)
        if isinstance(max_iterations, bool) or not isinstance(max_iterations, int):
            raise ConfigError(
                f"LoopAgent(max_iterations=...) must be an int, got {type(max_iterations).__name__}"
            )
        if max_iterations < 1:
            raise ConfigError(f"LoopAgent(max_iterations=...) must be >= 1, got {max_iterations}")
        self.max_iterations = max_iterations
        self._init_steps(steps)

    def _shape(self) -> object:
        return {"steps": super()._shape(), "max_iterations": self.max_iterations}

    async def _drive(self, items: list[Item], run: PatternRun) -> AsyncIterator[AgentEvent]:
        state = run.state
        keys = [k for k, _ in self.steps]
        progress = run.resuming.progress if run.resuming is not None else {}
        run.restore_done()
        first, at = int(progress.get("iteration", 0)), int(progress.get("index", 0))
        for iteration in range(first, self.max_iterations):
            for index, (key, agent) in enumerate(self.steps):
                if iteration == first and index < at:  # ran before the pause
                    continue
                run.fail_if_cancelled()
                resumed = iteration == first and index == at and run.resuming is not None
                state.pop(ESCALATE_KEY, None)
                if resumed and progress.get("escalated"):
                    state[ESCALATE_KEY] = True  # a tool escalated before the step paused
                outcome = ChildOutcome(key, agent.name)
                async for ev in run_child(run, key, agent, items, outcome):
                    yield ev
                if outcome.paused is not None:
                    raise PatternPaused(
                        {
                            "iteration": iteration,
                            "index": index,
                            "escalated": bool(state.pop(ESCALATE_KEY, False)),
                            "done": {k: state[k] for k in keys if isinstance(state.get(k), str)},
                        },
                        {key: outcome.paused},
                    )
                escalated = bool(state.pop(ESCALATE_KEY, False))
                if outcome.error is not None:
                    raise PatternFailed(outcome.error)
                state[key] = outcome.final_text
                if escalated:
                    return
        raise PatternFailed(MaxIterationsExceeded(self.max_iterations))
