"""Shared plumbing of the search backends: one JSON call, HTTP errors as ToolErrors."""

from __future__ import annotations

import html
import json
import os
import re
from typing import Any

import httpx

from helikon.errors import ConfigError, ToolDenied, ToolError, ToolOther
from helikon.tools.web.search import SearchResult

__all__ = ["api_key_from", "call_json", "hits_from", "plain_text"]

_TAGS = re.compile(r"<[^>]{0,200}>")
_SPACES = re.compile(r"\s+")
_DETAIL_CHARS = 300


def api_key_from(api_key: str | None, env_var: str, backend: str) -> str:
    """``api_key``, else the environment variable; a missing key is a ConfigError."""
    key = api_key if api_key is not None else os.environ.get(env_var)
    if not key or not key.strip():
        raise ConfigError(
            f"{backend} needs an API key: pass api_key=... or set the {env_var} "
            "environment variable"
        )
    return key.strip()


def plain_text(value: Any) -> str:
    """A snippet as plain text: tags removed, entities decoded, whitespace collapsed."""
    if not isinstance(value, str):
        return ""
    return _SPACES.sub(" ", html.unescape(_TAGS.sub("", value))).strip()


def hits_from(items: Any, snippet_key: str) -> list[SearchResult]:
    """The hits of a backend's result list, in order.

    ``items`` is the response's list of result objects (anything else yields no hits); each
    one with a non-empty string ``url`` becomes a SearchResult, its ``title`` and its
    ``snippet_key`` field reduced to plain text. Entries without a usable URL are skipped.
    """
    if not isinstance(items, list):
        return []
    hits: list[SearchResult] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        url = item.get("url")
        if not isinstance(url, str) or not url:
            continue
        hits.append(
            SearchResult(
                title=plain_text(item.get("title")),
                url=url,
                snippet=plain_text(item.get(snippet_key)),
            )
        )
    return hits


def _detail(resp: httpx.Response, secret: str) -> str:
    text = resp.text
    detail: str | None = None
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        for key in ("error", "detail", "message"):
            value = body.get(key)
            if isinstance(value, dict):
                value = value.get("detail") or value.get("error") or value.get("message")
            if isinstance(value, str) and value.strip():
                detail = value
                break
    if detail is None:
        detail = text
    detail = _SPACES.sub(" ", str(detail)).strip()
    if secret:
        detail = detail.replace(secret, "***")
    if len(detail) > _DETAIL_CHARS:
        detail = detail[:_DETAIL_CHARS] + "..."
    return detail


def _status_error(service: str, env_var: str, resp: httpx.Response, secret: str) -> ToolError:
    code = resp.status_code
    detail = _detail(resp, secret)
    said = f": {detail}" if detail else ""
    if code in (401, 403):
        return ToolDenied(f"{service} rejected the API key (HTTP {code}{said}); check {env_var}")
    if code == 429:
        retry = resp.headers.get("retry-after")
        when = f"; retry after {retry}s" if retry else ""
        return ToolOther(f"{service} rate limit reached (HTTP 429{said}){when}")
    if code in (402, 432, 433):
        return ToolOther(f"{service} plan or usage limit reached (HTTP {code}{said})")
    if code in (400, 404, 405, 422):
        return ToolOther(f"{service} rejected the request (HTTP {code}{said})")
    if code >= 500:
        return ToolOther(f"{service} is unavailable (HTTP {code}{said})")
    return ToolOther(f"{service} answered HTTP {code}{said}")


async def call_json(
    service: str,
    env_var: str,
    secret: str,
    request: httpx.Request,
    *,
    timeout: float,
) -> Any:
    """Send ``request`` and return its JSON body.

    Raises:
        ToolDenied: the service rejected the key (401/403); the message names ``env_var``.
        ToolOther: timeout, connection failure, any other error status, invalid JSON.
    """
    try:
        async with httpx.AsyncClient(timeout=timeout) as client:
            resp = await client.send(request)
    except httpx.TimeoutException:
        raise ToolOther(f"{service} did not answer within {timeout:g}s") from None
    except httpx.HTTPError as exc:
        raise ToolOther(
            f"could not reach {service} at {request.url.copy_with(query=None)}: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if resp.status_code >= 400:
        raise _status_error(service, env_var, resp, secret)
    try:
        return json.loads(resp.text)
    except ValueError:
        raise ToolOther(
            f"{service} answered HTTP {resp.status_code} with a body that is not JSON"
        ) from None
