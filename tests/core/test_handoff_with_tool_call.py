"""Field case BR-27: a regular tool call and a handoff in one response.

The regular call runs (once) before the handoff, and its result reaches the target's
transcript; the transfer call gets its acknowledgement; one ``HandoffItem``. This departs from
the shared vector ``handoff_wins_over_regular_tool_call`` (which drops the regular call) on
purpose; ``rust/helikon-loop/tests/conformance.rs`` holds the project's expectation.
"""

from __future__ import annotations

from helikon import Agent, tool
from helikon.core.items import AssistantMessage, ToolResult, UserMessage, text_of
from helikon.testing import Call, Finish, MockModel, Text

CALLS: list[tuple[int, int]] = []


@tool
async def sum_two(a: int, b: int) -> str:
    """Add two numbers."""
    CALLS.append((a, b))
    return str(a + b)


def _agents() -> tuple[Agent, MockModel]:
    billing_model = MockModel([[Text("7")]])
    billing = Agent(name="billing", model=billing_model, instructions="You do billing.")
    front_model = MockModel(
        [
            [
                Call("c1", "sum_two", {"a": 3, "b": 4}),
                Call("c2", "transfer_to_billing", {}),
                Finish("tool_calls"),
            ]
        ]
    )
    front = Agent(name="front", model=front_model, tools=[sum_two], handoffs=[billing])
    return front, billing_model


async def test_the_regular_call_runs_and_its_result_reaches_the_target() -> None:
    CALLS.clear()
    front, billing_model = _agents()
    deltas = ("token_delta", "reasoning_delta", "tool_call_delta")
    events = [e async for e in front.stream("What is 3 + 4? Then bill me.") if e.type not in deltas]
    assert CALLS == [(3, 4)]
    assert [e.type for e in events] == [
        "run_started",
        "turn_started",
        "tool_call_item",
        "tool_call_item",
        "tool_output_item",
        "tool_output_item",
        "handoff_item",
        "agent_updated",
        "turn_started",
        "message_output",
        "run_completed",
    ]
    outputs = [e.item for e in events if e.type == "tool_output_item"]
    assert [(r.call_id, text_of(r.content)) for r in outputs] == [
        ("c1", "7"),
        ("c2", "Transferred to billing."),
    ]
    assert events[-2].type == "message_output" and text_of(events[-2].item.content) == "7"

    (request,) = billing_model.requests
    messages = request.messages
    assert not any(isinstance(m, ToolResult) for m in messages)  # no orphan tool items
    notes = [text_of(m.content) for m in messages if isinstance(m, AssistantMessage)]
    assert notes == ['Before the transfer I called these tools:\n- sum_two {"a":3,"b":4} -> 7']
    users = [text_of(m.content) for m in messages if isinstance(m, UserMessage)]
    assert users[0] == "What is 3 + 4? Then bill me."
    assert "transferred to you (billing)" in users[-1]


async def test_run_result_is_the_targets_answer() -> None:
    CALLS.clear()
    front, _ = _agents()
    result = await front.run("What is 3 + 4? Then bill me.")
    assert result.final_output == "7"
    assert CALLS == [(3, 4)]
    assert sum(1 for e in result.events if e.type == "handoff_item") == 1
