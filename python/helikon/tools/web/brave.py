"""The Brave Search backend (``GET /res/v1/web/search``).

Request: ``q`` and ``count`` (at most 20) as query parameters, the key in the
``X-Subscription-Token`` header. Response: hits in ``web.results[]``, each with ``title``,
``url`` and ``description`` (which may carry ``<strong>`` highlighting; it is reduced to plain
text). A response without a ``web`` section (no hits) yields an empty list.

Example:
    >>> b = BraveBackend(api_key="test-key", base_url="http://127.0.0.1:9/res/v1")
    >>> b
    <BraveBackend base_url='http://127.0.0.1:9/res/v1'>
"""

from __future__ import annotations

from typing import Any

import httpx

from helikon.tools.web._api import api_key_from, call_json, hits_from
from helikon.tools.web.search import MAX_RESULTS_LIMIT, SearchResult

__all__ = ["BraveBackend"]


class BraveBackend:
    """Web search through the Brave Search API.

    Args:
        api_key: the subscription token; ``None`` reads ``BRAVE_API_KEY``.
        base_url: the API root (default ``https://api.search.brave.com/res/v1``).
        timeout: seconds per request (default 15).
        country: optional ``country`` parameter (e.g. ``"DE"``).
        safesearch: optional ``safesearch`` parameter (``"off"``, ``"moderate"``,
            ``"strict"``).

    Raises:
        ConfigError: no key was given and ``BRAVE_API_KEY`` is not set.
    """

    DEFAULT_BASE_URL = "https://api.search.brave.com/res/v1"
    ENV_VAR = "BRAVE_API_KEY"
    SERVICE = "Brave Search"

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str = DEFAULT_BASE_URL,
        timeout: float = 15.0,
        country: str | None = None,
        safesearch: str | None = None,
    ) -> None:
        self._api_key = api_key_from(api_key, self.ENV_VAR, "BraveBackend")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.country = country
        self.safesearch = safesearch

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        """Return up to ``max_results`` hits for ``query``.

        Raises:
            ToolDenied: the key was rejected (401/403).
            ToolOther: rate limit, quota, timeout, unreachable service, bad response.
        """
        count = max(1, min(int(max_results), MAX_RESULTS_LIMIT))
        params: dict[str, str | int] = {"q": query, "count": count}
        if self.country:
            params["country"] = self.country
        if self.safesearch:
            params["safesearch"] = self.safesearch
        request = httpx.Request(
            "GET",
            f"{self.base_url}/web/search",
            params=params,
            headers={"Accept": "application/json", "X-Subscription-Token": self._api_key},
        )
        data = await call_json(
            self.SERVICE, self.ENV_VAR, self._api_key, request, timeout=self.timeout
        )
        return _parse(data)[:count]

    def __repr__(self) -> str:
        return f"<BraveBackend base_url={self.base_url!r}>"


def _parse(data: Any) -> list[SearchResult]:
    web = data.get("web") if isinstance(data, dict) else None
    items = web.get("results") if isinstance(web, dict) else None
    return hits_from(items, "description")
