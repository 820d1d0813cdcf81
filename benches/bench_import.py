"""Import cost: ``import helikon`` (and building an Agent) next to the OpenAI Agents SDK and
Pydantic AI, in one run, as ratios.

Run ``python benches/bench_import.py`` (``--runs N``, default 15). Each case is a fresh
interpreter (``python -c CODE``), so nothing is cached in the process; the cases are
interleaved round by round so background load hits them alike. Reported per case: the
median and the fastest wall time of the whole interpreter, and the same minus the time of
``python -c pass`` (the import's own cost). The ratio column is the peer's import cost over
helikon's (> 1: helikon imports faster). Peers that are not installed (the ``bench`` extra has
both) are skipped with a message.

``import helikon`` loads pydantic (its one dependency), the native module and the core; no
provider SDK, web server or OpenTelemetry SDK (``tests/test_import_light.py`` pins that). Not
a timed test: it never fails on a number.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time

CASES: list[tuple[str, str, str]] = [
    # (label, module that must be importable, code)
    ("python -c pass", "", "pass"),
    ("import helikon", "helikon", "import helikon"),
    (
        "helikon.Agent(...)",
        "helikon",
        "import helikon\nfrom helikon.testing import MockModel, Text\n"
        "helikon.Agent(name='a', model=MockModel([[Text('hi')]]), instructions='be brief')",
    ),
    ("import agents", "agents", "import agents"),
    (
        "agents.Agent(...)",
        "agents",
        "import agents\nagents.Agent(name='a', instructions='be brief')",
    ),
    ("import pydantic_ai", "pydantic_ai", "import pydantic_ai"),
    (
        "pydantic_ai.Agent(...)",
        "pydantic_ai",
        "import pydantic_ai\nfrom pydantic_ai.models.test import TestModel\n"
        "pydantic_ai.Agent(TestModel(), instructions='be brief')",
    ),
]
# Which helikon case each peer case is compared with.
BASELINE = {
    "import agents": "import helikon",
    "import pydantic_ai": "import helikon",
    "agents.Agent(...)": "helikon.Agent(...)",
    "pydantic_ai.Agent(...)": "helikon.Agent(...)",
}


def _time(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def measure(runs: int) -> dict[str, list[float]]:
    """Wall seconds per case, ``runs`` interleaved rounds (one warm-up round discarded)."""
    cases = []
    for label, module, code in CASES:
        if module and importlib.util.find_spec(module) is None:
            print(f"skipped {label}: {module} is not installed (pip install '.[bench]')")
            continue
        cases.append((label, code))
    times: dict[str, list[float]] = {label: [] for label, _ in cases}
    for round_ in range(runs + 1):
        for label, code in cases:
            elapsed = _time(code)
            if round_:
                times[label].append(elapsed)
    return times


def report(times: dict[str, list[float]]) -> str:
    """A table: median and fastest, raw and net of interpreter start, and the ratios."""
    base_med = statistics.median(times["python -c pass"])
    base_min = min(times["python -c pass"])
    net = {label: statistics.median(t) - base_med for label, t in times.items()}
    lines = [
        f"{'case':<24} {'median ms':>10} {'min ms':>8} {'net ms':>8} {'net min':>8}  ratio",
    ]
    for label, t in times.items():
        ratio = ""
        if label in BASELINE and BASELINE[label] in net and net[BASELINE[label]] > 0:
            ratio = f"{net[label] / net[BASELINE[label]]:.2f}x {BASELINE[label]}"
        lines.append(
            f"{label:<24} {statistics.median(t) * 1e3:>10.1f} {min(t) * 1e3:>8.1f} "
            f"{net[label] * 1e3:>8.1f} {(min(t) - base_min) * 1e3:>8.1f}  {ratio}"
        )
    return "\n".join(lines)


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="rounds per case (default 15)")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {args.runs} rounds, wall time per interpreter")
    print(report(measure(args.runs)))


if __name__ == "__main__":
    main()
