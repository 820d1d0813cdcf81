"""Name resolution for ``WebFetch``: the :class:`Resolver` protocol and the system resolver.

The fetch tool resolves every host itself, exactly once per connection, checks every address
the resolver returned and then connects to one of those checked addresses (see
:mod:`helikon.tools.web.transport`). A custom resolver (a DNS-over-HTTPS client, a fixed
table, a test double) plugs in through the :class:`Resolver` protocol.

Example:
    >>> import asyncio
    >>> asyncio.run(SystemResolver().resolve("127.0.0.1", 80))
    [IPv4Address('127.0.0.1')]
"""

from __future__ import annotations

import asyncio
import socket
from typing import Protocol, runtime_checkable

from helikon.tools.web.ssrf import IPAddress, parse_ip

__all__ = ["Resolver", "SystemResolver"]


@runtime_checkable
class Resolver(Protocol):
    """Turns a host name into the IP addresses to connect to.

    Implementations return every address they would let a client use, in preference order;
    they raise :class:`OSError` (e.g. :class:`socket.gaierror`) when the name does not
    resolve.
    """

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """The addresses of ``host`` (an IDNA ASCII name) for a TCP connection to ``port``."""
        ...


class SystemResolver:
    """The operating system's resolver (``getaddrinfo`` in a worker thread via asyncio).

    Numeric forms that ``getaddrinfo`` accepts (``127.1``, ``2130706433``, ``0x7f.1``) come
    back as the addresses they denote, so they are checked like any other answer.
    """

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """Resolve ``host`` for TCP; duplicates removed, order kept."""
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
        seen: list[IPAddress] = []
        for _family, _type, _proto, _canon, sockaddr in infos:
            ip = parse_ip(str(sockaddr[0]))
            if ip is not None and ip not in seen:
                seen.append(ip)
        return seen
