"""Redis :class:`~helikon.sessions.Session` backend (extra ``helikon[redis]``, redis.asyncio).

Each session is a Redis Stream at ``{prefix}:session:{id}:events`` (``prefix`` defaults to
``helikon``). Every entry carries ``seq`` (the event's :data:`SequenceId`), ``kind`` (its
``type`` tag), ``payload`` (its JSON) and ``ts`` (nanoseconds since the Unix epoch); the
entry id is ``{seq}-1``, so ``events(since=n)`` is a range read starting after ``n``.

An append runs one Lua script, which Redis executes atomically: it reserves the next
sequence numbers from the per-session counter ``{prefix}:session:{id}:seq`` with
``INCRBY`` and issues one ``XADD`` per event, so concurrent writers never share or skip a
number. Each entry also carries ``hash`` (hex; :mod:`helikon.sessions.chain`), computed
before the script from the counter and the last entry's hash; the script writes only if
neither changed since (a concurrent append won), else the append reads them again. The
script refuses to write when the counter is behind the stream (e.g. the
counter key was evicted), instead of reusing numbers. The backend never trims the stream:
run the keyspace under ``maxmemory-policy noeviction`` and bound growth with
:class:`~helikon.sessions.CompactingSession`.

TLS and custom retry: build your own ``redis.asyncio.Redis`` (``ssl=True``, a ``rediss://``
URL, a connection pool of your choosing) and pass it to :class:`RedisSession`.

Example:
    >>> import redis.asyncio as aioredis
    >>> client = aioredis.Redis.from_url("rediss://user:pass@redis.example.com:6380/0")
    >>> session = RedisSession(client, "user-42")
    >>> session.events_key
    'helikon:session:user-42:events'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

try:
    import redis.asyncio as aioredis
    from redis import exceptions as redis_errors
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "helikon.sessions.redis needs the 'redis' extra: pip install 'helikon[redis]'"
    ) from exc

from helikon.core.items import Item
from helikon.errors import ConfigError, SessionBackendError, SessionError, SessionUnavailable
from helikon.sessions._codec import check_since, decode_all, encode_all, ts_nanos
from helikon.sessions.chain import link_all
from helikon.sessions.events import SequenceId, SessionEvent
from helikon.sessions.projection import project
from helikon.sessions.shield import complete
from helikon.sessions.tail import last_items

__all__ = ["RedisSession"]

_APPEND = """
local n = tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
local top_hash = ''
if last[1] then
  local top = tonumber(string.match(last[1][1], '^(%d+)-'))
  if top >= current then
    return redis.error_reply('HELIKON sequence counter ' .. KEYS[1] ..
      ' is behind its stream (was the key evicted?)')
  end
  local fields = last[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'hash' then top_hash = fields[i + 1] end
  end
end
if current ~= tonumber(ARGV[2]) or top_hash ~= ARGV[3] then
  return -1
end
local first = redis.call('INCRBY', KEYS[1], n) - n
for i = 0, n - 1 do
  redis.call('XADD', KEYS[2], (first + i) .. '-1',
    'seq', first + i, 'kind', ARGV[4 + 4 * i], 'payload', ARGV[5 + 4 * i],
    'ts', ARGV[6 + 4 * i], 'hash', ARGV[7 + 4 * i])
end
return first
"""
# An append computes its hashes (helikon.sessions.chain) from the counter and the last
# entry's hash read just before; the script writes only if both are still what was read
# (else it returns -1 and the append reads again), so the chain has no forks.
_ATTEMPTS = 64

_PAGE = 512


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _error(exc: Exception, doing: str) -> SessionError:
    if isinstance(exc, redis_errors.ConnectionError | redis_errors.TimeoutError | OSError):
        return SessionUnavailable(f"redis: {doing}: {exc}")
    return SessionBackendError(f"redis: {doing}: {exc}")


class RedisSession:
    """One session's log in a Redis Stream.

    Args:
        client: a ``redis.asyncio.Redis`` (bring your own for TLS or custom pooling);
            ``decode_responses`` may be on or off.
        session_id: the id this instance reads and writes (non-empty).
        prefix: the key namespace (default ``"helikon"``).

    Raises:
        ConfigError: ``client`` is not a Redis client (a URL, say), or an empty
            ``session_id`` or ``prefix``.
    """

    def __init__(self, client: aioredis.Redis, session_id: str, *, prefix: str = "helikon") -> None:
        if not callable(getattr(client, "register_script", None)):
            hint = "pass a client: RedisSession(redis.asyncio.Redis.from_url(url), session_id)"
            if isinstance(client, str | bytes):
                hint += ", or use await RedisSession.connect(url, session_id)"
            raise ConfigError(
                "RedisSession(client=...) must be a redis.asyncio.Redis client, got "
                f"{type(client).__name__}; {hint}"
            )
        if not isinstance(session_id, str) or not session_id:
            raise ConfigError(
                f"RedisSession: session_id must be a non-empty str, got {session_id!r}"
            )
        if not prefix:
            raise ConfigError("RedisSession(prefix=...) must be a non-empty str")
        self._client = client
        self._id = session_id
        self.events_key = f"{prefix}:session:{session_id}:events"
        self.seq_key = f"{prefix}:session:{session_id}:seq"
        self._script = client.register_script(_APPEND)

    def __repr__(self) -> str:
        return f"RedisSession({self.events_key!r})"

    @classmethod
    async def connect(cls, url: str, session_id: str, *, prefix: str = "helikon") -> RedisSession:
        """Connect to ``url`` (plaintext ``redis://`` or TLS ``rediss://``) and open a session.

        Raises:
            SessionUnavailable: the server cannot be reached.
        """
        client = aioredis.Redis.from_url(url)
        try:
            await client.ping()
        except (redis_errors.RedisError, OSError) as exc:
            await client.aclose()
            raise _error(exc, f"connect to {url!r}") from exc
        return cls(client, session_id, prefix=prefix)

    @property
    def session_id(self) -> str:
        """The id this instance reads and writes."""
        return self._id

    @property
    def client(self) -> aioredis.Redis:
        """The Redis client in use (close it when you are done)."""
        return self._client

    async def append(self, events: Sequence[SessionEvent]) -> list[SequenceId]:
        """Append ``events`` with one atomic Lua script; all or nothing.

        Raises:
            SessionUnavailable: Redis cannot be reached.
            SessionBackendError: Redis refused (e.g. the counter is behind the stream).
            SessionOther: an event cannot be serialized; nothing was written.
        """
        rows = encode_all(events)
        if not rows:
            return []
        fields: list[tuple[str, int]] = [(e.type, ts_nanos(e.ts)) for e in events]
        return await complete(self._append(rows, fields))

    async def _tail(self) -> tuple[int, str]:
        """The counter and the last entry's hash (hex, ``""`` for none)."""
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.get(self.seq_key)
            pipe.xrevrange(self.events_key, "+", "-", count=1)
            counter, last = await pipe.execute()
        top = ""
        if last:
            got = last[0][1] or {}
            value = got.get(b"hash", got.get("hash"))
            top = _text(value) if value is not None else ""
        return int(_text(counter)) if counter is not None else 0, top

    async def _append(self, rows: list[str], fields: list[tuple[str, int]]) -> list[SequenceId]:
        n = len(rows)
        try:
            for _ in range(_ATTEMPTS):
                expected, top = await self._tail()
                hashes = link_all(bytes.fromhex(top) if top else None, expected, rows)
                args: list[Any] = [n, expected, top]
                for (kind, ts), row, h in zip(fields, rows, hashes, strict=True):
                    args.extend((kind, row, ts, h.hex() if h is not None else ""))
                first = int(await self._script(keys=[self.seq_key, self.events_key], args=args))
                if first >= 0:
                    return [SequenceId(first + i) for i in range(n)]
        except (redis_errors.RedisError, OSError) as exc:
            raise _error(exc, f"append to {self.events_key!r}") from exc
        raise SessionBackendError(
            f"redis: append to {self.events_key!r}: {_ATTEMPTS} concurrent appends won in a "
            "row; nothing was written"
        )

    async def events(self, since: SequenceId | None = None) -> list[SessionEvent]:
        """The events after ``since`` (exclusive), or all, in order (read in pages).

        Raises:
            SessionError: the read failed or a stored entry does not parse.
            ConfigError: ``since`` is negative.
        """
        rows: list[tuple[str, Any]] = []
        for entry_id, fields in await self._entries(f"{check_since(since) + 1}-0"):
            payload = fields.get(b"payload") or fields.get("payload")
            if payload is None:
                raise SessionBackendError(
                    f"redis: entry {_text(entry_id)} of {self.events_key!r} has no payload"
                )
            rows.append((f"{self.events_key}#{_text(entry_id)}", payload))
        return decode_all(rows)

    async def _entries(self, start: str) -> list[tuple[Any, dict[Any, Any]]]:
        """The stream's entries from ``start`` on, read in pages.

        Raises:
            SessionError: the read failed.
        """
        out: list[tuple[Any, dict[Any, Any]]] = []
        while True:
            try:
                page = await self._client.xrange(self.events_key, start, "+", count=_PAGE)
            except (redis_errors.RedisError, OSError) as exc:
                raise _error(exc, f"read {self.events_key!r}") from exc
            page = page or []
            out.extend((entry_id, fields or {}) for entry_id, fields in page)
            if len(page) < _PAGE:
                return out
            start = "(" + _text(page[-1][0])

    async def chain_records(self) -> list[tuple[int, str, bytes | None]]:
        """Every ``(sequence, payload, hash)``, for :func:`helikon.sessions.chain.verify`.

        Raises:
            SessionError: the read failed.
        """
        out: list[tuple[int, str, bytes | None]] = []
        for entry_id, fields in await self._entries("0-0"):
            got = {_text(k): _text(v) for k, v in fields.items()}
            digest = got.get("hash") or ""
            seq = int(_text(entry_id).split("-")[0])
            out.append((seq, got.get("payload", ""), bytes.fromhex(digest) if digest else None))
        return out

    async def snapshot(self, last: int | None = None) -> list[Item]:
        """The projected conversation, or its ``last`` items (see
        :func:`helikon.sessions.last_items`).

        Raises:
            ConfigError: ``last`` is not an int >= 0.
        """
        return last_items(project(await self.events()), last, where="RedisSession.snapshot")
