"""Durable runs on Temporal: each model turn and each tool call is an activity.

* :class:`TemporalRunner` (client): starts the agent-loop workflow on a task queue and
  awaits its events; sessions are loaded and recorded on the client.
* :class:`TemporalAgentWorker` (worker process): registers agents, serves the workflow and
  the activities under a :class:`WorkerPosture` (the worker's permissions and redaction are
  authoritative; the caller's context never crosses).
* :class:`AgentLoopWorkflow`: a thin deterministic adapter over :class:`DurableDriver`,
  which drives the same native loop machine as the ephemeral driver. A worker crash resumes
  from the last completed activity by history replay.

Needs the ``temporal`` extra (``pip install 'helikon[temporal]'``).
"""

from __future__ import annotations

from helikon._extras import require_extra

require_extra("helikon.runtimes.temporal", "temporal", "temporalio", "the temporalio SDK")

from helikon.runtimes.temporal.durable import DurableDriver  # noqa: E402
from helikon.runtimes.temporal.posture import WorkerPosture  # noqa: E402
from helikon.runtimes.temporal.runner import TemporalRunner, TemporalRunnerConfig  # noqa: E402
from helikon.runtimes.temporal.worker import (  # noqa: E402
    TemporalAgentWorker,
    check_durable,
    workflow_runner,
)
from helikon.runtimes.temporal.workflow import AgentLoopWorkflow  # noqa: E402

__all__ = [
    "AgentLoopWorkflow",
    "DurableDriver",
    "TemporalAgentWorker",
    "TemporalRunner",
    "TemporalRunnerConfig",
    "WorkerPosture",
    "check_durable",
    "workflow_runner",
]
