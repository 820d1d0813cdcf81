"""Run the same agent on five providers; only the model line changes.

    pip install 'helikon[openai,anthropic,gemini,bedrock]'   # the SDKs, httpx and boto3
    python main.py                      # all five, offline (no keys, no network)
    python main.py gemini bedrock       # some of them
    python main.py --live openai-chat   # the real API (OPENAI_API_KEY etc.; costs tokens)

Offline, each provider's model talks to a local replay server that answers with one scripted
conversation written in that provider's streaming wire format (``traffic.py``, built in
memory: nothing is read from disk). The agent (``agent.py``) and this runner are the same
for every provider; ``models.make_model`` holds the one line that differs.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass, field
from typing import Any

from agent import CityReport, build_agent
from models import PROVIDERS, Endpoint, make_model
from traffic import QUESTION, replay_server

from helikon import RunResult, ToolCallItem

__all__ = ["SwapRun", "main", "run_live", "run_offline"]


@dataclass
class SwapRun:
    """One provider's run.

    Attributes:
        provider: the provider name (see ``models.PROVIDERS``).
        model: the model id the run used.
        question: what the agent was asked.
        result: the run's result; ``final_output`` is a ``CityReport``.
        requests: the JSON request bodies the provider's endpoint received (offline only).
        leftover: scripted responses nobody asked for, per route (offline; ``{}`` is right).
        unmatched: requests that found no scripted response left (offline; 0 is right).
    """

    provider: str
    model: str
    question: str
    result: RunResult[Any]
    requests: list[Any] = field(default_factory=list)
    leftover: dict[tuple[str, str], int] = field(default_factory=dict)
    unmatched: int = 0

    @property
    def report(self) -> CityReport:
        """The typed final answer."""
        output = self.result.final_output
        assert isinstance(output, CityReport)
        return output

    @property
    def tool_calls(self) -> list[tuple[str, Any]]:
        """``(name, args)`` of every tool call the model made, in order."""
        return [
            (e.item.name, e.item.args) for e in self.result.events if isinstance(e, ToolCallItem)
        ]


async def _run(provider: str, endpoint: Endpoint, question: str) -> tuple[str, RunResult[Any]]:
    model = make_model(provider, endpoint)  # the only provider-specific line
    try:
        return model.model, await build_agent(model).run(question)
    finally:
        await model.aclose()


async def run_offline(provider: str) -> SwapRun:
    """Run the agent on ``provider`` against the scripted traffic of ``traffic.py``."""
    with replay_server(provider) as server:
        model_id, result = await _run(provider, Endpoint(server.base_url), QUESTION)
        return SwapRun(
            provider,
            model_id,
            QUESTION,
            result,
            server.requests,
            server.remaining(),
            len(server.unmatched),
        )


async def run_live(provider: str, question: str) -> SwapRun:
    """Run the agent on ``provider``'s real API."""
    model_id, result = await _run(provider, Endpoint(), question)
    return SwapRun(provider, model_id, question, result)


def _print(run: SwapRun) -> None:
    calls = ", ".join(f"{name}({args})" for name, args in run.tool_calls) or "none"
    usage = run.result.usage
    print(f"== {run.provider} ({run.model})")
    print(f"   question:     {run.question}")
    print(f"   tool calls:   {calls}")
    print(f"   final_output: {run.report!r}")
    print(f"   tokens:       {usage.input_tokens} in, {usage.output_tokens} out")


async def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    parser = argparse.ArgumentParser(description="Run one agent on five providers.")
    parser.add_argument("providers", nargs="*", metavar="PROVIDER", help=", ".join(PROVIDERS))
    parser.add_argument("--live", action="store_true", help="call the real APIs")
    parser.add_argument("--question", default=QUESTION, help="asked with --live")
    args = parser.parse_args(argv)
    unknown = [p for p in args.providers if p not in PROVIDERS]
    if unknown:
        parser.error(f"unknown provider {unknown[0]!r}; choose from {', '.join(PROVIDERS)}")
    for provider in args.providers or PROVIDERS:
        if args.live:
            run = await run_live(provider, args.question)
        else:
            run = await run_offline(provider)
        _print(run)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
