"""An airline's customer service: a triage agent hands each request to a specialist (FAQ or
seat booking); the seat tool updates the application context every turn shares.

Each turn continues from the previous one (``to_input_list()``) with the agent that answered
last (``last_agent``), as a chat loop would.
"""

from __future__ import annotations

from dataclasses import dataclass

from helikon import (
    Agent,
    Item,
    RunContext,
    ToolCall,
    ToolContext,
    ToolResult,
    UserMessage,
    text_of,
    tool,
)
from helikon.testing import Call, MockModel, Text


@dataclass
class AirlineContext:
    passenger_name: str | None = None
    confirmation_number: str | None = None
    seat_number: str | None = None


FAQ = {
    "bag": "One bag of up to 23 kg and 158 cm in total dimensions may be checked.",
    "wifi": "There is free wifi on board; join Airline-Wifi.",
}


@tool(effect="read_only")
def faq_lookup(question: str) -> str:
    """Answer a frequently asked question about baggage or wifi."""
    for key, answer in FAQ.items():
        if key in question.lower():
            return answer
    return "I don't know the answer to that question."


@tool
def update_seat(ctx: ToolContext[AirlineContext], confirmation_number: str, new_seat: str) -> str:
    """Move the passenger of a booking to another seat.

    Args:
        confirmation_number: the booking's confirmation number.
        new_seat: the seat to move to, e.g. 14C.
    """
    ctx.user_ctx.confirmation_number = confirmation_number
    ctx.user_ctx.seat_number = new_seat
    return f"Updated seat to {new_seat} for confirmation number {confirmation_number}."


faq_agent = Agent(
    name="faq_agent",
    description="Answers questions about the airline.",
    model=MockModel(
        [
            [Call("f1", "faq_lookup", {"question": "How big can my bag be?"})],
            [Text("You may check one bag of up to 23 kg.")],
        ]
    ),
    instructions="Answer with the faq_lookup tool only; never from your own knowledge.",
    tools=[faq_lookup],
)
seat_agent = Agent(
    name="seat_booking_agent",
    description="Changes the seat of a booking.",
    model=MockModel(
        [
            [Text("What is your confirmation number, and which seat would you like?")],
            [Call("s1", "update_seat", {"confirmation_number": "LL0EZ6", "new_seat": "14C"})],
            [Text("Done: you are now in seat 14C.")],
        ]
    ),
    instructions="Ask for the confirmation number and the seat, then call update_seat.",
    tools=[update_seat],
)
triage_agent = Agent(
    name="triage_agent",
    model=MockModel(
        [
            [Call("h1", "transfer_to_faq_agent", {})],
            [Call("h2", "transfer_to_seat_booking_agent", {})],
        ]
    ),
    instructions="Hand each request to the right specialist.",
    handoffs=[faq_agent, seat_agent],
)

context = AirlineContext(passenger_name="Ada")
ctx = RunContext.ephemeral(context)
conversation: list[Item] = []
current: Agent = triage_agent
for turn in (
    "How big can my bag be?",
    "I want to change my seat.",
    "LL0EZ6, and 14C please.",
):
    if current is faq_agent:  # specialists cannot hand back yet: the loop returns to triage
        current = triage_agent
    result = current.run_sync([*conversation, UserMessage.text(turn)], ctx)
    calls = [i.name for i in result.new_items if isinstance(i, ToolCall)]
    print(f"user: {turn}")
    for item in result.new_items:
        if isinstance(item, ToolResult):
            print(f"  <- {text_of(item.content)}")
    print(f"{result.last_agent.name} {calls}: {result.final_output}")
    conversation = result.to_input_list()
    current = result.last_agent

print(f"context: {context}")
