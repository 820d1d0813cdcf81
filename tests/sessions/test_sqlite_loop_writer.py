"""SqlitePool(write_on_loop_thread=True): appends on the event-loop thread, their fallback
to worker threads, checkpoints off the loop, and the guarantees across processes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from helikon.errors import SessionBackendError
from helikon.sessions import SessionEvent, user_message
from helikon.sessions import _sqlite_writer as sqlite_writer
from helikon.sessions.sqlite import SqlitePool, SqliteSession
from helikon.sessions.testkit import numbered
from tests.sessions.test_conformance import REPO
from tests.sessions.util import first_text


def run_without_suspending(coro: Coroutine[Any, Any, Any]) -> Any:
    """Drive ``coro`` one step: it must finish without ever yielding to the event loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise AssertionError("the coroutine suspended")


def texts(events: list[SessionEvent]) -> list[str]:
    return [first_text(e) for e in events]


async def test_an_append_runs_on_the_loop_thread_without_suspending(tmp_path: Path) -> None:
    async with await SqlitePool.connect(tmp_path / "s.db") as pool:
        session = await SqliteSession.open(pool, "s")
        assert run_without_suspending(session.append(numbered("a", 1))) == [0]
        assert run_without_suspending(session.append(numbered("b", 4))) == [1, 2, 3, 4]
        assert texts(await session.events()) == ["a 0", "b 0", "b 1", "b 2", "b 3"]


async def test_the_writer_never_waits_and_nobody_in_the_pool_autocheckpoints(
    tmp_path: Path,
) -> None:
    async with await SqlitePool.connect(tmp_path / "s.db", busy_timeout=7.0) as pool:
        writer = pool._writer
        assert writer is not None
        got = {
            name: writer.conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("journal_mode", "synchronous", "busy_timeout", "wal_autocheckpoint")
        }
        assert got == {
            "journal_mode": "wal",
            "synchronous": 1,
            "busy_timeout": 0,
            "wal_autocheckpoint": 0,
        }
        async with pool.acquire() as conn:
            async with conn.execute("PRAGMA wal_autocheckpoint") as cur:
                row = await cur.fetchone()
            async with conn.execute("PRAGMA busy_timeout") as cur:
                busy = await cur.fetchone()
        assert row is not None and row[0] == 0
        assert busy is not None and busy[0] == 7000


@pytest.mark.parametrize(
    ("path", "kwargs"),
    [
        ("s.db", {"write_on_loop_thread": False}),
        ("s.db", {"synchronous": "FULL"}),
        (":memory:", {}),
    ],
)
async def test_worker_threads_only_when_off_with_full_or_in_memory(
    tmp_path: Path, path: str, kwargs: dict[str, Any]
) -> None:
    where = path if path == ":memory:" else str(tmp_path / path)
    async with await SqlitePool.connect(where, **kwargs) as pool:
        assert pool._writer is None
        session = await SqliteSession.open(pool, "s")
        assert await session.append(numbered("a", 3)) == [0, 1, 2]
        if path != ":memory:":  # SQLite checkpoints on its own, as it does by default
            async with pool.acquire() as conn, conn.execute("PRAGMA wal_autocheckpoint") as c:
                row = await c.fetchone()
            assert row is not None and row[0] == 1000


async def test_a_held_write_lock_sends_the_append_to_a_worker_that_waits(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    async with await SqlitePool.connect(path, busy_timeout=10.0) as pool:
        session = await SqliteSession.open(pool, "s")
        await session.append(numbered("before", 2))
        blocker = sqlite3.connect(path, isolation_level=None)
        try:
            blocker.execute("BEGIN IMMEDIATE")
            task = asyncio.ensure_future(session.append(numbered("waited", 3)))
            await asyncio.sleep(0.2)
            assert not task.done(), "the append must wait on a worker thread, not fail"
            assert pool._writer is not None and pool._writer.busy == 1
            blocker.execute("COMMIT")
            assert await asyncio.wait_for(task, 10) == [2, 3, 4]
        finally:
            blocker.close()
        # the loop-thread path is back once the lock is free
        assert run_without_suspending(session.append(numbered("after", 1))) == [5]
        assert texts(await session.events()) == [
            "before 0",
            "before 1",
            "waited 0",
            "waited 1",
            "waited 2",
            "after 0",
        ]


async def test_a_failed_loop_thread_append_writes_nothing_and_the_session_stays_usable(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    async with await SqlitePool.connect(path) as pool:
        session = await SqliteSession.open(pool, "s")
        await session.append(numbered("ok", 2))
        db = sqlite3.connect(path, isolation_level=None)
        db.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON session_events"
            " WHEN NEW.payload LIKE '%boom%' BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
        db.close()
        batch = [user_message("fine"), user_message("boom"), user_message("fine too")]
        with pytest.raises(SessionBackendError, match="refused"):
            run_without_suspending(session.append(batch))
        assert pool._writer is not None and not pool._writer.conn.in_transaction
        assert texts(await session.events()) == ["ok 0", "ok 1"]
        assert run_without_suspending(session.append(numbered("next", 2))) == [2, 3]
        assert texts(await session.events()) == ["ok 0", "ok 1", "next 0", "next 1"]


async def test_checkpoints_run_off_the_loop_thread_and_rewind_the_log(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with await SqlitePool.connect(path) as pool:
        session = await SqliteSession.open(pool, "s")
        writer = pool._writer
        assert writer is not None
        on_loop: list[str] = []
        writer.conn.set_trace_callback(on_loop.append)
        events = numbered("e", 3000)
        for i, event in enumerate(events):
            await session.append([event])
            if i % 100 == 0:
                await asyncio.sleep(0)  # let a started checkpoint's task run
        if writer.task is not None:
            await writer.task
        writer.conn.set_trace_callback(None)
        assert on_loop and all(
            sql.startswith("WITH RECURSIVE v(") and "INSERT INTO session_events" in sql
            for sql in on_loop
        )
        assert writer.checkpoints >= 2
        assert writer.rewinds >= 1
        # 3,000 one-event commits log about 7,000 pages (28 MiB); rewinding keeps it small
        assert os.path.getsize(f"{path}-wal") < 12 * 2**20
        assert len(await session.events()) == 3000


async def test_a_reader_in_the_log_defers_the_rewind_to_a_worker_thread(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A reader keeps the log from being rewound; the loop thread's next append, which
    could be the write that rewinds it (and syncs its header), goes to a worker."""
    monkeypatch.setattr(sqlite_writer, "_CHECKPOINT_PAGES", 30)
    monkeypatch.setattr(sqlite_writer, "_REWIND_WAIT_MS", 20)
    path = tmp_path / "s.db"
    async with await SqlitePool.connect(path) as pool:
        session = await SqliteSession.open(pool, "s")
        writer = pool._writer
        assert writer is not None
        await session.append(numbered("first", 1))
        reader = sqlite3.connect(path, isolation_level=None)
        try:
            reader.execute("BEGIN")
            assert reader.execute("SELECT COUNT(*) FROM session_events").fetchone() == (1,)
            for i in range(20):
                run_without_suspending(session.append(numbered(f"x{i}", 1)))
                if writer.task is not None:
                    break
            assert writer.task is not None
            await writer.task
            assert (writer.checkpoints, writer.rewinds, writer.unrewound) == (1, 0, True)
            task = asyncio.ensure_future(session.append(numbered("to a worker", 1)))
            await asyncio.sleep(0)
            assert not task.done(), "this append must not run on the loop thread"
            await task
            assert not writer.unrewound
            reader.execute("COMMIT")
        finally:
            reader.close()
        run_without_suspending(session.append(numbered("back on the loop", 1)))
        log = texts(await session.events())
        assert log[0] == "first 0" and log[-2:] == ["to a worker 0", "back on the loop 0"]


async def test_worker_appends_count_towards_checkpoints(tmp_path: Path) -> None:
    async with await SqlitePool.connect(tmp_path / "s.db") as pool:
        session = await SqliteSession.open(pool, "s")
        writer = pool._writer
        assert writer is not None
        for i in range(8):  # over 200 events: the BEGIN IMMEDIATE transaction on a worker
            await session.append(numbered(f"big{i}", 201))
        if writer.task is not None:
            await writer.task
        assert writer.checkpoints >= 1


async def test_closing_during_a_checkpoint(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(sqlite_writer, "_CHECKPOINT_PAGES", 20)
    pool = await SqlitePool.connect(tmp_path / "s.db")
    session = await SqliteSession.open(pool, "s")
    for i in range(10):
        await session.append(numbered(f"x{i}", 1))
    assert pool._writer is not None and pool._writer.task is not None
    await pool.close()
    assert pool._writer is None
    reopened = await SqlitePool.connect(tmp_path / "s.db")
    try:
        again = SqliteSession.open_without_migrate(reopened, "s")
        assert len(await again.events()) == 10
    finally:
        await reopened.close()


async def test_an_append_cancelled_before_it_starts_writes_nothing(tmp_path: Path) -> None:
    async with await SqlitePool.connect(tmp_path / "s.db") as pool:
        session = await SqliteSession.open(pool, "s")
        task = asyncio.ensure_future(session.append(numbered("never", 2)))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        landed = asyncio.ensure_future(session.append(numbered("landed", 2)))
        await asyncio.sleep(0)  # it ran to its end on the loop thread
        landed.cancel()  # too late: it is done
        assert await landed == [0, 1]
        assert texts(await session.events()) == ["landed 0", "landed 1"]


async def _settled(session: SqliteSession, count: int) -> list[str]:
    for _ in range(200):
        log = texts(await session.events())
        if len(log) >= count:
            return log
        await asyncio.sleep(0.01)
    return texts(await session.events())


async def test_a_worker_append_cancelled_once_queued_still_lands_without_a_shield(
    tmp_path: Path,
) -> None:
    """An idle connection and a free slot: the statement is queued in the first step, so a
    cancellation after that cannot stop it (all or nothing, in order)."""
    async with await SqlitePool.connect(tmp_path / "s.db", write_on_loop_thread=False) as pool:
        session = await SqliteSession.open(pool, "s")
        for i in range(20):
            task = asyncio.ensure_future(session.append(numbered(f"t{i}", 4)))
            await asyncio.sleep(0)  # its first step ran
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        log = await _settled(session, 80)
        assert log == [f"t{i} {k}" for i in range(20) for k in range(4)]


async def test_a_worker_append_waiting_for_a_connection_is_shielded(tmp_path: Path) -> None:
    """No connection free: the append waits in a shielded task and lands after its caller
    was cancelled (BR-14 on the worker path)."""
    async with await SqlitePool.connect(
        tmp_path / "s.db", max_connections=1, write_on_loop_thread=False
    ) as pool:
        session = await SqliteSession.open(pool, "s")
        release = asyncio.Event()

        async def hold() -> None:
            async with pool.acquire():
                await release.wait()

        holder = asyncio.ensure_future(hold())
        await asyncio.sleep(0.01)
        task = asyncio.ensure_future(session.append(numbered("late", 3)))
        await asyncio.sleep(0.05)
        assert not task.done()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        release.set()
        await holder
        assert await _settled(session, 3) == ["late 0", "late 1", "late 2"]


_CHILD = """
import asyncio, sys
from helikon.sessions import user_message
from helikon.sessions.sqlite import SqlitePool, SqliteSession

async def main(path, tag, count):
    async with await SqlitePool.connect(path) as pool:
        session = SqliteSession.open_without_migrate(pool, "shared")
        for n in range(count):
            ids = await session.append(
                [user_message(f"{tag} {n} a"), user_message(f"{tag} {n} b")]
            )
            print(ids[0], ids[1], flush=True)
            if n % 7 == 0:
                await asyncio.sleep(0)

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


async def test_processes_and_tasks_on_one_session_get_gap_free_ids(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    per_writer = 150
    async with await SqlitePool.connect(path) as pool:
        session = await SqliteSession.open(pool, "shared")
        children = [
            await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                _CHILD,
                str(path),
                f"p{i}",
                str(per_writer),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": str(REPO)},
            )
            for i in range(3)
        ]

        async def task_writer(tag: str) -> list[tuple[int, int]]:
            got = []
            for n in range(per_writer):
                ids = await session.append(
                    [user_message(f"{tag} {n} a"), user_message(f"{tag} {n} b")]
                )
                got.append((int(ids[0]), int(ids[1])))
                await asyncio.sleep(0)
            return got

        local = await asyncio.gather(*(task_writer(f"t{i}") for i in range(3)))
        acks: list[tuple[int, int]] = [pair for pairs in local for pair in pairs]
        for child in children:
            out, err = await asyncio.wait_for(child.communicate(), 120)
            assert child.returncode == 0, err.decode()
            acks += [
                (int(a), int(b))
                for a, b in (line.split() for line in out.decode().split("\n") if line)
            ]
        log = texts(await session.events())
    writers = 6
    assert len(acks) == writers * per_writer
    assert len(log) == 2 * writers * per_writer
    assert sorted(i for pair in acks for i in pair) == list(range(len(log))), "gaps or duplicates"
    for a, b in acks:
        assert b == a + 1 and log[a].endswith(" a") and log[b] == log[a][:-1] + "b"
