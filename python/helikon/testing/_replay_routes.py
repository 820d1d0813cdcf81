"""Which recorded response answers a request: one FIFO queue per ``(method, path)``.

Responses are queued per ``(method, unquoted path)`` in the order they were added; the query
string and the request body play no part. Every request is captured; one whose queue is empty
is also listed as unmatched (the server answers it with an error status). Thread-safe: the
server's handler threads take answers while the test reads what was captured.
"""

from __future__ import annotations

import collections
import threading

from helikon.testing._replay_records import CapturedRequest, RecordedInteraction

__all__ = ["Routes"]


class Routes:
    """The queued answers and the requests received so far.

    Example:
        >>> from helikon.testing._replay_cassette import from_spec
        >>> routes = Routes()
        >>> routes.add(from_spec(0, "POST", "/v1/ping", (200, {}, b"pong")))
        >>> routes.remaining()
        {('POST', '/v1/ping'): 1}
        >>> ping = CapturedRequest("POST", "/v1/ping", "", {}, None)
        >>> routes.take(ping).body, routes.take(ping), len(routes.unmatched())
        (b'pong', None, 1)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[tuple[str, str], collections.deque[RecordedInteraction]] = {}
        self._captured: list[CapturedRequest] = []
        self._unmatched: list[CapturedRequest] = []

    def add(self, interaction: RecordedInteraction) -> None:
        """Queue one more answer (after those already queued for its route)."""
        key = (interaction.method, interaction.path)
        with self._lock:
            self._queues.setdefault(key, collections.deque()).append(interaction)

    def take(self, captured: CapturedRequest) -> RecordedInteraction | None:
        """Record ``captured`` and return the next answer for its route (``None``: none left)."""
        with self._lock:
            self._captured.append(captured)
            queue = self._queues.get((captured.method, captured.path))
            if queue:
                return queue.popleft()
            self._unmatched.append(captured)
            return None

    def captured(self) -> list[CapturedRequest]:
        """Every request received so far, in arrival order."""
        with self._lock:
            return list(self._captured)

    def unmatched(self) -> list[CapturedRequest]:
        """The requests that found no answer left."""
        with self._lock:
            return list(self._unmatched)

    def remaining(self) -> dict[tuple[str, str], int]:
        """How many answers are still queued, per ``(method, path)`` (empty routes omitted)."""
        with self._lock:
            return {k: len(q) for k, q in self._queues.items() if q}
