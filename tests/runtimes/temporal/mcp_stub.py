"""A loopback streamable-HTTP MCP server with one tool, ``echo`` (JSON answers, no SSE).

Plain ``http.server`` in a thread: ``initialize``, ``tools/list`` and ``tools/call`` get JSON
answers, notifications 202, GET/DELETE 405. It counts ``tools/list`` requests.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_TOOL = {
    "name": "echo",
    "description": "Echo the text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Mcp-Session-Id", "s1")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(405, b"", "text/plain")

    do_DELETE = do_GET

    def do_POST(self) -> None:
        msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        method = msg.get("method")
        self.server.methods.append(method)  # type: ignore[attr-defined]
        if "id" not in msg:
            self._send(202, b"", "text/plain")
            return
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "echo-stub", "version": "0"},
            }
        elif method == "tools/list":
            result = {"tools": [_TOOL]}
        elif method == "tools/call":
            text = str((msg["params"].get("arguments") or {}).get("text", ""))
            result = {"content": [{"type": "text", "text": f"echo: {text}"}], "isError": False}
        else:
            body = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}
            self._send(200, json.dumps(body).encode(), "application/json")
            return
        body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
        self._send(200, body, "application/json")


@contextmanager
def serve_echo() -> Iterator[tuple[str, list[str]]]:
    """Run the stub on a free loopback port; yields its URL and the methods it saw."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    methods: list[str] = []
    server.methods = methods  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp", methods
    finally:
        server.shutdown()
        server.server_close()
