"""AgentAsTool and SequentialAgent on scripted models."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from helikon import Agent, PermissionMode, RunConfig, RunContext, RunError, ToolContext, tool
from helikon.agents import AgentAsTool, SequentialAgent
from helikon.core.hooks import Allow, HookRegistry
from helikon.errors import ConfigError
from helikon.testing import Call, Delay, Fail, MockModel, Text, Usage


def _agent(name: str, scripts: list[list[Any]], **kw: Any) -> Agent:
    return Agent(name=name, model=MockModel(scripts), **kw)


# --------------------------------------------------------------------------- AgentAsTool


async def test_agent_as_tool_returns_the_sub_agents_answer_to_the_parent() -> None:
    sub_model = MockModel([[Text("- a\n- b\n- c"), Usage(5, 2)]])
    summarizer = Agent(name="summarizer", description="Digests text.", model=sub_model)
    writer = _agent(
        "writer",
        [
            [Call("c1", "summarizer", {"input": "long text"}), Usage(10, 1)],
            [Text("Draft based on digest."), Usage(20, 3)],
        ],
        tools=[AgentAsTool(summarizer)],
    )
    result = await writer.run("write a reply")
    assert result.final_output == "Draft based on digest."
    outputs = [e for e in result.events if e.type == "tool_output_item"]
    assert [o.item.content[0].text for o in outputs] == ["- a\n- b\n- c"]  # type: ignore[union-attr]
    # the sub-run saw only its input: no parent history, no parent instructions
    assert [m.type for m in sub_model.requests[0].messages] == ["user_message"]
    # the sub-run's own events stay out of the parent's stream
    assert [e.agent for e in result.events if e.type == "run_started"] == ["writer"]  # type: ignore[union-attr]
    # the tool advertises one string argument and the agent's description
    t = writer.tools[0]
    assert (t.name, t.description) == ("summarizer", "Digests text.")
    assert t.parameters["properties"] == {
        "input": {"type": "string", "description": "The request for the agent."}
    }


async def test_agent_as_tool_isolates_state_hooks_and_config_but_passes_user_ctx_and_mode() -> None:
    seen: dict[str, Any] = {}

    @tool
    def probe(ctx: ToolContext[Any]) -> str:
        """Record what the sub-run sees."""
        seen.update(
            user=ctx.user_ctx,
            state=dict(ctx.state),
            depth=ctx.agent_depth,
            mode=ctx.permission_mode,
            max_depth=ctx.max_agent_depth,
        )
        return "ok"

    inner = _agent(
        "inner",
        [[Call("p1", "probe", {})], [Text("inner done")]],
        tools=[probe],
        run_config=RunConfig(max_turns=3, max_agent_depth=20),
    )
    outer = _agent(
        "outer",
        [[Call("c1", "inner", {"input": "go"})], [Text("outer done")]],
        tools=[AgentAsTool(inner, effect="read_only")],
    )
    fired: list[str] = []

    class Recorder:
        async def on_event(self, ctx: Any, event: Any) -> Allow:
            fired.append(type(event).__name__)
            return Allow()

    ctx = RunContext.ephemeral({"user": "u1"}).with_permission_mode(PermissionMode.ACCEPT_EDITS)
    ctx = ctx.with_hooks(HookRegistry([Recorder()]))
    ctx.state["parent_key"] = 1
    result = await outer.run("hi", ctx, run_config=RunConfig(max_turns=2, max_agent_depth=5))
    assert result.final_output == "outer done"
    assert seen == {
        "user": {"user": "u1"},
        "state": {},
        "depth": 1,
        "mode": PermissionMode.ACCEPT_EDITS,
        "max_depth": 5,  # the parent's cap holds in the sub-run
    }
    # run-level hooks fired for the parent only: one OnRunStart, one OnRunComplete
    assert fired.count("OnRunStart") == 1
    assert fired.count("OnRunComplete") == 1


async def test_agent_as_tool_plan_mode_applies_to_the_wrapped_agents_tools() -> None:
    ran: list[str] = []

    @tool
    def delete_all() -> str:
        """Delete everything."""
        ran.append("delete_all")
        return "deleted"

    inner = _agent(
        "cleaner",
        [[Call("d1", "delete_all", {})], [Text("could not delete")]],
        tools=[delete_all],
    )
    outer = _agent(
        "outer",
        [[Call("c1", "cleaner", {"input": "clean"})], [Text("reported")]],
        tools=[AgentAsTool(inner)],
    )
    ctx = RunContext.ephemeral(None).with_permission_mode(PermissionMode.PLAN)
    result = await outer.run("go", ctx)
    assert result.final_output == "reported"
    assert ran == []  # the sub-agent's side-effecting tool was denied by the parent's mode
    out = [e for e in result.events if e.type == "tool_output_item"]
    assert out[0].item.content[0].text == "could not delete"  # type: ignore[union-attr]


async def test_agent_as_tool_failure_is_fed_back_as_a_tool_error() -> None:
    inner = _agent("inner", [[Fail("Unavailable", "down")]])
    outer = _agent(
        "outer",
        [[Call("c1", "inner", {"input": "x"})], [Text("sorry")]],
        tools=[AgentAsTool(inner)],
    )
    result = await outer.run("go")
    out = next(e for e in result.events if e.type == "tool_output_item")
    assert out.item.is_error  # type: ignore[union-attr]
    assert out.item.content[0].text == (  # type: ignore[union-attr]
        "agent 'inner' failed: model error (Unavailable): down"
    )


async def test_agent_as_tool_respects_max_agent_depth() -> None:
    inner = _agent("inner", [[Text("never")]])
    outer = _agent(
        "outer",
        [[Call("c1", "inner", {"input": "x"})], [Text("fine")]],
        tools=[AgentAsTool(inner)],
    )
    result = await outer.run("go", run_config=RunConfig(max_agent_depth=1))
    out = next(e for e in result.events if e.type == "tool_output_item")
    assert out.item.content[0].text == (  # type: ignore[union-attr]
        "max agent depth (1) exceeded: agent 'inner' cannot run as a tool at depth 1"
    )


async def test_agent_as_tool_invalid_args_are_reported() -> None:
    inner = _agent("inner", [])
    outer = _agent(
        "outer",
        [[Call("c1", "inner", {"text": 1})], [Text("ok")]],
        tools=[AgentAsTool(inner)],
    )
    result = await outer.run("go")
    out = next(e for e in result.events if e.type == "tool_output_item")
    assert out.item.content[0].text == (  # type: ignore[union-attr]
        "invalid arguments: input: Field required; text: Extra inputs are not permitted"
    )


async def test_agent_as_tool_cancel_reaches_the_sub_run() -> None:
    inner = _agent("inner", [[Delay(30), Text("late")]])
    outer = _agent("outer", [[Call("c1", "inner", {"input": "x"})]], tools=[AgentAsTool(inner)])
    ctx = RunContext.ephemeral(None)
    asyncio.get_running_loop().call_later(0.1, ctx.cancel.cancel)
    with pytest.raises(RunError) as info:
        await asyncio.wait_for(outer.run("go", ctx), 5)
    assert info.value.error.kind == "Cancelled"


def test_agent_as_tool_names() -> None:
    agent = _agent("investing specialist", [])
    with pytest.raises(ConfigError, match="name='investing_specialist'"):
        AgentAsTool(agent)
    t = AgentAsTool(agent, name="investing").with_description("Invest.")
    assert (t.name, t.description, t.effect.value) == ("investing", "Invest.", "read_only")
    assert t.with_name("inv").name == "inv"
    with pytest.raises(ConfigError, match="is not an agent"):
        AgentAsTool(object())


# --------------------------------------------------------------------------- Sequential


def _writer_reading(key: str, model: MockModel) -> Agent:
    return Agent(
        name="writer",
        model=model,
        instructions=lambda ctx: f"Notes: {ctx.state.get(key, '')}",
    )


async def test_sequential_runs_steps_in_order_and_shares_state() -> None:
    researcher = _agent("researcher", [[Text("fact A"), Usage(3, 1)]])
    writer_model = MockModel([[Text("brief on fact A"), Usage(4, 2)]])
    pipeline = SequentialAgent("pipe", "Research, then write.").then(researcher)
    pipeline.then(_writer_reading("researcher", writer_model))
    ctx = RunContext.ephemeral(None)
    result = await pipeline.run("topic", ctx)
    assert result.final_output == "brief on fact A"
    assert ctx.state == {"researcher": "fact A", "writer": "brief on fact A"}
    # the writer's instructions read the researcher's result from state
    system = writer_model.requests[0].messages[0]
    assert system.content[0].text == "Notes: fact A"  # type: ignore[union-attr]
    assert [(e.type, getattr(e, "agent", None)) for e in result.events] == [
        ("run_started", "pipe"),
        ("agent_updated", "researcher"),
        ("turn_started", None),
        ("token_delta", None),
        ("message_output", None),
        ("agent_updated", "writer"),
        ("turn_started", None),
        ("token_delta", None),
        ("message_output", None),
        ("run_completed", None),
    ]
    assert (result.usage.input_tokens, result.usage.output_tokens) == (7, 3)


async def test_sequential_keyed_steps_avoid_state_collisions() -> None:
    a1 = _agent("same", [[Text("first")]])
    a2 = _agent("same", [[Text("second")]])
    ctx = RunContext.ephemeral(None)
    await SequentialAgent("s").then_keyed("one", a1).then_keyed("two", a2).run("x", ctx)
    assert ctx.state == {"one": "first", "two": "second"}


async def test_sequential_fails_fast_with_the_steps_error_and_summed_usage() -> None:
    first = _agent("first", [[Call("c1", "nope", {}), Usage(2, 1)], [Fail("Refused", "no")]])
    never = MockModel([[Text("unused")]])
    seq = SequentialAgent(
        "s",
        steps=[
            _agent("ok", [[Text("fine"), Usage(1, 1)]]),
            first,
            Agent(name="never", model=never),
        ],
    )
    with pytest.raises(RunError) as info:
        await seq.run("x")
    assert info.value.error.kind == "Other"
    assert str(info.value.error) == "model error (Refused): no"
    assert never.remaining == 1
    assert info.value.usage.input_tokens == 1 + 2


async def test_sequential_nests_and_runs_sync_and_as_a_tool() -> None:
    inner = SequentialAgent("inner", steps=[_agent("a", [[Text("A")]]), _agent("b", [[Text("B")]])])
    outer = SequentialAgent("outer", steps=[inner, _agent("c", [[Text("C")]])])
    ctx = RunContext.ephemeral(None)
    result = await outer.run("go", ctx)
    assert result.final_output == "C"
    assert ctx.state == {"a": "A", "b": "B", "inner": "B", "c": "C"}
    updated = [e.agent for e in result.events if e.type == "agent_updated"]  # type: ignore[union-attr]
    assert updated == ["inner", "a", "b", "c"]

    pipe = SequentialAgent("pipe", "Two steps.", steps=[_agent("x", [[Text("X")]])])
    host = _agent("host", [[Call("c1", "pipe", {"input": "go"})], [Text("got X")]])
    host.tools.append(AgentAsTool(pipe))
    assert (await host.run("q")).final_output == "got X"


def test_sequential_run_sync_and_validation() -> None:
    seq = SequentialAgent("s", steps=[_agent("a", [[Text("A")]])])
    assert seq.run_sync("x").final_output == "A"
    with pytest.raises(ConfigError, match="is not an agent"):
        SequentialAgent("s").then("not an agent")
    with pytest.raises(ConfigError, match="non-empty string"):
        SequentialAgent("")
    with pytest.raises(RunError, match="has no steps"):
        SequentialAgent("empty").run_sync("x")


async def test_sequential_timeout_covers_the_whole_pipeline() -> None:
    seq = SequentialAgent(
        "s",
        steps=[_agent("a", [[Text("A")]]), _agent("slow", [[Delay(30), Text("late")]])],
        run_config=RunConfig(timeout=0.2),
    )
    with pytest.raises(RunError) as info:
        await asyncio.wait_for(seq.run("x"), 5)
    assert info.value.error.kind == "Timeout"
    assert str(info.value.error) == "run timed out after 0.2s"
