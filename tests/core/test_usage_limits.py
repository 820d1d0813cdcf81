"""``Usage.requests`` and ``RunConfig(usage_limits=UsageLimits(...))`` on the scripted model:
the exact request at which a run (with its handoff targets and agent-as-tool sub-runs) stops,
and the typed error it stops with."""

from __future__ import annotations

import pytest

from helikon import (
    Agent,
    RunConfig,
    RunError,
    ToolResult,
    UsageLimitExceeded,
    UsageLimits,
    tool,
)
from helikon.agents import AgentAsTool
from helikon.errors import AgentError, ConfigError
from helikon.testing import Call, MockModel, Text, Usage


@tool
async def lookup(q: str) -> str:
    """Look something up."""
    return f"found {q}"


def _looping_model(turns: int) -> MockModel:
    return MockModel([[Call(f"c{i}", "lookup", {"q": str(i)})] for i in range(turns)])


async def test_usage_counts_one_request_per_model_call() -> None:
    model = MockModel(
        [[Call("c1", "lookup", {"q": "a"}), Usage(10, 2)], [Text("ok"), Usage(20, 3)]]
    )
    agent = Agent(name="a", model=model, tools=[lookup])
    result = await agent.run("go")
    assert result.usage.requests == 2
    assert (result.usage.input_tokens, result.usage.output_tokens) == (30, 5)


async def test_the_request_limit_stops_the_run_before_the_next_request() -> None:
    model = _looping_model(5)
    agent = Agent(name="a", model=model, tools=[lookup])
    config = RunConfig(usage_limits=UsageLimits(request_limit=3))
    with pytest.raises(RunError) as exc:
        await agent.run("go", run_config=config)
    err = exc.value.error
    assert isinstance(err, UsageLimitExceeded)
    assert isinstance(err, AgentError)
    assert (err.limit_name, err.limit, err.used) == ("request_limit", 3, 4)
    assert str(err) == (
        "usage limit request_limit=3 reached: model request 4 was not sent "
        "(the run and its sub-agents); raise UsageLimits(request_limit=...) to allow more"
    )
    assert len(model.requests) == 3
    assert exc.value.usage.requests == 3
    # the third reply's tool call still ran: no work the model asked for is lost
    outputs = [e.item for e in exc.value.events if e.type == "tool_output_item"]
    assert [o.call_id for o in outputs if isinstance(o, ToolResult)] == ["c0", "c1", "c2"]


async def test_a_request_limit_of_zero_sends_nothing() -> None:
    model = _looping_model(1)
    agent = Agent(name="a", model=model, tools=[lookup])
    with pytest.raises(RunError) as exc:
        await agent.run("go", run_config=RunConfig(usage_limits=UsageLimits(request_limit=0)))
    assert isinstance(exc.value.error, UsageLimitExceeded)
    assert model.requests == []


async def test_a_run_within_its_limits_completes() -> None:
    model = MockModel([[Call("c1", "lookup", {"q": "a"})], [Text("done")]])
    agent = Agent(name="a", model=model, tools=[lookup])
    limits = UsageLimits(request_limit=2, total_tokens_limit=100)
    result = await agent.run("go", run_config=RunConfig(usage_limits=limits))
    assert result.final_output == "done"
    assert result.usage.requests == 2


@pytest.mark.parametrize(
    ("field", "limit", "used", "unit"),
    [
        ("total_tokens_limit", 40, 45, "total tokens"),
        ("input_tokens_limit", 25, 30, "input tokens"),
        ("output_tokens_limit", 14, 15, "output tokens"),
    ],
)
async def test_a_token_limit_stops_after_the_reply_that_passes_it(
    field: str, limit: int, used: int, unit: str
) -> None:
    model = MockModel(
        [
            [Call("c1", "lookup", {"q": "a"}), Usage(10, 5)],
            [Call("c2", "lookup", {"q": "b"}), Usage(10, 5)],
            [Call("c3", "lookup", {"q": "c"}), Usage(10, 5)],
            [Text("never")],
        ]
    )
    agent = Agent(name="a", model=model, tools=[lookup])
    config = RunConfig(usage_limits=UsageLimits(**{field: limit}))
    with pytest.raises(RunError) as exc:
        await agent.run("go", run_config=config)
    err = exc.value.error
    assert isinstance(err, UsageLimitExceeded)
    assert (err.limit_name, err.limit, err.used) == (field, limit, used)
    assert str(err) == (
        f"usage limit {field}={limit} exceeded: {used} {unit} used (the run and its "
        f"sub-agents); raise UsageLimits({field}=...) to allow more"
    )
    assert len(model.requests) == 3
    assert exc.value.usage.total_tokens == 45
    assert exc.value.usage.requests == 3


async def test_a_handoff_target_spends_from_the_same_budget() -> None:
    specialist_model = _looping_model(5)
    specialist = Agent(name="specialist", model=specialist_model, tools=[lookup])
    triage_model = MockModel([[Call("t1", "transfer_to_specialist", {})]])
    triage = Agent(name="triage", model=triage_model, handoffs=[specialist])
    config = RunConfig(usage_limits=UsageLimits(request_limit=3))
    with pytest.raises(RunError) as exc:
        await triage.run("go", run_config=config)
    err = exc.value.error
    assert isinstance(err, UsageLimitExceeded)
    assert err.used == 4
    assert len(triage_model.requests) == 1
    assert len(specialist_model.requests) == 2
    assert exc.value.usage.requests == 3


async def test_a_completed_handoff_run_counts_every_agents_requests() -> None:
    specialist = Agent(name="specialist", model=MockModel([[Text("done")]]))
    triage_model = MockModel([[Call("t1", "transfer_to_specialist", {})]])
    triage = Agent(name="triage", model=triage_model, handoffs=[specialist])
    result = await triage.run("go")
    assert result.final_output == "done"
    assert result.usage.requests == 2


async def test_an_agent_as_tool_spends_from_the_callers_budget() -> None:
    sub_model = MockModel([[Call("s1", "lookup", {"q": "x"})], [Text("sub done")]])
    sub = Agent(name="researcher", model=sub_model, tools=[lookup])
    host_model = MockModel([[Call("h1", "researcher", {"input": "dig"})], [Text("never sent")]])
    host = Agent(name="host", model=host_model, tools=[AgentAsTool(sub)])
    config = RunConfig(usage_limits=UsageLimits(request_limit=2))
    with pytest.raises(RunError) as exc:
        await host.run("go", run_config=config)
    err = exc.value.error
    assert isinstance(err, UsageLimitExceeded)
    assert (err.limit_name, err.used) == ("request_limit", 3)
    # host request 1, the sub-run's request 2; the sub-run's second request was refused
    # (its failure went back to the host as a tool error) and so was the host's next one
    assert len(host_model.requests) == 1
    assert len(sub_model.requests) == 1
    outputs = [e.item for e in exc.value.events if e.type == "tool_output_item"]
    assert len(outputs) == 1
    assert "usage limit request_limit=2 reached" in outputs[0].content[0].text


async def test_an_agent_as_tool_without_limits_runs_under_a_limited_caller() -> None:
    sub_model = MockModel([[Text("sub done")]])
    sub = Agent(name="researcher", model=sub_model)
    host_model = MockModel([[Call("h1", "researcher", {"input": "dig"})], [Text("all done")]])
    host = Agent(name="host", model=host_model, tools=[AgentAsTool(sub)])
    result = await host.run("go", run_config=RunConfig(usage_limits=UsageLimits(request_limit=3)))
    assert result.final_output == "all done"


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_a_limit_that_is_not_a_count_is_refused_naming_the_field(bad: object) -> None:
    with pytest.raises(ConfigError) as exc:
        UsageLimits(request_limit=bad)  # type: ignore[arg-type]
    assert str(exc.value) == (
        f"UsageLimits(request_limit=...) must be an int >= 0 or None (no limit), got {bad!r}"
    )


def test_run_config_refuses_a_dict_for_usage_limits() -> None:
    with pytest.raises(ConfigError) as exc:
        RunConfig(usage_limits={"request_limit": 1})  # type: ignore[arg-type]
    assert str(exc.value) == (
        "RunConfig.usage_limits must be a UsageLimits(request_limit=..., "
        "total_tokens_limit=...) or None, got dict"
    )


def test_the_error_survives_its_dict_form() -> None:
    from helikon.core.result import agent_error_from_dict

    err = UsageLimitExceeded("total_tokens_limit", 10, 12)
    back = agent_error_from_dict(err.to_dict())
    assert isinstance(back, UsageLimitExceeded)
    assert (back.limit_name, back.limit, back.used, str(back)) == (
        "total_tokens_limit",
        10,
        12,
        str(err),
    )


_SPELLING = (
    "(usage_limits=...): helikon takes it in the run config: "
    "run_config=RunConfig(usage_limits=UsageLimits(request_limit=N))"
)


@pytest.mark.parametrize("call", ["run_sync", "stream"])
def test_usage_limits_on_a_run_names_the_run_config(call: str) -> None:
    agent = Agent(name="a", model=MockModel([[Text("x")]]))
    with pytest.raises(ConfigError) as exc:
        getattr(agent, call)("go", usage_limits=UsageLimits(request_limit=1))
    assert str(exc.value) == f"Agent.{call}{_SPELLING}"


async def test_usage_limits_on_an_awaited_run_names_the_run_config() -> None:
    agent = Agent(name="a", model=MockModel([[Text("x")]]))
    with pytest.raises(ConfigError) as exc:
        await agent.run("go", usage_limits=UsageLimits(request_limit=1))  # type: ignore[call-arg]
    assert str(exc.value) == f"Agent.run{_SPELLING}"


def test_an_agent_as_tool_sub_run_adds_its_usage_to_the_callers_result() -> None:
    inner = Agent(name="inner", model=MockModel([[Usage(5, 1), Text("42")]]))
    outer = Agent(
        name="outer",
        model=MockModel(
            [
                [Usage(10, 2), Call("c1", "inner", {"input": "q"})],
                [Usage(20, 3), Text("done")],
            ]
        ),
        tools=[AgentAsTool(inner)],
    )
    usage = outer.run_sync("go").usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.requests) == (
        35,
        6,
        41,
        3,
    )
    # a sub-run that fails still spent: its usage is the caller's too
    broken = Agent(name="inner", model=MockModel([]))
    outer = Agent(
        name="outer",
        model=MockModel(
            [[Usage(10, 2), Call("c1", "inner", {"input": "q"})], [Usage(20, 3), Text("x")]]
        ),
        tools=[AgentAsTool(broken)],
    )
    usage = outer.run_sync("go").usage  # the tool error goes back to the model
    assert usage.requests == 3  # the failed sub-run's one request counts
