"""Hooks around handoffs and failures, which the approval path depends on."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from helikon import Agent, RunConfig, RunContext
from helikon.core.hooks import (
    Allow,
    Deny,
    HookDecision,
    HookEvent,
    HookRegistry,
    OnRunComplete,
    OnRunFailed,
    OnRunStart,
)
from helikon.errors import RunError
from helikon.testing import Call, Delay, MockModel, Text


class Seen:
    def __init__(self, deny_start: str | None = None, boom: bool = False) -> None:
        self.events: list[HookEvent] = []
        self.deny_start = deny_start
        self.boom = boom

    async def on_event(self, ctx: RunContext[Any], event: HookEvent) -> HookDecision:
        self.events.append(event)
        if self.boom and isinstance(event, OnRunFailed):
            raise RuntimeError("hook broke")
        if self.deny_start is not None and isinstance(event, OnRunStart):
            return Deny(self.deny_start)
        return Allow()


async def test_root_agent_hooks_see_on_run_complete_when_a_handoff_target_answers() -> None:
    root_hook, target_hook, run_hook = Seen(), Seen(), Seen()
    billing = Agent(name="billing", model=MockModel([[Text("Paid.")]]), hooks=[target_hook])
    root = Agent(
        name="triage",
        model=MockModel([[Call("h1", "transfer_to_billing", {})]]),
        handoffs=[billing],
        hooks=[root_hook],
    )
    ctx = RunContext.ephemeral().with_hooks(HookRegistry([run_hook]))
    result = await root.run("pay", ctx)
    assert result.final_output == "Paid."
    assert [e for e in root_hook.events if isinstance(e, OnRunComplete)] == [
        OnRunComplete("triage")
    ]
    assert [e for e in target_hook.events if isinstance(e, OnRunComplete)] == [
        OnRunComplete("billing")
    ]
    # the run-level hook hears the answer once, from the agent that gave it
    assert [e for e in run_hook.events if isinstance(e, OnRunComplete)] == [
        OnRunComplete("billing")
    ]


async def test_deny_from_on_run_start_stops_the_run_before_any_model_call() -> None:
    model = MockModel([[Text("never")]])
    hook = Seen(deny_start="maintenance window")
    agent = Agent(name="a", model=model, hooks=[hook])
    with pytest.raises(RunError) as err:
        await agent.run("hi")
    assert str(err.value.error) == "run denied by hook: maintenance window"
    assert model.requests == []
    assert [e.type for e in err.value.events] == ["run_started", "run_failed"]
    assert [type(e).__name__ for e in hook.events] == ["OnRunStart", "OnRunFailed"]


async def test_a_failed_run_fires_on_run_failed_and_a_raising_hook_does_not_mask_it() -> None:
    hook = Seen(boom=True)
    model = MockModel([[Call(f"c{i}", "nope", {})] for i in range(3)])
    agent = Agent(name="a", model=model, hooks=[hook])
    with pytest.raises(RunError) as err:
        await agent.run("loop", run_config=RunConfig(max_turns=2))
    assert err.value.error.kind == "MaxTurnsExceeded"
    failed = [e for e in hook.events if isinstance(e, OnRunFailed)]
    assert failed == [OnRunFailed("a", "MaxTurnsExceeded", "max turns (2) exceeded")]


async def test_a_cancelled_run_fires_on_run_failed() -> None:
    hook = Seen()
    agent = Agent(name="a", model=MockModel([[Delay(5), Text("late")]]), hooks=[hook])
    ctx = RunContext.ephemeral()
    asyncio.get_running_loop().call_later(0.05, ctx.cancel.cancel)
    with pytest.raises(RunError) as err:
        await agent.run("hi", ctx)
    assert err.value.error.kind == "Cancelled"
    assert [e for e in hook.events if isinstance(e, OnRunFailed)] == [
        OnRunFailed("a", "Cancelled", str(err.value.error))
    ]


async def test_closing_the_stream_early_fires_on_run_failed_as_cancelled() -> None:
    hook = Seen()
    agent = Agent(name="a", model=MockModel([[Text("hello")]]), hooks=[hook])
    async with contextlib.aclosing(agent.stream("hi")) as stream:
        async for ev in stream:
            if ev.type == "turn_started":
                break
    assert [e.kind for e in hook.events if isinstance(e, OnRunFailed)] == ["Cancelled"]


async def test_closing_the_stream_after_the_terminal_event_fires_no_failure() -> None:
    hook = Seen()
    agent = Agent(name="a", model=MockModel([[Text("hello")]]), hooks=[hook])
    async with contextlib.aclosing(agent.stream("hi")) as stream:
        async for ev in stream:
            if ev.type == "run_completed":
                break
    assert [e for e in hook.events if isinstance(e, OnRunFailed)] == []
    assert [type(e).__name__ for e in hook.events][-1] == "OnRunComplete"
