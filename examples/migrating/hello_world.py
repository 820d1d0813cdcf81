"""Hello world: one agent, one question, the answer printed (Runner.run_sync spelling)."""

from __future__ import annotations

from helikon import Agent, Runner
from helikon.testing import MockModel, Text

model = MockModel(
    [[Text("Code calls itself,\nsmaller each time it returns,\nbase case ends the climb.")]]
)
agent = Agent(name="Assistant", model=model, instructions="You only respond in haikus.")

result = Runner.run_sync(agent, "Tell me about recursion in programming.")
print(result.final_output)
model.assert_exhausted()
