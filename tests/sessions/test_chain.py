"""The BLAKE3 hash chain over stored session records, on every backend.

Each test writes real records through a backend, edits the store behind its back the way an
attacker with database access would (SQL UPDATE/DELETE, Redis XADD/XDEL), and checks that
``verify`` names exactly the first record that no longer matches; records written before
the chain (no hash) are reported as unchained, not as tampered.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("blake3", reason="the hash chain needs blake3 (the sqlite extra has it)")

from helikon.errors import ConfigError, SessionTampered
from helikon.sessions import MemorySession, tool_called, user_message
from helikon.sessions.chain import GENESIS, link, verify, verify_records


def _log(n: int) -> list[Any]:
    return [user_message(f"m{i}") for i in range(n)]


def test_the_hash_covers_predecessor_position_and_payload() -> None:
    h0 = link(None, 0, "a")
    assert h0 == link(GENESIS, 0, "a") and len(h0) == 32
    assert link(h0, 1, "b") != link(h0, 2, "b")  # the position
    assert link(h0, 1, "b") != link(link(None, 0, "A"), 1, "b")  # the predecessor
    assert link(h0, 1, "b") != link(h0, 1, "c")  # the content
    # the published BLAKE3 of 32 zero bytes + 8 zero bytes + "a", independent of this module
    from blake3 import blake3

    assert h0 == blake3(bytes(40) + b"a").digest()


def test_verify_records_names_the_first_bad_one() -> None:
    h0 = link(None, 0, "a")
    h1 = link(h0, 1, "b")
    h2 = link(h1, 2, "c")
    good = [(0, "a", h0), (1, "b", h1), (2, "c", h2)]
    assert verify_records(good).ok and verify_records(good).head == h2.hex()
    edited = [(0, "a", h0), (1, "B", h1), (2, "c", h2)]
    r = verify_records(edited)
    assert (r.first_bad, r.reason) == (1, "its content or its predecessor's hash changed")
    with pytest.raises(SessionTampered, match=r"^s: the hash chain breaks at record 1: ") as exc:
        r.check("s")
    assert exc.value.sequence == 1 and exc.value.kind == "Tampered"
    dropped = [(0, "a", h0), (2, "c", h2)]
    assert verify_records(dropped).first_bad == 1
    assert verify_records(dropped).reason == "record 1 is missing (the next is 2)"
    swapped = [(0, "a", h0), (1, "c", h2), (2, "b", h1)]
    assert verify_records(swapped).first_bad == 1
    stripped = [(0, "a", h0), (1, "b", None), (2, "c", h2)]
    assert verify_records(stripped).first_bad == 1
    assert (
        verify_records(stripped).reason
        == "its hash was removed (the records before it are chained)"
    )


def test_old_records_without_hashes_are_unchained_not_tampered() -> None:
    h2 = link(None, 2, "c")  # the chain starts again after unchained records
    r = verify_records([(0, "a", None), (1, "b", None), (2, "c", h2), (3, "d", link(h2, 3, "d"))])
    assert (r.ok, r.unchained, r.chained) == (True, (0, 1), 2)
    assert verify_records([(0, "a", None)]).head is None


async def test_memory_sessions_chain_every_append() -> None:
    s = MemorySession()
    await s.append(_log(3))
    await s.append([tool_called("c1", "x", {"b": 1, "a": 2})])
    r = await verify(s)
    assert (r.ok, r.records, r.chained, r.unchained) == (True, 4, 4, ())
    s._rows[2] = s._rows[2].replace("m2", "m9")  # an edit behind the session's back
    assert (await verify(s)).first_bad == 2


async def test_verify_refuses_a_backend_without_a_chain() -> None:
    class Plain:
        async def events(self) -> list[Any]:
            return []

    with pytest.raises(ConfigError, match=r"verify\(session=...\): Plain keeps no hash chain"):
        await verify(Plain())


async def test_sqlite_chain_survives_batches_and_names_an_edited_row(sqlite_pool: Any) -> None:
    from helikon.sessions.sqlite import SqliteSession

    s = await SqliteSession.open(sqlite_pool, "a")
    other = await SqliteSession.open(sqlite_pool, "b")
    await s.append(_log(2))
    await asyncio.gather(*(s.append(_log(3)) for _ in range(5)), other.append(_log(4)))
    await s.append(_log(250))  # over 200 events: the transaction path
    await s.append(_log(1))
    r = await verify(s)
    assert (r.ok, r.records, r.chained) == (True, 268, 268)
    assert (await verify(other)).chained == 4
    db = sqlite3.connect(sqlite_pool.path)
    try:
        db.execute(
            "UPDATE session_events SET payload = replace(payload, 'm0', 'mX')"
            " WHERE session_id = 'a' AND sequence = 17"
        )
        db.commit()
    finally:
        db.close()
    r = await verify(s)
    assert r.first_bad == 17
    with pytest.raises(SessionTampered, match="breaks at record 17"):
        r.check()


async def test_sqlite_rows_from_before_the_chain_are_unchained(tmp_path: Path) -> None:
    from helikon.sessions.sqlite import SqliteSession

    path = tmp_path / "old.db"
    db = sqlite3.connect(path)  # a database written by the version before the chain
    db.executescript(
        "CREATE TABLE helikon_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);"
        "INSERT INTO helikon_migrations (version, name) VALUES (1, 'session_events');"
        "CREATE TABLE session_events (session_id TEXT NOT NULL, sequence INTEGER NOT NULL,"
        " kind TEXT NOT NULL, payload TEXT NOT NULL, ts TEXT NOT NULL,"
        " PRIMARY KEY (session_id, sequence)) WITHOUT ROWID;"
    )
    for i, event in enumerate(_log(3)):
        db.execute(
            "INSERT INTO session_events VALUES ('a', ?, 'user_message', ?, ?)",
            (i, event.model_dump_json(exclude_none=True), event.ts.isoformat()),
        )
    db.commit()
    db.close()
    s = SqliteSession("a", path)  # migrates: the hash column is added
    await s.append(_log(2))
    r = await verify(s)
    assert (r.ok, r.unchained, r.chained) == (True, (0, 1, 2), 2)
    assert [e.type for e in await s.events()] == ["user_message"] * 5


async def test_redis_chain_under_concurrent_appends_and_an_edited_entry(
    redis_client: tuple[Any, str],
) -> None:
    from helikon.sessions.redis import RedisSession

    client, prefix = redis_client
    s = RedisSession(client, "a", prefix=prefix)
    writers = [RedisSession(client, "a", prefix=prefix) for _ in range(6)]
    await asyncio.gather(*(w.append(_log(2)) for w in writers for _ in range(3)))
    r = await verify(s)
    assert (r.ok, r.records, r.chained) == (True, 36, 36)
    # rebuild the stream with entry 5's text changed, its hash kept
    entries = await client.xrange(s.events_key, "-", "+")
    await client.delete(s.events_key)
    for entry_id, fields in entries:
        if entry_id == b"5-1":
            payload = json.loads(fields[b"payload"])
            payload["content"][0]["text"] = "forged"
            fields = {**fields, b"payload": json.dumps(payload, separators=(",", ":"))}
        await client.xadd(s.events_key, fields, id=entry_id)
    r = await verify(s)
    assert (r.first_bad, r.reason) == (5, "its content or its predecessor's hash changed")
    await client.xdel(s.events_key, "3-1")
    r = await verify(s)
    assert (r.first_bad, r.reason) == (3, "record 3 is missing (the next is 4)")


async def test_postgres_chain_covers_the_jsonb_text_and_names_an_edited_row(
    postgres_pool: tuple[Any, str],
) -> None:
    from helikon.sessions.postgres import PostgresSession

    pool, schema = postgres_pool
    s = PostgresSession.open_without_migrate(pool, "a", schema=schema)
    await s.append([tool_called("c1", "x", {"b": 1, "a": 2.5, "big": 1e20, "s": "é"})])
    await asyncio.gather(*(s.append(_log(2)) for _ in range(5)))
    r = await verify(s)
    assert (r.ok, r.records, r.chained) == (True, 11, 11)
    async with pool.acquire() as conn:
        await conn.execute(
            f'DELETE FROM "{schema}".session_events WHERE session_id = $1 AND sequence = 4', "a"
        )
    r = await verify(s)
    assert (r.first_bad, r.reason) == (4, "record 4 is missing (the next is 5)")
