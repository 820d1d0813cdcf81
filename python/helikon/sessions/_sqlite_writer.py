"""The loop-thread writer of :class:`~helikon.sessions.sqlite.SqlitePool`.

Appends run directly on the event-loop thread through a plain ``sqlite3`` connection when
the write lock is free; checkpoints run on a worker thread. The trade-offs are in the
:mod:`helikon.sessions.sqlite` module docstring (``write_on_loop_thread``).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

from helikon.sessions.chain import sql_link

__all__ = ["LoopWriter"]

log = logging.getLogger("helikon.sessions")

# With the loop-thread writer, the pool checkpoints from a worker thread after about this
# many log pages (SQLite's own wal_autocheckpoint default). Estimated, not counted: a
# commit logs every page it touched, about one plus one per row plus one per KiB
# (measured on the bench's events: 2-3 pages for one ~500-byte event, 6 for a turn of 4).
_CHECKPOINT_PAGES = 1000
_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
# How long the checkpointer waits for readers to leave the log (and writers to commit)
# before it gives the rewind up until the next checkpoint; appends wait that long at most.
_REWIND_WAIT_MS = 200
_REWIND_TRIES = 3


def _is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in _BUSY_CODES
    return "locked" in str(exc) or "busy" in str(exc)  # pragma: no cover - Python < 3.11


def _open_plain(path: str, busy_timeout: float, busy_ms: int) -> sqlite3.Connection | None:
    """A plain connection for the loop-thread writer (None: the file is not in WAL mode)."""
    conn = sqlite3.connect(
        path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
    )
    try:
        mode = conn.execute("PRAGMA journal_mode").fetchone()
        if mode is None or str(mode[0]).lower() != "wal":
            conn.close()
            return None
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        conn.create_function("helikon_link", 3, sql_link, deterministic=True)
        conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
    except BaseException:
        conn.close()
        raise
    return conn


def _log_generation(path: str) -> int:
    """The WAL header's checkpoint sequence number (it grows by one at each rewind)."""
    try:
        with open(path + "-wal", "rb") as wal:
            header = wal.read(16)
    except OSError:
        return -1
    return int.from_bytes(header[12:16], "big") if len(header) == 16 else -1


class LoopWriter:
    """Appends run on the event-loop thread, and the checkpoints they leave to a thread.

    Two plain ``sqlite3`` connections: ``conn`` is used only on the loop thread that opened
    it (``busy_timeout = 0``, ``synchronous = NORMAL``, ``wal_autocheckpoint = 0``);
    ``checkpointer`` only inside ``asyncio.to_thread``, one checkpoint at a time.
    """

    def __init__(self, path: str, conn: sqlite3.Connection, checkpointer: sqlite3.Connection):
        self.path = path
        self.conn = conn
        self.checkpointer = checkpointer
        self.thread = threading.get_ident()
        self.gate = threading.Lock()  # held by the checkpointer while it rewinds the log
        self.pages = 0  # log pages written here since the last checkpoint (estimated)
        self.busy = 0  # appends sent to a worker because the write lock was taken
        self.unrewound = False  # the last checkpoint could not rewind the log (under gate)
        self.checkpoints = 0
        self.rewinds = 0
        self.task: asyncio.Future[tuple[int, bool]] | None = None  # the running checkpoint

    @classmethod
    async def open(cls, path: str, busy_timeout: float) -> LoopWriter | None:
        conn = await asyncio.to_thread(_open_plain, path, busy_timeout, 0)
        if conn is None:
            return None
        try:
            checkpointer = await asyncio.to_thread(_open_plain, path, busy_timeout, _REWIND_WAIT_MS)
        except BaseException:
            await asyncio.to_thread(conn.close)
            raise
        if checkpointer is None:  # pragma: no cover - the journal mode changed in between
            await asyncio.to_thread(conn.close)
            return None
        return cls(path, conn, checkpointer)

    def write(self, sql: str, params: Sequence[object], n: int, size: int) -> list[Any] | None:
        """Run one autocommit write statement here if the write lock is free.

        Returns its rows, or None when it must go to a worker thread instead (another
        thread, or the write lock is held); nothing was written then.

        Raises:
            sqlite3.Error: the statement failed otherwise (and wrote nothing).
        """
        if threading.get_ident() != self.thread or not self.gate.acquire(blocking=False):
            return None
        try:
            if self.unrewound:
                # the log may be complete and unrewound: the next write rewinds it (or, with
                # readers still in it, just adds to it); let a worker thread make that write
                self.unrewound = False
                return None
            rows = self.conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            if self.conn.in_transaction:  # pragma: no cover - autocommit statements roll back
                with suppress(sqlite3.Error):
                    self.conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError) and _is_busy(exc):
                self.busy += 1
                return None
            raise
        finally:
            self.gate.release()
        self.wrote(n, size)
        return rows

    def wrote(self, n: int, size: int) -> None:
        """Count a commit of ``n`` events (``size`` bytes) by this pool; checkpoint when due."""
        self.pages += 1 + n + size // 1024
        if self.pages >= _CHECKPOINT_PAGES and self.task is None:
            self.pages = 0
            # submitted now (not from a task): it starts even if the caller never yields
            self.task = asyncio.get_running_loop().run_in_executor(None, self._checkpoint)
            self.task.add_done_callback(self._checkpointed)

    def _checkpoint(self) -> tuple[int, bool]:
        """Checkpoint the log and rewind it from this thread, never from the event loop's.

        Runs in a worker thread. The first write after a complete checkpoint rewinds the
        log, and that write syncs the log's header even with ``synchronous = NORMAL``. So: a
        passive pass copies the bulk while the loop thread goes on appending; then, holding
        ``gate`` (the loop thread's appends go to worker threads meanwhile, and the pool's
        worker appends wait for this to end), ``wal_checkpoint(RESTART)`` copies the rest
        and waits (up to the connection's busy timeout) until no reader uses the log, and a
        rewrite of ``user_version`` with its own value under the write lock (a one-page
        write nobody can observe) rewinds it. If that fails, the loop thread's next append
        goes to a worker thread. Returns (pages in the log, rewound).
        """
        conn = self.checkpointer
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        pages, rewound = 0, False
        with self.gate:
            try:
                for _ in range(_REWIND_TRIES):
                    row = conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
                    busy, pages = int(row[0]), int(row[1])
                    if busy:
                        break  # a reader or another process is in the way: next time
                    before = _log_generation(self.path)
                    try:
                        conn.execute("BEGIN IMMEDIATE")
                        (version,) = conn.execute("PRAGMA user_version").fetchone()
                        conn.execute(f"PRAGMA user_version = {int(version)}")
                        conn.execute("COMMIT")
                    except sqlite3.Error:
                        if conn.in_transaction:
                            conn.execute("ROLLBACK")
                        break
                    # by this write, or by a worker thread's that came in between
                    rewound = _log_generation(self.path) != before
                    if rewound:
                        break
            finally:
                self.unrewound = not rewound
        return pages, rewound

    def _checkpointed(self, task: asyncio.Future[tuple[int, bool]]) -> None:
        self.task = None
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:  # the next one tries again; appends do not depend on it
            log.debug("sqlite: %r: background checkpoint failed: %s", self.path, exc)
            return
        pages, rewound = task.result()
        self.checkpoints += 1
        self.rewinds += rewound
        log.debug("sqlite: %r: checkpointed %d pages, rewound: %s", self.path, pages, rewound)

    async def close(self) -> None:
        task = self.task
        if task is not None:  # waited for, never cancelled: its thread uses the connection
            await asyncio.wait([task])
        for conn in (self.conn, self.checkpointer):
            with suppress(Exception):  # best-effort; off the loop, as the last close checkpoints
                await asyncio.to_thread(conn.close)
