"""The SQLite session schema: its migrations and the append statement.

Each migration is ``(version, name, statements)``; :func:`migrate_schema` applies the ones a
database lacks in one ``BEGIN IMMEDIATE`` transaction (SQLite's write lock serializes
concurrent migrators) and records them in ``helikon_migrations``. A current database costs
one read.
"""

from __future__ import annotations

import sqlite3
from functools import cache

import aiosqlite

__all__ = ["LATEST", "MIGRATIONS", "insert_sql", "migrate_schema"]

MIGRATIONS: list[tuple[int, str, list[str]]] = [
    (
        1,
        "session_events",
        [
            "CREATE TABLE IF NOT EXISTS session_events ("
            " session_id TEXT NOT NULL,"
            " sequence INTEGER NOT NULL,"
            " kind TEXT NOT NULL,"
            " payload TEXT NOT NULL,"
            " ts TEXT NOT NULL,"
            " PRIMARY KEY (session_id, sequence)"
            ") WITHOUT ROWID",
        ],
    ),
    # the hash chain (helikon.sessions.chain): NULL in rows written before it
    (2, "session_events_hash", ["ALTER TABLE session_events ADD COLUMN hash BLOB"]),
]
LATEST = MIGRATIONS[-1][0]


async def migrate_schema(conn: aiosqlite.Connection) -> None:
    """Create or upgrade the schema on ``conn`` (idempotent).

    Raises:
        sqlite3.Error: the database cannot be read or written.
    """
    try:
        async with conn.execute("SELECT MAX(version) FROM helikon_migrations") as cur:
            row = await cur.fetchone()
        if row is not None and row[0] is not None and int(row[0]) >= LATEST:
            return
    except sqlite3.OperationalError:
        pass  # no migrations table yet
    await conn.execute("BEGIN IMMEDIATE")
    await conn.execute(
        "CREATE TABLE IF NOT EXISTS helikon_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
    )
    async with conn.execute("SELECT version FROM helikon_migrations") as cur:
        done = {int(r[0]) for r in await cur.fetchall()}
    for version, name, statements in MIGRATIONS:
        if version in done:
            continue
        for sql in statements:
            await conn.execute(sql)
        await conn.execute(
            "INSERT INTO helikon_migrations (version, name) VALUES (?, ?)",
            (version, name),
        )
    await conn.execute("COMMIT")


@cache
def insert_sql(n: int) -> str:
    """The statement appending ``n`` events in one go (``RETURNING`` their sequences)."""
    # ?1 is the session id; the n (offset, kind, payload, ts) tuples follow as ?2, ?3, ...
    # The next sequence and the last hash are read once, under the write lock the statement
    # took before reading; a recursive CTE chains the batch's hashes with helikon_link (the
    # Python function registered on every connection, see helikon.sessions.chain).
    # numbered: the VALUES come before ?1 in the text, where plain ? would take 1, 2, ...
    values = ",".join(f"(?{2 + 4 * i},?{3 + 4 * i},?{4 + 4 * i},?{5 + 4 * i})" for i in range(n))
    return (
        f"WITH RECURSIVE v(i, kind, payload, ts) AS (VALUES {values}),"
        " tail(first, h) AS (SELECT"
        " (SELECT COALESCE(MAX(sequence), -1) + 1 FROM session_events WHERE session_id = ?1),"
        " (SELECT hash FROM session_events WHERE session_id = ?1"
        " ORDER BY sequence DESC LIMIT 1)),"
        " c(i, h) AS (SELECT -1, h FROM tail UNION ALL"
        " SELECT c.i + 1, helikon_link(c.h, tail.first + c.i + 1, v.payload)"
        " FROM c, tail JOIN v ON v.i = c.i + 1)"
        " INSERT INTO session_events (session_id, sequence, kind, payload, ts, hash)"
        " SELECT ?1, tail.first + v.i, v.kind, v.payload, v.ts, c.h"
        " FROM v JOIN c ON c.i = v.i, tail WHERE true"
        " RETURNING sequence"
    )
