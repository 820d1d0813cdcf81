"""The two client transports, built on the ``mcp`` package's own.

stdio is ``mcp.client.stdio.stdio_client`` unchanged. Streamable HTTP is
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

__all__ = ["HttpErrorLog", "HttpFailure", "http_transport", "stdio_transport"]

_BODY_LIMIT = 500
_CONNECT_TIMEOUT = 30.0
_READ_TIMEOUT = 300.0  # a streamed answer may stay open this long between events


@dataclass(frozen=True, slots=True)
class HttpFailure:
    """An HTTP error answer: status, reason phrase and (the start of) the body text."""

    status: int
    reason: str
    body: str

    def describe(self) -> str:
        """``"HTTP 503 Service Unavailable: overloaded"``."""
        head = f"HTTP {self.status} {self.reason}".rstrip()
        return f"{head}: {self.body}" if self.body else head


class HttpErrorLog:
    """The last HTTP error answer per request key (``tools/call`` tool name, or method)."""

    def __init__(self) -> None:
        self._last: dict[str, HttpFailure] = {}

    def pop(self, key: str) -> HttpFailure | None:
        """The failure recorded for ``key`` (and forget it)."""
        return self._last.pop(key, None)

    async def on_response(self, response: httpx2.Response) -> None:
        """``httpx2`` response hook: record POST answers with status >= 400."""
        request = response.request
        if response.status_code < 400 or request.method != "POST":
            return
        key = _request_key(request.content)
        if key is None:
            return
        try:
            raw = await response.aread()
            body = raw[:_BODY_LIMIT].decode("utf-8", "replace").strip()
        except httpx2.HTTPError:
            body = ""
        self._last[key] = HttpFailure(response.status_code, response.reason_phrase, body)


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
    """``stdio_client`` for the command (``env`` is merged over the package's safe default)."""
    params = StdioServerParameters(
        command=command, args=list(args), env=dict(env) if env is not None else None, cwd=cwd
    )
    return stdio_client(params)


@asynccontextmanager
async def http_transport(
    url: str, headers: Mapping[str, str] | None, log: HttpErrorLog
) -> AsyncIterator[TransportStreams]:
    """``streamable_http_client`` over an ``httpx2`` client carrying ``headers`` and ``log``."""
    client = httpx2.AsyncClient(
        headers=dict(headers or {}),
        timeout=httpx2.Timeout(_CONNECT_TIMEOUT, read=_READ_TIMEOUT),
        event_hooks={"response": [log.on_response]},
    )
    async with client, streamable_http_client(url, http_client=client) as streams:
        yield streams
