"""The Tavily backend (``POST /search``).

Request: a JSON body ``{"query", "max_results", "search_depth"}`` (``max_results`` at most
20), the key as ``Authorization: Bearer <key>``. Response: hits in ``results[]``, each with
``title``, ``url`` and ``content`` (the snippet); ``answer``, ``images`` and scores are
ignored.

Example:
    >>> TavilyBackend(api_key="tvly-test", base_url="http://127.0.0.1:9")
    <TavilyBackend base_url='http://127.0.0.1:9' search_depth='basic'>
"""

from __future__ import annotations

from typing import Any

import httpx

from helikon.tools.web._api import api_key_from, call_json, hits_from
from helikon.tools.web.search import MAX_RESULTS_LIMIT, SearchResult

__all__ = ["TavilyBackend"]


class TavilyBackend:
    """Web search through the Tavily Search API.

    Args:
        api_key: the API key (``tvly-...``); ``None`` reads ``TAVILY_API_KEY``.
        base_url: the API root (default ``https://api.tavily.com``).
        timeout: seconds per request (default 30).
        search_depth: ``"basic"`` (default) or ``"advanced"`` (sent as given).
        topic: optional ``topic`` (``"general"``, ``"news"``, ...).

    Raises:
        ConfigError: no key was given and ``TAVILY_API_KEY`` is not set.
    """

    DEFAULT_BASE_URL = "https://api.tavily.com"
    ENV_VAR = "TAVILY_API_KEY"
    SERVICE = "Tavily"

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str = DEFAULT_BASE_URL,
        timeout: float = 30.0,
        search_depth: str = "basic",
        topic: str | None = None,
    ) -> None:
        self._api_key = api_key_from(api_key, self.ENV_VAR, "TavilyBackend")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.search_depth = search_depth
        self.topic = topic

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        """Return up to ``max_results`` hits for ``query``.

        Raises:
            ToolDenied: the key was rejected (401/403).
            ToolOther: rate limit, plan limit, timeout, unreachable service, bad response.
        """
        count = max(1, min(int(max_results), MAX_RESULTS_LIMIT))
        body: dict[str, Any] = {
            "query": query,
            "max_results": count,
            "search_depth": self.search_depth,
        }
        if self.topic:
            body["topic"] = self.topic
        request = httpx.Request(
            "POST",
            f"{self.base_url}/search",
            json=body,
            headers={"Accept": "application/json", "Authorization": f"Bearer {self._api_key}"},
        )
        data = await call_json(
            self.SERVICE, self.ENV_VAR, self._api_key, request, timeout=self.timeout
        )
        return _parse(data)[:count]

    def __repr__(self) -> str:
        return f"<TavilyBackend base_url={self.base_url!r} search_depth={self.search_depth!r}>"


def _parse(data: Any) -> list[SearchResult]:
    items = data.get("results") if isinstance(data, dict) else None
    return hits_from(items, "content")
