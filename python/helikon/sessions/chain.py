"""Tamper evidence for session logs: a BLAKE3 hash chain over the stored records.

Every backend (SQLite, Redis, PostgreSQL, memory) stores with each event a 32-byte hash::

    hash[n] = BLAKE3(hash[n-1] || n as 8 bytes big-endian || payload[n] as UTF-8)

where ``payload[n]`` is the event's stored JSON text exactly as the backend returns it (for
PostgreSQL, whose ``jsonb`` normalizes the JSON, the text it returns) and ``hash[-1]`` is 32
zero bytes. Editing, removing or reordering a stored record changes its hash or breaks the
next one; :func:`verify` recomputes the chain and names the first record that does not
match (:class:`~helikon.errors.SessionTampered`).

Records written before the chain existed (or without the ``blake3`` package installed) have
no hash: they are **unchained**, reported as such and not as tampered; a chain that follows
them starts from zero bytes again. A chained record followed by an unchained one is
tampering (a hash was removed). The chain cannot show that records were cut off the end:
keep :attr:`ChainReport.head` elsewhere (a ticket, a signed note) and compare it later.

The hash uses the ``blake3`` package (Rust BLAKE3 behind a Python binding), installed with
the ``sqlite``, ``redis`` and ``postgres`` extras.

Example:
    >>> h0 = link(None, 0, '{"type":"user_message"}')
    >>> report = verify_records([(0, '{"type":"user_message"}', h0)])
    >>> (report.ok, report.chained, report.head == h0.hex())
    (True, 1, True)
    >>> verify_records([(0, '{"type":"user_message","x":1}', h0)]).first_bad
    0
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from helikon.errors import ConfigError, SessionTampered

_blake3: Any
try:
    from blake3 import blake3 as _blake3
except ImportError:  # pragma: no cover - depends on the environment
    _blake3 = None

__all__ = [
    "GENESIS",
    "ChainReport",
    "Chained",
    "chain_available",
    "link",
    "link_all",
    "verify",
    "verify_records",
]

log = logging.getLogger("helikon.sessions")

GENESIS = bytes(32)
"""The hash before the first chained record."""

_warned = False


def chain_available() -> bool:
    """``True`` when the ``blake3`` package is installed (records are then chained)."""
    return _blake3 is not None


def link(prev: bytes | None, sequence: int, payload: str) -> bytes:
    """The hash of the record at ``sequence`` holding ``payload``, after ``prev``.

    Raises:
        ConfigError: the ``blake3`` package is not installed.
    """
    if _blake3 is None:
        raise ConfigError(
            "session hash chain: the blake3 package is not installed; pip install blake3 "
            "(it comes with the sqlite, redis and postgres extras)"
        )
    h = _blake3(prev if prev else GENESIS)
    h.update(sequence.to_bytes(8, "big", signed=True))
    h.update(payload.encode("utf-8", "surrogatepass"))
    digest: bytes = h.digest()
    return digest


def link_all(prev: bytes | None, first: int, payloads: Iterable[str]) -> list[bytes | None]:
    """The hashes of records ``first, first + 1, ...`` after ``prev``; all ``None`` (unchained,
    with one warning per process) when ``blake3`` is missing."""
    global _warned
    rows = list(payloads)
    if _blake3 is None:
        if not _warned:
            _warned = True
            log.warning("sessions: blake3 is not installed: new records are not hash-chained")
        return [None] * len(rows)
    out: list[bytes | None] = []
    for i, payload in enumerate(rows):
        prev = link(prev, first + i, payload)
        out.append(prev)
    return out


def sql_link(prev: bytes | None, sequence: int, payload: str) -> bytes | None:
    """:func:`link` as a SQL function (``None`` without ``blake3``: unchained)."""
    if _blake3 is None:
        return None
    return link(prev, int(sequence), payload)


@dataclass(frozen=True, slots=True)
class ChainReport:
    """What :func:`verify` found.

    Attributes:
        records: how many records were read.
        chained: how many carry a hash that verified.
        unchained: the sequences of records without a hash (written before the chain).
        first_bad: the first record whose hash does not match (``None``: none).
        reason: why ``first_bad`` is bad (``""`` when the chain holds).
        head: the last verified hash (hex), to keep elsewhere; ``None`` when none is chained.
    """

    records: int
    chained: int
    unchained: tuple[int, ...]
    first_bad: int | None
    reason: str
    head: str | None

    @property
    def ok(self) -> bool:
        """No record is tampered (unchained records do not count against it)."""
        return self.first_bad is None

    def check(self, where: str = "session") -> ChainReport:
        """Return the report, or raise :class:`~helikon.errors.SessionTampered`."""
        if self.first_bad is not None:
            raise SessionTampered(
                f"{where}: the hash chain breaks at record {self.first_bad}: {self.reason}",
                sequence=self.first_bad,
            )
        return self


def verify_records(records: Iterable[tuple[int, str, bytes | None]]) -> ChainReport:
    """Check ``(sequence, payload, hash)`` records, in order (see the module doc)."""
    prev: bytes | None = None
    chained = 0
    unchained: list[int] = []
    count = 0
    bad: tuple[int, str] | None = None
    for expected_seq, (seq, payload, digest) in enumerate(records):
        count += 1
        if bad is not None:
            continue
        if seq != expected_seq:
            bad = (expected_seq, f"record {expected_seq} is missing (the next is {seq})")
        elif digest is None:
            if prev is not None:
                bad = (seq, "its hash was removed (the records before it are chained)")
            else:
                unchained.append(seq)
        elif _blake3 is None:
            raise ConfigError("verify: the blake3 package is not installed; pip install blake3")
        elif bytes(digest) != link(prev, seq, payload):
            bad = (seq, "its content or its predecessor's hash changed")
        else:
            prev = bytes(digest)
            chained += 1
    head = prev.hex() if prev is not None else None
    if bad is None:
        return ChainReport(count, chained, tuple(unchained), None, "", head)
    return ChainReport(count, chained, tuple(unchained), bad[0], bad[1], head)


@runtime_checkable
class Chained(Protocol):
    """A session whose stored records can be read with their hashes."""

    async def chain_records(self) -> list[tuple[int, str, bytes | None]]:
        """Every ``(sequence, stored payload, hash or None)``, in order."""
        ...


async def verify(session: Any) -> ChainReport:
    """Verify ``session``'s hash chain (it is only read).

    Returns:
        a :class:`ChainReport`; ``report.check()`` raises
        :class:`~helikon.errors.SessionTampered` naming the first bad record.

    Raises:
        ConfigError: the backend keeps no hashes (not one of helikon's).
        SessionError: the session could not be read.
    """
    if not isinstance(session, Chained):
        raise ConfigError(
            f"verify(session=...): {type(session).__name__} keeps no hash chain; use "
            "SqliteSession, RedisSession, PostgresSession or MemorySession"
        )
    return verify_records(await session.chain_records())
