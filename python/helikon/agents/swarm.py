"""SwarmAgent: a pool of agents with full-mesh handoffs; the first to answer wins.

Each member gets a ``transfer_to_<slug>`` handoff to every other member (on a copy: the
agents passed in are not changed). The names are distinct and valid even for non-ASCII
member names (accents folded; a hash suffix where the slug is empty or shared): see
:func:`transfer_names`. The run is the ordinary handoff loop started at the entry
member; it ends as soon as the active member answers instead of handing off.

Bounding: every handoff nests one level deeper, so a swarm that never converges fails with
``MaxAgentDepthExceeded`` at ``RunConfig.max_agent_depth`` (default 8). ``max_handoffs=n``
adds a budget: the swarm counts ``HandoffItem`` events on its stream and, on the ``n + 1``-th,
cancels the run and fails with ``MaxHandoffsExceeded(n)`` (usage summed up to that point).

With ``RunConfig(approval="defer")`` a member that asks pauses the swarm: the paused state
holds the handoff chain's own state (``steps[<entry>]``, its ``agent_path`` naming the
member that asked) and the handoffs counted so far, so ``Runner.resume(swarm, state, ...)``
continues inside that member with the ``max_handoffs`` budget as it was.

Events: ``RunStarted(swarm)``, ``AgentUpdated(entry)``, then the handoff loop's events
(``HandoffItem`` + ``AgentUpdated`` at every handoff), one terminal event.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import unicodedata
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from helikon.agents.base import PatternAgent
from helikon.agents.pause import (
    PatternPaused,
    Starter,
    check_pattern_state,
    pattern_state,
    prepare_resume,
    share_decisions,
)
from helikon.core.agent import Agent
from helikon.core.context import RunConfig, RunContext
from helikon.core.decisions import Decision
from helikon.core.events import (
    AgentEvent,
    AgentUpdated,
    HandoffItem,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunStarted,
)
from helikon.core.handoff import HandoffSpec, handoff_tool_name, slug
from helikon.core.resume_config import resume_config
from helikon.core.run_state import RunState
from helikon.core.runnable import AgentInput, check_run_args, input_items
from helikon.core.usage import Usage
from helikon.errors import AgentOther, ConfigError, MaxHandoffsExceeded, ResumeRefused

__all__ = ["SwarmAgent"]


class SwarmAgent(PatternAgent):
    """A pool of :class:`~helikon.Agent` members with a handoff between every pair.

    Args:
        name: the swarm's name.
        description: what it does.
        members: the agents (at least one; unique names). Only Agents: they are the only
            kind that can call a transfer tool.
        entry: the member that answers first (default: the first member).
        max_handoffs: the handoff budget (``None``: only ``max_agent_depth`` bounds it).
        run_config: the run's knobs (default: the entry member's ``run_config``); they apply
            to the whole handoff chain.

    Raises:
        ConfigError: no members, a member that is not an Agent, duplicate member names, an
            unknown ``entry``, ``max_handoffs`` < 0, or two members whose transfer tools
            collide (with each other or a member's own tool).
    """

    kind = "swarm"

    def __init__(
        self,
        name: str,
        description: str = "",
        *,
        members: Sequence[Agent],
        entry: str | None = None,
        max_handoffs: int | None = None,
        run_config: RunConfig | None = None,
    ) -> None:
        self._init_base(name, description, run_config)
        self._explicit_config = run_config
        members = list(members)
        if not members:
            raise ConfigError(f"SwarmAgent {name!r} needs at least one member")
        for i, m in enumerate(members):
            if not isinstance(m, Agent):
                raise ConfigError(
                    f"SwarmAgent(members=...): members[{i}] is a {type(m).__name__}; members "
                    "must be Agents (only an Agent can call a transfer tool)"
                )
        names = [m.name for m in members]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ConfigError(
                f"SwarmAgent {name!r}: duplicate member name(s) {', '.join(map(repr, dupes))}"
            )
        if entry is not None and entry not in names:
            raise ConfigError(
                f"SwarmAgent {name!r}: entry {entry!r} is not a member ({', '.join(names)})"
            )
        if max_handoffs is not None and (
            isinstance(max_handoffs, bool) or not isinstance(max_handoffs, int) or max_handoffs < 0
        ):
            raise ConfigError(
                f"SwarmAgent(max_handoffs=...) must be an int >= 0 or None, got {max_handoffs!r}"
            )
        self.max_handoffs = max_handoffs
        tool_names = transfer_names(names)
        self.members: list[Agent] = [_mesh_copy(m, tool_names) for m in members]
        for clone, original in zip(self.members, members, strict=True):
            others = [m for m in self.members if m is not clone]
            kept = [h for h in original.handoffs if h.name not in names]
            clone.handoffs = [*kept, *others]
            clashes = clone.collisions()
            if clashes:
                raise ConfigError(
                    f"SwarmAgent {name!r}: member {clone.name!r} has colliding transfer tools: "
                    f"{'; '.join(clashes)}; rename a member or tool"
                )
        self.entry: Agent = self.members[names.index(entry) if entry is not None else 0]

    def stream(
        self,
        input: AgentInput,
        ctx: RunContext[Any] | None = None,
        *,
        run_config: RunConfig | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run the swarm from its entry member (see the module doc for the events).

        Raises:
            ConfigError: ``ctx`` or ``run_config`` has the wrong type.
        """
        check_run_args("SwarmAgent.stream", ctx, run_config)
        ctx = ctx if ctx is not None else RunContext.ephemeral(None)
        config = run_config or self._explicit_config or self.entry.run_config
        return self._swarm(input, ctx, config)

    def _children(self) -> list[tuple[str, Any]]:
        return [(m.name, m) for m in self.members]

    def _shape(self) -> object:
        return {
            "members": super()._shape(),
            "entry": self.entry.name,
            "max_handoffs": self.max_handoffs,
        }

    def prepare_resume(
        self,
        state: RunState,
        decisions: Mapping[str, Decision],
        run_config: RunConfig | None = None,
    ) -> Starter:
        """Check a paused state of this swarm and ``decisions`` (nothing runs); return the
        function that continues the handoff chain inside the member that asked.

        Raises:
            ResumeRefused: not this swarm's pause, its members changed, or the decisions do
                not answer exactly the waiting calls.
        """
        check_pattern_state(self.kind, self.name, self._shape(), state)
        config = resume_config(
            state,
            run_config,
            replace(self._explicit_config or self.entry.run_config, approval="defer"),
        )
        shares = share_decisions(state, decisions)
        if list(shares) != [self.entry.name]:
            raise ResumeRefused(
                f"the paused state of swarm {self.name!r} does not hold its entry member's "
                f"run ({self.entry.name!r})"
            )
        inner = prepare_resume(
            self.entry, state.steps[self.entry.name], shares[self.entry.name], config
        )
        handoffs = int((state.pattern or {}).get("handoffs", 0))
        items = list(state.conversation or [])

        def start(ctx: RunContext[Any]) -> AsyncIterator[AgentEvent]:
            return self._swarm(items, ctx, config, inner, handoffs)

        return start

    async def _swarm(
        self,
        input: AgentInput,
        ctx: RunContext[Any],
        config: RunConfig,
        resume: Starter | None = None,
        handoffs: int = 0,
    ) -> AsyncIterator[AgentEvent]:
        items = input_items(input)
        yield RunStarted(agent=self.name)
        token = ctx.cancel.child()
        if resume is not None:
            stream = resume(replace(ctx, cancel=token))
        else:
            stream = self.entry.stream(items, replace(ctx, cancel=token), run_config=config)
        exceeded = False
        terminal: RunCompleted | RunFailed | RunInterrupted | None = None
        async with contextlib.aclosing(stream):  # type: ignore[type-var]
            async for ev in stream:
                if isinstance(ev, RunCompleted | RunFailed | RunInterrupted):
                    terminal = ev
                    break
                if exceeded:
                    continue  # the run is being cancelled: only its usage is still wanted
                if isinstance(ev, RunStarted):
                    yield AgentUpdated(agent=ev.agent)
                    continue
                if isinstance(ev, HandoffItem):
                    handoffs += 1
                    if self.max_handoffs is not None and handoffs > self.max_handoffs:
                        exceeded = True
                        token.cancel("max_handoffs")
                        continue
                yield ev
        usage = terminal.usage if terminal is not None else Usage()
        if exceeded:
            assert self.max_handoffs is not None
            yield RunFailed(error=MaxHandoffsExceeded(self.max_handoffs).to_dict(), usage=usage)
        elif isinstance(terminal, RunCompleted):
            yield RunCompleted(usage=usage)
        elif isinstance(terminal, RunFailed):
            yield RunFailed(error=dict(terminal.error), usage=usage)
        elif isinstance(terminal, RunInterrupted):
            paused = PatternPaused({"handoffs": handoffs}, {self.entry.name: terminal.state})
            state = pattern_state(
                kind=self.kind,
                name=self.name,
                shape=self._shape(),
                items=items,
                usage=usage,
                paused=paused,
                run_config=config,
            )
            yield RunInterrupted(state=state, usage=usage)
        else:
            yield RunFailed(
                error=AgentOther("the swarm's run ended without a terminal event").to_dict()
            )


class _Member(Agent):
    """A swarm member's copy: its transfer tools to other members have the swarm's names."""

    transfer_names: dict[str, str]

    @property
    def handoff_specs(self) -> list[HandoffSpec]:
        """The transfer tools, named by :func:`transfer_names` for members."""
        return [
            HandoffSpec(
                self.transfer_names.get(h.name) or handoff_tool_name(h.name),
                h.name,
                h.description,
            )
            for h in self.handoffs
        ]


def _mesh_copy(agent: Agent, names: dict[str, str]) -> Agent:
    """A shallow copy whose handoff list can change without touching ``agent``."""
    clone = copy.copy(agent)
    clone.__class__ = _Member
    clone.handoffs = list(agent.handoffs)
    clone._native_configs = {}
    clone.transfer_names = names  # type: ignore[attr-defined]
    return clone


_MAX_TOOL_NAME = 64


def transfer_names(members: Sequence[str]) -> dict[str, str]:
    """Distinct, valid transfer-tool names for the members (``[a-z0-9_]``, at most 64).

    ``transfer_to_`` + the slug of the name with accents folded (``Ärzte`` ->
    ``transfer_to_arzte``); a name whose slug is empty (``会計``) or shared with another
    member gets a short hash of the real name appended (``transfer_to_3f9a1c``), so every
    member stays reachable. ASCII names keep the plain handoff slug.

    Example:
        >>> transfer_names(["Ärzte", "会計", "法務"])["Ärzte"]
        'transfer_to_arzte'
    """
    base = {}
    for name in members:
        folded = "".join(
            ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch)
        )
        base[name] = slug(folded)
    counts: dict[str, int] = {}
    for b in base.values():
        counts[b] = counts.get(b, 0) + 1
    out = {}
    for name, b in base.items():
        if b and counts[b] == 1:
            stem = b
        else:
            digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:6]
            stem = f"{b}_{digest}" if b else digest
        out[name] = ("transfer_to_" + stem)[:_MAX_TOOL_NAME]
    return out
