"""One tool round: the calls of one model turn, run under the run's cancellation token.

The driver hands a round the calls the machine asks for (:class:`ToolRound`); each call goes
through the per-call pipeline (:class:`~helikon.core.tool_exec.ToolCallRunner`) in its own
task, with :func:`calling_run_context`, the run's approvals and its usage meter set inside that
task only. One call is awaited through one future the token can also wake; several are
scheduled by effect, all under ``parallel_tool_call_limit``: the calls of
``ToolEffect.READ_ONLY`` tools run concurrently, while the ``WRITE`` and ``SIDE_EFFECT``
calls run one at a time in the model's order (alongside the reads), so two writes of one
turn never race. A call of an unknown tool counts as a read (it runs nothing). When the
token fires, the tasks still running are cancelled and left behind (a tool that swallows its
cancellation cannot hold the run) and the round reports that it was cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Coroutine, Iterator
from typing import Any

from helikon.core.context import RunContext
from helikon.core.driven import DrivenAgent
from helikon.core.items import ToolCall
from helikon.core.pause import CALLING_APPROVALS, Approvals
from helikon.core.tool import ToolEffect
from helikon.core.tool_exec import CallOutcome, ToolCallRunner
from helikon.core.usage_limits import UsageMeter, current_meter

__all__ = ["ToolRound", "calling_agent", "calling_run_context"]

_CALLING_CONTEXT: contextvars.ContextVar[RunContext[Any] | None] = contextvars.ContextVar(
    "helikon_calling_context", default=None
)


def calling_run_context() -> RunContext[Any] | None:
    """The :class:`RunContext` of the run whose tool call is executing, else ``None``.

    Set for the duration of each tool call's task (never leaked to the caller's context), so a
    tool that starts a sub-run (``AgentAsTool``) can pass on what a :class:`ToolContext` does
    not carry: the tracer and the permission configuration.
    """
    return _CALLING_CONTEXT.get()


_CALLING_AGENT: contextvars.ContextVar[DrivenAgent | None] = contextvars.ContextVar(
    "helikon_calling_agent", default=None
)


def calling_agent() -> DrivenAgent | None:
    """The agent whose tool call is executing, else ``None`` (set like
    :func:`calling_run_context`): an MCP server's sampling request is answered by its model,
    and its workspace is the server's default roots."""
    return _CALLING_AGENT.get()


class ToolRound:
    """The calls of one model turn.

    Args:
        caller: the run's tool-call pipeline.
        token: the run's cancellation token.
        approvals: how asks are answered before the approval handler (set for each call).
        meter: the budget the calls spend from (an agent-as-tool spends from it).
        agent: the calling agent (:func:`calling_agent` inside each call).
    """

    def __init__(
        self,
        caller: ToolCallRunner,
        token: Any,
        approvals: Approvals,
        meter: UsageMeter,
        agent: DrivenAgent | None,
    ) -> None:
        self._caller = caller
        self._token = token
        self._approvals = approvals
        self._meter = meter
        self._agent = agent

    async def run(self, calls: list[ToolCall], limit: int | None) -> list[CallOutcome] | None:
        """Each call's outcome, in the order of ``calls``; ``None`` when the token fired first
        (the calls still running are cancelled and left behind). ``limit``: the most calls
        running at once (``None``: all)."""
        if len(calls) == 1:
            return await self._run_one(calls[0])
        return await self._run_many(calls, limit)

    @contextlib.contextmanager
    def _calling(self) -> Iterator[None]:
        """While the block runs, a task created copies the call's context variables."""
        reset = _CALLING_CONTEXT.set(self._caller.ctx)
        reset_approvals = CALLING_APPROVALS.set(self._approvals)
        reset_meter = current_meter().set(self._meter)
        reset_agent = _CALLING_AGENT.set(self._agent)
        try:
            yield
        finally:
            _CALLING_AGENT.reset(reset_agent)
            current_meter().reset(reset_meter)
            CALLING_APPROVALS.reset(reset_approvals)
            _CALLING_CONTEXT.reset(reset)

    async def _run_one(self, call: ToolCall) -> list[CallOutcome] | None:
        """One call in its own task, awaited through one future the token can also wake.

        Cheaper than ``_run_many`` (no gather, no watcher task, no ``asyncio.wait``).
        """
        token = self._token
        if token.cancelled:
            return None
        inner = self._spawn(self._caller.run(call))
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake(_: object = None) -> None:
            if not waiter.done():
                waiter.set_result(None)

        inner.add_done_callback(wake)
        token.on_cancel(wake)
        try:
            await waiter
        except asyncio.CancelledError:  # the driver's own task was cancelled
            _abandon(inner)
            raise
        finally:
            token.off_cancel(wake)
        if token.cancelled:
            _abandon(inner)
            return None
        return [inner.result()]

    def _spawn(self, coro: Coroutine[Any, Any, CallOutcome]) -> asyncio.Task[CallOutcome]:
        """A task for one call, with :func:`calling_run_context` set inside it only."""
        with self._calling():
            return asyncio.get_running_loop().create_task(coro)

    async def _call(self, call: ToolCall, sem: asyncio.Semaphore | None) -> CallOutcome:
        if sem is None:
            return await self._caller.run(call)
        async with sem:
            return await self._caller.run(call)

    def _reads(self, call: ToolCall) -> bool:
        """The call may run alongside others: its tool is read-only (or unknown)."""
        tool = self._caller.tools.get(call.name)
        return tool is None or tool.effect is ToolEffect.READ_ONLY

    async def _in_order(
        self, calls: list[ToolCall], sem: asyncio.Semaphore | None
    ) -> list[CallOutcome]:
        """The writing calls, one at a time in the model's order."""
        return [await self._call(c, sem) for c in calls]

    async def _run_many(self, calls: list[ToolCall], limit: int | None) -> list[CallOutcome] | None:
        sem = asyncio.Semaphore(limit) if limit is not None and limit < len(calls) else None
        reads = [i for i, c in enumerate(calls) if self._reads(c)]
        writes = [i for i, c in enumerate(calls) if not self._reads(c)]
        jobs: list[Coroutine[Any, Any, Any]] = [self._call(calls[i], sem) for i in reads]
        if writes:
            jobs.append(self._in_order([calls[i] for i in writes], sem))
        with self._calling():  # gather wraps each call in a task now, copying the context
            gathered = asyncio.gather(*jobs)
        waiter = asyncio.ensure_future(self._token.wait())
        try:
            done, _ = await asyncio.wait({gathered, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if gathered not in done:
            _abandon(gathered)
            return None
        results: list[Any] = gathered.result()
        outcomes: list[CallOutcome | None] = [None] * len(calls)
        for i, out in zip(reads, results, strict=False):
            outcomes[i] = out
        if writes:
            for i, out in zip(writes, results[-1], strict=True):
                outcomes[i] = out
        return [o for o in outcomes if o is not None]


def _abandon(fut: asyncio.Future[Any]) -> None:
    """Cancel a tool task left behind, and retrieve its outcome so asyncio does not log it."""
    fut.cancel()
    fut.add_done_callback(_retrieve)


def _retrieve(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()
