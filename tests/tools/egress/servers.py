"""Real loopback servers for the egress tests: an HTTP origin and a tiny package index."""

from __future__ import annotations

import hashlib
import http.server
import io
import socket
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

ORIGIN_BODY = b"hello from the origin\n"


def wheel_bytes(name: str, version: str) -> bytes:
    """A minimal valid pure-Python wheel."""
    dist = f"{name}-{version}.dist-info"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(f"{name}/__init__.py", "VALUE = 1\n")
        z.writestr(
            f"{dist}/METADATA",
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        )
        z.writestr(
            f"{dist}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        z.writestr(f"{dist}/RECORD", "")
    return buf.getvalue()


class _Handler(http.server.BaseHTTPRequestHandler):
    files: ClassVar[dict[str, bytes]] = {}

    def do_GET(self) -> None:
        body = self.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        ctype = "text/html" if self.path.endswith("/") else "application/octet-stream"
        self.send_header("Content-Type", ctype)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def origin(host: str = "127.0.0.1") -> Iterator[tuple[int, list[str]]]:
    """An HTTP server on ``host``: ``/`` says hello, ``/simple/`` is a package index for
    ``tinypkg 1.0``. Yields the port and the list of request paths it saw."""
    wheel = wheel_bytes("tinypkg", "1.0")
    digest = hashlib.sha256(wheel).hexdigest()
    fname = "tinypkg-1.0-py3-none-any.whl"
    seen: list[str] = []

    class Handler(_Handler):
        files: ClassVar[dict[str, bytes]] = {
            "/": ORIGIN_BODY,
            "/simple/": b'<html><body><a href="/simple/tinypkg/">tinypkg</a></body></html>',
            "/simple/tinypkg/": (
                f'<html><body><a href="/files/{fname}#sha256={digest}">{fname}</a></body></html>'
            ).encode(),
            f"/files/{fname}": wheel,
        }

        def do_GET(self) -> None:
            seen.append(self.path)
            super().do_GET()

    server = http.server.ThreadingHTTPServer((host, 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def udp_listener(host: str = "127.0.0.1") -> Iterator[tuple[int, socket.socket]]:
    """A UDP socket on ``host`` (non-blocking) to check that nothing arrives."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((host, 0))
    s.setblocking(False)
    try:
        yield s.getsockname()[1], s
    finally:
        s.close()


def received(s: socket.socket) -> bytes | None:
    try:
        return s.recv(4096)
    except BlockingIOError:
        return None


def write_file(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
