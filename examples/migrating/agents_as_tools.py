"""Agents as tools: an orchestrator calls translator agents as tools, keeping control."""

from __future__ import annotations

from helikon import Agent, AgentAsTool, Runner, ToolResult, text_of
from helikon.testing import Call, MockModel, Text

spanish = Agent(
    name="spanish_agent",
    description="Translates the user's message to Spanish.",
    model=MockModel([[Text("Hola, ¿cómo estás?")]]),
    instructions="You translate the user's message to Spanish.",
)
french = Agent(
    name="french_agent",
    description="Translates the user's message to French.",
    model=MockModel([[Text("Bonjour, comment ça va ?")]]),
    instructions="You translate the user's message to French.",
)
orchestrator_model = MockModel(
    [
        [
            Call("c1", "translate_to_spanish", {"input": "Hello, how are you?"}),
            Call("c2", "translate_to_french", {"input": "Hello, how are you?"}),
        ],
        [Text("Spanish: Hola, ¿cómo estás?\nFrench: Bonjour, comment ça va ?")],
    ]
)
orchestrator = Agent(
    name="orchestrator",
    model=orchestrator_model,
    instructions=(
        "You are a translation agent. Use the tools to translate; never translate yourself."
    ),
    tools=[
        AgentAsTool(spanish, name="translate_to_spanish"),
        AgentAsTool(french, name="translate_to_french"),
    ],
)

result = Runner.run_sync(orchestrator, "Say 'Hello, how are you?' in Spanish and French.")
for item in result.new_items:
    if isinstance(item, ToolResult):
        print(f"<- {text_of(item.content)}")
print(result.final_output)
print(f"answered by: {result.last_agent.name}")
orchestrator_model.assert_exhausted()
