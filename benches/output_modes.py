"""The structured-output scenario the output-mode benches share (``bench_output_modes.py``,
``test_bench_output_modes.py``).

One script for every mode: a scripted model that reacts to what each request offers. The user
asks for Oslo's weather; offered the ``forecast`` tool after the user's message, the model
calls it; after the tool's result it answers: by calling the output tool when one is offered
(``output_mode="tool"``), else with the JSON text (``"native"``, and ``"finalize"``'s first
answer); a finalizing request (no tools) gets the same JSON text. So the only difference
between the modes is how many model calls the loop spends on the same conversation.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from helikon import Agent, UserMessage, tool
from helikon.testing import Call, MockModel, Text

MODES = ("finalize", "native", "tool")
#: model calls per run, by mode: with one tool round and without tools
EXPECTED_CALLS = {
    ("finalize", True): 3,
    ("native", True): 2,
    ("tool", True): 2,
    ("finalize", False): 1,
    ("native", False): 1,
    ("tool", False): 1,
}


class Weather(BaseModel):
    city: str
    celsius: int


ANSWER = Weather(city="Oslo", celsius=21)


@tool
async def forecast(city: str) -> str:
    """The forecast for a city."""
    return f"{city}: 21 C"


class ForecastModel(MockModel):
    """A scripted model that answers every request from what it offers (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def invoke(self, request: Any, cancel: Any) -> Any:
        self.calls += 1
        names = {t.name for t in request.tools}
        if isinstance(request.messages[-1], UserMessage) and "forecast" in names:
            self.push([Call("c1", "forecast", {"city": "Oslo"})])
        elif "final_result" in names:
            self.push([Call("o1", "final_result", ANSWER.model_dump())])
        else:
            self.push([Text(ANSWER.model_dump_json())])
        self.requests.clear()  # keep a long benchmark's memory flat
        return super().invoke(request, cancel)


def build(mode: str, with_tools: bool = True) -> tuple[Agent, ForecastModel]:
    """The agent for ``mode`` on a fresh :class:`ForecastModel`."""
    model = ForecastModel()
    agent = Agent(
        name="weather",
        model=model,
        tools=[forecast] if with_tools else [],
        output_type=Weather,
        output_mode=mode,
    )
    return agent, model


async def run_once(agent: Agent, model: ForecastModel) -> int:
    """One run; returns the model calls it made (and checks the answer)."""
    before = model.calls
    result = await agent.run("Weather in Oslo?")
    if result.final_output != ANSWER:
        raise AssertionError(f"unexpected answer {result.final_output!r}")
    return model.calls - before
