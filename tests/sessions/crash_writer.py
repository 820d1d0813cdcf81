"""Child process for the crash-safety test: appends two-event batches forever, printing
``ack FIRST LAST TAG N`` after each commit, until it is killed.

``python -m tests.sessions.crash_writer sqlite|redis|postgres SESSION_ID TAG`` with the
target in ``HELIKON_TEST_SQLITE_PATH`` / ``HELIKON_TEST_REDIS_PREFIX`` /
``HELIKON_TEST_POSTGRES_SCHEMA`` + ``HELIKON_TEST_POSTGRES_DSN``.
"""

from __future__ import annotations

import asyncio
import itertools
import sys

from helikon.sessions import user_message
from tests.sessions import backends


async def main(kind: str, sid: str, tag: str) -> None:
    opener = {
        "sqlite": backends.open_sqlite,
        "redis": backends.open_redis,
        "postgres": backends.open_postgres,
    }[kind]
    session = await opener(sid)
    print("ready", flush=True)
    for n in itertools.count():
        ids = await session.append([user_message(f"{tag} {n} a"), user_message(f"{tag} {n} b")])
        print(f"ack {ids[0]} {ids[1]} {tag} {n}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
