"""The quickstart agent from Python: stream its answer and tool calls.

Runs offline on the scripted model in script.json. For a live run, replace the model with
``OpenAIModel.chat("gpt-5-mini")`` (``pip install 'helikon[openai]'``, ``OPENAI_API_KEY``).
"""

import asyncio
from pathlib import Path

from helikon import Agent
from helikon.testing import MockModel

from tools import budget_status, lookup_spending

HERE = Path(__file__).parent


async def main() -> None:
    agent = Agent(
        name="budget_assistant",
        model=MockModel.from_script_file(HERE / "script.json"),
        instructions=(HERE / "instructions.md").read_text(),
        tools=[lookup_spending, budget_status],
    )
    async for event in agent.stream("How am I doing on my dining budget this month?"):
        if event.type == "token_delta":
            print(event.text, end="", flush=True)
        elif event.type == "tool_call_item":
            print(f"\n→ {event.item.name}({event.item.args})")
        elif event.type == "tool_output_item":
            print(f"← {event.item.content[0].text}")
        elif event.type == "run_completed":
            print(f"\n[usage: {event.usage.total_tokens} tokens]")


if __name__ == "__main__":
    asyncio.run(main())
