"""Article extraction to Markdown and reading bodies as text (no network)."""

from __future__ import annotations

import pytest

from helikon.tools.web.extract import html_to_markdown
from helikon.tools.web.page import FetchedPage

FILLER = "This sentence gives the paragraph enough text to count as content. " * 4


def test_realistic_article(article_html: str) -> None:
    out = html_to_markdown(article_html, url="https://news.example/a/tidal")
    assert out.title == "Tidal Energy in the North Sea | The Coastal Review"
    lines = out.markdown.splitlines()
    assert lines[0] == "# Tidal turbines pass their first winter in the North Sea"
    assert "[explainer on tidal power](https://news.example/energy/tides-explained)" in (
        out.markdown
    )
    assert "Home" not in out.markdown and "About us" not in out.markdown
    assert "\n\n\n" not in out.markdown and out.markdown == out.markdown.strip()


def test_images_keep_alt_text_and_web_sources_only() -> None:
    page = (
        "<html><body><article><h1>Pics</h1>"
        f"<p>{FILLER}</p>"
        '<p><img src="https://cdn.example/cat.png" alt="a cat"></p>'
        '<p><img src="data:image/png;base64,AAAA" alt="inline dog"></p>'
        '<p><img src="/rel/bird.png" alt="a bird"></p>'
        "</article></body></html>"
    )
    md = html_to_markdown(page, url="https://site.example/post").markdown
    assert "![a cat](https://cdn.example/cat.png)" in md
    assert "data:image" not in md and "inline dog" in md
    assert "![a bird](https://site.example/rel/bird.png)" in md


def test_empty_and_titleless_pages() -> None:
    assert html_to_markdown("").markdown == ""
    assert html_to_markdown("   \n").title is None
    out = html_to_markdown("<html><body><p>Just one line.</p></body></html>")
    assert out.title is None
    assert out.markdown == "Just one line."


def test_malformed_markup_is_tolerated() -> None:
    out = html_to_markdown("<div><p>unclosed <b>bold <i>both</div></p> tail")
    assert "unclosed" in out.markdown and "both" in out.markdown


def test_code_blocks_and_emphasis_survive() -> None:
    page = (
        "<html><body><article><h2>Usage</h2>"
        f"<p>{FILLER} Call <code>run()</code> with <em>care</em>.</p>"
        "<pre>pip install helikon\n</pre></article></body></html>"
    )
    md = html_to_markdown(page).markdown
    assert "`run()`" in md and "*care*" in md
    assert "```\npip install helikon\n```" in md


@pytest.mark.parametrize(
    ("ctype", "body", "kind"),
    [
        ("text/html; charset=utf-8", b"<p>x</p>", "html"),
        ("application/xhtml+xml", b"<html/>", "html"),
        ("text/plain", b"x", "text"),
        ("application/json", b"{}", "text"),
        ("application/ld+json", b"{}", "text"),
        ("application/atom+xml", b"<feed/>", "text"),
        ("", b"  <!doctype html><title>t</title>", "html"),
        ("", b"plain words", "text"),
        ("application/octet-stream", b"\x00\x01", "binary"),
        ("", b"\xff\xfe\x00\x00garbage", "binary"),
        ("application/pdf", b"%PDF-1.7", "binary"),
        ("image/svg+xml", b"<svg/>", "text"),
    ],
)
def test_page_kind(ctype: str, body: bytes, kind: str) -> None:
    assert FetchedPage("u", "u", 200, ctype, body).kind == kind


def test_page_text_decoding() -> None:
    assert FetchedPage("u", "u", 200, 'text/plain; charset="utf-8"', b"\xc3\xa9").text() == "é"
    # an unknown charset falls back to UTF-8
    assert FetchedPage("u", "u", 200, "text/plain; charset=bogus", b"ok").text() == "ok"
    # a character cut by the size cap is dropped, not shown as U+FFFD
    cut = FetchedPage("u", "u", 200, "text/plain", "né".encode()[:-1], truncated=True)
    assert cut.text() == "n"
    meta = b'<html><head><meta http-equiv="Content-Type" content="text/html; charset=koi8-r">'
    page = FetchedPage("u", "u", 200, "text/html", meta + "привет".encode("koi8-r"))
    assert page.text().endswith("привет")


def test_short_page_falls_back_to_the_whole_page_without_boilerplate() -> None:
    page = (
        "<html><head><title>Status</title><script>track()</script></head><body>"
        '<nav><a href="/">Home</a> <a href="/docs">Docs</a></nav>'
        "<h1>All systems operational</h1><p>Last checked 5 minutes ago.</p>"
        "<noscript>Enable JavaScript</noscript><form><button>Subscribe</button></form>"
        "<footer>© Example</footer></body></html>"
    )
    out = html_to_markdown(page)
    assert out.title == "Status"
    assert out.markdown == "# All systems operational\n\nLast checked 5 minutes ago."


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        (
            '<?xml version="1.0" encoding="utf-8"?><!DOCTYPE html>'
            '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>X</title></head>'
            "<body><p>short</p></body></html>",
            "short",
        ),
        ('<?xml version="1.0"?><rss><channel><title>feed</title></channel></rss>', "feed"),
        ("https://example.com/page", "https://example.com/page"),
        ("notes.txt", "notes.txt"),
    ],
)
def test_odd_inputs_convert_without_warnings(page: str, expected: str) -> None:
    # the suite runs with warnings as errors, so a parser warning fails this test
    assert html_to_markdown(page).markdown == expected
