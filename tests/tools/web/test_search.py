"""WebSearch and the Brave / Tavily backends against local fake servers."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from helikon.errors import ConfigError, InvalidArgs, ToolDenied, ToolOther
from helikon.tools.web import (
    BraveBackend,
    SearchBackend,
    SearchResult,
    TavilyBackend,
    WebSearchTool,
)

from .conftest import LocalServer, Reply, tool_ctx

BRAVE_REPLY: dict[str, Any] = {
    "type": "search",
    "query": {"original": "tidal power", "more_results_available": True},
    "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": False}]},
    "web": {
        "type": "search",
        "family_friendly": True,
        "results": [
            {
                "type": "search_result",
                "title": "Tidal power - Wikipedia",
                "url": "https://en.wikipedia.org/wiki/Tidal_power",
                "is_source_local": False,
                "description": "<strong>Tidal power</strong> or tidal energy is harnessed by "
                "converting energy from tides into useful forms of power &amp; electricity.",
                "profile": {"name": "Wikipedia", "url": "https://en.wikipedia.org"},
                "language": "en",
                "extra_snippets": ["ignored"],
            },
            {"type": "search_result", "title": "No URL, skipped"},
            {
                "type": "search_result",
                "title": "How tidal turbines work",
                "url": "https://energy.example/tidal",
                "description": "",
                "age": "2 days ago",
            },
        ],
    },
}

TAVILY_REPLY: dict[str, Any] = {
    "query": "tidal power",
    "follow_up_questions": None,
    "answer": None,
    "images": [],
    "results": [
        {
            "title": "Tidal power - Wikipedia",
            "url": "https://en.wikipedia.org/wiki/Tidal_power",
            "content": "Tidal power or tidal energy is harnessed by converting energy "
            "from tides into useful forms of power.",
            "score": 0.98,
            "raw_content": None,
        },
        {
            "title": "Orkney turbines",
            "url": "https://news.example/orkney",
            "content": "Three turbines ...",
            "score": 0.71,
        },
    ],
    "response_time": 1.09,
}


def _json(status: int, body: Any, **headers: str) -> Reply:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return Reply(status, {"content-type": "application/json", **headers}, data)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---------------------------------------------------------------------- Brave


async def test_brave_request_and_response_shape(server: LocalServer) -> None:
    server.reply("/res/v1/web/search", _json(200, BRAVE_REPLY))
    backend = BraveBackend(api_key="brave-key", base_url=server.url("/res/v1"), country="GB")
    hits = await backend.search("tidal power", 5)
    seen = server.seen[0]
    assert seen.method == "GET" and seen.path == "/res/v1/web/search"
    assert seen.query == {"q": ["tidal power"], "count": ["5"], "country": ["GB"]}
    assert seen.headers["x-subscription-token"] == "brave-key"
    assert seen.headers["accept"] == "application/json"
    assert hits == [
        SearchResult(
            "Tidal power - Wikipedia",
            "https://en.wikipedia.org/wiki/Tidal_power",
            "Tidal power or tidal energy is harnessed by converting energy from tides into "
            "useful forms of power & electricity.",
        ),
        SearchResult("How tidal turbines work", "https://energy.example/tidal", ""),
    ]


async def test_brave_caps_count_and_results(server: LocalServer) -> None:
    server.reply("/res/v1/web/search", _json(200, BRAVE_REPLY))
    backend = BraveBackend(api_key="k", base_url=server.url("/res/v1"))
    assert len(await backend.search("q", 1)) == 1
    await backend.search("q", 50)
    assert server.seen[-1].query["count"] == ["20"]


@pytest.mark.parametrize("body", [{"type": "search"}, {"web": {"results": None}}, [], "text"])
async def test_brave_without_web_results_is_empty(server: LocalServer, body: Any) -> None:
    server.reply("/res/v1/web/search", _json(200, body))
    assert await BraveBackend(api_key="k", base_url=server.url("/res/v1")).search("q", 3) == []


def test_brave_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "from-env")
    assert BraveBackend()._api_key == "from-env"
    monkeypatch.delenv("BRAVE_API_KEY")
    with pytest.raises(ConfigError, match="BRAVE_API_KEY"):
        BraveBackend()
    with pytest.raises(ConfigError, match="BRAVE_API_KEY"):
        BraveBackend(api_key="  ")


async def test_brave_rejected_key(server: LocalServer) -> None:
    error = {
        "type": "ErrorResponse",
        "error": {
            "id": "abc",
            "status": 422,
            "code": "SUBSCRIPTION_TOKEN_INVALID",
            "detail": "The provided subscription token is invalid.",
        },
        "time": 1,
    }
    server.reply("/res/v1/web/search", _json(401, error))
    with pytest.raises(ToolDenied) as info:
        await BraveBackend(api_key="bad", base_url=server.url("/res/v1")).search("q", 3)
    assert str(info.value) == (
        "denied: Brave Search rejected the API key (HTTP 401: The provided subscription "
        "token is invalid.); check BRAVE_API_KEY"
    )


# ---------------------------------------------------------------------- Tavily


async def test_tavily_request_and_response_shape(server: LocalServer) -> None:
    server.reply("/search", _json(200, TAVILY_REPLY))
    backend = TavilyBackend(api_key="tvly-key", base_url=server.url(""), topic="news")
    hits = await backend.search("tidal power", 4)
    seen = server.seen[0]
    assert seen.method == "POST" and seen.path == "/search"
    assert seen.headers["authorization"] == "Bearer tvly-key"
    assert json.loads(seen.body) == {
        "query": "tidal power",
        "max_results": 4,
        "search_depth": "basic",
        "topic": "news",
    }
    assert [h.url for h in hits] == [
        "https://en.wikipedia.org/wiki/Tidal_power",
        "https://news.example/orkney",
    ]
    assert hits[0].snippet.startswith("Tidal power or tidal energy")


def test_tavily_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-env")
    assert TavilyBackend()._api_key == "tvly-env"
    monkeypatch.delenv("TAVILY_API_KEY")
    with pytest.raises(ConfigError, match="TAVILY_API_KEY"):
        TavilyBackend()


@pytest.mark.parametrize(
    ("status", "body", "headers", "error", "message"),
    [
        (
            401,
            {"detail": {"error": "Unauthorized: missing or invalid API key."}},
            {},
            ToolDenied,
            "Tavily rejected the API key (HTTP 401: Unauthorized: missing or invalid "
            "API key.); check TAVILY_API_KEY",
        ),
        (
            429,
            {"detail": {"error": "Rate limit exceeded"}},
            {"retry-after": "7"},
            ToolOther,
            "Tavily rate limit reached (HTTP 429: Rate limit exceeded); retry after 7s",
        ),
        (
            432,
            {"detail": {"error": "This request exceeds your plan's set usage limit."}},
            {},
            ToolOther,
            "Tavily plan or usage limit reached (HTTP 432: This request exceeds your "
            "plan's set usage limit.)",
        ),
        (
            400,
            {"detail": "query is too long"},
            {},
            ToolOther,
            "Tavily rejected the request (HTTP 400: query is too long)",
        ),
        (
            503,
            b"<html>Service Unavailable</html>",
            {},
            ToolOther,
            "Tavily is unavailable (HTTP 503: <html>Service Unavailable</html>)",
        ),
        (418, b"", {}, ToolOther, "Tavily answered HTTP 418"),
    ],
)
async def test_tavily_errors_are_mapped(
    server: LocalServer,
    status: int,
    body: Any,
    headers: dict[str, str],
    error: type[Exception],
    message: str,
) -> None:
    server.reply("/search", _json(status, body, **headers))
    with pytest.raises(error) as info:
        await TavilyBackend(api_key="tvly-x", base_url=server.url("")).search("q", 3)
    assert str(info.value).removeprefix("denied: ") == message


async def test_error_text_never_echoes_the_key(server: LocalServer) -> None:
    server.reply("/search", _json(401, {"detail": {"error": "bad key tvly-SECRET-123"}}))
    with pytest.raises(ToolDenied) as info:
        await TavilyBackend(api_key="tvly-SECRET-123", base_url=server.url("")).search("q", 3)
    assert "SECRET" not in str(info.value) and "bad key ***" in str(info.value)


async def test_invalid_json_and_unreachable_service(server: LocalServer) -> None:
    server.reply("/search", Reply(200, {"content-type": "application/json"}, b"{not json"))
    with pytest.raises(ToolOther, match="HTTP 200 with a body that is not JSON"):
        await TavilyBackend(api_key="k", base_url=server.url("")).search("q", 3)
    port = _closed_port()
    with pytest.raises(
        ToolOther, match=rf"could not reach Brave Search at http://127.0.0.1:{port}"
    ):
        await BraveBackend(api_key="k", base_url=f"http://127.0.0.1:{port}/res/v1").search("q", 1)


async def test_slow_service_times_out(server: LocalServer) -> None:
    server.reply("/search", Reply(200, {}, b"{}", delay=1.0))
    with pytest.raises(ToolOther, match=r"Tavily did not answer within 0.2s"):
        await TavilyBackend(api_key="k", base_url=server.url(""), timeout=0.2).search("q", 1)


# ---------------------------------------------------------------------- the tool


class _Recorder:
    def __init__(self, hits: list[SearchResult] | Exception) -> None:
        self.hits = hits
        self.calls: list[tuple[str, int]] = []

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        self.calls.append((query, max_results))
        if isinstance(self.hits, Exception):
            raise self.hits
        return list(self.hits)


async def test_tool_renders_hits_and_returns_values() -> None:
    hits = [SearchResult(f"T{i}", f"https://e.example/{i}", f"s{i}") for i in range(4)]
    backend = _Recorder(hits)
    tool = WebSearchTool(backend)
    out = await tool.invoke(tool_ctx(), {"query": "tides", "max_results": 2})
    assert backend.calls == [("tides", 2)]
    assert out.content[0].text == (  # type: ignore[union-attr]
        "1. T0\n   https://e.example/0\n   s0\n\n2. T1\n   https://e.example/1\n   s1"
    )
    assert out.value == [
        {"title": "T0", "url": "https://e.example/0", "snippet": "s0"},
        {"title": "T1", "url": "https://e.example/1", "snippet": "s1"},
    ]


async def test_tool_defaults_and_no_results() -> None:
    backend = _Recorder([])
    out = await WebSearchTool(backend).invoke(tool_ctx(), '{"query": "zzz"}')
    assert backend.calls == [("zzz", 5)]
    assert out.content[0].text == "No results for 'zzz'."  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"query": ""},
        {"query": "q", "max_results": 0},
        {"query": "q", "max_results": 21},
        {"query": "q", "site": "x"},
    ],
)
async def test_tool_invalid_args(args: dict[str, Any]) -> None:
    backend = _Recorder([])
    with pytest.raises(InvalidArgs):
        await WebSearchTool(backend).invoke(tool_ctx(), args)
    assert backend.calls == []


async def test_tool_errors() -> None:
    with pytest.raises(ToolDenied, match="nope"):
        await WebSearchTool(_Recorder(ToolDenied("nope"))).invoke(tool_ctx(), {"query": "q"})
    with pytest.raises(ToolOther, match="WebSearch failed: RuntimeError: boom"):
        await WebSearchTool(_Recorder(RuntimeError("boom"))).invoke(tool_ctx(), {"query": "q"})


async def test_tool_over_brave_end_to_end(server: LocalServer) -> None:
    server.reply("/res/v1/web/search", _json(200, BRAVE_REPLY))
    tool = WebSearchTool(BraveBackend(api_key="k", base_url=server.url("/res/v1")))
    out = await tool.invoke(tool_ctx(), {"query": "tidal power", "max_results": 3})
    text = out.content[0].text  # type: ignore[union-attr]
    assert text.startswith("1. Tidal power - Wikipedia\n   https://en.wikipedia.org/wiki/")
    assert "2. How tidal turbines work\n   https://energy.example/tidal" in text


def test_tool_metadata_and_backend_check() -> None:
    backend = _Recorder([])
    assert isinstance(backend, SearchBackend)
    tool = WebSearchTool(backend)
    assert (tool.name, tool.effect.value) == ("WebSearch", "side_effect")
    assert tool.parameters["required"] == ["query"]
    assert tool.parameters["properties"]["max_results"]["maximum"] == 20
    with pytest.raises(ConfigError, match="needs a SearchBackend"):
        WebSearchTool(object())  # type: ignore[arg-type]
