"""OAuth for streamable HTTP through the ``mcp`` package's ``OAuthClientProvider`` and a token
store the user supplies."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from helikon.errors import McpConnectError
from helikon.mcp import McpServerHandle
from tests.mcp._support import bounded

TOKEN = "tok-123"


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes = b"", ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(405)

    do_DELETE = do_GET

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.seen.append(self.headers.get("Authorization"))  # type: ignore[attr-defined]
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self._send(401, b"missing or wrong bearer token", "text/plain")
            return
        msg = json.loads(raw)
        if "id" not in msg:
            self._send(202)
            return
        if msg["method"] == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "guarded", "version": "0"},
            }
        else:
            result = {"tools": [{"name": "secret", "inputSchema": {"type": "object"}}]}
        self._send(200, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode())


@contextmanager
def _guarded() -> Iterator[tuple[str, list[str | None]]]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    seen: list[str | None] = []
    server.seen = seen  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


class _Store:
    """The user's token store (``mcp.client.auth.TokenStorage``)."""

    def __init__(self) -> None:
        self.reads = 0

    async def get_tokens(self) -> OAuthToken | None:
        self.reads += 1
        return OAuthToken(access_token=TOKEN, token_type="Bearer", expires_in=3600)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        raise AssertionError("a valid token is not replaced")

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return OAuthClientInformationFull(
            client_id="helikon", redirect_uris=["http://localhost/cb"]
        )  # type: ignore[list-item]

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        pass


async def test_the_token_from_the_users_store_authorizes_every_request() -> None:
    with _guarded() as (url, seen):
        store = _Store()
        metadata = OAuthClientMetadata(redirect_uris=["http://localhost/cb"])  # type: ignore[list-item]
        auth = OAuthClientProvider(url, metadata, store)
        async with McpServerHandle.streamable_http(url, auth=auth) as h:
            assert [t.name for t in h.tools()] == ["secret"]
        assert store.reads >= 1
        assert seen and all(v == f"Bearer {TOKEN}" for v in seen)


async def test_without_auth_the_401_is_named() -> None:
    with _guarded() as (url, _), pytest.raises(McpConnectError) as info:
        await bounded(McpServerHandle.streamable_http(url, connect_timeout=5).connect())
    assert "HTTP 401 Unauthorized: missing or wrong bearer token" in str(info.value)
