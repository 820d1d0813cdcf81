"""SIGKILL writers mid-stream: every acknowledged event survives and nothing is corrupt."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from helikon.sessions import Session
from tests.sessions.test_conformance import REPO
from tests.sessions.util import first_text

WRITERS = 2
ROUNDS = 3


class Writer:
    """A crash_writer child whose stdout is collected by a thread."""

    def __init__(self, kind: str, sid: str, tag: str, env: dict[str, str]) -> None:
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.sessions.crash_writer", kind, sid, tag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO), **env},
            cwd=REPO,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    def acks(self) -> list[tuple[int, int, str, int]]:
        out = []
        for line in self.lines:
            if line.startswith("ack "):
                _, first, last, tag, n = line.split()
                out.append((int(first), int(last), tag, int(n)))
        return out

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self._reader.join(timeout=10)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        errors = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        assert self.proc.returncode == -signal.SIGKILL, errors


def _crash_round(
    kind: str, sid: str, env: dict[str, str], round_: int, rng: random.Random
) -> list[Any]:
    writers = [Writer(kind, sid, f"r{round_}w{w}", env) for w in range(WRITERS)]
    deadline = time.monotonic() + 30
    while any(len(w.acks()) < 3 for w in writers):
        for w in writers:
            if w.proc.poll() is not None:
                raise AssertionError(f"writer died: {w.proc.stderr and w.proc.stderr.read()}")
        assert time.monotonic() < deadline, "writers did not start acknowledging"
        time.sleep(0.01)
    time.sleep(rng.uniform(0.05, 0.4))
    for w in writers:
        w.kill()
    return [a for w in writers for a in w.acks()]


def _verify(log: list[Any], acks: list[Any]) -> None:
    texts = [first_text(e) for e in log]
    for first, last, tag, n in acks:
        assert last == first + 1
        assert texts[first] == f"{tag} {n} a", f"acknowledged event {first} is missing or wrong"
        assert texts[last] == f"{tag} {n} b"
    # whole batches only: every 'a' is directly followed by its 'b'
    assert len(texts) % 2 == 0, "a torn batch"
    for i in range(0, len(texts), 2):
        a, b = texts[i], texts[i + 1]
        assert a.endswith(" a") and b == a[:-1] + "b", f"torn batch at {i}: {a!r}, {b!r}"
    # at most one committed-but-unacknowledged batch per killed writer per round
    assert len(texts) // 2 <= len(acks) + WRITERS * ROUNDS
    seen = set(texts)
    assert len(seen) == len(texts), "duplicate events"


async def _run(kind: str, env: dict[str, str], open_session: Any) -> None:
    sid = f"crash-{uuid.uuid4().hex[:8]}"
    rng = random.Random(sid)
    acks: list[Any] = []
    for round_ in range(ROUNDS):
        acks += _crash_round(kind, sid, env, round_, rng)
        session: Session = await open_session(sid)
        log = await session.events()
        _verify(log, acks)
    assert len(acks) >= ROUNDS * WRITERS * 3


async def test_sqlite_survives_sigkill(tmp_path: Path) -> None:
    from helikon.sessions.sqlite import SqlitePool, SqliteSession

    path = tmp_path / "crash.db"
    env = {"HELIKON_TEST_SQLITE_PATH": str(path)}
    async with await SqlitePool.connect(path) as pool:
        await SqliteSession.migrate(pool)

    async def open_session(sid: str) -> Session:
        # a fresh pool after every crash: WAL recovery runs on open
        fresh = await SqlitePool.connect(path)
        pools.append(fresh)
        return SqliteSession.open_without_migrate(fresh, sid)

    pools: list[Any] = []
    try:
        await _run("sqlite", env, open_session)
    finally:
        for p in pools:
            await p.close()
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        db.close()


async def test_postgres_survives_sigkill(postgres_pool: tuple[Any, str], postgres_dsn: str) -> None:
    from helikon.sessions.postgres import PostgresSession

    pool, schema = postgres_pool
    env = {"HELIKON_TEST_POSTGRES_SCHEMA": schema, "HELIKON_TEST_POSTGRES_DSN": postgres_dsn}

    async def open_session(sid: str) -> Session:
        return PostgresSession.open_without_migrate(pool, sid, schema=schema)

    await _run("postgres", env, open_session)


async def test_redis_survives_sigkill(redis_client: tuple[Any, str]) -> None:
    from helikon.sessions.redis import RedisSession

    client, prefix = redis_client

    async def open_session(sid: str) -> Session:
        return RedisSession(client, sid, prefix=prefix)

    await _run("redis", {"HELIKON_TEST_REDIS_PREFIX": prefix}, open_session)


@pytest.fixture(autouse=True)
def _posix_only() -> None:
    if os.name != "posix":
        pytest.skip("SIGKILL is POSIX-only")
