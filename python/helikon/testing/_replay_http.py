"""The HTTP side of the replay server: read a request, stream the recorded answer back.

How an answer goes out:
    * Hop-by-hop headers and the recorded ``content-length`` are dropped; the length is
      recomputed. ``content-encoding`` is kept only when the body really is gzip.
    * ``text/event-stream`` bodies go out with chunked transfer encoding, one event per chunk,
      flushed as they are written, so the client parses a real incremental stream; a
      ``Pause`` waits (and ends the stream early when the server stops). Everything else
      (binary event streams included) goes out as one body.
    * A request whose route has no answer left gets HTTP :data:`EXHAUSTED_STATUS` with a
      JSON error naming the route, so a test fails loudly instead of hanging.

Request bodies (chunked or not, gzip undone) are captured as JSON when they parse, else as
text. HTTP/1.1 over plain TCP only.
"""

from __future__ import annotations

import contextlib
import gzip
import http.server
import json
import socket
import threading
from typing import Any
from urllib.parse import unquote, urlsplit

from helikon.testing._replay_cassette import GZIP_MAGIC
from helikon.testing._replay_records import CapturedRequest, Pause, RecordedInteraction
from helikon.testing._replay_routes import Routes

__all__ = ["EXHAUSTED_STATUS", "ReplayHttpServer"]

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
EXHAUSTED_STATUS = 599
"""The status answered when a route has no response left."""


class ReplayHttpServer(http.server.ThreadingHTTPServer):
    """An HTTP server on ``127.0.0.1`` (a free port) answering from ``routes``.

    Args:
        routes: the queued answers; every request is recorded there.
        closing: set when the server stops, which ends stalled streams (``Pause``) at once.
    """

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, routes: Routes, closing: threading.Event) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.routes = routes
        self.closing = closing
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            self._sockets.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._lock:
            self._sockets.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: clients hanging up mid-stream is normal in tests."""

    def stop(self) -> None:
        """End stalled streams, stop serving and close the connections still open."""
        self.closing.set()
        self.shutdown()
        with self._lock:
            open_sockets = list(self._sockets)
        for sock in open_sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.server_close()


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ReplayHttpServer

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
        answer = self.server.routes.take(captured)
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
        gzip_body = answer.body[:2] == GZIP_MAGIC
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
        closing = self.server.closing
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
