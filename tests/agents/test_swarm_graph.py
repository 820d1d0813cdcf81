"""SwarmAgent (BR-27's ping-pong variant) and GraphAgent on scripted models."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from helikon import Agent, RunContext, RunError, tool
from helikon.agents import AgentAsTool, GraphAgent, ParallelAgent, SwarmAgent
from helikon.errors import ConfigError, MaxHandoffsExceeded
from helikon.runtimes import Runner
from helikon.sessions import MemorySession, find_repairs
from helikon.testing import Call, Delay, Fail, MockModel, Text, Usage


def _agent(name: str, scripts: list[list[Any]], **kw: Any) -> Agent:
    return Agent(name=name, model=MockModel(scripts), **kw)


def _ping_pong(n: int) -> tuple[Agent, Agent]:
    """Two agents whose every turn transfers to the other."""
    ping = _agent("ping", [[Call(f"p{i}", "transfer_to_pong", {}), Usage(3, 1)] for i in range(n)])
    pong = _agent("pong", [[Call(f"q{i}", "transfer_to_ping", {}), Usage(3, 1)] for i in range(n)])
    return ping, pong


# --------------------------------------------------------------------------- Swarm


async def test_swarm_routes_through_full_mesh_handoffs_first_answer_wins() -> None:
    triage = _agent("triage", [[Call("t1", "transfer_to_investing", {})]])
    budgeting = _agent("budgeting", [])
    investing = _agent("investing", [[Call("i1", "transfer_to_budgeting", {})]])
    budgeting.model.push([Text("Spend less.")])  # type: ignore[attr-defined]
    swarm = SwarmAgent(
        "support", "Finance help.", members=[triage, budgeting, investing], max_handoffs=6
    )
    result = await swarm.run("help")
    assert result.final_output == "Spend less."
    hops = [(e.from_agent, e.to_agent) for e in result.events if e.type == "handoff_item"]  # type: ignore[union-attr]
    assert hops == [("triage", "investing"), ("investing", "budgeting")]
    assert [(e.type, getattr(e, "agent", None)) for e in result.events[:2]] == [
        ("run_started", "support"),
        ("agent_updated", "triage"),
    ]
    # every member offers a transfer to each other member; the originals are untouched
    tools = [t.name for t in triage.model.requests[0].tools]  # type: ignore[attr-defined]
    assert tools == ["transfer_to_budgeting", "transfer_to_investing"]
    assert triage.handoffs == []


async def test_swarm_ping_pong_fails_with_max_handoffs_in_bounded_time() -> None:
    ping, pong = _ping_pong(10)
    swarm = SwarmAgent("pp", members=[ping, pong], max_handoffs=4)
    t0 = time.monotonic()
    with pytest.raises(RunError) as info:
        await asyncio.wait_for(swarm.run("go"), 5)
    assert time.monotonic() - t0 < 2
    assert isinstance(info.value.error, MaxHandoffsExceeded)
    assert info.value.error.limit == 4
    assert str(info.value.error) == "max handoffs (4) exceeded"
    # five model turns ran (the fifth handoff broke the budget), usage summed over all
    assert (info.value.usage.input_tokens, info.value.usage.output_tokens) == (15, 5)
    assert sum(1 for e in info.value.events if e.type == "handoff_item") == 4
    assert info.value.events[-1].error == {  # type: ignore[union-attr]
        "kind": "MaxHandoffsExceeded",
        "message": "max handoffs (4) exceeded",
        "limit": 4,
    }


async def test_swarm_ping_pong_without_budget_stops_at_max_agent_depth() -> None:
    ping, pong = _ping_pong(10)
    swarm = SwarmAgent("pp", members=[ping, pong])
    with pytest.raises(RunError) as info:
        await asyncio.wait_for(swarm.run("go"), 5)
    assert info.value.error.kind == "MaxAgentDepthExceeded"
    assert str(info.value.error) == "max agent depth (8) exceeded"
    assert info.value.usage.input_tokens == 3 * 8


def test_swarm_validation() -> None:
    a, b = _agent("a", []), _agent("b", [])
    with pytest.raises(ConfigError, match="at least one member"):
        SwarmAgent("s", members=[])
    with pytest.raises(ConfigError, match="duplicate member name\\(s\\) 'a'"):
        SwarmAgent("s", members=[a, _agent("a", [])])
    with pytest.raises(ConfigError, match="entry 'c' is not a member"):
        SwarmAgent("s", members=[a, b], entry="c")
    with pytest.raises(ConfigError, match="must be Agents"):
        SwarmAgent("s", members=[a, ParallelAgent("p")])  # type: ignore[list-item]
    # members whose slugs clash get distinct names (a hash suffix), not an error
    xs = SwarmAgent("s", members=[a, _agent("x y", []), _agent("x-y", [])])
    assert len({s.tool_name for s in xs.members[0].handoff_specs}) == 2  # type: ignore[attr-defined]

    @tool(name="transfer_to_b")
    def shadow() -> str:
        """A tool named like a transfer tool."""
        return ""

    shadowing = Agent(name="a", model=MockModel([]), tools=[shadow])
    with pytest.raises(ConfigError, match="colliding transfer tools"):
        SwarmAgent("s", members=[shadowing, b])
    assert SwarmAgent("s", members=[a, b], entry="b").entry.name == "b"


async def test_swarm_under_runner_records_a_valid_conversation() -> None:
    front = _agent("front", [[Call("h1", "transfer_to_billing", {})]])
    billing = _agent("billing", [[Text("7")]])
    session = MemorySession()
    swarm = SwarmAgent("desk", members=[front, billing], max_handoffs=2)
    result = await Runner().run(swarm, "sum 3 and 4", session=session)
    assert result.final_output == "7"
    convo = await session.snapshot()
    assert find_repairs(convo) == []
    assert [i.type for i in convo] == [
        "user_message",
        "tool_call",
        "tool_result",
        "assistant_message",
    ]


# --------------------------------------------------------------------------- Graph


def _diamond(**models: MockModel) -> GraphAgent:
    return GraphAgent(
        "finance_report",
        "Spending and income into a summary.",
        nodes={name: Agent(name=name, model=m) for name, m in models.items()},
        edges=[("spending", "summary"), ("income", "summary")],
    )


async def test_graph_runs_a_diamond_and_feeds_predecessor_outputs() -> None:
    summary = MockModel([[Text("net +100"), Usage(5, 1)]])
    graph = _diamond(
        spending=MockModel([[Delay(0.05), Text("spent 400"), Usage(1, 1)]]),
        income=MockModel([[Text("earned 500"), Usage(2, 1)]]),
        summary=summary,
    )
    ctx = RunContext.ephemeral(None)
    result = await graph.run("report", ctx)
    assert result.final_output == "net +100"
    assert ctx.state == {"spending": "spent 400", "income": "earned 500", "summary": "net +100"}
    texts = [m.content[0].text for m in summary.requests[0].messages]  # type: ignore[union-attr]
    assert texts == ["report", "[spending]\nspent 400", "[income]\nearned 500"]
    assert result.usage.input_tokens == 8
    assert result.events[-2].item.agent == "finance_report"  # type: ignore[union-attr]


async def test_graph_with_several_sinks_answers_sorted_json() -> None:
    graph = GraphAgent(
        "g",
        nodes=[_agent(n, [[Text(n.upper())]]) for n in ("root", "z", "y")],
        edges=[("root", "z"), ("root", "y")],
    )
    assert (await graph.run("x")).final_output == '{"y":"Y","z":"Z"}'


async def test_graph_failure_skips_descendants_and_lets_independent_nodes_finish() -> None:
    independent = MockModel([[Delay(0.05), Text("I")]])
    never = MockModel([[Text("never")]])
    graph = GraphAgent(
        "g",
        nodes={
            "a": _agent("a", [[Fail("Unavailable", "down")]]),
            "b": Agent(name="b", model=never),
            "c": _agent("c", []),
            "ind": Agent(name="ind", model=independent),
        },
        edges=[("a", "b"), ("b", "c")],
    )
    ctx = RunContext.ephemeral(None)
    with pytest.raises(RunError) as info:
        await graph.run("x", ctx)
    assert str(info.value.error) == (
        "GraphAgent 'g': node(s) failed: a (Other: model error (Unavailable): down); skipped: b, c"
    )
    assert ctx.state == {"ind": "I"}
    assert never.remaining == 1


def test_graph_validation_names_the_culprits() -> None:
    a, b, c = _agent("a", []), _agent("b", []), _agent("c", [])
    with pytest.raises(ConfigError, match="has a cycle: a -> b -> c -> a"):
        GraphAgent("g", nodes=[a, b, c], edges=[("a", "b"), ("b", "c"), ("c", "a")])
    with pytest.raises(ConfigError, match="has a cycle: a -> a"):
        GraphAgent("g", nodes=[a], edges=[("a", "a")])
    with pytest.raises(ConfigError, match="unknown node\\(s\\) 'x'"):
        GraphAgent("g", nodes=[a, b], edges=[("a", "x")])
    with pytest.raises(ConfigError, match="duplicate node name\\(s\\) 'a'"):
        GraphAgent("g", nodes=[("a", a), ("a", b)])
    with pytest.raises(ConfigError, match="no nodes"):
        GraphAgent("g", nodes={})
    with pytest.raises(ConfigError, match="duplicate edge 'a' -> 'b'"):
        GraphAgent("g", nodes=[a, b], edges=[("a", "b"), ("a", "b")])


async def test_graph_nests_as_a_tool_and_cancels() -> None:
    graph = GraphAgent("report", "Make a report.", nodes=[_agent("only", [[Text("R")]])])
    script = [[Call("c1", "report", {"input": "go"})], [Text("got R")]]
    host = _agent("host", script, tools=[AgentAsTool(graph)])
    assert (await host.run("q")).final_output == "got R"

    slow = GraphAgent("slow", nodes=[_agent("s", [[Delay(30), Text("x")]])])
    ctx = RunContext.ephemeral(None)
    asyncio.get_running_loop().call_later(0.05, ctx.cancel.cancel)
    with pytest.raises(RunError) as info:
        await asyncio.wait_for(slow.run("x", ctx), 5)
    assert info.value.error.kind == "Cancelled"
