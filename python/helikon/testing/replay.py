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

How responses are served:
    * One FIFO queue per ``(method, unquoted path)``, in recorded order; the query string is
      ignored. A request whose queue is empty gets HTTP 599 with a JSON error naming the
      route, so a test fails loudly instead of hanging; it is also listed in
      :attr:`ReplayServer.unmatched`.
    * Bodies come from ``parsed_body`` (re-serialized with :func:`json.dumps` defaults), from
      ``body.string`` (text encoded as UTF-8, ``!!binary`` bytes unchanged), or from a
      ``.chunks.txt`` file (each line becomes ``event: <type>`` + ``data: <line>``).
    * Hop-by-hop headers and the recorded ``content-length`` are dropped; the length is
      recomputed. ``content-encoding`` is kept only when the body really is gzip.
    * ``text/event-stream`` bodies go out with chunked transfer encoding, one event per chunk,
      flushed as they are written, so the client parses a real incremental stream. Everything
      else (binary event streams included) goes out as one body.

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

import collections
import contextlib
import gzip
import http.server
import json
import re
import socket
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TypeAlias
from urllib.parse import unquote, urlsplit

import yaml

__all__ = [
    "CapturedRequest",
    "Pause",
    "RecordedInteraction",
    "ReplayServer",
    "ResponseSpec",
    "load_cassette",
]

_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "content-length",
    }
)
_GZIP_MAGIC = b"\x1f\x8b"
_EVENT_SPLIT = re.compile(rb"\r?\n\r?\n")
EXHAUSTED_STATUS = 599
"""The status answered when a route has no response left."""


@dataclass(frozen=True, slots=True)
class Pause:
    """A pause inside a hand-built SSE stream: the server waits ``seconds`` before going on.

    Useful for cancellation tests (a stream that stalls after its first events).
    """

    seconds: float


SseEvent: TypeAlias = str | bytes | Mapping[str, Any] | Pause
"""One SSE event of a hand-built stream: raw text, raw bytes, a JSON object (sent as
``data: <json>``) or a :class:`Pause`."""

ResponseSpec: TypeAlias = tuple[
    int, Mapping[str, str], bytes | str | Mapping[str, Any] | Sequence[SseEvent]
]
"""A hand-built response ``(status, headers, body)``; see :meth:`ReplayServer.from_responses`."""


@dataclass(frozen=True, slots=True)
class RecordedInteraction:
    """One request/response pair as stored in a cassette.

    Attributes:
        index: position in the cassette's ``interactions`` list.
        method: HTTP method of the recorded request (upper case).
        path: unquoted URL path of the recorded request (no query string).
        request_body: the recorded request body parsed as JSON, or ``None`` when it was
            absent or not JSON.
        status: recorded response status code.
        headers: recorded response headers as ``(name, value)`` pairs, in stored order.
        body: the response body bytes exactly as they go on the wire.
        sse_events: the body split into SSE events (each ending in a blank line) when the
            response is ``text/event-stream``, else ``None``.
    """

    index: int
    method: str
    path: str
    request_body: Any
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    sse_events: tuple[bytes | Pause, ...] | None = None


@dataclass(frozen=True, slots=True)
class CapturedRequest:
    """A request the server received.

    Attributes:
        method: HTTP method.
        path: unquoted path (no query string).
        query: the raw query string ("" when none).
        headers: request headers, names lower-cased.
        body: the body parsed as JSON, or the raw text when it is not JSON, or ``None``.
    """

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any


# --------------------------------------------------------------------------- loading


def _header_value(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _header_pairs(headers: Any) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    if not isinstance(headers, Mapping):
        return pairs
    for name, values in headers.items():
        seq = values if isinstance(values, list) else [values]
        pairs.extend((str(name), _header_value(v)) for v in seq)
    return pairs


def _is_sse(headers: Iterable[tuple[str, str]]) -> bool:
    return any(
        name.lower() == "content-type" and "text/event-stream" in value.lower()
        for name, value in headers
    )


def _split_events(body: bytes) -> tuple[bytes, ...]:
    events = []
    for piece in _EVENT_SPLIT.split(body):
        if piece.strip():
            events.append(piece + b"\n\n")
    return tuple(events)


def _parse_json(raw: Any) -> Any:
    if raw is None:
        return None
    if isinstance(raw, bytes):
        if raw[:2] == _GZIP_MAGIC:
            raw = gzip.decompress(raw)
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return None
    return raw


def _response_body(response: Mapping[str, Any]) -> bytes:
    if "parsed_body" in response:
        return json.dumps(response["parsed_body"]).encode("utf-8")
    body = response.get("body")
    raw = body.get("string") if isinstance(body, Mapping) else body
    if raw is None:
        return b""
    if isinstance(raw, bytes):
        return raw
    return str(raw).encode("utf-8")


def _status_code(status: Any) -> int:
    if isinstance(status, Mapping):
        return int(status.get("code", 200))
    return int(status)


def _load_chunks(path: Path) -> list[RecordedInteraction]:
    events: list[bytes | Pause] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        kind = json.loads(line).get("type", "message")
        events.append(f"event: {kind}\ndata: {line}\n\n".encode())
    body = b"".join(e for e in events if isinstance(e, bytes))
    headers = (("content-type", "text/event-stream; charset=utf-8"),)
    return [
        RecordedInteraction(
            index=0,
            method="POST",
            path="/v1/messages",
            request_body=None,
            status=200,
            headers=headers,
            body=body,
            sse_events=tuple(events),
        )
    ]


def load_cassette(
    path: str | Path, interactions: Iterable[int] | None = None
) -> list[RecordedInteraction]:
    """Read a cassette into :class:`RecordedInteraction` values, in recorded order.

    Args:
        path: a vcrpy YAML cassette, or a body-only ``*.chunks.txt`` Anthropic stream (served
            as ``POST /v1/messages``).
        interactions: indices to keep (the index's ``interactions_used``); ``None`` keeps all.

    Returns:
        The kept interactions, in the order they were recorded.

    Raises:
        ValueError: the file is not a cassette (no ``interactions`` list).
    """
    path = Path(path)
    if path.name.endswith(".chunks.txt"):
        loaded = _load_chunks(path)
    else:
        with path.open("rb") as fh:
            doc = yaml.safe_load(fh)
        if not isinstance(doc, Mapping) or not isinstance(doc.get("interactions"), list):
            raise ValueError(f"{path}: not a cassette (no 'interactions' list)")
        loaded = []
        for index, entry in enumerate(doc["interactions"]):
            request, response = entry["request"], entry["response"]
            headers = tuple(_header_pairs(response.get("headers")))
            body = _response_body(response)
            request_raw = request.get("parsed_body", request.get("body"))
            if isinstance(request_raw, Mapping) and "string" in request_raw:
                request_raw = request_raw["string"]
            loaded.append(
                RecordedInteraction(
                    index=index,
                    method=str(request.get("method", "POST")).upper(),
                    path=unquote(urlsplit(str(request["uri"])).path),
                    request_body=_parse_json(request_raw),
                    status=_status_code(response.get("status", 200)),
                    headers=headers,
                    body=body,
                    sse_events=_split_events(body) if _is_sse(headers) else None,
                )
            )
    if interactions is None:
        return loaded
    wanted = set(interactions)
    return [it for it in loaded if it.index in wanted]


def _from_spec(index: int, method: str, path: str, spec: ResponseSpec) -> RecordedInteraction:
    status, given_headers, body = spec
    headers = [(str(k), str(v)) for k, v in given_headers.items()]
    names = {k.lower() for k, _ in headers}
    events: tuple[bytes | Pause, ...] | None = None
    if isinstance(body, bytes):
        raw = body
    elif isinstance(body, str):
        raw = body.encode("utf-8")
    elif isinstance(body, Mapping):
        raw = json.dumps(body).encode("utf-8")
        if "content-type" not in names:
            headers.append(("content-type", "application/json"))
    else:
        converted: list[bytes | Pause] = []
        for event in body:
            if isinstance(event, Pause):
                converted.append(event)
                continue
            if isinstance(event, Mapping):
                chunk = b"data: " + json.dumps(event).encode("utf-8")
            elif isinstance(event, str):
                chunk = event.encode("utf-8")
            else:
                chunk = bytes(event)
            converted.append(chunk.rstrip(b"\r\n") + b"\n\n")
        events = tuple(converted)
        raw = b"".join(e for e in events if isinstance(e, bytes))
        if "content-type" not in names:
            headers.append(("content-type", "text/event-stream; charset=utf-8"))
    if events is None and _is_sse(headers):
        events = _split_events(raw)
    return RecordedInteraction(
        index=index,
        method=method.upper(),
        path=unquote(path),
        request_body=None,
        status=status,
        headers=tuple(headers),
        body=raw,
        sse_events=events,
    )


# --------------------------------------------------------------------------- serving


class _HttpServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    replay: ReplayServer

    def process_request(self, request: Any, client_address: Any) -> None:
        self.replay._track(request, add=True)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.replay._track(request, add=False)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: clients hanging up mid-stream is normal in tests."""


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HttpServer

    def log_message(self, format: str, *args: Any) -> None:
        """Do not log each request to stderr."""

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(parts)
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        replay = self.server.replay
        raw = self._read_body()
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        body: Any = None
        if raw:
            if self.headers.get("content-encoding", "").lower() == "gzip":
                raw = gzip.decompress(raw)
            text = raw.decode("utf-8", errors="replace")
            try:
                body = json.loads(text)
            except ValueError:
                body = text
        captured = CapturedRequest(
            method=self.command,
            path=path,
            query=parts.query,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        answer = replay._take(captured)
        if answer is None:
            self._send_exhausted(captured)
            return
        self._send(answer)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    def _send_exhausted(self, captured: CapturedRequest) -> None:
        payload = {
            "error": {
                "message": (
                    f"replay server: no recorded response left for {captured.method} "
                    f"{captured.path}"
                ),
                "type": "replay_exhausted",
                "code": "replay_exhausted",
            }
        }
        data = json.dumps(payload).encode("utf-8")
        self.send_response(EXHAUSTED_STATUS, "Replay Exhausted")
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send(self, answer: RecordedInteraction) -> None:
        self.send_response(answer.status)
        gzip_body = answer.body[:2] == _GZIP_MAGIC
        for name, value in answer.headers:
            low = name.lower()
            if low in _HOP_BY_HOP:
                continue
            if low == "content-encoding" and not gzip_body:
                continue
            self.send_header(name, value)
        if answer.sse_events is None:
            self.send_header("content-length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)
            self.wfile.flush()
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        closing = self.server.replay._closing
        for event in answer.sse_events:
            if isinstance(event, Pause):
                if closing.wait(event.seconds):
                    self.close_connection = True
                    return
                continue
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


@dataclass
class _State:
    queues: dict[tuple[str, str], collections.deque[RecordedInteraction]] = field(
        default_factory=dict
    )
    captured: list[CapturedRequest] = field(default_factory=list)
    unmatched: list[CapturedRequest] = field(default_factory=list)


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
        self._lock = threading.Lock()
        self._state = _State()
        self._closing = threading.Event()
        self._sockets: set[socket.socket] = set()
        self._server: _HttpServer | None = None
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
            server.add(_from_spec(index, method, path, spec))
        return server

    def add(self, interaction: RecordedInteraction) -> None:
        """Queue one more response (after those already queued for its route)."""
        key = (interaction.method, interaction.path)
        with self._lock:
            self._state.queues.setdefault(key, collections.deque()).append(interaction)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> ReplayServer:
        """Bind a free port and serve in a daemon thread. Idempotent."""
        if self._server is not None:
            return self
        server = _HttpServer(("127.0.0.1", 0), _Handler)
        server.replay = self
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
        self._closing.set()
        server.shutdown()
        with self._lock:
            open_sockets = list(self._sockets)
        for sock in open_sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        server.server_close()
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
        with self._lock:
            return [c.body for c in self._state.captured]

    @property
    def captured(self) -> list[CapturedRequest]:
        """Every request received so far (method, path, headers, body), in arrival order."""
        with self._lock:
            return list(self._state.captured)

    @property
    def unmatched(self) -> list[CapturedRequest]:
        """Requests that found no response left (answered with HTTP 599)."""
        with self._lock:
            return list(self._state.unmatched)

    def remaining(self) -> dict[tuple[str, str], int]:
        """How many responses are still queued, per ``(method, path)`` (empty routes omitted)."""
        with self._lock:
            return {k: len(q) for k, q in self._state.queues.items() if q}

    # ------------------------------------------------------------------ handler side

    def _take(self, captured: CapturedRequest) -> RecordedInteraction | None:
        with self._lock:
            self._state.captured.append(captured)
            queue = self._state.queues.get((captured.method, captured.path))
            if queue:
                return queue.popleft()
            self._state.unmatched.append(captured)
            return None

    def _track(self, sock: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._sockets.add(sock)
            else:
                self._sockets.discard(sock)
