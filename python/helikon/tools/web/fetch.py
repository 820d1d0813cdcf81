"""The ``WebFetch`` tool: fetch an http(s) URL, return its main content as Markdown.

Safety first, because the URL comes from a model that may have read a hostile page:

* only ``http`` and ``https`` URLs, on every redirect hop;
* host allow/deny lists (:class:`~helikon.tools.web.hosts.HostRules`) on every hop;
* the SSRF guard (on by default): every host is resolved once, every address is checked
  against :class:`~helikon.tools.web.ssrf.AddressPolicy`, and the connection goes to that
  checked address (:class:`~helikon.tools.web.transport.GuardedTransport`), so neither a
  redirect into a private network nor a DNS-rebinding answer reaches an internal service;
* redirects are followed by this module, one hop at a time (``max_redirects``);
* no proxy from the environment (``HTTP_PROXY`` would resolve names behind the guard's back);
* a size cap (the body is streamed and reading stops at ``max_bytes``), a wall-clock cap
  (``timeout`` for all hops and the body) and the run's cancellation token.

Refusals raise :class:`~helikon.errors.ToolDenied` naming the URL, the host or the address,
and the reason; network failures, HTTP errors and non-text bodies raise
:class:`~helikon.errors.ToolOther`. HTML is reduced to its main article
(:func:`~helikon.tools.web.extract.html_to_markdown`); other text is passed through.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections.abc import Iterable, Sequence
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field

from helikon._version import __version__
from helikon.core.context import ToolContext
from helikon.core.items import TextPart
from helikon.core.tool import ToolEffect, ToolOutput
from helikon.core.tool_args import schema_of, validate_args
from helikon.errors import ConfigError, InvalidArgs, ToolDenied, ToolOther
from helikon.redaction import CUT_GUARD, process_redactor
from helikon.tools.web._cancel import until_cancelled
from helikon.tools.web.extract import html_to_markdown
from helikon.tools.web.hosts import HostRules
from helikon.tools.web.page import FetchedPage
from helikon.tools.web.resolve import Resolver
from helikon.tools.web.ssrf import AddressPolicy, IPNetwork
from helikon.tools.web.transport import GuardedTransport, default_inner_transport

__all__ = ["DEFAULT_USER_AGENT", "WebFetchTool"]

DEFAULT_USER_AGENT = f"Mozilla/5.0 (compatible; helikon-WebFetch/{__version__})"
_REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
_ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5"


class _FetchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        min_length=1,
        max_length=8192,
        description="The http:// or https:// URL to fetch.",
    )
    raw: bool = Field(
        default=False,
        description="Return the body as received (HTML source included) instead of the "
        "extracted main article.",
    )
    start_char: int = Field(
        default=0,
        ge=0,
        description="Character offset into the content, to continue a result that was cut.",
    )


@functools.cache
def _default_tls() -> ssl.SSLContext:
    """The verifying TLS context, built once (loading the CA certificates is slow)."""
    return httpx.create_ssl_context()


def _positive(value: float, field: str) -> None:
    if not value > 0:
        raise ConfigError(f"WebFetchTool.{field} must be > 0, got {value!r}")


class WebFetchTool:
    """Fetch a web page and return its main content as Markdown (``"WebFetch"``, side effect).

    Args:
        allow_hosts: if given, only these hosts are fetched (exact names or ``*.suffix``).
        deny_hosts: hosts never fetched (checked before ``allow_hosts``).
        ssrf_guard: refuse private, loopback, link-local, CGNAT, ULA and other internal
            addresses, checked on the resolved address at connect time (default ``True``).
            Turning it off is only sensible behind an egress proxy that enforces the same.
        allow_private_networks: CIDR ranges exempt from the SSRF guard, e.g.
            ``["127.0.0.1/32"]`` for a local test server or an intranet range the agent is
            meant to read. Everything else stays blocked.
        max_bytes: body bytes read at most; the rest is not downloaded (default 5 MiB).
        timeout: seconds for the whole fetch, redirects and body included (default 30).
        max_redirects: redirect hops followed (default 5; 0 refuses every redirect).
        user_agent: the ``User-Agent`` header.
        max_output_chars: characters of content returned per call; longer content is cut
            and the result says how to continue with ``start_char`` (default 100000).
        resolver: resolves host names (default: the system resolver).
        transport: the httpx transport the checked, address-pinned requests go through
            (default: HTTP/1.1 without keep-alive). Shared: it is not closed by the tool.

    Raises:
        ConfigError: a cap is not positive, a host pattern or network is malformed, or
            ``allow_private_networks`` is given with ``ssrf_guard=False``.

    Example:
        >>> tool = WebFetchTool(allow_hosts=["*.python.org"], max_bytes=1_000_000)
        >>> tool.name, tool.effect.value
        ('WebFetch', 'side_effect')
        >>> sorted(tool.parameters["properties"])
        ['raw', 'start_char', 'url']
    """

    name = "WebFetch"
    effect = ToolEffect.SIDE_EFFECT

    def __init__(
        self,
        *,
        allow_hosts: Iterable[str] | None = None,
        deny_hosts: Iterable[str] | None = None,
        ssrf_guard: bool = True,
        allow_private_networks: Sequence[str | IPNetwork] = (),
        max_bytes: int = 5 * 1024 * 1024,
        timeout: float = 30.0,
        max_redirects: int = 5,
        user_agent: str = DEFAULT_USER_AGENT,
        max_output_chars: int = 100_000,
        resolver: Resolver | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        _positive(max_bytes, "max_bytes")
        _positive(timeout, "timeout")
        _positive(max_output_chars, "max_output_chars")
        if max_redirects < 0:
            raise ConfigError(f"WebFetchTool.max_redirects must be >= 0, got {max_redirects}")
        if not ssrf_guard and allow_private_networks:
            raise ConfigError(
                "WebFetchTool: allow_private_networks has no effect with ssrf_guard=False; "
                "keep the guard on and list the networks to exempt"
            )
        self.hosts = HostRules(allow=allow_hosts, deny=deny_hosts)
        self.policy: AddressPolicy | None = (
            AddressPolicy(allow_private_networks) if ssrf_guard else None
        )
        self.max_bytes = int(max_bytes)
        self.timeout = float(timeout)
        self.max_redirects = int(max_redirects)
        self.user_agent = user_agent
        self.max_output_chars = int(max_output_chars)
        self._resolver = resolver
        self._transport = transport
        allowed = list(allow_hosts) if allow_hosts is not None else []
        self.description = (
            "Fetch a web page (http/https) and return its main content as Markdown: title, "
            "headings, paragraphs, lists and links, without navigation or footers. Plain "
            "text and JSON come back as is. Set raw=true for the unprocessed body. Long "
            "content is cut; the result says which start_char continues it."
            + (" Addresses on private or internal networks are refused." if ssrf_guard else "")
            + (f" Only these hosts may be fetched: {', '.join(allowed)}." if allowed else "")
        )
        self.parameters: dict[str, Any] = schema_of(_FetchArgs)

    # ------------------------------------------------------------------ URL checks

    def _parse(self, text: str) -> httpx.URL:
        try:
            url = httpx.URL(text.strip())
        except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
            raise InvalidArgs([f"url: not a valid URL ({exc})"]) from None
        if not url.scheme:
            raise InvalidArgs([f"url: {text!r} has no scheme; use http:// or https://"])
        return url

    def _check_url(self, url: httpx.URL) -> None:
        if url.scheme not in ("http", "https"):
            raise ToolDenied(f"{url}: scheme {url.scheme!r} is not allowed (only http, https)")
        if not url.raw_host:
            raise ToolDenied(f"{url}: the URL has no host")
        try:
            denial = self.hosts.denial(url.raw_host.decode("ascii"))
        except ConfigError as exc:
            raise ToolDenied(f"{url}: invalid host ({exc})") from None
        if denial is not None:
            raise ToolDenied(f"{url}: {denial}")

    # ------------------------------------------------------------------ fetching

    async def fetch(self, url: str) -> FetchedPage:
        """Fetch ``url`` under every check and cap; no extraction.

        Args:
            url: an http(s) URL.

        Returns:
            The final response as a :class:`~helikon.tools.web.page.FetchedPage`.

        Raises:
            InvalidArgs: ``url`` does not parse.
            ToolDenied: a scheme, host or address check refused a hop.
            ToolOther: timeout, network failure, too many redirects or an HTTP error status.
        """
        current = self._parse(url)
        self._check_url(current)
        transport = GuardedTransport(
            policy=self.policy,
            resolver=self._resolver,
            inner=self._transport or default_inner_transport(_default_tls()),
            close_inner=self._transport is None,
        )
        headers = {"User-Agent": self.user_agent, "Accept": _ACCEPT}
        try:
            async with (
                asyncio.timeout(self.timeout),
                httpx.AsyncClient(
                    transport=transport,
                    follow_redirects=False,
                    trust_env=False,
                    timeout=self.timeout,
                    headers=headers,
                ) as client,
            ):
                return await self._follow(client, url, current)
        except TimeoutError:
            raise ToolOther(f"timed out after {self.timeout:g}s fetching {url}") from None
        except httpx.TimeoutException:
            raise ToolOther(f"timed out after {self.timeout:g}s fetching {url}") from None
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise ToolOther(f"fetching {url} failed: {type(exc).__name__}: {exc}") from None

    async def _follow(self, client: httpx.AsyncClient, asked: str, url: httpx.URL) -> FetchedPage:
        redirects: list[str] = []
        for _hop in range(self.max_redirects + 1):
            self._check_url(url)
            async with client.stream("GET", url) as resp:
                location = resp.headers.get("location")
                if resp.status_code in _REDIRECT_CODES and location:
                    try:
                        target = url.join(location.strip())
                    except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
                        raise ToolOther(f"{url} redirected to an invalid URL: {exc}") from None
                    redirects.append(str(url))
                    url = target.copy_with(fragment=None)
                    continue
                if not 200 <= resp.status_code < 300:
                    raise ToolOther(
                        f"{url} answered HTTP {resp.status_code} {resp.reason_phrase}".rstrip()
                    )
                body, truncated = await self._read_capped(resp)
                return FetchedPage(
                    url=asked,
                    final_url=str(url),
                    status=resp.status_code,
                    content_type=resp.headers.get("content-type", ""),
                    body=body,
                    truncated=truncated,
                    redirects=tuple(redirects),
                )
        raise ToolOther(
            f"too many redirects fetching {asked}: more than {self.max_redirects} "
            f"(last hop: {redirects[-1] if redirects else asked})"
        )

    async def _read_capped(self, resp: httpx.Response) -> tuple[bytes, bool]:
        chunks: list[bytes] = []
        size = 0
        async for chunk in resp.aiter_bytes():
            room = self.max_bytes - size
            if len(chunk) > room:
                chunks.append(chunk[:room])
                return b"".join(chunks), True
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks), False

    # ------------------------------------------------------------------ rendering

    async def read(self, url: str, *, raw: bool = False) -> tuple[FetchedPage, str | None, str]:
        """Fetch ``url`` and turn the body into text: ``(page, title, content)``.

        HTML becomes the extracted article in Markdown (or the HTML source with ``raw``);
        other text is returned as is.

        Raises:
            ToolDenied: as :meth:`fetch`.
            ToolOther: as :meth:`fetch`, or the body is not text (an image, a PDF, ...).
        """
        page = await self.fetch(url)
        kind = page.kind
        if kind == "binary":
            raise ToolOther(
                f"{page.final_url} returned {page.mime or 'an unknown type'}, which is not "
                "text; WebFetch reads HTML and text only"
            )
        text = page.text()
        if kind == "html" and not raw:
            extracted = await asyncio.to_thread(html_to_markdown, text, url=page.final_url)
            return page, extracted.title, extracted.markdown
        return page, None, text

    def _render(
        self, page: FetchedPage, title: str | None, content: str, start: int, *, raw: bool
    ) -> tuple[str, dict[str, Any]]:
        if start > 0 or len(content) > self.max_output_chars:
            # Shown in pieces: redacted whole before it is cut (attack R9: a secret across a
            # cut keeps a piece too short to be recognised), offsets count the redacted text.
            content = process_redactor().redact(content)
        total = len(content)
        end = min(total, start + self.max_output_chars)
        if end < total:  # the cut falls after a newline or blank near the limit
            shown = process_redactor().redact_head(
                content[start : end + CUT_GUARD], self.max_output_chars
            )
            end = start + max(1, len(shown))
        lines = [f"URL: {page.final_url}"]
        if page.redirects:
            lines.append(f"Redirected from: {' -> '.join(page.redirects)}")
        if title:
            lines.append(f"Title: {title}")
        if page.kind != "html" or raw:
            lines.append(f"Content-Type: {page.mime or 'unknown'}")
        if page.truncated:
            lines.append(
                f"Note: the page is larger than {self.max_bytes} bytes; only the first "
                f"{self.max_bytes} bytes were read."
            )
        if start >= total and total:
            lines.append(f"Note: start_char={start} is past the end ({total} characters).")
        body = content[start:end] if start < total else ""
        text = "\n".join(lines) + "\n\n" + body
        if end < total:
            text += (
                f"\n\n[Cut: characters {start}-{end} of {total} shown; call WebFetch again "
                f"with start_char={end} for more.]"
            )
        value = {
            "url": page.url,
            "final_url": page.final_url,
            "status": page.status,
            "content_type": page.mime,
            "title": title,
            "truncated": page.truncated,
            "total_chars": total,
            "start_char": min(start, total),
            "end_char": end if start < total else total,
        }
        return text, value

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        """Validate ``args``, fetch, extract and return the page as text.

        Raises:
            InvalidArgs: the arguments do not match the schema.
            ToolDenied: a scheme, host or address check refused the URL or a redirect hop.
            ToolOther: network failure, timeout, cancellation, HTTP error or non-text body.
        """
        a = validate_args(_FetchArgs, args)
        page, title, content = await until_cancelled(
            self.read(a.url, raw=a.raw), ctx.cancel, f"WebFetch of {a.url}"
        )
        text, value = self._render(page, title, content, a.start_char, raw=a.raw)
        return ToolOutput([TextPart(text=text)], value)

    def __repr__(self) -> str:
        guard = "on" if self.policy is not None else "off"
        return f"<WebFetchTool ssrf_guard={guard} max_bytes={self.max_bytes}>"
