"""``@tool(needs_approval=...)``: one tool asks a person without a policy class, through the
same permission pipeline (approval handler inline, pause and resume with ``approval="defer"``).
"""

from __future__ import annotations

from typing import Any

import pytest

from helikon import (
    Agent,
    Approve,
    ConfigError,
    Deny,
    DenyRule,
    RunConfig,
    RunContext,
    RunInterruptedError,
    Runner,
    RunState,
    ToolResult,
    text_of,
    tool,
)
from helikon.core.permissions import ApprovalAllow
from helikon.testing import Call, MockModel, Text

DEFER = RunConfig(approval="defer")
RAN: list[Any] = []


@tool(needs_approval=True)
def refund(order: str, amount: int) -> str:
    """Refund part of an order."""
    RAN.append(("refund", order, amount))
    return f"refunded {amount} on {order}"


@tool(needs_approval=lambda ctx, args: args["amount"] > 100)
def transfer(to: str, amount: int) -> str:
    """Move money."""
    RAN.append(("transfer", to, amount))
    return f"sent {amount} to {to}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def _results(items: list[Any]) -> list[tuple[str, str]]:
    return [(i.call_id, text_of(i.content)) for i in items if isinstance(i, ToolResult)]


async def test_needs_approval_true_pauses_and_resumes() -> None:
    agent = Agent(
        name="support",
        model=MockModel([[Call("c1", "refund", {"order": "A7", "amount": 40})]]),
        tools=[refund],
    )
    with pytest.raises(RunInterruptedError) as paused:
        await Runner.run(agent, "refund A7", run_config=DEFER)
    assert RAN == []
    state = RunState.from_json(paused.value.state.to_json())
    assert [(p.call_id, p.tool, p.reason) for p in state.pending] == [
        ("c1", "refund", "tool refund needs approval")
    ]
    again = Agent(name="support", model=MockModel([[Text("Refunded.")]]), tools=[refund])
    result = await Runner.resume(again, state, decisions={"c1": Approve()})
    assert RAN == [("refund", "A7", 40)]
    assert result.final_output == "Refunded."
    assert _results(result.to_input_list()) == [("c1", "refunded 40 on A7")]


async def test_a_function_decides_per_call_and_a_denial_reaches_the_model() -> None:
    model = MockModel(
        [
            [
                Call("small", "transfer", {"to": "bob", "amount": 20}),
                Call("big", "transfer", {"to": "eve", "amount": 500}),
            ]
        ]
    )
    agent = Agent(name="bank", model=model, tools=[transfer])
    with pytest.raises(RunInterruptedError) as paused:
        await Runner.run(agent, "pay bob and eve", run_config=DEFER)
    assert RAN == [("transfer", "bob", 20)]  # the small one needed nobody
    assert [p.call_id for p in paused.value.state.pending] == ["big"]
    again = Agent(name="bank", model=MockModel([[Text("Paid bob only.")]]), tools=[transfer])
    result = await Runner.resume(again, paused.value.state, decisions={"big": Deny("too much")})
    assert RAN == [("transfer", "bob", 20)]
    assert _results(result.new_items) == [
        ("small", "sent 20 to bob"),
        ("big", "approval denied: too much"),
    ]


async def test_inline_the_approval_handler_answers_the_ask() -> None:
    asked: list[tuple[str, str]] = []

    class Clerk:
        async def decide(self, tool: str, prompt: str, args: Any) -> Any:
            asked.append((tool, prompt))
            return ApprovalAllow()

    model = MockModel([[Call("c1", "refund", {"order": "B2", "amount": 5})], [Text("Done.")]])
    agent = Agent(name="support", model=model, tools=[refund])
    ctx = RunContext.ephemeral().with_approval_handler(Clerk())
    result = await agent.run("refund B2", ctx)
    assert asked == [("refund", "tool refund needs approval")]
    assert RAN == [("refund", "B2", 5)] and result.final_output == "Done."


async def test_without_a_handler_the_call_is_denied() -> None:
    model = MockModel([[Call("c1", "refund", {"order": "B2", "amount": 5})], [Text("No.")]])
    result = await Agent(name="support", model=model, tools=[refund]).run("refund B2")
    assert RAN == []
    assert _results(result.new_items) == [
        (
            "c1",
            "permission denied: tool refund needs approval (approval required; no approval "
            "handler installed)",
        )
    ]


async def test_a_deny_rule_still_denies_without_asking() -> None:
    model = MockModel([[Call("c1", "refund", {"order": "B2", "amount": 5})], [Text("No.")]])
    agent = Agent(name="support", model=model, tools=[refund])
    ctx = RunContext.ephemeral().with_deny_rules([DenyRule.tool("refund")])
    result = await Runner.run(agent, "refund B2", ctx=ctx, run_config=DEFER)  # no pause
    assert RAN == []
    assert _results(result.new_items) == [
        ("c1", "permission denied: DenyRule.tool('refund') matched")
    ]


async def test_a_check_that_raises_denies_the_call() -> None:
    def broken(ctx: Any, args: Any) -> bool:
        raise KeyError("amount")

    @tool(needs_approval=broken)
    def pay(amount: int) -> str:
        """Pay."""
        RAN.append(("pay", amount))
        return "paid"

    model = MockModel([[Call("c1", "pay", {"amount": 1})], [Text("Failed.")]])
    result = await Agent(name="a", model=model, tools=[pay]).run("pay", run_config=DEFER)
    assert RAN == []
    ((_, text),) = _results(result.new_items)
    assert text.startswith("permission denied: needs_approval ")
    assert "broken of tool pay raised KeyError: 'amount'" in text


def test_needs_approval_must_be_a_bool_or_a_function() -> None:
    with pytest.raises(ConfigError, match=r"needs_approval='yes'\) must be True, False or a"):

        @tool(needs_approval="yes")  # type: ignore[arg-type]
        def f() -> str:
            """F."""
            return ""
