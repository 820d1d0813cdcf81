"""A local HTTP server that answers with recorded (or hand-built) provider responses.

Provider adapters are tested against real wire traffic without a network or an API key: a
:class:`ReplayServer` loads a vcrpy-style YAML cassette (or the body-only ``.chunks.txt`` form),
listens on ``127.0.0.1`` on a free port in a background thread, and answers each request with
the next recorded response for that request's method and path. Point an official SDK at
:attr:`ReplayServer.base_url` and assert on what came back, and on what the adapter sent
(:attr:`ReplayServer.requests`).

Use cases:
    * Replaying the shared wire corpus through a provider adapter (``with ReplayServer(path)``).
    * Synthesizing responses no recording has (a 429 with ``retry-after``, a 503, a stalled
      stream) with :meth:`ReplayServer.from_responses`.

How responses are served (one module per part):
    * Matching (``_replay_routes``): one FIFO queue per ``(method, unquoted path)``, in
      recorded order; the query string is ignored. A request whose queue is empty gets HTTP
      599 with a JSON error naming the route, so a test fails loudly instead of hanging; it is
      also listed in :attr:`ReplayServer.unmatched`.
    * Loading (``_replay_cassette``): bodies come from ``parsed_body`` (re-serialized with
      :func:`json.dumps` defaults), from ``body.string`` (text encoded as UTF-8, ``!!binary``
      bytes unchanged), or from a ``.chunks.txt`` file (each line becomes
      ``event: <type>`` + ``data: <line>``).
    * Serving (``_replay_http``): hop-by-hop headers and the recorded ``content-length`` are
      dropped; the length is recomputed. ``content-encoding`` is kept only when the body
      really is gzip. ``text/event-stream`` bodies go out with chunked transfer encoding, one
      event per chunk, flushed as they are written, so the client parses a real incremental
      stream. Everything else (binary event streams included) goes out as one body.

Limitations:
    * HTTP/1.1 over plain TCP only; no TLS, no HTTP/2.
    * Request bodies are captured, never matched: the queue order alone decides the answer.

Example:
    >>> server = ReplayServer.from_responses([(200, {}, {"ok": True})], path="/v1/ping")
    >>> with server:
    ...     server.base_url.startswith("http://127.0.0.1:")
    True
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from helikon.testing._replay_cassette import from_spec, load_cassette
from helikon.testing._replay_http import EXHAUSTED_STATUS, ReplayHttpServer
from helikon.testing._replay_records import (
    CapturedRequest,
    Pause,
    RecordedInteraction,
    ResponseSpec,
    SseEvent,
)
from helikon.testing._replay_routes import Routes

__all__ = [
    "EXHAUSTED_STATUS",
    "CapturedRequest",
    "Pause",
    "RecordedInteraction",
    "ReplayServer",
    "ResponseSpec",
    "SseEvent",
    "load_cassette",
]


class ReplayServer:
    """Serve recorded responses on ``127.0.0.1`` from a background thread.

    Args:
        cassette_path: a vcrpy YAML cassette or a body-only ``*.chunks.txt`` file; ``None``
            starts with no responses (see :meth:`from_responses`).
        interactions: the cassette indices to serve (the index's ``interactions_used``);
            ``None`` serves all.

    The server starts on ``with`` / ``async with`` (or :meth:`start`) and stops on exit (or
    :meth:`close`). Handlers run in threads, so an asyncio client in the test's event loop
    talks to it without blocking.

    Example:
        >>> with ReplayServer.from_responses([(503, {}, {"error": {"message": "busy"}})]) as s:
        ...     s.port > 0
        True
    """

    def __init__(
        self, cassette_path: str | Path | None = None, interactions: Iterable[int] | None = None
    ) -> None:
        loaded = [] if cassette_path is None else load_cassette(cassette_path, interactions)
        self._routes = Routes()
        self._closing = threading.Event()
        self._server: ReplayHttpServer | None = None
        self._thread: threading.Thread | None = None
        for item in loaded:
            self.add(item)

    @classmethod
    def from_responses(
        cls,
        responses: Sequence[ResponseSpec],
        *,
        path: str = "/v1/chat/completions",
        method: str = "POST",
    ) -> ReplayServer:
        """A server answering ``method path`` with hand-built responses, in order.

        Args:
            responses: ``(status, headers, body)`` triples. ``body`` is bytes or text (sent as
                is), a mapping (sent as JSON, ``content-type: application/json`` unless given),
                or a sequence of SSE events (sent chunked, one event per chunk,
                ``content-type: text/event-stream`` unless given). An event is raw text or
                bytes (a blank-line terminator is added), a mapping (sent as
                ``data: <json>``), or a :class:`Pause`.
            path: the URL path the responses answer.
            method: the HTTP method they answer.

        Returns:
            A server that is not started yet.

        Example:
            >>> server = ReplayServer.from_responses(
            ...     [(429, {"retry-after": "2"}, {"error": {"message": "slow down"}})]
            ... )
        """
        server = cls()
        for index, spec in enumerate(responses):
            server.add(from_spec(index, method, path, spec))
        return server

    def add(self, interaction: RecordedInteraction) -> None:
        """Queue one more response (after those already queued for its route)."""
        self._routes.add(interaction)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> ReplayServer:
        """Bind a free port and serve in a daemon thread. Idempotent."""
        if self._server is not None:
            return self
        server = ReplayHttpServer(self._routes, self._closing)
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"replay-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, end stalled streams and close open connections. Idempotent."""
        server, self._server = self._server, None
        if server is None:
            return
        server.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> ReplayServer:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ inspection

    @property
    def port(self) -> int:
        """The bound TCP port.

        Raises:
            RuntimeError: the server is not started.
        """
        if self._server is None:
            raise RuntimeError("ReplayServer is not started; use `with` or call start()")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (append the API prefix, e.g. ``/v1``, for an SDK)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[Any]:
        """The JSON bodies of the requests received so far, in arrival order."""
        return [c.body for c in self._routes.captured()]

    @property
    def captured(self) -> list[CapturedRequest]:
        """Every request received so far (method, path, headers, body), in arrival order."""
        return self._routes.captured()

    @property
    def unmatched(self) -> list[CapturedRequest]:
        """Requests that found no response left (answered with HTTP 599)."""
        return self._routes.unmatched()

    def remaining(self) -> dict[tuple[str, str], int]:
        """How many responses are still queued, per ``(method, path)`` (empty routes omitted)."""
        return self._routes.remaining()
