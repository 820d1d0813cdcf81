"""GraphAgent: run a declared DAG of agents, each node once all its predecessors completed.

Nodes are agents, edges ``(a, b)`` mean "b depends on a". The graph is checked when it is
built: no nodes, a duplicate node, an edge naming an unknown node, a duplicate edge or a
cycle is a :class:`ConfigError` naming the culprits.

Ready nodes run concurrently as their predecessors finish (a dynamic Kahn wavefront on
asyncio tasks). A node's input is the graph's input followed by one user message per
predecessor, ``"[<predecessor>]\\n<its final text>"``, in node-declaration order. Each
completed node's final text goes to ``ctx.state[node]``.

Termination is deterministic: once every node ran, the graph emits one final assistant
message built from the sink nodes (no outgoing edge): a single sink's text verbatim, several
as a sorted-key JSON object keyed by node name (as :class:`ParallelAgent`).

With ``RunConfig(approval="defer")`` a node that asks pauses the graph once nothing else
can run (its descendants wait; independent nodes finish): finished nodes keep their answers
(not run again on resume), paused nodes continue where they asked, then their successors
run. A failed node fails the graph.

Failure is collect-all: a failed node's transitive descendants are skipped (independent
branches still finish), then one ``RunFailed`` names the failed and the skipped nodes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from helikon.agents._concurrent import ChildDone, Concurrent
from helikon.agents.base import (
    PatternAgent,
    PatternFailed,
    PatternRun,
    Runnable,
    check_runnable,
    final_message,
)
from helikon.agents.parallel import sorted_json
from helikon.agents.pause import PatternPaused
from helikon.core.context import RunConfig
from helikon.core.events import AgentEvent
from helikon.core.items import Item, TextPart, UserMessage
from helikon.core.run_state import RunState
from helikon.errors import AgentOther, ConfigError

__all__ = ["GraphAgent"]


def _nodes(nodes: Any) -> list[tuple[str, Runnable]]:
    if isinstance(nodes, Mapping):
        pairs = list(nodes.items())
    elif isinstance(nodes, str | bytes) or not isinstance(nodes, Sequence):
        raise ConfigError(
            "GraphAgent(nodes=...) must be a dict {name: agent} or a list of agents, got "
            f"{type(nodes).__name__}"
        )
    else:
        pairs = []
        for i, n in enumerate(nodes):
            if isinstance(n, tuple) and len(n) == 2:
                pairs.append(n)
            else:
                pairs.append((check_runnable(f"GraphAgent(nodes=...): nodes[{i}]", n).name, n))
    out: list[tuple[str, Runnable]] = []
    for key, agent in pairs:
        if not isinstance(key, str) or not key:
            raise ConfigError(f"GraphAgent(nodes=...): node name {key!r} must be a non-empty str")
        out.append((key, check_runnable(f"GraphAgent(nodes=...): node {key!r}", agent)))
    return out


def _find_cycle(names: list[str], succ: dict[str, list[str]]) -> list[str]:
    """One cycle as a path ``[a, b, ..., a]`` (empty when the graph is acyclic)."""
    color = dict.fromkeys(names, 0)  # 0 new, 1 on the stack, 2 done
    stack: list[str] = []

    def visit(n: str) -> list[str]:
        color[n] = 1
        stack.append(n)
        for m in succ[n]:
            if color[m] == 1:
                return [*stack[stack.index(m) :], m]
            if color[m] == 0:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        color[n] = 2
        return []

    for n in names:
        if color[n] == 0:
            found = visit(n)
            if found:
                return found
    return []


class GraphAgent(PatternAgent):
    """Runs a DAG of agents (see the module doc).

    Args:
        name: the graph's name.
        description: what it does.
        nodes: ``{name: agent}``, or a list of agents (named by their names) or of
            ``(name, agent)`` pairs; declaration order breaks ties.
        edges: ``(from, to)`` pairs: ``to`` runs after ``from`` completed.
        run_config: the graph's own knobs (``timeout`` bounds the whole graph).

    Raises:
        ConfigError: an empty graph, a duplicate node, an unknown node in an edge, a
            duplicate edge or a cycle (the message names them).

    Example:
        >>> from helikon import Agent
        >>> from helikon.testing import MockModel, Text
        >>> g = GraphAgent(
        ...     "g",
        ...     nodes=[Agent(name="a", model=MockModel([[Text("A")]])),
        ...            Agent(name="b", model=MockModel([[Text("B")]]))],
        ...     edges=[("a", "b")],
        ... )
        >>> g.run_sync("go").final_output
        'B'
    """

    kind = "graph"

    def __init__(
        self,
        name: str,
        description: str = "",
        *,
        nodes: Mapping[str, Any] | Sequence[Any],
        edges: Sequence[tuple[str, str]] = (),
        run_config: RunConfig | None = None,
    ) -> None:
        self._init_base(name, description, run_config)
        pairs = _nodes(nodes)
        if not pairs:
            raise ConfigError(f"GraphAgent {name!r} has no nodes")
        names = [k for k, _ in pairs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ConfigError(
                f"GraphAgent {name!r}: duplicate node name(s) {', '.join(map(repr, dupes))}"
            )
        self.nodes: dict[str, Runnable] = dict(pairs)
        self.order = names
        self.succ: dict[str, list[str]] = {n: [] for n in names}
        self.pred: dict[str, list[str]] = {n: [] for n in names}
        seen: set[tuple[str, str]] = set()
        for i, edge in enumerate(edges):
            if not (isinstance(edge, tuple | list) and len(edge) == 2):
                raise ConfigError(
                    f"GraphAgent(edges=...): edges[{i}] must be a (from, to) pair, got {edge!r}"
                )
            a, b = edge
            unknown = [x for x in (a, b) if x not in self.nodes]
            if unknown:
                raise ConfigError(
                    f"GraphAgent {name!r}: edge {a!r} -> {b!r} names unknown node(s) "
                    f"{', '.join(map(repr, unknown))}; nodes are {', '.join(names)}"
                )
            if (a, b) in seen:
                raise ConfigError(f"GraphAgent {name!r}: duplicate edge {a!r} -> {b!r}")
            seen.add((a, b))
            self.succ[a].append(b)
            self.pred[b].append(a)
        for n in names:  # predecessors in declaration order
            self.pred[n].sort(key=names.index)
        cycle = _find_cycle(names, self.succ)
        if cycle:
            raise ConfigError(
                f"GraphAgent {name!r} has a cycle: {' -> '.join(cycle)}; a graph must be acyclic"
            )
        self.sinks = [n for n in names if not self.succ[n]]

    def _children(self) -> list[tuple[str, Runnable]]:
        return list(self.nodes.items())

    def _shape(self) -> object:
        edges = sorted([a, b] for a in self.order for b in self.succ[a])
        return {"nodes": super()._shape(), "edges": edges}

    def _descendants(self, node: str) -> set[str]:
        out: set[str] = set()
        todo = list(self.succ[node])
        while todo:
            n = todo.pop()
            if n not in out:
                out.add(n)
                todo.extend(self.succ[n])
        return out

    def _input(self, items: list[Item], node: str, texts: dict[str, str]) -> list[Item]:
        extra: list[Item] = [
            UserMessage(content=[TextPart(text=f"[{p}]\n{texts[p]}")]) for p in self.pred[node]
        ]
        return [*items, *extra]

    async def _drive(self, items: list[Item], run: PatternRun) -> AsyncIterator[AgentEvent]:
        texts = run.restore_done()  # nodes that finished before a pause: not run again
        waiting = {n: sum(1 for p in self.pred[n] if p not in texts) for n in self.order}
        paused: dict[str, RunState] = {}
        failed: dict[str, str] = {}
        skipped: set[str] = set()
        group = Concurrent(run)
        try:
            for n in self.order:
                if waiting[n] == 0 and n not in texts:
                    group.start(n, self.nodes[n], self._input(items, n, texts))
            async for ev in group.events():
                if not isinstance(ev, ChildDone):
                    yield ev
                    continue
                node = ev.outcome.key
                if ev.outcome.failed:
                    failed[node] = ev.outcome.describe_error()
                    skipped |= self._descendants(node)
                    continue
                if ev.outcome.paused is not None:  # its successors wait for the resume
                    paused[node] = ev.outcome.paused
                    continue
                texts[node] = ev.outcome.final_text
                run.state[node] = ev.outcome.final_text
                for m in self.succ[node]:
                    waiting[m] -= 1
                    if waiting[m] == 0 and m not in skipped and not run.token.cancelled:
                        group.start(m, self.nodes[m], self._input(items, m, texts))
        finally:
            await group.aclose()
        run.fail_if_cancelled()
        if failed:
            parts = "; ".join(f"{n} ({failed[n]})" for n in self.order if n in failed)
            skip = [n for n in self.order if n in skipped]
            msg = f"GraphAgent {self.name!r}: node(s) failed: {parts}"
            raise PatternFailed(AgentOther(f"{msg}; skipped: {', '.join(skip) or 'none'}"))
        if paused:
            order = {n: i for i, n in enumerate(self.order)}
            steps = dict(sorted(paused.items(), key=lambda kv: order[kv[0]]))
            raise PatternPaused({"done": dict(texts)}, steps)
        if len(self.sinks) == 1:
            answer = texts[self.sinks[0]]
        else:
            answer = sorted_json({s: texts[s] for s in self.sinks})
        for out in final_message(self.name, answer):
            yield out
