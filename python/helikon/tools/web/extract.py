"""Main-article extraction: an HTML page to Markdown without its navigation and footer.

Library choice. Two well-kept stacks were tried on this project's machines:

* ``readability-lxml`` (a port of Mozilla's Readability scoring to lxml) to find the article,
  then ``markdownify`` (BeautifulSoup based) to write Markdown. Eight small packages in all
  (lxml, lxml-html-clean, chardet, cssselect, beautifulsoup4, soupsieve, six, markdownify);
  keeps headings, paragraphs, lists, links and emphasis; drops nav, sidebars, share bars,
  comments and footers on realistic pages.
* ``trafilatura``: very good extraction and its own Markdown output, but it pulls sixteen
  packages (dateparser, regex, babel, tzlocal, htmldate, courlan, justext, ...), and with the
  lxml 6 release served by PyPI here it failed to import at all (``lxml.html.clean`` moved to
  a separate project that trafilatura's dependency chain did not install).

So helikon uses readability-lxml + markdownify (the ``web`` extra). Relative links are made
absolute against the page URL; images keep their alt text and are only written as Markdown
images when their source is an ``http(s)`` URL (``data:`` URIs would flood the context).
When Readability finds less than 250 characters (a short or degenerate page), the whole
document is converted instead, minus scripts, styles, forms, ``nav``, ``aside`` and
``footer``, so a short page is never reduced to a fragment of itself.

Example:
    >>> page = ('<html><head><title>T</title></head><body><nav><a href="/">Home</a></nav>'
    ...         '<article><h1>Hello</h1><p>' + 'Some words here. ' * 20 + '</p>'
    ...         '<p>See <a href="/doc">the doc</a>.</p></article></body></html>')
    >>> out = html_to_markdown(page, url="https://example.com/a/")
    >>> out.title
    'T'
    >>> out.markdown.splitlines()[0]
    '# Hello'
    >>> "[the doc](https://example.com/doc)" in out.markdown
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bs4 import BeautifulSoup
from markdownify import MarkdownConverter
from readability import Document  # type: ignore[import-untyped,unused-ignore]

__all__ = ["Extracted", "html_to_markdown"]

_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
_XML_DECL = re.compile(r"^\ufeff?\s*<\?xml[^>]*>", re.I)
_BLANK_RUNS = re.compile(r"\n{3,}")
_TRAILING_WS = re.compile(r"[ \t]+\n")
_NO_TITLE = "[no-title]"  # what readability returns for a page without a title
#: Below this many characters the article found is not trusted; the whole page is converted.
_MIN_ARTICLE_CHARS = 250
#: Removed before converting a whole page: never content, or boilerplate by its tag alone.
_NOT_CONTENT = (
    "head",
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "object",
    "embed",
    "form",
    "button",
    "select",
    "nav",
    "aside",
    "footer",
)
_CONVERTER = MarkdownConverter(heading_style="ATX", bullets="-")


@dataclass(frozen=True, slots=True)
class Extracted:
    """The result of :func:`html_to_markdown`.

    Attributes:
        title: the document title (``<title>``), or ``None`` when the page has none.
        markdown: the main content as Markdown.
    """

    title: str | None
    markdown: str


def _keep_web_images(match: re.Match[str]) -> str:
    alt, src = match.group(1), match.group(2)
    if src.startswith(("http://", "https://")):
        return match.group(0)
    return alt


def _to_markdown(html: str, *, whole_page: bool = False) -> str:
    # An XML declaration would make BeautifulSoup warn that XML is parsed as HTML, and text
    # without any tag that it looks like a file name or URL; neither applies here.
    html = _XML_DECL.sub("", html, count=1)
    if "<" not in html:
        html = f"<p>{html}</p>"
    soup = BeautifulSoup(html, "lxml")
    for tag in soup.find_all(_NOT_CONTENT if whole_page else ("script", "style", "noscript")):
        tag.decompose()
    md = _CONVERTER.convert_soup(soup)
    md = _IMAGE.sub(_keep_web_images, md)
    md = _TRAILING_WS.sub("\n", md)
    md = _BLANK_RUNS.sub("\n\n", md)
    return md.strip()


def html_to_markdown(html: str, *, url: str | None = None) -> Extracted:
    """Extract the main article of ``html`` as Markdown.

    CPU-bound (a few milliseconds for a typical article, up to seconds for megabytes of
    HTML): call it from a worker thread in async code.

    Args:
        html: the page (any size; malformed markup is tolerated).
        url: the page's URL, used to make relative links absolute.

    Returns:
        An :class:`Extracted` with the title and the Markdown.
    """
    if not html.strip():
        return Extracted(None, "")
    title: str | None = None
    summary = ""
    try:
        doc = Document(html, url=url)
        raw_title = str(doc.title() or "").strip()
        title = raw_title if raw_title and raw_title != _NO_TITLE else None
        summary = str(doc.summary(html_partial=True))
    except Exception:  # readability raises Unparseable (and lxml errors) on odd input
        summary = ""
    markdown = _to_markdown(summary) if summary else ""
    if len(markdown) < _MIN_ARTICLE_CHARS:
        markdown = _to_markdown(html, whole_page=True) or markdown
    return Extracted(title, markdown)
