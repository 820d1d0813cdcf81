"""A loopback HTTP MCP server that answers ``initialize`` and ``tools/list``, then fails.

Plain ``http.server`` in a thread: JSON answers for the two requests, 202 for notifications,
405 for GET/DELETE, and for everything else (``tools/call``) ``503 Service Unavailable``
with a plain-text body (BR-24; :func:`serve_503`) or ``200 OK`` with an HTML page (a login
wall in front of the endpoint; :func:`serve_html`).
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

_TOOL = {
    "name": "flaky",
    "description": "Answers 503.",
    "inputSchema": {"type": "object", "properties": {}},
}


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(
        self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(405, b"", "text/plain")

    do_DELETE = do_GET

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        msg = json.loads(raw)
        method = msg.get("method")
        self.server.methods.append(method)  # type: ignore[attr-defined]
        if "id" not in msg:
            self._send(202, b"", "text/plain")
            return
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "stub", "version": "0"},
            }
        elif method == "tools/list":
            result = {"tools": [_TOOL]}
        elif self.server.html:  # type: ignore[attr-defined]
            self._send(200, b"<html><body>Please sign in</body></html>", "text/html")
            return
        else:
            self._send(503, b"upstream overloaded, try later", "text/plain")
            return
        body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
        self._send(200, body, "application/json", {"Mcp-Session-Id": "s1"})


def serve_503() -> AbstractContextManager[tuple[str, list[str]]]:
    """Run the 503 stub on a free loopback port; yields its URL and the methods it saw."""
    return _serve(html=False)


def serve_html() -> AbstractContextManager[tuple[str, list[str]]]:
    """Run the stub whose ``tools/call`` answer is an HTML page (status 200)."""
    return _serve(html=True)


@contextmanager
def _serve(*, html: bool) -> Iterator[tuple[str, list[str]]]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.html = html  # type: ignore[attr-defined]
    methods: list[str] = []
    server.methods = methods  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp", methods
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
