"""A child process serving the support agent over uvicorn with a durable paused-run store.

``python -m tests.approvals.server_proc pause|resume`` with the environment of
:mod:`tests.approvals.proc` (``APPROVAL_BACKEND``, the backend's target, ``APPROVAL_RAN``).
``pause`` serves a model whose first turn asks for a refund, ``resume`` one that answers
"Refunded.". Prints ``port <n>`` once it listens, then serves until killed. Each tool run is
appended to ``APPROVAL_RAN`` at once (the process is killed, not ended).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from helikon import Agent, RunConfig, tool
from helikon.runtimes.server import (
    AgentServer,
    PostgresPausedRuns,
    SqlitePausedRuns,
)
from helikon.testing import MockModel, Text
from tests.approvals import _support as s


def _ran(name: str, args: Any) -> None:
    with open(os.environ["APPROVAL_RAN"], "a", encoding="utf-8") as f:
        f.write(json.dumps([name, args]) + "\n")


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    _ran("lookup", order)
    return f"order {order}: 40 EUR"


@tool
def refund(order: str, amount: int) -> str:
    """Refund part of an order."""
    _ran("refund", {"order": order, "amount": amount})
    return f"refunded {amount} on {order}"


async def main(mode: str) -> None:
    if os.environ["APPROVAL_BACKEND"] == "sqlite":
        from helikon.sessions.sqlite import SqlitePool, SqliteSession

        pool: Any = await SqlitePool.connect(os.environ["HELIKON_TEST_SQLITE_PATH"])
        sessions: Any = lambda sid: SqliteSession.open(pool, sid)  # noqa: E731
        store: Any = SqlitePausedRuns(pool)
    else:
        import asyncpg  # type: ignore[import-untyped]

        from helikon.sessions.postgres import PostgresSession

        schema = os.environ["HELIKON_TEST_POSTGRES_SCHEMA"]
        pool = await asyncpg.create_pool(
            os.environ["HELIKON_TEST_POSTGRES_DSN"], min_size=1, max_size=4
        )
        sessions = lambda sid: PostgresSession.open(pool, sid, schema=schema)  # noqa: E731
        store = PostgresPausedRuns(pool, schema=schema)
    script = [s.first_turn()] if mode == "pause" else [[Text("Refunded.")]]
    agent = Agent(
        name="support",
        model=MockModel(script),
        tools=[lookup, refund],
        run_config=RunConfig(approval="defer"),
    )
    server = AgentServer(
        [agent],
        session_factory=sessions,
        context_factory=lambda conn, session, cancel: s.ctx(),
        paused_runs=store,
    )
    serving = asyncio.ensure_future(server.serve("127.0.0.1", 0))
    while server.port is None:
        await asyncio.sleep(0.01)
    print(f"port {server.port}", flush=True)
    await serving


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
