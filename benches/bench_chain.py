"""The cost of the session hash chain: append throughput with and without it, in one run.

Run ``python benches/bench_chain.py`` (``--quick`` for a smoke pass). For each backend
(memory, SQLite with the pool's defaults, Redis and PostgreSQL when they answer) and each
round, N single-event appends (a ~600-character ``tool_returned``) go to a fresh session
with the chain on, then N with it off; the order alternates each round. "Off" turns the
BLAKE3 step off (as without the ``blake3`` package: the hash is NULL); the statement
shapes stay those of the chained version, so the ratio is the price of hashing and of
reading the previous hash. Figures: appends per second, best round then the median round;
the ratio is chained over unchained (1.0 = free).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from helikon.sessions import MemorySession, tool_returned
from helikon.sessions import chain as chain_mod

Opener = Callable[[], Awaitable[tuple[Any, Callable[[], Awaitable[None]]]]]


async def _rate(open_session: Opener, n: int, chained: bool) -> float:
    saved = chain_mod._blake3
    if not chained:
        chain_mod._blake3 = None
        chain_mod._warned = True  # no warning in the bench
    try:
        session, close = await open_session()
        events = [tool_returned(f"c{i}", "x" * 600) for i in range(n)]
        start = time.perf_counter()
        for e in events:
            await session.append([e])
        took = time.perf_counter() - start
        await close()
    finally:
        chain_mod._blake3 = saved
    return n / took


async def _nothing() -> None:
    return None


def _openers(tmp: Path) -> dict[str, Opener]:
    async def memory() -> tuple[Any, Callable[[], Awaitable[None]]]:
        return MemorySession(), _nothing

    async def sqlite() -> tuple[Any, Callable[[], Awaitable[None]]]:
        from helikon.sessions.sqlite import SqlitePool, SqliteSession

        pool = await SqlitePool.connect(tmp / f"{uuid.uuid4().hex}.db")
        return await SqliteSession.open(pool, "s"), pool.close

    async def redis() -> tuple[Any, Callable[[], Awaitable[None]]]:
        import redis.asyncio as aioredis

        from helikon.sessions.redis import RedisSession

        client = aioredis.Redis.from_url("redis://127.0.0.1:6379/0")
        session = RedisSession(client, f"bench-{uuid.uuid4().hex}", prefix="helikon-bench")

        async def close() -> None:
            await client.delete(session.events_key, session.seq_key)
            await client.aclose()

        return session, close

    async def postgres() -> tuple[Any, Callable[[], Awaitable[None]]]:
        import asyncpg  # type: ignore[import-untyped]

        from helikon.sessions.postgres import PostgresSession

        pool = await asyncpg.create_pool("postgresql://postgres@127.0.0.1:5432/test")
        sid = f"bench-{uuid.uuid4().hex}"
        session = await PostgresSession.open(pool, sid)

        async def close() -> None:
            await pool.execute("DELETE FROM session_events WHERE session_id = $1", sid)
            await pool.close()

        return session, close

    return {"memory": memory, "sqlite": sqlite, "redis": redis, "postgres": postgres}


async def main(n: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        openers = _openers(Path(d))
        print(f"{n} single-event appends per round, {rounds} rounds")
        print(f"{'backend':<10} {'chained/s':>18} {'unchained/s':>18} {'ratio':>6}")
        for name, opener in openers.items():
            on: list[float] = []
            off: list[float] = []
            try:
                for r in range(rounds):
                    first, second = (True, False) if r % 2 == 0 else (False, True)
                    for chained in (first, second):
                        (on if chained else off).append(await _rate(opener, n, chained))
            except Exception as exc:  # a service that does not answer is skipped
                print(f"{name:<10} skipped: {type(exc).__name__}: {exc}")
                continue
            best_on, best_off = max(on), max(off)
            print(
                f"{name:<10} {best_on:>9.0f} ({statistics.median(on):>6.0f})"
                f" {best_off:>9.0f} ({statistics.median(off):>6.0f}) {best_on / best_off:>6.2f}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 appends, 2 rounds")
    parser.add_argument("-n", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(200 if args.quick else args.n, 2 if args.quick else args.rounds))
