"""A function tool: the model asks for the weather, the tool answers, the model reports."""

from __future__ import annotations

from pydantic import BaseModel

from helikon import Agent, Runner, ToolCall, ToolResult, text_of, tool
from helikon.testing import Call, MockModel, Text


class Weather(BaseModel):
    city: str
    temperature_range: str
    conditions: str


@tool(effect="read_only")
def get_weather(city: str) -> Weather:
    """Get the current weather for a city."""
    return Weather(city=city, temperature_range="14-20C", conditions="Sunny with wind.")


model = MockModel(
    [
        [Call("c1", "get_weather", {"city": "Tokyo"})],
        [Text("In Tokyo it is sunny and windy, between 14 and 20C.")],
    ]
)
agent = Agent(
    name="Hello world", model=model, instructions="You are a helpful agent.", tools=[get_weather]
)

result = Runner.run_sync(agent, "What's the weather in Tokyo?")
for item in result.new_items:
    if isinstance(item, ToolCall):
        print(f"-> {item.name}({item.args})")
    elif isinstance(item, ToolResult):
        print(f"<- {text_of(item.content)}")
print(result.final_output)
model.assert_exhausted()
