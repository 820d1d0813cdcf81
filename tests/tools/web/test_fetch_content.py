"""WebFetch end to end against the loopback server: extraction, pass-through, caps, paging."""

from __future__ import annotations

import asyncio
import gzip
import json
import time
from collections.abc import Iterator

import pytest

from helikon.core.cancel import CancellationToken
from helikon.errors import ConfigError, InvalidArgs, ToolDenied, ToolOther
from helikon.tools.web import WebFetchTool

from .conftest import LocalServer, Reply, tool_ctx

LOOPBACK_ONLY = ["127.0.0.1/32"]


def _tool(**kw: object) -> WebFetchTool:
    return WebFetchTool(allow_private_networks=LOOPBACK_ONLY, **kw)  # type: ignore[arg-type]


def _text(out: object) -> str:
    return out.content[0].text  # type: ignore[attr-defined,no-any-return]


async def test_article_page_becomes_markdown(server: LocalServer, article_html: str) -> None:
    server.page("/news/tidal", article_html, "text/html; charset=utf-8")
    out = await _tool().invoke(tool_ctx(), {"url": server.url("/news/tidal")})
    text = _text(out)
    head, _, body = text.partition("\n\n")
    assert head.splitlines() == [
        f"URL: {server.url('/news/tidal')}",
        "Title: Tidal Energy in the North Sea | The Coastal Review",
    ]
    assert body.startswith("# Tidal turbines pass their first winter in the North Sea\n")
    for line in (
        "## Why tides are predictable power",
        "## What went wrong, and what did not",
        "### Next steps",
        "- Energy delivered: 3.4 gigawatt-hours",
    ):
        assert f"\n{line}\n" in body, line
    assert "Unlike wind or sunlight, tidal currents follow the moon" in body
    assert "[larger commercial deployment](https://example.org/reports/tidal-2025)" in body
    # a relative link is made absolute against the page URL
    assert f"[explainer on tidal power]({server.url('/energy/tides-explained')})" in body
    # boilerplate is gone
    for junk in (
        "We use cookies",
        "Subscribe",
        "Most read",
        "Ferry strike",
        "Share on Facebook",
        "Log in to comment",
        "All rights reserved",
        "Privacy policy",
        "dataLayer",
        "font-family",
    ):
        assert junk not in text, junk
    assert out.value["title"] == "Tidal Energy in the North Sea | The Coastal Review"
    assert out.value["status"] == 200 and out.value["content_type"] == "text/html"


async def test_raw_returns_the_html_source(server: LocalServer, article_html: str) -> None:
    server.page("/a", article_html)
    out = await _tool().invoke(tool_ctx(), {"url": server.url("/a"), "raw": True})
    assert '<nav class="nav main-menu">' in _text(out)
    assert "Content-Type: text/html" in _text(out)


@pytest.mark.parametrize(
    ("ctype", "body"),
    [
        ("text/plain; charset=utf-8", "line one\nline two – ünïcode\n"),
        ("application/json", json.dumps({"a": [1, 2], "b": "x"})),
        ("text/markdown", "# Heading\n\n<b>not html</b>\n"),
        ("application/vnd.api+json", '{"data": []}'),
        ("text/csv", "a,b\n1,2\n"),
    ],
)
async def test_non_html_text_passes_through(server: LocalServer, ctype: str, body: str) -> None:
    server.page("/t", body, ctype)
    out = await _tool().invoke(tool_ctx(), {"url": server.url("/t")})
    text = _text(out)
    assert text.endswith("\n\n" + body)
    assert f"Content-Type: {ctype.split(';')[0]}" in text
    assert out.value["title"] is None


async def test_charsets_from_header_and_meta(server: LocalServer) -> None:
    server.page("/latin", "café crème".encode("latin-1"), "text/plain; charset=ISO-8859-1")
    page_html = '<html><head><meta charset="windows-1252"><title>Caf\xe9</title></head>'
    page_html += "<body><article><p>" + "Un caf\xe9 cr\xe8me, s'il vous pla\xeet. " * 10
    page_html += "</p></article></body></html>"
    server.page("/meta", page_html.encode("cp1252"), "text/html")
    assert _text(await _tool().invoke(tool_ctx(), {"url": server.url("/latin")})).endswith(
        "café crème"
    )
    out = await _tool().invoke(tool_ctx(), {"url": server.url("/meta")})
    assert "Title: Café" in _text(out) and "Un café crème" in _text(out)


async def test_gzip_bodies_are_decoded(server: LocalServer) -> None:
    data = gzip.compress(b"compressed hello")
    server.reply(
        "/gz", Reply(200, {"content-type": "text/plain", "content-encoding": "gzip"}, data)
    )
    assert _text(await _tool().invoke(tool_ctx(), {"url": server.url("/gz")})).endswith(
        "compressed hello"
    )


async def test_sniffs_html_without_a_content_type(server: LocalServer) -> None:
    server.reply("/n", Reply(200, {}, b"<!DOCTYPE html><html><body><h1>Hi</h1></body></html>"))
    out = await _tool().invoke(tool_ctx(), {"url": server.url("/n")})
    assert "# Hi" in _text(out)


@pytest.mark.parametrize(
    ("ctype", "body"),
    [("image/png", b"\x89PNG\r\n\x1a\n\x00\x00"), ("application/octet-stream", b"\x00\x01\x02")],
)
async def test_binary_bodies_are_refused(server: LocalServer, ctype: str, body: bytes) -> None:
    server.page("/bin", body, ctype)
    with pytest.raises(ToolOther, match=f"returned {ctype}, which is not text"):
        await _tool().invoke(tool_ctx(), {"url": server.url("/bin")})


async def test_http_errors_are_tool_errors(server: LocalServer) -> None:
    with pytest.raises(ToolOther, match=r"answered HTTP 404 Not Found"):
        await _tool().invoke(tool_ctx(), {"url": server.url("/missing")})


# ---------------------------------------------------------------------- redirects


async def test_follows_a_redirect_chain(server: LocalServer) -> None:
    server.redirect("/one", "/two", 301)
    server.redirect("/two", server.url("/three") + "#frag", 307)
    server.page("/three", "arrived", "text/plain")
    out = await _tool().invoke(tool_ctx(), {"url": server.url("/one")})
    text = _text(out)
    assert text.startswith(f"URL: {server.url('/three')}\n")
    assert f"Redirected from: {server.url('/one')} -> {server.url('/two')}" in text
    assert out.value["url"] == server.url("/one")
    assert out.value["final_url"] == server.url("/three")


async def test_redirect_cap(server: LocalServer) -> None:
    server.redirect("/loop", "/loop")
    with pytest.raises(ToolOther, match=r"too many redirects .* more than 3"):
        await _tool(max_redirects=3).fetch(server.url("/loop"))
    assert len(server.seen) == 4  # the first request and three hops


async def test_zero_redirects_refuses_any_redirect(server: LocalServer) -> None:
    server.redirect("/r", "/elsewhere")
    with pytest.raises(ToolOther, match="too many redirects"):
        await _tool(max_redirects=0).fetch(server.url("/r"))


# ---------------------------------------------------------------------- caps


async def test_size_cap_truncates_and_says_so(server: LocalServer) -> None:
    server.page("/big", b"x" * 200_000, "text/plain")
    tool = _tool(max_bytes=10_000)
    page = await tool.fetch(server.url("/big"))
    assert page.truncated and len(page.body) == 10_000
    out = await tool.invoke(tool_ctx(), {"url": server.url("/big")})
    assert "only the first 10000 bytes were read" in _text(out)
    assert out.value["truncated"] is True and out.value["total_chars"] == 10_000


async def test_body_exactly_at_the_cap_is_not_truncated(server: LocalServer) -> None:
    server.page("/exact", b"y" * 4096, "text/plain")
    page = await _tool(max_bytes=4096).fetch(server.url("/exact"))
    assert not page.truncated and len(page.body) == 4096


async def test_size_cap_stops_an_endless_stream(server: LocalServer) -> None:
    def forever() -> Iterator[bytes]:
        for _ in range(20_000):  # bounded: ~1.3 GB if nobody stopped reading
            yield b"z" * 65536

    server.reply("/endless", Reply(200, {"content-type": "text/plain"}, chunks=forever))
    started = time.monotonic()
    page = await _tool(max_bytes=100_000, timeout=20).fetch(server.url("/endless"))
    assert page.truncated and len(page.body) == 100_000
    assert time.monotonic() - started < 5


async def test_time_cap_covers_a_slow_trickle(server: LocalServer) -> None:
    def trickle() -> Iterator[bytes]:
        for _ in range(100):  # 10 s in all; each chunk well within a per-read timeout
            time.sleep(0.1)
            yield b"."

    server.reply("/slow", Reply(200, {"content-type": "text/plain"}, chunks=trickle))
    started = time.monotonic()
    with pytest.raises(ToolOther, match=r"timed out after 0.5s fetching"):
        await _tool(timeout=0.5).invoke(tool_ctx(), {"url": server.url("/slow")})
    assert time.monotonic() - started < 3


async def test_time_cap_covers_a_slow_first_byte(server: LocalServer) -> None:
    server.reply("/late", Reply(200, {"content-type": "text/plain"}, b"late", delay=2.0))
    with pytest.raises(ToolOther, match="timed out"):
        await _tool(timeout=0.3).fetch(server.url("/late"))


async def test_cancellation_stops_the_fetch(server: LocalServer) -> None:
    server.reply("/late", Reply(200, {"content-type": "text/plain"}, b"late", delay=3.0))
    token = CancellationToken()
    asyncio.get_running_loop().call_later(0.2, token.cancel, "user pressed stop")
    started = time.monotonic()
    with pytest.raises(ToolOther, match=r"cancelled \(user pressed stop\)"):
        await _tool().invoke(tool_ctx(token), {"url": server.url("/late")})
    assert time.monotonic() - started < 2


async def test_already_cancelled_token_fetches_nothing(server: LocalServer) -> None:
    token = CancellationToken()
    token.cancel()
    with pytest.raises(ToolOther, match="cancelled"):
        await _tool().invoke(tool_ctx(token), {"url": server.url("/x")})
    assert server.seen == []


# ---------------------------------------------------------------------- output paging


async def test_long_content_is_cut_and_can_be_continued(server: LocalServer) -> None:
    body = "".join(f"{i:04d}\n" for i in range(100))  # 500 characters
    server.page("/long", body, "text/plain")
    tool = _tool(max_output_chars=200)
    first = await tool.invoke(tool_ctx(), {"url": server.url("/long")})
    assert "\n\n0000\n" in _text(first)
    assert _text(first).endswith(
        "[Cut: characters 0-200 of 500 shown; call WebFetch again with start_char=200 for more.]"
    )
    last = await tool.invoke(tool_ctx(), {"url": server.url("/long"), "start_char": 400})
    assert _text(last).endswith("0099\n") and "[Cut" not in _text(last)
    assert (last.value["start_char"], last.value["end_char"]) == (400, 500)
    past = await tool.invoke(tool_ctx(), {"url": server.url("/long"), "start_char": 900})
    assert "start_char=900 is past the end (500 characters)" in _text(past)


@pytest.mark.parametrize(
    ("secret", "value"),
    [
        ("API_KEY=Qw3rTy8UiOp1AsDfGhJk", "Qw3rTy8UiOp1AsDfGhJk"),
        ("ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
        ('"client_secret": "VeryLongClientSecretValue12345"', "VeryLongClientSecretValue12345"),
    ],
)
async def test_a_secret_across_a_page_cut_never_shows_a_piece(
    server: LocalServer, secret: str, value: str
) -> None:
    # Attack R9: the page was cut, then redacted: each page kept a piece of the secret.
    tool = _tool(max_output_chars=200)
    for k in (3, len(secret) // 2, len(secret) - 3):
        body = "x" * (200 - k) + " " + secret + " " + "y" * 300
        server.page(f"/s{k}", body, "text/plain")
        seen = ""
        start = 0
        while True:
            out = await tool.invoke(tool_ctx(), {"url": server.url(f"/s{k}"), "start_char": start})
            seen += _text(out)
            if out.value["end_char"] >= out.value["total_chars"]:
                break
            start = out.value["end_char"]
        for i in range(len(value) - 7):
            assert value[i : i + 8] not in seen, (k, value[i : i + 8])


# ---------------------------------------------------------------------- arguments, config


@pytest.mark.parametrize(
    "args",
    [{}, {"url": ""}, {"url": "http://x/", "start_char": -1}, {"url": "http://x/", "extra": 1}],
)
async def test_invalid_arguments(args: dict[str, object]) -> None:
    with pytest.raises(InvalidArgs):
        await WebFetchTool().invoke(tool_ctx(), args)


@pytest.mark.parametrize(
    "kw",
    [{"max_bytes": 0}, {"timeout": 0}, {"max_redirects": -1}, {"max_output_chars": 0}],
)
def test_bad_caps_are_config_errors(kw: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        WebFetchTool(**kw)  # type: ignore[arg-type]


def test_schema_and_metadata() -> None:
    tool = WebFetchTool()
    assert tool.name == "WebFetch" and tool.effect.value == "side_effect"
    assert tool.parameters["required"] == ["url"]
    assert tool.parameters["additionalProperties"] is False
    assert "private or internal networks are refused" in tool.description
    assert "refused" not in WebFetchTool(ssrf_guard=False).description


async def test_invalid_host_in_url_is_denied() -> None:
    with pytest.raises((ToolDenied, InvalidArgs)):
        await WebFetchTool().invoke(tool_ctx(), {"url": "http://exa mple.com/"})
