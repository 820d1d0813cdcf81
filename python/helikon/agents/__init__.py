"""Multi-agent patterns beyond handoffs: sub-agents as tools and deterministic orchestration.

* :class:`AgentAsTool`: call an agent like a tool and get its answer back.
* :class:`SequentialAgent`: steps in order, fail fast.
* :class:`ParallelAgent`: branches concurrently, collect-all, sorted-key JSON answer.
* :class:`LoopAgent`: repeat until a tool calls :func:`escalate`, up to ``max_iterations``.
* :class:`SwarmAgent`: Agents with full-mesh handoffs, bounded by ``max_handoffs``.
* :class:`GraphAgent`: a DAG of agents, validated when built.

Every pattern runs like an :class:`~helikon.Agent` (``run`` / ``run_sync`` / ``stream``, under
:class:`~helikon.runtimes.Runner`, nested in other patterns, wrapped by :class:`AgentAsTool`);
see :mod:`helikon.agents.base` and ``docs/guides/multi-agent.md``.
"""

from helikon.agents.as_tool import AgentAsTool
from helikon.agents.base import PatternAgent, Runnable
from helikon.agents.graph import GraphAgent
from helikon.agents.loop import LoopAgent, escalate
from helikon.agents.parallel import ParallelAgent
from helikon.agents.sequential import SequentialAgent
from helikon.agents.swarm import SwarmAgent

__all__ = [
    "AgentAsTool",
    "GraphAgent",
    "LoopAgent",
    "ParallelAgent",
    "PatternAgent",
    "Runnable",
    "SequentialAgent",
    "SwarmAgent",
    "escalate",
]
