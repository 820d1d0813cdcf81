"""The conformance checks: plain async functions over a :class:`Backend`.

Each check uses fresh random session ids, so checks (and runs) never see each other's data,
and raises ``AssertionError`` with a message naming what broke.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from helikon.core.items import TextPart
from helikon.errors import SessionError
from helikon.sessions.events import (
    SequenceId,
    SessionEvent,
    ToolCalled,
    UserMessageEvent,
)
from helikon.sessions.projection import project
from helikon.sessions.protocol import Session
from helikon.sessions.testkit.samples import every_event_type, numbered

__all__ = [
    "CHECKS",
    "Backend",
    "check_cancelled_append",
    "check_concurrent_writers",
    "check_empty_append",
    "check_empty_session",
    "check_failed_append",
    "check_isolation",
    "check_ordering",
    "check_process_restart",
    "check_reopen",
    "check_round_trip",
    "check_since_exclusive",
    "check_snapshot_is_projection",
    "run_all",
]


@dataclass
class Backend:
    """How the suite reaches the backend under test.

    Args:
        open: ``await open(session_id)`` returns a *new* handle on that session each call
            (sharing a connection pool is fine). Concurrent-writer checks open one handle
            per writer.
        durable: the log outlives its handle (``False`` for in-memory backends whose
            ``open`` returns the same object per id); enables the reopen check.
        subprocess_open: ``"module:function"`` naming an importable ``async`` function with
            the same contract as ``open``; enables the process-restart check, which runs
            it in fresh interpreters.
        subprocess_env: extra environment for those interpreters (e.g. a database path).
        writers: concurrent writers in the concurrency check.
        appends_per_writer: appends each of them makes.
    """

    open: Callable[[str], Awaitable[Session]]
    durable: bool = True
    subprocess_open: str | None = None
    subprocess_env: Mapping[str, str] = field(default_factory=dict)
    writers: int = 8
    appends_per_writer: int = 6


def _sid(name: str) -> str:
    return f"conformance-{name}-{uuid.uuid4().hex[:12]}"


def _dump(events: list[SessionEvent]) -> list[dict[str, Any]]:
    return [e.model_dump(mode="json") for e in events]


async def _assert_positions(session: Session, expected: list[SessionEvent]) -> None:
    """events(since=i) is expected[i+1:] for every i: positions are 0..n-1, no gaps."""
    everything = await session.events()
    assert _dump(everything) == _dump(expected), "events() differs from what was appended"
    for i in range(len(expected)):
        tail = await session.events(SequenceId(i))
        assert _dump(tail) == _dump(expected[i + 1 :]), (
            f"events(since={i}) should hold the {len(expected) - i - 1} events after "
            f"position {i}, got {len(tail)}"
        )


async def check_empty_session(backend: Backend) -> None:
    """A session never written to reads as empty."""
    session = await backend.open(_sid("empty"))
    assert await session.events() == [], "a new session must have no events"
    assert await session.events(SequenceId(0)) == [], "events(since=0) of an empty log"
    assert await session.snapshot() == [], "a new session must project to []"


async def check_empty_append(backend: Backend) -> None:
    """Appending nothing returns no ids and changes nothing."""
    session = await backend.open(_sid("noop"))
    assert await session.append([]) == [], "append([]) must return []"
    first = numbered("x", 2)
    assert await session.append(first) == [0, 1]
    assert await session.append([]) == []
    assert await session.append(numbered("y", 1)) == [2], "append([]) must not use a position"


async def check_ordering(backend: Backend) -> None:
    """Appends land in order with contiguous ids starting at 0."""
    session = await backend.open(_sid("order"))
    appended: list[SessionEvent] = []
    ids: list[int] = []
    for n, batch_size in enumerate((1, 3, 2, 5)):
        batch = numbered(f"batch{n}", batch_size)
        got = await session.append(batch)
        assert got == list(range(len(appended), len(appended) + batch_size)), (
            f"append #{n} returned {got}, expected the next {batch_size} positions"
        )
        ids.extend(got)
        appended.extend(batch)
    await _assert_positions(session, appended)


async def check_since_exclusive(backend: Backend) -> None:
    """``since`` is exclusive; positions past the end read as empty."""
    session = await backend.open(_sid("since"))
    events = numbered("s", 4)
    await session.append(events)
    assert _dump(await session.events(SequenceId(0))) == _dump(events[1:])
    assert _dump(await session.events(SequenceId(2))) == _dump(events[3:])
    assert await session.events(SequenceId(3)) == [], "since=last must be empty"
    assert await session.events(SequenceId(1000)) == [], "since past the end must be empty"
    assert _dump(await session.events(None)) == _dump(events)


async def check_round_trip(backend: Backend) -> None:
    """Every event type survives storage exactly (fields, unicode, options, timestamps)."""
    session = await backend.open(_sid("roundtrip"))
    sample = every_event_type("rt")
    await session.append(sample)
    back = await session.events()
    assert len(back) == len(sample), f"stored {len(sample)} events, read {len(back)}"
    for i, (want, got) in enumerate(zip(sample, back, strict=True)):
        assert type(got) is type(want), f"event {i}: {type(want).__name__} came back as {got!r}"
        assert got == want, f"event {i} changed in storage:\n  wrote {want!r}\n  read  {got!r}"


async def check_snapshot_is_projection(backend: Backend) -> None:
    """``snapshot()`` is ``project(events())``."""
    session = await backend.open(_sid("snapshot"))
    sample = every_event_type("snap")
    await session.append(sample[:5])
    await session.append(sample[5:])
    assert await session.snapshot() == project(sample)


async def check_isolation(backend: Backend) -> None:
    """Sessions with different ids never see each other's events, even look-alike ids."""
    base = _sid("iso")
    ids = [base, base + ":events", base + "x", base.upper(), f"{base} {{ünï/cødé}}"]
    sessions = [await backend.open(i) for i in ids]
    written: list[list[SessionEvent]] = [[] for _ in ids]
    for round_ in range(2):
        for n, session in enumerate(sessions):
            batch = numbered(f"{n}", n + 1, start=round_ * 10)
            got = await session.append(batch)
            assert got[0] == round_ * (n + 1), f"session {ids[n]!r} got foreign positions {got}"
            written[n].extend(batch)
    for n, session in enumerate(sessions):
        assert _dump(await session.events()) == _dump(written[n]), (
            f"session {ids[n]!r} is not isolated"
        )


async def check_concurrent_writers(backend: Backend) -> None:
    """Concurrent writers (one handle each) get unique, gap-free, batch-contiguous ids."""
    sid = _sid("concurrent")
    handles = [await backend.open(sid) for _ in range(backend.writers)]
    results: dict[int, list[tuple[list[SequenceId], list[SessionEvent]]]] = {}

    async def writer(w: int, session: Session) -> None:
        done: list[tuple[list[SequenceId], list[SessionEvent]]] = []
        for a in range(backend.appends_per_writer):
            batch = numbered(f"w{w}a{a}", 1 + (w + a) % 3)
            ids = await session.append(batch)
            done.append((ids, batch))
            await asyncio.sleep(0)
        results[w] = done

    await asyncio.gather(*(writer(w, h) for w, h in enumerate(handles)))
    by_position: dict[int, SessionEvent] = {}
    for w, done in results.items():
        previous = -1
        for ids, batch in done:
            assert len(ids) == len(batch), f"writer {w}: {len(batch)} events, {len(ids)} ids"
            assert ids == list(range(ids[0], ids[0] + len(ids))), (
                f"writer {w}: a batch must get contiguous ids, got {ids}"
            )
            assert ids[0] > previous, f"writer {w}: ids went backwards ({previous} -> {ids})"
            previous = ids[-1]
            for i, event in zip(ids, batch, strict=True):
                assert i not in by_position, f"position {i} was handed out twice"
                by_position[i] = event
    total = len(by_position)
    assert sorted(by_position) == list(range(total)), "positions have gaps"
    log = await (await backend.open(sid)).events()
    assert len(log) == total, f"{total} events acknowledged, {len(log)} stored"
    assert _dump(log) == _dump([by_position[i] for i in range(total)]), (
        "stored order differs from the acknowledged positions"
    )


async def check_failed_append(backend: Backend) -> None:
    """An append that fails persists nothing and the session stays usable."""
    session = await backend.open(_sid("fail"))
    before = numbered("ok", 2)
    await session.append(before)
    bad: list[SessionEvent] = [
        UserMessageEvent(content=[TextPart(text="first of the failing batch")]),
        ToolCalled(call_id="bad", name="x", args={"value": object()}),
        UserMessageEvent(content=[TextPart(text="last of the failing batch")]),
    ]
    try:
        await session.append(bad)
    except SessionError:
        pass
    else:
        raise AssertionError("appending an event that cannot be serialized must raise SessionError")
    assert _dump(await session.events()) == _dump(before), "a failed append persisted events"
    after = numbered("after", 2)
    assert await session.append(after) == [2, 3], "positions after a failed append must continue"
    await _assert_positions(session, before + after)


async def check_cancelled_append(backend: Backend) -> None:
    """A cancelled append persists all of its batch or none of it, never part.

    A backend may finish a write its caller abandoned (helikon's durable backends do), so
    every read must show whole batches only, and once writes settle the positions must be
    contiguous.
    """
    session = await backend.open(_sid("cancel"))
    batches = {f"c{attempt}": numbered(f"c{attempt}", 4) for attempt in range(6)}
    for attempt, batch in enumerate(batches.values()):
        task = asyncio.ensure_future(session.append(batch))
        for _ in range(attempt):
            await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        _whole_batches(await session.events(), batches)
    tail = numbered("tail", 1)
    await session.append(tail)
    log = await session.events()
    for _ in range(50):  # let abandoned writes settle
        await asyncio.sleep(0.05)
        again = await session.events()
        if len(again) == len(log):
            break
        log = again
    _whole_batches([e for e in log if _text(e) != "tail 0"], batches)
    await _assert_positions(session, log)


def _text(event: SessionEvent) -> str:
    content = getattr(event, "content", None) or [TextPart(text="")]
    part = content[0]
    return part.text if isinstance(part, TextPart) else ""


def _whole_batches(log: list[SessionEvent], batches: Mapping[str, list[SessionEvent]]) -> None:
    i = 0
    while i < len(log):
        name = _text(log[i]).split(" ")[0]
        batch = batches.get(name)
        assert batch is not None, f"unexpected event at {i}: {log[i]!r}"
        assert _dump(log[i : i + len(batch)]) == _dump(batch), (
            f"batch {name} is only partly stored (or interleaved) at position {i}"
        )
        i += len(batch)


async def check_reopen(backend: Backend) -> None:
    """A new handle on the same id sees everything written through an old one."""
    if not backend.durable:
        return
    sid = _sid("reopen")
    first = await backend.open(sid)
    events = every_event_type("reopen")
    await first.append(events)
    second = await backend.open(sid)
    assert _dump(await second.events()) == _dump(events)
    assert await second.append(numbered("more", 1)) == [len(events)]
    assert len(await first.events()) == len(events) + 1


def _child(backend: Backend, sid: str, mode: str) -> list[dict[str, Any]]:
    assert backend.subprocess_open is not None
    env = {**os.environ, **backend.subprocess_env}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "helikon.sessions.testkit._child",
            backend.subprocess_open,
            sid,
            mode,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, f"child process ({mode}) failed:\n{proc.stdout}\n{proc.stderr}"
    out: list[dict[str, Any]] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


async def check_process_restart(backend: Backend) -> None:
    """Events written by one process are read by the next, and the other way round."""
    if backend.subprocess_open is None:
        return
    sid = _sid("restart")
    loop = asyncio.get_running_loop()
    written = await loop.run_in_executor(None, _child, backend, sid, "write")
    sample = every_event_type("restart")
    assert written == _dump(sample), "the child did not write the sample"
    session = await backend.open(sid)
    assert _dump(await session.events()) == written, "events lost across a process restart"
    extra = numbered("parent", 2)
    assert await session.append(extra) == [len(sample), len(sample) + 1]
    read = await loop.run_in_executor(None, _child, backend, sid, "read")
    assert read == _dump(sample + extra), "a fresh process does not see the parent's events"


CHECKS: dict[str, Callable[[Backend], Awaitable[None]]] = {
    "empty_session": check_empty_session,
    "empty_append": check_empty_append,
    "ordering": check_ordering,
    "since_exclusive": check_since_exclusive,
    "round_trip": check_round_trip,
    "snapshot_is_projection": check_snapshot_is_projection,
    "isolation": check_isolation,
    "concurrent_writers": check_concurrent_writers,
    "failed_append": check_failed_append,
    "cancelled_append": check_cancelled_append,
    "reopen": check_reopen,
    "process_restart": check_process_restart,
}
"""Every check by name, in the order :func:`run_all` runs them."""


async def run_all(backend: Backend) -> None:
    """Run every check against ``backend`` (raises ``AssertionError`` on the first failure).

    Example:
        >>> import asyncio
        >>> from helikon.sessions import MemorySession
        >>> stores: dict[str, MemorySession] = {}
        >>> async def open_memory(sid):
        ...     return stores.setdefault(sid, MemorySession())
        >>> asyncio.run(run_all(Backend(open_memory, durable=False)))
    """
    for check in CHECKS.values():
        await check(backend)
