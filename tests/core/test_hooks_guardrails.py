"""Hooks and guardrails around a run."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from helikon import Agent, RunContext, RunError, SystemMessage, tool
from helikon.core.guardrails import GuardrailInput, GuardrailKind, Pass, Tripwire
from helikon.core.hooks import (
    Allow,
    Deny,
    HookEvent,
    HookRegistry,
    InjectSystemMessage,
    OnRunComplete,
    OnRunStart,
    OnTurnStart,
    PostToolUse,
    PreToolUse,
    ReplaceInput,
    ReplaceOutput,
)
from helikon.testing import Call, Delay, MockModel, Text

seen: list[Any] = []


@tool
def echo(x: str) -> str:
    """Echo."""
    seen.append(x)
    return f"echo:{x}"


class Recorder:
    def __init__(self, name: str, decide: Any = None) -> None:
        self.name = name
        self.decide = decide
        self.events: list[HookEvent] = []

    async def on_event(self, ctx: RunContext[Any], event: HookEvent) -> Any:
        self.events.append(event)
        if self.decide is not None:
            d = self.decide(event)
            if d is not None:
                return d
        return Allow()


@pytest.fixture(autouse=True)
def _reset() -> None:
    seen.clear()


def _script() -> MockModel:
    return MockModel([[Call("c1", "echo", {"x": "a"})], [Text("done")]])


async def test_lifecycle_order_agent_hooks_before_run_hooks() -> None:
    order: list[str] = []

    def note(tag: str) -> Any:
        return lambda ev: order.append(f"{tag}:{type(ev).__name__}")

    agent_hook = Recorder("agent", note("agent"))
    run_hook = Recorder("run", note("run"))
    agent = Agent(name="a", model=_script(), tools=[echo], hooks=[agent_hook])
    ctx = RunContext.ephemeral(None).with_hooks(HookRegistry([run_hook]))
    await agent.run("go", ctx)
    assert order == [
        "agent:OnRunStart",
        "run:OnRunStart",
        "agent:OnTurnStart",
        "run:OnTurnStart",
        "agent:PreToolUse",
        "run:PreToolUse",
        "agent:PostToolUse",
        "run:PostToolUse",
        "agent:OnTurnStart",
        "run:OnTurnStart",
        "agent:OnRunComplete",
        "run:OnRunComplete",
    ]
    assert agent_hook.events[0] == OnRunStart("a")
    assert agent_hook.events[1] == OnTurnStart(0)
    assert agent_hook.events[2] == PreToolUse("echo", {"x": "a"}, "c1")
    assert agent_hook.events[3] == PostToolUse("echo", "echo:a", "c1")
    assert agent_hook.events[-1] == OnRunComplete("a")


async def test_pre_tool_use_replace_input_and_deny() -> None:
    rewrite = Recorder(
        "r", lambda ev: ReplaceInput({"x": "safe"}) if isinstance(ev, PreToolUse) else None
    )
    result = await Agent(name="a", model=_script(), tools=[echo], hooks=[rewrite]).run("go")
    assert seen == ["safe"]
    assert result.final_output == "done"

    seen.clear()
    deny = Recorder("d", lambda ev: Deny("no echo today") if isinstance(ev, PreToolUse) else None)
    later = Recorder("later")
    ctx = RunContext.ephemeral(None).with_hooks(HookRegistry([later]))
    result = await Agent(name="a", model=_script(), tools=[echo], hooks=[deny]).run("go", ctx)
    assert seen == []
    out = next(e for e in result.events if e.type == "tool_output_item")
    assert out.item.is_error and out.item.content[0].text == "denied by hook: no echo today"
    assert not any(isinstance(e, PreToolUse) for e in later.events)  # first Deny wins


async def test_post_tool_use_replace_output_then_redaction() -> None:
    token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    hook = Recorder(
        "r",
        lambda ev: ReplaceOutput(f"rewritten {token}") if isinstance(ev, PostToolUse) else None,
    )
    model = _script()
    result = await Agent(name="a", model=model, tools=[echo], hooks=[hook]).run("go")
    out = next(e for e in result.events if e.type == "tool_output_item")
    assert out.item.content[0].text == "rewritten ***"
    assert token not in str(model.requests[1].messages)


async def test_inject_system_message_reaches_the_next_model_call_only() -> None:
    hook = Recorder(
        "i",
        lambda ev: InjectSystemMessage(f"turn {ev.turn}") if isinstance(ev, OnTurnStart) else None,
    )
    model = _script()
    await Agent(name="a", model=model, tools=[echo], hooks=[hook]).run("go")
    first, second = model.requests
    assert isinstance(first.messages[-1], SystemMessage)
    assert first.messages[-1].content[0].text == "turn 0"
    assert second.messages[-1].content[0].text == "turn 1"
    assert sum(isinstance(m, SystemMessage) for m in second.messages) == 1


class Block:
    def __init__(self, word: str, kind: GuardrailKind) -> None:
        self.word = word
        self.kind = kind
        self.inputs: list[GuardrailInput] = []

    async def check(self, ctx: RunContext[Any], input: GuardrailInput) -> Any:
        self.inputs.append(input)
        if self.word in input.text:
            return Tripwire(self.kind, {"matched": self.word})
        return Pass()


class Slow:
    async def check(self, ctx: RunContext[Any], input: GuardrailInput) -> Any:
        await asyncio.sleep(0.05)
        return Tripwire(GuardrailKind.INPUT_POLICY, {"slow": True})


class Broken:
    async def check(self, ctx: RunContext[Any], input: GuardrailInput) -> Any:
        raise RuntimeError("classifier down")


async def test_input_guardrail_tripwire_stops_before_any_tool_runs() -> None:
    agent = Agent(name="a", model=_script(), tools=[echo], input_guardrails=[Slow()])
    with pytest.raises(RunError) as exc:
        await agent.run("go")
    assert seen == []
    assert exc.value.error.kind == "GuardrailTriggered"
    kinds = [e.type for e in exc.value.events]
    assert kinds[-2:] == ["guardrail_triggered", "run_failed"]
    assert exc.value.events[-2].info == {"slow": True}


async def test_input_guardrail_runs_concurrently_and_cancels_the_model_call() -> None:
    model = MockModel([[Text("a"), Delay(5), Text("b")]])
    agent = Agent(
        name="a", model=model, input_guardrails=[Block("secret", GuardrailKind.INPUT_POLICY)]
    )
    with pytest.raises(RunError) as exc:
        await asyncio.wait_for(agent.run("tell me the secret"), 2)
    assert exc.value.error.kind == "GuardrailTriggered"
    assert exc.value.error.info == {"matched": "secret"}  # type: ignore[attr-defined]


async def test_output_guardrail_gates_the_final_text_and_errors_trip() -> None:
    guard = Block("done", GuardrailKind.OUTPUT_POLICY)
    agent = Agent(name="a", model=_script(), tools=[echo], output_guardrails=[guard])
    with pytest.raises(RunError) as exc:
        await agent.run("go")
    assert guard.inputs == [GuardrailInput("model_output", "done", (), "done")]
    assert exc.value.error.guardrail_kind == "output_policy"  # type: ignore[attr-defined]
    assert [e.type for e in exc.value.events].count("run_completed") == 0

    agent = Agent(name="a", model=MockModel([[Text("x")]]), input_guardrails=[Broken()])
    with pytest.raises(RunError) as exc:
        await agent.run("go")
    assert exc.value.error.guardrail_kind == "other"  # type: ignore[attr-defined]
    assert exc.value.error.info == {"error": "RuntimeError: classifier down"}  # type: ignore[attr-defined]


async def test_passing_guardrails_change_nothing() -> None:
    g = Block("never", GuardrailKind.INPUT_POLICY)
    result = await Agent(
        name="a", model=_script(), tools=[echo], input_guardrails=[g], output_guardrails=[g]
    ).run("go")
    assert result.final_output == "done"
    assert [i.source for i in g.inputs] == ["user_text", "model_output"]


async def test_an_answer_given_after_handoffs_passes_every_agents_output_guardrails() -> None:
    """BANANA comes from the last agent of front -> triage -> billing; front's guard sees it."""
    front_guard = Block("BANANA", GuardrailKind.OUTPUT_POLICY)
    billing_guard = Block("never", GuardrailKind.OUTPUT_POLICY)
    billing = Agent(
        name="billing",
        model=MockModel([[Text("BANANA refund done")]]),
        output_guardrails=[billing_guard],
    )
    triage = Agent(
        name="triage",
        model=MockModel([[Call("h2", "transfer_to_billing", {})]]),
        handoffs=[billing],
    )
    front = Agent(
        name="front",
        model=MockModel([[Call("h1", "transfer_to_triage", {})]]),
        handoffs=[triage],
        output_guardrails=[front_guard],
    )
    with pytest.raises(RunError) as exc:
        await front.run("refund me")
    assert exc.value.error.guardrail_kind == "output_policy"  # type: ignore[attr-defined]
    assert billing_guard.inputs == [
        GuardrailInput("model_output", "BANANA refund done", (), "BANANA refund done")
    ]
    assert front_guard.inputs == [
        GuardrailInput("model_output", "BANANA refund done", (), "BANANA refund done")
    ]
    assert "run_completed" not in [e.type for e in exc.value.events]

    # a passing answer goes through once per guardrail, the answering agent's first
    order: list[str] = []

    class Tag:
        def __init__(self, name: str) -> None:
            self.name = name

        async def check(self, ctx: RunContext[Any], input: GuardrailInput) -> Pass:
            order.append(f"{self.name}:{input.text}")
            return Pass()

    billing = Agent(
        name="billing", model=MockModel([[Text("ok")]]), output_guardrails=[Tag("billing")]
    )
    front = Agent(
        name="front",
        model=MockModel([[Call("h1", "transfer_to_billing", {})]]),
        handoffs=[billing],
        output_guardrails=[Tag("front")],
    )
    assert (await front.run("refund me")).final_output == "ok"
    assert order == ["billing:ok", "front:ok"]
