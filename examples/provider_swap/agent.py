"""The one agent of the provider-swap example: three tools and a typed answer.

Nothing here names a provider. ``build_agent(model)`` is called with an OpenAI, Anthropic,
Gemini or Bedrock model (see ``models.py``) and everything else stays the same: the
instructions, the tools, and the ``output_type`` the final answer must validate against.

The question the example asks, "What is the temperature in the capital of my country?",
takes all three tools in turn: ``get_user_country``, then ``get_capital``, then
``get_temperature``.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from helikon import Agent, Model, ToolEffect, tool

__all__ = [
    "INSTRUCTIONS",
    "CityReport",
    "build_agent",
    "get_capital",
    "get_temperature",
    "get_user_country",
]

INSTRUCTIONS = "You are a helpful chatbot. Look facts up with the tools; never guess them."

_CAPITALS = {"France": "Paris", "Mexico": "Mexico City", "UK": "London"}
_TEMPERATURES = {"Paris": "30°C", "Mexico City": "24°C", "London": "18°C"}


class CityReport(BaseModel):
    """The typed answer: a city, its country and, when the question asks, its temperature."""

    city: str = Field(description="The city the answer is about.")
    country: str = Field(description="The country the city is in.")
    temperature_c: float | None = Field(
        default=None, description="The current temperature in °C, only if the user asked."
    )


@tool(effect=ToolEffect.READ_ONLY)
def get_user_country() -> str:
    """Get the country the user is in."""
    return "France"


@tool(effect=ToolEffect.READ_ONLY)
def get_capital(country: str) -> str:
    """Get the capital of a country.

    Args:
        country: The country name.
    """
    return _CAPITALS.get(country, "unknown")


@tool(effect=ToolEffect.READ_ONLY)
def get_temperature(city: str) -> str:
    """Get the temperature in a city.

    Args:
        city: The city name.
    """
    return _TEMPERATURES.get(city, "unknown")


def build_agent(model: Model) -> Agent:
    """The agent, on whichever ``model`` it is given (the only thing that changes)."""
    return Agent(
        name="city-facts",
        model=model,
        instructions=INSTRUCTIONS,
        tools=[get_user_country, get_capital, get_temperature],
        output_type=CityReport,
        # the recorded traffic ends with a finalizing turn on every provider; without this
        # each provider's default applies (OpenAI: "native", the others: "tool"), one call less
        output_mode="finalize",
    )
