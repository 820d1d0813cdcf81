"""Flight search by delegation: the search agent's tool hands the flights page to an
extraction agent (a list of flights as its typed answer); the search agent's answer is a
flight or "none found" (a union), checked by an output validator that sends the model back
when the flight does not match the route. The run's usage includes the delegated run's.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

from pydantic import BaseModel

from helikon import Agent, ModelRetry, RunContext, ToolContext, ToolResult, Usage, text_of
from helikon.testing import Call, MockModel, Text
from helikon.testing import Usage as Tokens


class FlightDetails(BaseModel):
    flight_number: str
    price: int
    origin: str
    destination: str
    date: datetime.date


class NoFlightFound(BaseModel):
    reason: str


@dataclass
class Deps:
    web_page_text: str
    req_origin: str
    req_destination: str
    req_date: datetime.date
    usage: Usage = field(default_factory=Usage)  # what the delegated runs spent


FLIGHTS_PAGE = """\
1. AK456 Anchorage-Lisbon (ANC-LIS) 2025-01-10 $680
2. SFO123 San Francisco-Anchorage (SFO-ANC) 2025-01-10 $350
3. SFO789 San Francisco-Anchorage (SFO-ANC) 2025-01-11 $390
"""

extraction_agent: Agent[None, list[FlightDetails]] = Agent(
    name="extraction_agent",
    model=MockModel(
        [
            [
                Text(
                    '{"value": ['
                    '{"flight_number": "AK456", "price": 680, "origin": "ANC", '
                    '"destination": "LIS", "date": "2025-01-10"}, '
                    '{"flight_number": "SFO123", "price": 350, "origin": "SFO", '
                    '"destination": "ANC", "date": "2025-01-10"}, '
                    '{"flight_number": "SFO789", "price": 390, "origin": "SFO", '
                    '"destination": "ANC", "date": "2025-01-11"}]}'
                ),
                Tokens(120, 80),
            ]
        ]
    ),
    instructions="Extract all the flight details from the given text.",
    output_type=list[FlightDetails],
)

AK456 = {"flight_number": "AK456", "price": 680, "origin": "ANC", "destination": "LIS"}
SFO123 = {"flight_number": "SFO123", "price": 350, "origin": "SFO", "destination": "ANC"}
search_model = MockModel(
    [
        [Call("c1", "extract_flights", {}), Tokens(90, 10)],
        [Call("c2", "final_result", {"value": {**AK456, "date": "2025-01-10"}}), Tokens(300, 40)],
        [Call("c3", "final_result", {"value": {**SFO123, "date": "2025-01-10"}}), Tokens(380, 40)],
    ]
)
search_agent: Agent[Deps, FlightDetails | NoFlightFound] = Agent(
    name="search_agent",
    model=search_model,
    instructions="Find the cheapest flight for the user on the given date.",
    output_type=FlightDetails | NoFlightFound,
    output_mode="tool",  # finish by calling the output tool `final_result`
    retries=3,
)


@search_agent.tool(effect="read_only")
async def extract_flights(ctx: ToolContext[Deps]) -> list[FlightDetails]:
    """Get the details of every flight on the page."""
    result = await extraction_agent.run(ctx.user_ctx.web_page_text)
    ctx.user_ctx.usage = ctx.user_ctx.usage + result.usage
    return result.final_output


@search_agent.output_validator
def matches_the_request(
    ctx: RunContext[Deps], output: FlightDetails | NoFlightFound
) -> FlightDetails | NoFlightFound:
    if isinstance(output, NoFlightFound):
        return output
    deps = ctx.user_ctx
    wrong = []
    if output.origin != deps.req_origin:
        wrong.append(f"the origin should be {deps.req_origin}")
    if output.destination != deps.req_destination:
        wrong.append(f"the destination should be {deps.req_destination}")
    if output.date != deps.req_date:
        wrong.append(f"the date should be {deps.req_date}")
    if wrong:
        raise ModelRetry("Wrong flight: " + ", ".join(wrong) + ".")
    return output


deps = Deps(FLIGHTS_PAGE, "SFO", "ANC", datetime.date(2025, 1, 10))
result = search_agent.run_sync(
    "Find me a flight from SFO to ANC on 2025-01-10", RunContext.ephemeral(deps)
)
print(f"flight: {result.final_output!r}")
total = result.usage + deps.usage
for item in result.new_items:
    if isinstance(item, ToolResult):
        print("<-", *text_of(item.content).splitlines()[:3], sep="\n   ")
print(f"model calls: {len(search_model.requests)} (search) + 1 (extraction)")
print(
    f"tokens: search {result.usage.total_tokens}, extraction {deps.usage.total_tokens}, "
    f"total {total.total_tokens}"
)
search_model.assert_exhausted()
