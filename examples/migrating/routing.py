"""Routing by handoff: a triage agent hands the conversation to the agent for the language.

The second turn goes straight to the agent that answered last (``result.last_agent``) with
the whole conversation so far (``result.to_input_list()``): no session needed.
"""

from __future__ import annotations

from helikon import Agent, Runner, UserMessage
from helikon.testing import Call, MockModel, Text

french = Agent(
    name="french_agent",
    description="Speaks French.",
    model=MockModel([[Text("Bonjour ! Je vais bien, merci.")], [Text("Il fait beau à Paris.")]]),
    instructions="You only speak French.",
)
english = Agent(
    name="english_agent",
    description="Speaks English.",
    model=MockModel([]),
    instructions="You only speak English.",
)
triage = Agent(
    name="triage_agent",
    model=MockModel([[Call("h1", "transfer_to_french_agent", {})]]),
    instructions="Hand off to the agent for the language of the request.",
    handoffs=[french, english],
)

first = Runner.run_sync(triage, "Bonjour, comment allez-vous ?")
print(f"{first.last_agent.name}: {first.final_output}")

follow_up = [*first.to_input_list(), UserMessage.text("Quel temps fait-il à Paris ?")]
second = Runner.run_sync(first.last_agent, follow_up)
print(f"{second.last_agent.name}: {second.final_output}")
print(f"items in the conversation: {len(second.to_input_list())}")
