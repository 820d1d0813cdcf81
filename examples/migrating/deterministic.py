"""A deterministic flow: three agents in a row, with a typed checkpoint in the middle.

An outline agent writes a story outline, a checker agent judges it (a typed verdict), and
only a good outline about a scary story goes on to the writer agent.
"""

from __future__ import annotations

from pydantic import BaseModel

from helikon import Agent, Runner
from helikon.testing import MockModel, Text


class OutlineCheck(BaseModel):
    good_quality: bool
    is_scifi: bool


outline_agent = Agent(
    name="story_outline_agent",
    model=MockModel([[Text("1. A lighthouse keeper hears knocking. 2. Nobody is there.")]]),
    instructions="Write a very short story outline from the user's input.",
)
checker_agent = Agent(
    name="outline_checker_agent",
    model=MockModel([[Text('{"good_quality": true, "is_scifi": false}')]]),
    instructions="Judge the outline's quality and whether it is a science-fiction story.",
    output_type=OutlineCheck,
)
story_agent = Agent(
    name="story_agent",
    model=MockModel([[Text("Every night at three the knocking came; the keeper never answered.")]]),
    instructions="Write a short story from the outline.",
)

prompt = "A scary story at sea."
outline = Runner.run_sync(outline_agent, prompt)
print(f"outline: {outline.final_output}")
check = Runner.run_sync(checker_agent, outline.final_output).final_output_as(OutlineCheck)
print(f"check: good_quality={check.good_quality} is_scifi={check.is_scifi}")
if not check.good_quality or check.is_scifi:
    print("stopping here")
else:
    story = Runner.run_sync(story_agent, outline.final_output)
    print(f"story: {story.final_output}")
