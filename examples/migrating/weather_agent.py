"""Weather for several places: two tools chained by the model, one of which asks the model to
try again (ModelRetry) when it gets a place it cannot find.
"""

from __future__ import annotations

from dataclasses import dataclass

from helikon import Agent, ModelRetry, RunContext, ToolContext, ToolResult, text_of
from helikon.testing import Call, MockModel, Text


@dataclass
class Deps:
    """What the tools would get from an HTTP client; here a table."""

    places: dict[str, tuple[float, float]]
    weather: dict[tuple[float, float], str]


model = MockModel(
    [
        [Call("c1", "get_lat_lng", {"location_description": "the capital of the UK"})],
        [
            Call("c2", "get_lat_lng", {"location_description": "London"}),
            Call("c3", "get_lat_lng", {"location_description": "Wiltshire"}),
        ],
        [
            Call("c4", "get_weather", {"lat": 51.5, "lng": -0.1}),
            Call("c5", "get_weather", {"lat": 51.3, "lng": -1.9}),
        ],
        [Text("London: 21C, sunny. Wiltshire: 18C, light rain.")],
    ]
)
weather_agent: Agent[Deps, str] = Agent(
    name="weather_agent",
    model=model,
    instructions="Be concise, reply with one sentence. Find coordinates first, then the weather.",
    retries=2,
)


@weather_agent.tool(effect="read_only")
def get_lat_lng(ctx: ToolContext[Deps], location_description: str) -> dict[str, float]:
    """Get the latitude and longitude of a location.

    Args:
        location_description: a description of a location, as a place name.
    """
    found = ctx.user_ctx.places.get(location_description)
    if found is None:
        raise ModelRetry(f"Unknown place {location_description!r}; give a place name.")
    return {"lat": found[0], "lng": found[1]}


@weather_agent.tool(effect="read_only")
def get_weather(ctx: ToolContext[Deps], lat: float, lng: float) -> str:
    """Get the weather at a location.

    Args:
        lat: latitude of the location.
        lng: longitude of the location.
    """
    return ctx.user_ctx.weather[(lat, lng)]


deps = Deps(
    places={"London": (51.5, -0.1), "Wiltshire": (51.3, -1.9)},
    weather={(51.5, -0.1): "21C, sunny", (51.3, -1.9): "18C, light rain"},
)
result = weather_agent.run_sync(
    "What is the weather like in London and in Wiltshire?", RunContext.ephemeral(deps)
)
for item in result.new_items:
    if isinstance(item, ToolResult):
        print(f"<- {text_of(item.content)}")
print(result.final_output)
model.assert_exhausted()
