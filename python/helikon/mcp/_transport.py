"""The two client transports, built on the ``mcp`` package's own.

stdio on POSIX is helikon's own (:mod:`helikon.mcp._stdio`); on Windows it is
``mcp.client.stdio.stdio_client`` unchanged (no exit codes, no line limit). Streamable HTTP is
``mcp.client.streamable_http.streamable_http_client`` over an ``httpx2`` client helikon
builds, for two reasons: custom headers, and :class:`HttpErrorLog`. The package turns an
HTTP 4xx/5xx answer without a JSON-RPC body into a generic "Server returned an error
response" error; the log remembers the status and body text of such answers so the
resulting :class:`~helikon.errors.ToolError` can name them (field case BR-24).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from helikon.redaction import CUT_GUARD, process_redactor

__all__ = ["HttpErrorLog", "HttpFailure", "http_transport", "stdio_transport"]

_BODY_LIMIT = 500
_CONNECT_TIMEOUT = 30.0
_READ_TIMEOUT = 300.0  # a streamed answer may stay open this long between events


_MCP_TYPES = ("application/json", "text/event-stream")


@dataclass(frozen=True, slots=True)
class HttpFailure:
    """An HTTP answer the client cannot use: an error status, or a body that is neither
    JSON nor an event stream (an HTML login page, a proxy's error page); its status, reason
    phrase, content type and (the start of) its body text."""

    status: int
    reason: str
    body: str
    content_type: str = ""

    def describe(self) -> str:
        """``"HTTP 503 Service Unavailable: overloaded"`` or, for a successful status with
        a foreign body, ``"HTTP 200 OK with Content-Type text/html (not an MCP answer):
        <html>..."``."""
        head = f"HTTP {self.status} {self.reason}".rstrip()
        if self.status < 400:
            head += f" with Content-Type {self.content_type or '(none)'} (not an MCP answer)"
        return f"{head}: {self.body}" if self.body else head


class HttpErrorLog:
    """The last unusable HTTP answer per request key (``tools/call`` tool name, or method)."""

    def __init__(self) -> None:
        self._last: dict[str, HttpFailure] = {}

    def pop(self, key: str) -> HttpFailure | None:
        """The failure recorded for ``key`` (and forget it)."""
        return self._last.pop(key, None)

    def peek(self, key: str) -> HttpFailure | None:
        """The failure recorded for ``key`` (kept)."""
        return self._last.get(key)

    async def on_response(self, response: httpx2.Response) -> None:
        """``httpx2`` response hook: record POST answers with status >= 400, and 2xx answers
        carrying a body whose Content-Type is neither JSON nor an event stream."""
        request = response.request
        if request.method != "POST":
            return
        ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
        foreign = response.status_code in (200, 201) and ctype not in _MCP_TYPES
        if response.status_code < 400 and not foreign:
            return
        key = _request_key(request.content)
        if key is None:
            return
        try:
            raw = await response.aread()
            text = raw[: _BODY_LIMIT + CUT_GUARD].decode("utf-8", "replace")
            body = process_redactor().redact_head(text, _BODY_LIMIT).strip()
        except httpx2.HTTPError:
            body = ""
        self._last[key] = HttpFailure(response.status_code, response.reason_phrase, body, ctype)


def _request_key(content: bytes) -> str | None:
    try:
        message = json.loads(content)
    except ValueError:
        return None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    params = message.get("params")
    if message["method"] == "tools/call" and isinstance(params, dict):
        name = params.get("name")
        return f"tools/call:{name}" if isinstance(name, str) else None
    return str(message["method"])


def stdio_transport(
    command: str,
    args: list[str],
    env: Mapping[str, str] | None,
    cwd: str | Path | None,
) -> AbstractAsyncContextManager[TransportStreams]:
    """``stdio_client`` for the command (Windows; ``env`` is merged over the package's safe
    default)."""
    params = StdioServerParameters(
        command=command, args=list(args), env=dict(env) if env is not None else None, cwd=cwd
    )
    return stdio_client(params)


@asynccontextmanager
async def http_transport(
    url: str,
    headers: Mapping[str, str] | None,
    log: HttpErrorLog,
    auth: httpx2.Auth | None = None,
) -> AsyncIterator[TransportStreams]:
    """``streamable_http_client`` over an ``httpx2`` client carrying ``headers``, ``auth``
    (e.g. the ``mcp`` package's ``OAuthClientProvider``) and ``log``."""
    client = httpx2.AsyncClient(
        headers=dict(headers or {}),
        auth=auth,
        timeout=httpx2.Timeout(_CONNECT_TIMEOUT, read=_READ_TIMEOUT),
        event_hooks={"response": [log.on_response]},
    )
    async with client, streamable_http_client(url, http_client=client) as streams:
        yield streams
