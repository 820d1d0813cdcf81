"""Load on one server process: N concurrent SSE runs of a scripted 50 ms model turn.

Run ``python benches/bench_server.py [--runs 50 200] [--rounds 3]``. The server
(``AgentServer.serve_sync``, memory sessions, no run cap) runs in a child process; the
client side opens one ``httpx.AsyncClient`` per run (a shared client costs more CPU than the
server) and streams ``POST /agents/bench/runs?stream=sse``. Reported per concurrency: runs/s
(wall), p50/p99 time to first event (request sent -> first SSE frame) and run time, errors;
clients are built before the clock starts;
next to the same runs in-process (``agent.run_streamed`` under ``asyncio.gather``).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import time

import httpx

from helikon import Agent, Runner
from helikon.runtimes.server import AgentServer, ServerConfig
from helikon.testing import Delay, ScriptedModel, Text

TURN = 0.05


def _agent() -> Agent:
    return Agent(name="bench", model=ScriptedModel([[Delay(TURN), Text("ok")]]))


def _serve(port: int) -> None:
    config = ServerConfig(max_concurrent_runs=None)
    AgentServer([_agent()], config=config).serve_sync("127.0.0.1", port, backlog=4096)


async def _one_http(client: httpx.AsyncClient, url: str) -> tuple[float, float]:
    async with client:
        start = time.perf_counter()
        first = 0.0
        async with client.stream(
            "POST", f"{url}/agents/bench/runs?stream=sse", json={"input": "go"}
        ) as r:
            r.raise_for_status()
            async for line in r.aiter_lines():
                if not first and line.startswith("event: "):
                    first = time.perf_counter() - start
                if line == "event: run_failed":
                    raise RuntimeError("run_failed")
        return first, time.perf_counter() - start


async def _one_local(agent: Agent) -> tuple[float, float]:
    start = time.perf_counter()
    first = 0.0
    async for _ in Runner.run_streamed(agent, "go"):
        if not first:
            first = time.perf_counter() - start
    return first, time.perf_counter() - start


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values) or [float("nan")]
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def _round(n: int, url: str | None) -> tuple[float, list[float], list[float], int]:
    agent = _agent()
    # clients are made before the clock starts: building one (its TLS context) costs
    # milliseconds of CPU, more than a run
    clients = [httpx.AsyncClient(timeout=60) for _ in range(n)] if url else []
    start = time.perf_counter()
    jobs = [_one_http(c, url) for c in clients] if url else [_one_local(agent) for _ in range(n)]
    done = await asyncio.gather(*jobs, return_exceptions=True)
    wall = time.perf_counter() - start
    ok = [d for d in done if isinstance(d, tuple)]
    failures = [d for d in done if not isinstance(d, tuple)]
    if failures:
        print(f"  {len(failures)} errors, e.g. {failures[0]!r}")
    return n / wall, [f for f, _ in ok], [t for _, t in ok], n - len(ok)


async def _wait_up(url: str) -> None:
    async with httpx.AsyncClient() as client:
        for _ in range(500):
            try:
                if (await client.get(f"{url}/healthz")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.02)
    raise RuntimeError("the server did not come up")


async def main(sizes: list[int], rounds: int, port: int) -> None:
    url = f"http://127.0.0.1:{port}"
    child = multiprocessing.get_context("spawn").Process(target=_serve, args=(port,))
    child.start()
    try:
        await _wait_up(url)
        print(
            "| where | runs | runs/s | TTFE p50 ms | TTFE p99 ms | run p50 ms | run p99 ms "
            "| errors |"
        )
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for n in sizes:
            for where, target in (("HTTP+SSE", url), ("in-process", None)):
                best = None
                for _ in range(rounds):
                    got = await _round(n, target)
                    if best is None or got[0] > best[0]:
                        best = got
                assert best is not None
                rate, firsts, totals, errors = best
                print(
                    f"| {where} | {n} | {rate:.0f} | {_pct(firsts, 0.5):.1f} | "
                    f"{_pct(firsts, 0.99):.1f} | {_pct(totals, 0.5):.1f} | "
                    f"{_pct(totals, 0.99):.1f} | {errors} |"
                )
    finally:
        child.terminate()
        child.join(10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.rounds, args.port))
