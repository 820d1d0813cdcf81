"""A SQLite session: each turn sees the conversation so far, stored in a file.

python sqlite_session.py [DB_PATH]     (default: a temporary file)
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import TypeGuard

from helikon import Agent, AssistantMessage, Item, Runner, UserMessage, text_of
from helikon.sessions.sqlite import SqliteSession
from helikon.testing import MockModel, Text


def is_message(item: Item) -> TypeGuard[UserMessage | AssistantMessage]:
    return isinstance(item, (UserMessage, AssistantMessage))


async def main(db: Path) -> None:
    model = MockModel(
        [
            [Text("San Francisco.")],
            [Text("California.")],
            [Text("About 808,000 people.")],
        ]
    )
    agent = Agent(name="Assistant", model=model, instructions="Reply very concisely.")
    session = SqliteSession("conversation_123", db)

    for question in (
        "What city is the Golden Gate Bridge in?",
        "What state is it in?",
        "What's the population?",
    ):
        result = await Runner.run(agent, question, session=session)
        sent = len(model.requests[-1].messages) - 1  # the system message comes first
        print(f"user: {question}\nassistant: {result.final_output} ({sent} items sent)")

    last_two = await session.snapshot(last=2)
    print("last two items:", [f"{i.type}: {text_of(i.content)}" for i in last_two if is_message(i)])
    model.assert_exhausted()


if __name__ == "__main__":
    if len(sys.argv) > 1:
        asyncio.run(main(Path(sys.argv[1])))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(Path(tmp) / "conversations.db"))
