"""A fetched HTTP response body and how to read it as text (:class:`FetchedPage`)."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

__all__ = ["FetchedPage"]

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/x-sh",
        "application/sql",
        "application/graphql",
        "application/x-ndjson",
        "application/rss+xml",
        "application/atom+xml",
    }
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_HTML_START = re.compile(
    rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name.strip().strip("\"'")).name
    except LookupError:
        return None


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """What :meth:`WebFetchTool.fetch <helikon.tools.web.WebFetchTool.fetch>` returns.

    Attributes:
        url: the URL that was asked for.
        final_url: the URL that answered (after redirects).
        status: the final HTTP status code.
        content_type: the ``Content-Type`` header (``""`` when absent).
        body: the body bytes read (decoded from gzip/deflate), at most ``max_bytes``.
        truncated: the body was longer than ``max_bytes`` and reading stopped there.
        redirects: the URLs that redirected, in order (empty when none did).

    Example:
        >>> page = FetchedPage("http://a/", "http://a/", 200, "text/plain; charset=latin-1",
        ...                    "caf\\xe9".encode("latin-1"))
        >>> page.mime, page.kind, page.text()
        ('text/plain', 'text', 'café')
    """

    url: str
    final_url: str
    status: int
    content_type: str
    body: bytes
    truncated: bool = False
    redirects: tuple[str, ...] = field(default_factory=tuple)

    @property
    def mime(self) -> str:
        """The media type without parameters, lower case (``""`` when absent)."""
        return self.content_type.split(";", 1)[0].strip().lower()

    @property
    def charset(self) -> str | None:
        """The ``charset`` parameter of the content type, if valid."""
        for param in self.content_type.split(";")[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "charset":
                return _codec(value)
        return None

    @property
    def kind(self) -> str:
        """``"html"``, ``"text"`` or ``"binary"``, from the content type (sniffed if absent)."""
        mime = self.mime
        if mime in _HTML_TYPES:
            return "html"
        if mime.startswith("text/") or mime in _TEXT_TYPES:
            return "text"
        if mime.endswith(("+json", "+xml")):
            return "text"
        if mime in ("", "application/octet-stream"):
            head = self.body[:4096]
            if _HTML_START.match(head):
                return "html"
            if b"\x00" not in head and _decodes_as_utf8(head):
                return "text"
        return "binary"

    def text(self) -> str:
        """The body as text: header charset, else an HTML ``<meta charset>``, else UTF-8.

        Undecodable bytes become U+FFFD; a multi-byte character cut by the size cap is
        dropped rather than shown as garbage.
        """
        encoding = self.charset
        if encoding is None and self.kind == "html":
            found = _META_CHARSET.search(self.body[:4096])
            encoding = _codec(found.group(1).decode("ascii", "replace")) if found else None
        text = self.body.decode(encoding or "utf-8", errors="replace")
        if self.truncated and text.endswith("\ufffd"):
            text = text.rstrip("\ufffd")
        return text


def _decodes_as_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(data) - 3  # only a character cut at the end
    return True
