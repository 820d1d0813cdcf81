"""The session logs a ``--sessions`` URL names, for ``helikon policy check``.

Forms (``#ID`` picks one session, without it every session is read)::

    sqlite:///ABSOLUTE/PATH.db[#ID]                    the file is never created
    redis://[user:pass@]HOST:PORT/DB[?prefix=P][#ID]   streams P:session:ID:events (P: helikon)
    postgresql://USER@HOST/DB[?schema=S][#ID]          table S.session_events (S: public)

``rediss://`` and ``postgres://`` are accepted too. Nothing is written to any store.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlparse, urlunparse

from helikon.errors import ConfigError, SessionError, SessionUnavailable
from helikon.sessions.events import SessionEvent

__all__ = ["URL_FIX", "read_sessions", "read_stores"]

T = TypeVar("T")
Reader = Callable[[Any], Awaitable[Any]]

URL_FIX = (
    "use sqlite:///ABSOLUTE/PATH.db, redis://HOST:PORT/DB[?prefix=P] or "
    "postgresql://USER@HOST/DB[?schema=S], optionally with #SESSION_ID"
)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def _pick(url: str, where: str, ids: list[str], wanted: str) -> list[str]:
    if not wanted:
        return ids
    if wanted not in ids:
        raise ConfigError(
            f"--sessions {url!r}: {where} has no session {wanted!r}. Fix: use one of {ids}"
        )
    return [wanted]


def _without(parsed: Any, key: str) -> tuple[str, str | None]:
    """The URL without the fragment and the ``key`` query parameter, and that parameter."""
    query = parse_qsl(parsed.query, keep_blank_values=True)
    value = next((v for k, v in query if k == key), None)
    rest = urlencode([(k, v) for k, v in query if k != key])
    return urlunparse(parsed._replace(query=rest, fragment="")), value


def _sqlite_ids(path: Path) -> list[str]:
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        with sqlite3.connect(uri, uri=True) as conn:
            rows = conn.execute(
                "SELECT DISTINCT session_id FROM session_events ORDER BY session_id"
            ).fetchall()
    except sqlite3.Error as exc:
        raise ConfigError(f"{path}: not a helikon session database ({exc})") from None
    return [str(r[0]) for r in rows]


async def _events(session: Any) -> list[SessionEvent]:
    events: list[SessionEvent] = await session.events()
    return events


async def _sqlite(url: str, parsed: Any, read: Reader) -> dict[str, Any]:
    if parsed.netloc or not parsed.path:
        raise ConfigError(f"--sessions {url!r}: no file path. Fix: {URL_FIX}")
    path = Path(parsed.path)
    if not path.is_file():
        raise ConfigError(f"--sessions {url!r}: {path} does not exist. Fix: {URL_FIX}")
    ids = _pick(url, str(path), _sqlite_ids(path), parsed.fragment)
    from helikon.sessions.sqlite import SqliteSession

    return {sid: await read(SqliteSession(sid, path)) for sid in ids}


async def _redis(url: str, parsed: Any, read: Reader) -> dict[str, Any]:
    import redis.asyncio as aioredis
    from redis import exceptions as redis_errors

    from helikon.sessions.redis import RedisSession

    plain, prefix = _without(parsed, "prefix")
    prefix = prefix or "helikon"
    client = aioredis.Redis.from_url(plain)
    head, tail = f"{prefix}:session:", ":events"
    try:
        try:
            keys = [k async for k in client.scan_iter(match=f"{head}*{tail}", count=500)]
        except (OSError, redis_errors.RedisError) as exc:
            raise SessionUnavailable(f"redis: list the sessions of {plain}: {exc}") from exc
        names = sorted(
            {
                text[len(head) : -len(tail)]
                for k in keys
                for text in [k.decode() if isinstance(k, bytes) else str(k)]
            }
        )
        ids = _pick(url, f"redis prefix {prefix!r}", names, parsed.fragment)
        return {sid: await read(RedisSession(client, sid, prefix=prefix)) for sid in ids}
    finally:
        await client.aclose()


async def _postgres(url: str, parsed: Any, read: Reader) -> dict[str, Any]:
    import asyncpg  # type: ignore[import-untyped, import-not-found, unused-ignore]

    from helikon.sessions.postgres import PostgresSession

    dsn, schema = _without(parsed, "schema")
    schema = schema or "public"
    if not _IDENT.match(schema):
        raise ConfigError(
            f"--sessions {url!r}: schema {schema!r} is not an identifier. Fix: ?schema=app"
        )
    try:
        pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2)
    except (OSError, asyncpg.PostgresError) as exc:
        raise SessionUnavailable(f"postgres: connect to {parsed.hostname}: {exc}") from exc
    try:
        try:
            rows = await pool.fetch(
                f'SELECT DISTINCT session_id FROM "{schema}".session_events ORDER BY session_id'
            )
        except asyncpg.UndefinedTableError:
            raise ConfigError(
                f"--sessions {url!r}: schema {schema!r} has no helikon sessions "
                f"(no session_events table). Fix: ?schema=SCHEMA naming the sessions' schema"
            ) from None
        except (OSError, asyncpg.PostgresError) as exc:
            raise SessionError(f"postgres: list the sessions: {exc}") from exc
        names = [str(r["session_id"]) for r in rows]
        ids = _pick(url, f"schema {schema!r}", names, parsed.fragment)
        return {
            sid: await read(PostgresSession.open_without_migrate(pool, sid, schema=schema))
            for sid in ids
        }
    finally:
        await pool.close()


async def read_sessions(url: str) -> dict[str, list[SessionEvent]]:
    """The event logs ``url`` names, by session id (sorted); see the module doc for the forms.

    Raises:
        ConfigError: an unsupported scheme, a missing SQLite file, a store without helikon
            sessions, or ``#ID`` naming a session the store does not hold (the message
            lists the ones it does).
        SessionError: the store cannot be reached or a stored event does not parse.
    """
    return await read_stores(url, _events)


async def read_stores(url: str, read: Callable[[Any], Awaitable[T]]) -> dict[str, T]:
    """``read(session)`` for each session ``url`` names, by session id (as
    :func:`read_sessions`, which reads the events; ``helikon verify`` reads the hash chain).

    Raises:
        ConfigError, SessionError: as :func:`read_sessions`.
    """
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        return await _sqlite(url, parsed, read)
    if parsed.scheme in ("redis", "rediss"):
        return await _redis(url, parsed, read)
    if parsed.scheme in ("postgresql", "postgres"):
        return await _postgres(url, parsed, read)
    raise ConfigError(
        f"--sessions {url!r}: the {parsed.scheme or 'missing'} scheme is not supported. "
        f"Fix: {URL_FIX}"
    )
