"""Token counting: the native ``HeuristicTokenCounter`` against the Python reference walk.

Run ``python benches/bench_tokens.py`` (``--turns T``, default 250, so 1,000 items;
``--rounds R``, default 15; ``--seed S``). The conversation is T turns of four items: a user
message (~200 characters, some non-ASCII), a tool call ``get_weather`` with a small
arguments dict (a city, a unit, a float, a list, a nested dict), its result (~600
characters) and an assistant answer with a reasoning part (~500 characters). It is built
once, as item models and as their dict form (``model_dump``), before any clock starts.

Timed, per form (models, dicts):

* ``native``: ``HeuristicTokenCounter().count(items)`` (``helikon._native``, no JSON copy);
* ``python``: the Python walk it replaced (``tests/sessions/_token_reference.py``, loaded by
  path): ``isinstance`` dispatch, ``len(str)`` and ``json.dumps`` of every tool call's
  arguments.

Each round times one batch of calls per counter (sized to ~20 ms), counters interleaved so
background load hits both, garbage collector off; the figure is the quietest round's mean
time per call (load only ever slows a round down). The clock is the thread's CPU time
(``time.thread_time``), which a busy machine disturbs less than wall time; ``--wall``
switches to ``time.perf_counter``. Both counters' results are checked equal first. Not a
timed test: nothing fails on a number.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.util
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from helikon.core.items import (
    AssistantMessage,
    Item,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from helikon.sessions import HeuristicTokenCounter

REPO = Path(__file__).resolve().parents[1]

WORDS = ["weather", "Zürich", "forecast", "temperature", "café", "naïve", "東京", "☀️", "rain"]


def _load_reference() -> ModuleType:
    path = REPO / "tests" / "sessions" / "_token_reference.py"
    spec = importlib.util.spec_from_file_location("_token_reference", path)
    if spec is None or spec.loader is None:
        sys.exit(f"cannot load the Python reference from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _text(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < chars:
        words.append(rng.choice(WORDS))
    return " ".join(words)


def conversation(turns: int, seed: int) -> list[Item]:
    """``turns`` x (user message, tool call, tool result, assistant answer)."""
    rng = random.Random(seed)
    items: list[Item] = []
    for k in range(turns):
        args = {
            "city": rng.choice(["Zürich", "Tokyo", "São Paulo", "Oslo"]),
            "unit": "celsius",
            "lat": rng.uniform(-90, 90),
            "days": [1, 2, 3],
            "opts": {"hourly": rng.random() < 0.5, "lang": "de"},
        }
        items.append(UserMessage.text(_text(rng, 200)))
        items.append(ToolCall(call_id=f"c{k}", name="get_weather", args=args))
        items.append(ToolResult(call_id=f"c{k}", content=[TextPart(text=_text(rng, 600))]))
        items.append(
            AssistantMessage(
                content=[ReasoningPart(text=_text(rng, 100)), TextPart(text=_text(rng, 400))],
                agent="assistant",
            )
        )
    return items


def _batch_size(fn: Callable[[], object], target_s: float, clock: Callable[[], float]) -> int:
    n = 1
    while True:
        start = clock()
        for _ in range(n):
            fn()
        elapsed = clock() - start
        if elapsed >= target_s / 4:
            return max(1, int(n * target_s / elapsed))
        n *= 2


def measure(
    counters: dict[str, Callable[[], object]],
    rounds: int,
    clock: Callable[[], float],
    target_s: float = 0.02,
) -> dict[str, float]:
    """Quietest round's mean seconds per call, counters interleaved round by round."""
    sizes = {name: _batch_size(fn, target_s, clock) for name, fn in counters.items()}
    best = {name: float("inf") for name in counters}
    gc.disable()
    try:
        for _ in range(rounds):
            for name, fn in counters.items():
                n = sizes[name]
                start = clock()
                for _ in range(n):
                    fn()
                best[name] = min(best[name], (clock() - start) / n)
    finally:
        gc.enable()
    return best


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--wall", action="store_true", help="wall time instead of CPU time")
    opts = parser.parse_args(argv)
    clock = time.perf_counter if opts.wall else time.thread_time

    reference = _load_reference()
    counter = HeuristicTokenCounter()
    models = conversation(opts.turns, opts.seed)
    dicts: list[dict[str, Any]] = [m.model_dump() for m in models]
    chars = reference.reference_chars(models)
    print(f"{len(models)} items, {chars:,} characters, {counter.count(models):,} tokens")

    rows: list[tuple[str, float, float]] = []
    for form, items in (("models", models), ("dicts", dicts)):
        if counter.count(items) != reference.reference_count(items):
            sys.exit(f"{form}: native and Python counts differ")
        times = measure(
            {
                "native": functools.partial(counter.count, items),
                "python": functools.partial(reference.reference_count, items),
            },
            opts.rounds,
            clock,
        )
        rows.append((form, times["native"], times["python"]))

    print(f"\n{'form':<8} {'native µs':>10} {'python µs':>10} {'speed-up':>9}  ({clock.__name__})")
    for form, native, python in rows:
        print(f"{form:<8} {native * 1e6:>10,.1f} {python * 1e6:>10,.1f} {python / native:>8.1f}x")
    native_models = rows[0][1]
    print(f"\nnative, models: {native_models / len(models) * 1e9:,.0f} ns per item")


if __name__ == "__main__":
    main()
