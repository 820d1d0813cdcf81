"""``Agent(handoffs=[...])`` with ``handoff(agent, tool_name=, tool_description=, on_handoff=,
input_filter=)`` specs next to plain agents, on the scripted model."""

from __future__ import annotations

from typing import Any

import pytest

from helikon import Agent, RunContext, RunError, UserMessage, handoff
from helikon.core.items import TextPart
from helikon.errors import ConfigError
from helikon.testing import Call, MockModel, Text


def _text(item: Any) -> str:
    return str(item.content[0].text)


async def test_a_spec_names_the_tool_describes_it_and_runs_its_callback() -> None:
    calls: list[Any] = []

    async def note(ctx: RunContext[Any]) -> None:
        calls.append(ctx.user_ctx)

    billing_model = MockModel([[Text("refunded")]])
    billing = Agent(name="billing", description="Bills.", model=billing_model)
    faq = Agent(name="faq", description="Answers FAQs.", model=MockModel([]))
    triage_model = MockModel([[Call("t1", "escalate_billing", {})]])
    triage = Agent(
        name="triage",
        model=triage_model,
        handoffs=[
            faq,
            handoff(
                billing, tool_name="escalate_billing", tool_description="Money.", on_handoff=note
            ),
        ],
    )
    result = await triage.run("refund me", RunContext.ephemeral("acme"))
    assert result.final_output == "refunded"
    assert calls == ["acme"]
    tools = [(t.name, t.description) for t in triage_model.requests[0].tools]
    assert tools == [("transfer_to_faq", "Answers FAQs."), ("escalate_billing", "Money.")]
    handoffs = [(e.from_agent, e.to_agent) for e in result.events if e.type == "handoff_item"]
    assert handoffs == [("triage", "billing")]


async def test_an_input_filter_chooses_what_the_target_sees() -> None:
    def drop_greetings(items: list[Any]) -> list[Any]:
        return [i for i in items if not (isinstance(i, UserMessage) and _text(i) == "hi")]

    billing_model = MockModel([[Text("ok")]])
    billing = Agent(name="billing", instructions="You bill.", model=billing_model)
    triage = Agent(
        name="triage",
        model=MockModel([[Text("let me check"), Call("t1", "transfer_to_billing", {})]]),
        handoffs=[handoff(billing, input_filter=drop_greetings)],
    )
    await triage.run(
        [UserMessage(content=[TextPart(text="hi")]), UserMessage(content=[TextPart(text="refund")])]
    )
    sent = billing_model.requests[0].messages
    assert [(type(m).__name__, _text(m)) for m in sent] == [
        ("SystemMessage", "You bill."),
        ("UserMessage", "refund"),
        (
            "UserMessage",
            "This conversation was transferred to you (billing) from another agent. "
            "Continue helping the user from here.",
        ),
    ]


async def test_an_on_handoff_that_raises_fails_the_run() -> None:
    def refuse(ctx: Any) -> None:
        raise RuntimeError("billing closed")

    billing = Agent(name="billing", model=MockModel([[Text("never")]]))
    triage = Agent(
        name="triage",
        model=MockModel([[Call("t1", "transfer_to_billing", {})]]),
        handoffs=[handoff(billing, on_handoff=refuse)],
    )
    with pytest.raises(RunError) as exc:
        await triage.run("refund")
    assert str(exc.value.error) == (
        "handoff to 'billing': on_handoff raised RuntimeError: billing closed"
    )


@pytest.mark.parametrize(
    ("flt", "message"),
    [
        (lambda items: 1 / 0, "input_filter raised ZeroDivisionError: division by zero"),
        (lambda items: tuple(items), "input_filter returned tuple"),
    ],
)
async def test_a_broken_input_filter_fails_the_run_naming_it(flt: Any, message: str) -> None:
    billing = Agent(name="billing", model=MockModel([[Text("never")]]))
    triage = Agent(
        name="triage",
        model=MockModel([[Call("t1", "transfer_to_billing", {})]]),
        handoffs=[handoff(billing, input_filter=flt)],
    )
    with pytest.raises(RunError) as exc:
        await triage.run("refund")
    assert str(exc.value.error).startswith(f"handoff to 'billing': {message}")


@pytest.mark.parametrize("bad", ["has space", "", "x" * 65, "ünï"])
def test_a_bad_tool_name_is_refused(bad: str) -> None:
    billing = Agent(name="billing", model=MockModel([]))
    with pytest.raises(ConfigError) as exc:
        handoff(billing, tool_name=bad)
    assert str(exc.value) == (
        f"handoff(tool_name=...): {bad!r} is not a tool name; use 1 to 64 of A-Z a-z 0-9 _ -"
    )


def test_a_spec_without_an_agent_is_refused() -> None:
    with pytest.raises(ConfigError) as exc:
        Agent(name="t", model=MockModel([]), handoffs=[handoff("billing")])
    assert str(exc.value) == "Agent(handoffs=...): 'billing' is not an Agent"


async def test_a_spec_tool_name_clashing_with_a_tool_fails_the_run_naming_both() -> None:
    from helikon import tool

    @tool
    async def pay() -> str:
        """Pay."""
        return "paid"

    billing = Agent(name="billing", model=MockModel([]))
    triage = Agent(
        name="t", model=MockModel([]), tools=[pay], handoffs=[handoff(billing, tool_name="pay")]
    )
    with pytest.raises(RunError) as exc:
        await triage.run("x")
    assert "pay (tool 'pay' and handoff 'billing')" in str(exc.value.error)


def _cycle(turns: int) -> tuple[Agent, MockModel, MockModel]:
    triage_model = MockModel([[Call(f"t{i}", "transfer_to_specialist", {})] for i in range(turns)])
    specialist_model = MockModel([[Call(f"s{i}", "back", {})] for i in range(turns)])
    triage = Agent(name="triage", model=triage_model)
    specialist = Agent(
        name="specialist", model=specialist_model, handoffs=[handoff(triage, tool_name="back")]
    )
    triage.handoffs.append(specialist)
    return triage, triage_model, specialist_model


async def test_a_triage_specialist_cycle_is_stopped_by_max_handoffs() -> None:
    from helikon import MaxHandoffsExceeded, RunConfig

    triage, triage_model, specialist_model = _cycle(5)
    with pytest.raises(RunError) as exc:
        await triage.run("go", run_config=RunConfig(max_handoffs=3))
    err = exc.value.error
    assert isinstance(err, MaxHandoffsExceeded)
    assert str(err) == "max handoffs (3) exceeded"
    hops = [(e.from_agent, e.to_agent) for e in exc.value.events if e.type == "handoff_item"]
    assert hops == [("triage", "specialist"), ("specialist", "triage"), ("triage", "specialist")]
    assert (len(triage_model.requests), len(specialist_model.requests)) == (2, 2)


async def test_a_cycle_that_settles_completes() -> None:
    from helikon import RunConfig

    triage_model = MockModel([[Call("t1", "transfer_to_specialist", {})], [Text("all set")]])
    specialist_model = MockModel([[Call("s1", "back", {})]])
    triage = Agent(name="triage", model=triage_model)
    specialist = Agent(
        name="specialist", model=specialist_model, handoffs=[handoff(triage, tool_name="back")]
    )
    triage.handoffs.append(specialist)
    result = await triage.run("go", run_config=RunConfig(max_handoffs=2))
    assert result.final_output == "all set"


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_max_handoffs_must_be_a_count(bad: Any) -> None:
    from helikon import RunConfig

    with pytest.raises(ConfigError) as exc:
        RunConfig(max_handoffs=bad)
    assert str(exc.value) == f"RunConfig.max_handoffs must be an int >= 0 or None, got {bad!r}"


async def test_a_spec_appended_after_construction_keeps_its_options() -> None:
    from helikon import RunConfig

    seen: list[str] = []
    triage_model = MockModel([[Call("t1", "to_expert", {})], [Text("all set")]])
    specialist_model = MockModel([[Call("s1", "back", {})]])
    triage = Agent(name="triage", model=triage_model)
    specialist = Agent(
        name="specialist", model=specialist_model, handoffs=[handoff(triage, tool_name="back")]
    )
    triage.handoffs.append(
        handoff(
            specialist,
            tool_name="to_expert",
            tool_description="Ask the expert.",
            on_handoff=lambda ctx: seen.append("to expert"),
        )
    )
    assert triage.handoffs == [specialist]
    result = await triage.run("go", run_config=RunConfig(max_handoffs=2))
    assert result.final_output == "all set" and seen == ["to expert"]
    offered = {t.name: t.description for t in triage_model.requests[0].tools}
    assert offered == {"to_expert": "Ask the expert."}
    with pytest.raises(ConfigError) as exc:
        triage.handoffs.append("specialist")  # type: ignore[arg-type]
    assert str(exc.value) == (
        "agent 'triage': a handoff must be an Agent or handoff(agent, ...), got str"
    )
