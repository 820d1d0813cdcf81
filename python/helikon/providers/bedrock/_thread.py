"""Run boto3's blocking calls off the event loop and pump an event stream into it.

boto3 is synchronous. :class:`BlockingCall` runs one call in a daemon worker thread (with the
caller's ``contextvars``, so tracing context follows) and settles an asyncio future;
:class:`EventPump` iterates a botocore event stream in another worker thread and hands each
event to the loop through an :class:`asyncio.Queue`. Daemon threads rather than the loop's
default executor: a call stuck in a network read can then never hold up interpreter or loop
shutdown.

Cancellation: a call abandoned before it returned closes its result when it does (the
``on_abandon`` callback), and :meth:`EventPump.close` shuts the stream's socket down and
closes it, which ends the worker's blocking read at once instead of at the read timeout.
"""

from __future__ import annotations

import asyncio
import contextvars
import socket
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Any, Generic, TypeVar

__all__ = ["BlockingCall", "EventPump", "close_event_stream"]

_T = TypeVar("_T")


def _socket_of(raw: Any) -> socket.socket | None:
    """The socket under a urllib3 response, if it can be found (best effort)."""
    sock = getattr(getattr(raw, "_connection", None), "sock", None)
    if isinstance(sock, socket.socket):
        return sock
    fp = getattr(getattr(raw, "_fp", None), "fp", None)
    sock = getattr(getattr(fp, "raw", None), "_sock", None)
    return sock if isinstance(sock, socket.socket) else None


def close_event_stream(stream: Any) -> None:
    """Close a botocore ``EventStream`` so that a thread blocked reading it wakes up now.

    Closing a socket does not interrupt a ``recv`` blocked in another thread on every
    platform; shutting it down does. Errors are ignored: the stream may be closed already.
    """
    raw = getattr(stream, "_raw_stream", None)
    sock = _socket_of(raw)
    if sock is not None:
        with suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
    with suppress(Exception):
        stream.close()


class BlockingCall(Generic[_T]):
    """``fn()`` in a daemon thread; :attr:`future` settles with its result or exception.

    Args:
        fn: the blocking call.
        on_abandon: called (in the worker) with the result if the caller abandoned the call
            before it returned, to release what it holds (an open HTTP stream).
    """

    def __init__(self, fn: Callable[[], _T], on_abandon: Callable[[_T], None]) -> None:
        self._loop = asyncio.get_running_loop()
        self.future: asyncio.Future[_T] = self._loop.create_future()
        self._on_abandon = on_abandon
        self._lock = threading.Lock()
        self._abandoned = False
        self._outcome: tuple[bool, Any] | None = None
        context = contextvars.copy_context()
        threading.Thread(
            target=self._run, args=(context, fn), name="helikon-bedrock-call", daemon=True
        ).start()

    def _run(self, context: contextvars.Context, fn: Callable[[], _T]) -> None:
        outcome: tuple[bool, Any]
        try:
            result: Any = context.run(fn)
            outcome = (True, result)
        except BaseException as exc:  # handed to the awaiting side, never lost
            outcome = (False, exc)
        with self._lock:
            abandoned = self._abandoned
            if not abandoned:
                self._outcome = outcome
        if abandoned:
            ok: bool = outcome[0]
            value: Any = outcome[1]
            if ok:
                with suppress(Exception):
                    self._on_abandon(value)
            return
        with suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
            self._loop.call_soon_threadsafe(self._settle)

    def _settle(self) -> None:
        with self._lock:
            if self.future.done():  # cancelled by the caller: abandon() takes the outcome
                return
            outcome, self._outcome = self._outcome, None
        if outcome is None:
            return
        ok, value = outcome
        if ok:
            self.future.set_result(value)
        else:
            self.future.set_exception(value)

    def abandon(self) -> None:
        """The caller will not use the result: release it now, or when it arrives.

        Call it only when the result was not taken from :attr:`future`.
        """
        with self._lock:
            self._abandoned = True
            outcome, self._outcome = self._outcome, None
        future = self.future
        if outcome is None and future.done() and not future.cancelled():
            outcome = (future.exception() is None, None)
            if outcome[0]:
                outcome = (True, future.result())
        if outcome is not None and outcome[0]:
            with suppress(Exception):
                self._on_abandon(outcome[1])
        if not future.done():
            future.cancel()


class EventPump:
    """Iterate a blocking event stream in a daemon thread; :meth:`next` awaits each event.

    Args:
        stream: an iterable of events (a botocore ``EventStream``).
    """

    def __init__(self, stream: Any) -> None:
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._stream = stream
        self._closed = threading.Event()
        context = contextvars.copy_context()
        threading.Thread(
            target=context.run, args=(self._run,), name="helikon-bedrock-stream", daemon=True
        ).start()

    def _put(self, item: tuple[str, Any]) -> None:
        with suppress(RuntimeError):  # the loop is closed: nobody is reading any more
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)

    def _run(self) -> None:
        try:
            for event in self._stream:
                if self._closed.is_set():
                    return
                self._put(("event", event))
        except BaseException as exc:  # handed to the reading side unless it left already
            if not self._closed.is_set():
                self._put(("error", exc))
            return
        self._put(("end", None))

    async def next(self) -> tuple[bool, Any]:
        """``(True, event)`` for the next event, ``(False, None)`` at the end of the stream.

        Raises:
            BaseException: whatever reading the stream raised (mapped by the caller).
        """
        kind, value = await self._queue.get()
        if kind == "error":
            raise value
        if kind == "end":
            self._queue.put_nowait((kind, value))  # stay at the end
            return False, None
        return True, value

    def close(self) -> None:
        """Stop reading: close the stream so the worker's blocking read ends promptly."""
        if self._closed.is_set():
            return
        self._closed.set()
        close_event_stream(self._stream)
