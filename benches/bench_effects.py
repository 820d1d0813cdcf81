"""Effect-aware scheduling: one model turn of 8 tool calls of 100 ms each.

Run ``python benches/bench_effects.py``. The turn's calls are all ``READ_ONLY`` (they run
concurrently: about 100 ms), all ``WRITE`` (one at a time in the model's order: about
800 ms), or 4 of each (the writes in order alongside the reads: about 400 ms). Wall time of
the tool step (the whole run with a scripted model, whose turns cost microseconds), best of
``--rounds``.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from helikon import Agent, ToolEffect, tool
from helikon.testing import Call, MockModel, Text


@tool(effect=ToolEffect.READ_ONLY)
async def look(i: int) -> int:
    """Read for 100 ms."""
    await asyncio.sleep(0.1)
    return i


@tool(effect=ToolEffect.WRITE)
async def save(i: int) -> int:
    """Write for 100 ms."""
    await asyncio.sleep(0.1)
    return i


async def _turn(names: list[str]) -> float:
    calls = [Call(f"c{i}", name, {"i": i}) for i, name in enumerate(names)]
    agent = Agent(name="b", model=MockModel([calls, [Text("ok")]]), tools=[look, save])
    start = time.perf_counter()
    await agent.run("go")
    return time.perf_counter() - start


async def main(rounds: int) -> None:
    cases = {
        "8 read-only": ["look"] * 8,
        "8 writes": ["save"] * 8,
        "4 + 4 mixed": ["look", "save"] * 4,
    }
    for label, names in cases.items():
        best = min([await _turn(names) for _ in range(rounds)])
        print(f"{label:<12} {best * 1000:7.0f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(main(parser.parse_args().rounds))
