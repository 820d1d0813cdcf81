"""Which IP addresses ``WebFetch`` may connect to: the SSRF address policy.

A model that can make the host fetch arbitrary URLs can be steered (by a prompt injection in
a page it read) into fetching internal services: the cloud metadata endpoint, an admin panel
on a private network, a database listening on loopback. :class:`AddressPolicy` decides, for one
resolved address, whether a connection may be made, and says why not.

Blocked ranges (each with the reason the denial message shows):

* IPv4: ``0.0.0.0/8`` (unspecified, "this network"), ``10.0.0.0/8``, ``172.16.0.0/12`` and
  ``192.168.0.0/16`` (RFC 1918), ``100.64.0.0/10`` (CGNAT), ``127.0.0.0/8`` (loopback),
  ``169.254.0.0/16`` (link-local; ``169.254.169.254`` is named as the cloud metadata
  endpoint), ``192.0.0.0/24`` (IETF protocol assignments; holds Oracle's metadata address),
  the documentation, benchmarking and 6to4-relay ranges, ``224.0.0.0/4`` (multicast),
  ``240.0.0.0/4`` (reserved) and ``255.255.255.255`` (broadcast).
* IPv6: ``::`` (unspecified), ``::1`` (loopback), ``::ffff:0:0/96`` (IPv4-mapped) and
  ``::/96`` (IPv4-compatible) whatever IPv4 address they carry, ``64:ff9b:1::/48`` (local
  NAT64), ``100::/64`` (discard), Teredo ``2001::/32``, ``2001:db8::/32`` (documentation),
  ``fc00::/7`` (ULA; ``fd00:ec2::254`` is named as the AWS metadata endpoint), ``fe80::/10``
  (link-local), ``fec0::/10`` (site-local) and ``ff00::/8`` (multicast). NAT64
  (``64:ff9b::/96``) and 6to4 (``2002::/16``) addresses are judged by the IPv4 address they
  embed, so a public host reached through DNS64 still works.
* Anything else Python's :mod:`ipaddress` does not consider globally routable.

``allow_networks`` exempts chosen ranges (e.g. ``["127.0.0.1/32"]`` for a test server or
``["10.20.0.0/16"]`` for an intranet the agent is meant to read). An exemption matches the
address exactly as resolved: allowing ``127.0.0.1/32`` does not allow ``::ffff:127.0.0.1``.

The policy is only half of the guard: it must be applied to the address the socket actually
connects to, after resolution, on every redirect hop. ``helikon.tools.web.transport`` does
that.

Example:
    >>> policy = AddressPolicy()
    >>> policy.blocked_reason("169.254.169.254")
    'link-local address 169.254.0.0/16 (the cloud metadata endpoint)'
    >>> policy.blocked_reason("93.184.216.34") is None
    True
    >>> AddressPolicy(allow_networks=["127.0.0.1/32"]).blocked_reason("127.0.0.1") is None
    True
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import TypeAlias

from helikon.errors import ConfigError

__all__ = ["AddressPolicy", "IPAddress", "IPNetwork", "parse_ip"]

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network

_N4 = ipaddress.IPv4Network
_N6 = ipaddress.IPv6Network

#: Specific addresses named in denials because they are the classic SSRF targets.
_NAMED: dict[IPAddress, str] = {
    ipaddress.ip_address("169.254.169.254"): "the cloud metadata endpoint",
    ipaddress.ip_address("fd00:ec2::254"): "the AWS IPv6 metadata endpoint",
    ipaddress.ip_address("192.0.0.192"): "the Oracle Cloud metadata endpoint",
    ipaddress.ip_address("100.100.100.200"): "the Alibaba Cloud metadata endpoint",
    ipaddress.ip_address("0.0.0.0"): "the unspecified address",
    ipaddress.ip_address("255.255.255.255"): "the broadcast address",
}

_BLOCKED_V4: tuple[tuple[_N4, str], ...] = (
    (_N4("0.0.0.0/8"), "unspecified / 'this network' address"),
    (_N4("10.0.0.0/8"), "private address (RFC 1918)"),
    (_N4("100.64.0.0/10"), "carrier-grade NAT address (RFC 6598)"),
    (_N4("127.0.0.0/8"), "loopback address"),
    (_N4("169.254.0.0/16"), "link-local address"),
    (_N4("172.16.0.0/12"), "private address (RFC 1918)"),
    (_N4("192.0.0.0/24"), "IETF protocol assignment address"),
    (_N4("192.0.2.0/24"), "documentation address"),
    (_N4("192.88.99.0/24"), "6to4 relay anycast address"),
    (_N4("192.168.0.0/16"), "private address (RFC 1918)"),
    (_N4("198.18.0.0/15"), "benchmarking address"),
    (_N4("198.51.100.0/24"), "documentation address"),
    (_N4("203.0.113.0/24"), "documentation address"),
    (_N4("224.0.0.0/4"), "multicast address"),
    (_N4("240.0.0.0/4"), "reserved address"),
)

_BLOCKED_V6: tuple[tuple[_N6, str], ...] = (
    (_N6("::/128"), "unspecified address"),
    (_N6("::1/128"), "loopback address"),
    (_N6("::ffff:0:0/96"), "IPv4-mapped IPv6 address"),
    (_N6("::/96"), "IPv4-compatible IPv6 address"),
    (_N6("64:ff9b:1::/48"), "local-use NAT64 address"),
    (_N6("100::/64"), "discard-only address"),
    (_N6("2001::/32"), "Teredo tunnel address"),
    (_N6("2001:db8::/32"), "documentation address"),
    (_N6("fc00::/7"), "unique local address (ULA)"),
    (_N6("fe80::/10"), "link-local address"),
    (_N6("fec0::/10"), "site-local address"),
    (_N6("ff00::/8"), "multicast address"),
)

_NAT64 = _N6("64:ff9b::/96")
_SIX_TO_FOUR = _N6("2002::/16")


def parse_ip(text: str) -> IPAddress | None:
    """``text`` as an IP address (brackets and an IPv6 zone id allowed), else ``None``.

    Only canonical literals count: ``"127.1"`` or ``"2130706433"`` are host names here (the
    resolver turns them into addresses, which are then checked).

    Example:
        >>> parse_ip("[::1]")
        IPv6Address('::1')
        >>> parse_ip("example.com") is None
        True
    """
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _strip_scope(ip: IPAddress) -> IPAddress:
    if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id:
        return ipaddress.IPv6Address(int(ip))
    return ip


def _reason_v4(ip: ipaddress.IPv4Address) -> str | None:
    for net, why in _BLOCKED_V4:
        if ip in net:
            named = _NAMED.get(ip)
            return f"{why} {net}" + (f" ({named})" if named else "")
    if not ip.is_global:
        return "address that is not globally routable"
    return None


def _reason_v6(ip: ipaddress.IPv6Address) -> str | None:
    for net, why in _BLOCKED_V6:
        if ip in net:
            named = _NAMED.get(ip)
            return f"{why} {net}" + (f" ({named})" if named else "")
    embedded: ipaddress.IPv4Address | None = None
    if ip in _NAT64:
        embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        kind = "NAT64"
    elif ip in _SIX_TO_FOUR:
        embedded = ip.sixtofour
        kind = "6to4"
    if embedded is not None:
        inner = _reason_v4(embedded)
        return f"{kind} address embedding {embedded}, a {inner}" if inner else None
    if not ip.is_global:
        return "address that is not globally routable"
    return None


def _to_network(item: str | IPNetwork) -> IPNetwork:
    if isinstance(item, ipaddress.IPv4Network | ipaddress.IPv6Network):
        return item
    try:
        return ipaddress.ip_network(item, strict=True)
    except ValueError as exc:
        raise ConfigError(
            f"allow_private_networks: {item!r} is not a network in CIDR form "
            f"(e.g. '127.0.0.1/32' or '10.0.0.0/8'): {exc}"
        ) from None


class AddressPolicy:
    """Decides whether a connection to one resolved IP address is allowed.

    Args:
        allow_networks: ranges exempt from the block list (CIDR strings or network objects).

    Raises:
        ConfigError: an entry of ``allow_networks`` is not a CIDR network.

    Example:
        >>> AddressPolicy().blocked_reason("::ffff:10.0.0.1")
        'IPv4-mapped IPv6 address ::ffff:0:0/96'
        >>> AddressPolicy().blocked_reason("100.64.0.1")
        'carrier-grade NAT address (RFC 6598) 100.64.0.0/10'
    """

    __slots__ = ("allow_networks",)

    def __init__(self, allow_networks: Iterable[str | IPNetwork] = ()) -> None:
        if isinstance(allow_networks, str):
            raise ConfigError(
                "allow_private_networks must be a list of CIDR strings, e.g. ['127.0.0.1/32'], "
                f"not the string {allow_networks!r}"
            )
        self.allow_networks: tuple[IPNetwork, ...] = tuple(_to_network(n) for n in allow_networks)

    def is_exempt(self, ip: IPAddress) -> bool:
        """True when ``ip`` lies in one of the ``allow_networks``."""
        bare = _strip_scope(ip)
        return any(bare.version == net.version and bare in net for net in self.allow_networks)

    def blocked_reason(self, ip: IPAddress | str) -> str | None:
        """Why a connection to ``ip`` is refused, or ``None`` when it is allowed.

        Args:
            ip: an address object or literal.

        Raises:
            ConfigError: ``ip`` is a string that is not an IP literal.
        """
        if isinstance(ip, str):
            parsed = parse_ip(ip)
            if parsed is None:
                raise ConfigError(f"{ip!r} is not an IP address")
            ip = parsed
        if self.is_exempt(ip):
            return None
        bare = _strip_scope(ip)
        if isinstance(bare, ipaddress.IPv4Address):
            return _reason_v4(bare)
        return _reason_v6(bare)
