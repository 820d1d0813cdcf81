"""An httpx transport that checks the resolved address and connects to exactly that address.

The DNS-rebinding window: a guard that resolves a name, checks the answer and then lets the
HTTP client resolve the name *again* to connect can be fooled by a name server that answers
with a public address the first time and ``127.0.0.1`` the second. :class:`GuardedTransport`
leaves no second lookup: for each request it

1. resolves the host once with the configured :class:`~helikon.tools.web.resolve.Resolver`
   (an IP literal is used as is),
2. checks *every* returned address against the
   :class:`~helikon.tools.web.ssrf.AddressPolicy` and refuses the request if any of them is
   blocked (a mixed answer is treated as hostile),
3. rewrites the request to the checked IP literal, keeping the ``Host`` header and setting
   the TLS SNI / certificate host name (httpcore's ``sni_hostname`` extension) to the
   original name, and hands it to the inner transport, which therefore never resolves
   anything; if the connection to one checked address fails the next one is tried.

Connections are not kept alive (the default inner transport has no keep-alive pool), so a
connection verified for one host name is never reused for another name that happens to
resolve to the same address, and every redirect hop goes through the three steps again.

Example:
    >>> from helikon.tools.web.ssrf import AddressPolicy
    >>> t = GuardedTransport(policy=AddressPolicy())
    >>> type(t).__name__
    'GuardedTransport'
"""

from __future__ import annotations

import ssl

import httpx

from helikon.errors import ToolDenied, ToolOther
from helikon.tools.web.resolve import Resolver, SystemResolver
from helikon.tools.web.ssrf import AddressPolicy, IPAddress, parse_ip

__all__ = ["GuardedTransport", "default_inner_transport"]


def default_inner_transport(
    ssl_context: ssl.SSLContext | None = None,
) -> httpx.AsyncHTTPTransport:
    """An HTTP/1.1 transport without keep-alive or retries (one connection per request).

    Args:
        ssl_context: the TLS context (default: httpx's, with certificate verification).
    """
    return httpx.AsyncHTTPTransport(
        verify=ssl_context if ssl_context is not None else True,
        limits=httpx.Limits(max_keepalive_connections=0),
        retries=0,
        http2=False,
    )


def _default_port(url: httpx.URL) -> int:
    if url.port is not None:
        return url.port
    return 443 if url.scheme == "https" else 80


class GuardedTransport(httpx.AsyncBaseTransport):
    """Resolve once, check every address, connect to a checked address.

    Args:
        policy: the address policy; ``None`` turns the address check (and the pinning) off,
            requests then go straight to the inner transport.
        resolver: how host names are resolved (default: the system resolver).
        inner: the transport that sends the pinned request (default:
            :func:`default_inner_transport`). It must not resolve names through a proxy
            of its own choosing and should not pool connections across host names.
        close_inner: close ``inner`` when this transport is closed (default ``True``; pass
            ``False`` when ``inner`` is shared).
    """

    def __init__(
        self,
        *,
        policy: AddressPolicy | None,
        resolver: Resolver | None = None,
        inner: httpx.AsyncBaseTransport | None = None,
        close_inner: bool = True,
    ) -> None:
        self._policy = policy
        self._resolver: Resolver = resolver if resolver is not None else SystemResolver()
        self._inner = inner if inner is not None else default_inner_transport()
        self._close_inner = close_inner

    async def _addresses(self, url: httpx.URL, host: str) -> list[IPAddress]:
        literal = parse_ip(host)
        if literal is not None:
            return [literal]
        try:
            found = await self._resolver.resolve(host, _default_port(url))
        except OSError as exc:
            raise ToolOther(f"could not resolve host {host!r} for {url}: {exc}") from None
        if not found:
            raise ToolOther(f"host {host!r} resolved to no address (fetching {url})")
        return list(found)

    def _check(self, url: httpx.URL, host: str, addresses: list[IPAddress]) -> None:
        assert self._policy is not None
        for ip in addresses:
            reason = self._policy.blocked_reason(ip)
            if reason is None:
                continue
            if parse_ip(host) is not None:
                raise ToolDenied(f"{url} targets {ip}, a {reason} (SSRF guard)")
            raise ToolDenied(f"{url}: host {host!r} resolved to {ip}, a {reason} (SSRF guard)")

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Check and pin ``request`` to a resolved address, then send it.

        Raises:
            ToolDenied: an address the host resolved to (or the literal) is blocked.
            ToolOther: the host does not resolve.
            httpx.HTTPError: the inner transport failed for every checked address.
        """
        if self._policy is None:
            return await self._inner.handle_async_request(request)
        url = request.url
        host = url.raw_host.decode("ascii")
        addresses = await self._addresses(url, host)
        self._check(url, host, addresses)
        extensions = dict(request.extensions)
        if url.scheme == "https" and parse_ip(host) is None:
            extensions["sni_hostname"] = host
        last: httpx.ConnectError | None = None
        for ip in addresses:
            pinned = httpx.Request(
                request.method,
                url.copy_with(host=str(ip)),
                headers=request.headers,
                stream=request.stream,
                extensions=extensions,
            )
            try:
                return await self._inner.handle_async_request(pinned)
            except httpx.ConnectError as exc:
                last = exc
        assert last is not None
        raise last

    async def aclose(self) -> None:
        """Close the inner transport when this transport owns it."""
        if self._close_inner:
            await self._inner.aclose()
