"""A chat that remembers across process restarts: history lives in a SQLite session.

    pip install '.[sqlite]'                 # from the repository root
    python main.py "My name is Ada."        # first process
    python main.py "What is my name?"       # a new process: "Your name is Ada."
    python main.py --reset                  # forget everything

Offline, the model is ``RecallModel`` below: a tiny deterministic model that answers from
the conversation it is sent, so what it remembers is exactly what the session stored. Pass
``--openai gpt-5-mini`` (with ``OPENAI_API_KEY``) to talk to a real model instead.
"""

from __future__ import annotations

import argparse
import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

from helikon import (
    Agent,
    CancellationToken,
    Finish,
    FinishReason,
    ModelCapabilities,
    ModelRequest,
    Runner,
    TokenDelta,
    UserMessage,
    text_of,
)
from helikon.sessions.sqlite import SqlitePool, SqliteSession

DB = Path(__file__).with_name("chat.db")


class RecallModel:
    """Answers "what is my name?" from earlier user turns; acknowledges anything else."""

    provider = "example"
    model = "recall"

    def capabilities(self) -> ModelCapabilities:
        return ModelCapabilities(streaming=True)

    async def invoke(
        self, request: ModelRequest, cancel: CancellationToken
    ) -> AsyncIterator[TokenDelta | Finish]:
        users = [text_of(m.content) for m in request.messages if isinstance(m, UserMessage)]
        last = users[-1] if users else ""
        if "what is my name" in last.lower():
            names = [m.group(1) for u in users for m in re.finditer(r"my name is (\w+)", u, re.I)]
            answer = f"Your name is {names[-1]}." if names else "You haven't told me your name."
        else:
            answer = f"Noted. ({len(users)} message(s) in this conversation so far.)"
        for word in answer.split(" "):
            yield TokenDelta(text=word + " ")
        yield Finish(reason=FinishReason.STOP, raw="stop")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message", nargs="?", default="What is my name?")
    parser.add_argument("--reset", action="store_true", help="delete the conversation")
    parser.add_argument("--openai", metavar="MODEL_ID", help="use an OpenAI model instead")
    args = parser.parse_args()
    if args.reset:
        DB.unlink(missing_ok=True)
        print("Forgotten.")
        return
    model = RecallModel()
    if args.openai:
        from helikon.providers.openai import OpenAIModel

        model = OpenAIModel.chat(args.openai)  # type: ignore[assignment]
    agent = Agent(name="chat", model=model, instructions="You are a friendly assistant.")
    async with await SqlitePool.connect(DB) as pool:
        session = await SqliteSession.open(pool, "default")
        async for event in Runner().run_streamed(agent, args.message, session=session):
            if event.type == "token_delta":
                print(event.text, end="", flush=True)
        print()


if __name__ == "__main__":
    asyncio.run(main())
