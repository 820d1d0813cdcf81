"""Fixtures for the network tool tests: an in-process HTTP server on 127.0.0.1 and fakes.

Nothing here leaves the machine: the server listens on loopback, every other host name is
answered by :class:`FakeResolver`, and addresses outside loopback are only ever *refused*
by the guard (the tests assert that no connection to them is attempted).
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from helikon.core.cancel import CancellationToken
from helikon.core.context import ToolContext
from helikon.tools.web.ssrf import IPAddress, parse_ip

DATA = Path(__file__).parent / "data"


@dataclass
class Seen:
    """One request the server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


@dataclass
class Reply:
    """A canned response; ``chunks`` (an iterator) streams a body slowly or forever."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    chunks: Callable[[], Iterator[bytes]] | None = None
    delay: float = 0.0


Route = Callable[[Seen], Reply]


class _Handler(BaseHTTPRequestHandler):
    server: LocalServer.HTTP

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        seen = Seen(
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=self.rfile.read(length) if length else b"",
        )
        self.server.owner.seen.append(seen)
        route = self.server.owner.routes.get(parts.path)
        reply = route(seen) if route else Reply(404, {"content-type": "text/plain"}, b"nope")
        if reply.delay:
            time.sleep(reply.delay)
        try:
            self.send_response(reply.status)
            for k, v in reply.headers.items():
                self.send_header(k, v)
            if reply.chunks is None:
                self.send_header("content-length", str(len(reply.body)))
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(reply.body)
            else:
                self.send_header("connection", "close")
                self.end_headers()
                for chunk in reply.chunks():
                    self.wfile.write(chunk)
                    self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading: expected for the caps

    do_GET = _serve
    do_POST = _serve


class LocalServer:
    """An HTTP server on 127.0.0.1 with a route table and a log of received requests."""

    class HTTP(ThreadingHTTPServer):
        daemon_threads = True
        owner: LocalServer

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.routes: dict[str, Route] = {}
        self.seen: list[Seen] = []
        self.scheme = "https" if tls else "http"
        self._httpd = self.HTTP(("127.0.0.1", 0), _Handler)
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self._httpd.owner = self
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def reply(self, path: str, reply: Reply) -> None:
        self.routes[path] = lambda _seen: reply

    def page(self, path: str, body: str | bytes, content_type: str = "text/html") -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.reply(path, Reply(200, {"content-type": content_type}, data))

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.reply(path, Reply(status, {"location": location}))

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def server() -> Iterator[LocalServer]:
    srv = LocalServer()
    try:
        yield srv
    finally:
        srv.close()


@dataclass
class TlsFiles:
    """A self-signed certificate for ``secure.test`` and a client context trusting it."""

    server: ssl.SSLContext
    client: ssl.SSLContext


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=secure.test",
         "-addext", "subjectAltName=DNS:secure.test"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    client = ssl.create_default_context(cafile=str(cert))
    return TlsFiles(server, client)


@pytest.fixture
def tls_server(tls_files: TlsFiles) -> Iterator[LocalServer]:
    srv = LocalServer(tls=tls_files.server)
    try:
        yield srv
    finally:
        srv.close()


class FakeResolver:
    """Answers from a table; a list of answers per host is used in turn (the last repeats).

    ``calls`` records every lookup, so tests can count resolutions per connection.
    """

    def __init__(self, table: dict[str, list[list[str]]]) -> None:
        self.table = table
        self.calls: list[str] = []

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        self.calls.append(host)
        answers = self.table.get(host)
        if not answers:
            raise OSError(f"[fake] {host} does not resolve")
        index = min(self.calls.count(host), len(answers)) - 1
        out = []
        for text in answers[index]:
            ip = parse_ip(text)
            assert ip is not None
            out.append(ip)
        return out


def tool_ctx(cancel: CancellationToken | None = None) -> ToolContext[None]:
    return ToolContext(None, {}, cancel or CancellationToken(), "call-1", "tester")


@pytest.fixture
def ctx() -> ToolContext[None]:
    return tool_ctx()


@pytest.fixture
def article_html() -> str:
    return (DATA / "article.html").read_text(encoding="utf-8")
