""":class:`NetworkPolicy`: which destinations a sandboxed command may reach through the proxy.

The policy is applied twice per connection by :class:`helikon.tools.egress.EgressProxy`:

1. :meth:`NetworkPolicy.check_target` on the name (or literal) the client asked for, before
   anything is resolved: the deny list wins, then the allow list; a name on neither list is
   refused (egress is deny-by-default). A literal IP address (``10.0.0.1``, ``[::1]``, and
   the legacy numeric spellings ``127.1``, ``2130706433``, ``0x7f.0.0.1``) is refused unless
   it lies in ``allow_addresses``.
2. :meth:`NetworkPolicy.check_address` on every address the proxy's resolver returned for an
   allowed name: private ranges, loopback, link-local, cloud metadata (``169.254.169.254``,
   ``fd00:ec2::254``) and every other non-global address are refused unless they lie in
   ``allow_addresses`` (the ranges are those of :mod:`helikon.tools.web.ssrf`). So an
   allowed name that resolves (or is rebound) to an internal address is still refused.

Domain patterns: ``"pypi.org"`` matches that host only; ``"*.pythonhosted.org"`` matches
every subdomain at any depth but not ``pythonhosted.org`` itself; ``"*"`` matches every
name (addresses are still checked). Names compare in IDNA ASCII form, lower case, without a
trailing dot.

Example:
    >>> p = NetworkPolicy(allow_domains=["pypi.org", "*.pythonhosted.org"])
    >>> p.check_target("files.pythonhosted.org", 443).rule
    'allow_domains:*.pythonhosted.org'
    >>> p.check_target("evil.example", 443).verdict
    'deny'
    >>> p.check_address("pypi.org", "169.254.169.254").rule
    'address'
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal

from helikon.errors import ConfigError
from helikon.tools.web.ssrf import AddressPolicy, IPAddress, parse_ip

__all__ = [
    "DEFAULT_MAX_CONNECTIONS_PER_COMMAND",
    "NetworkDecision",
    "NetworkPolicy",
    "literal_ip",
    "normalize_name",
]

_LABELS = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")
_MAX_NAME = 253
_KEYS = (
    "allow_domains",
    "deny_domains",
    "allow_unix_sockets",
    "allow_addresses",
    "allow_ports",
    "max_connections_per_command",
)
#: Connections one command may hold open through the egress proxy at once, by default.
DEFAULT_MAX_CONNECTIONS_PER_COMMAND = 64


def normalize_name(host: str) -> str:
    """``host`` in the form patterns compare against: IDNA ASCII, lower case, no trailing dot.

    Raises:
        ValueError: ``host`` is empty, too long or not a valid DNS name.

    Example:
        >>> normalize_name("PyPI.org.")
        'pypi.org'
    """
    text = host.strip().rstrip(".")
    if not text:
        raise ValueError("empty host name")
    try:
        ascii_name = text.encode("idna").decode("ascii").lower()
    except UnicodeError as exc:
        raise ValueError(f"{host!r} is not a valid host name: {exc}") from None
    if len(ascii_name) > _MAX_NAME or not _LABELS.fullmatch(ascii_name):
        raise ValueError(f"{host!r} is not a valid host name")
    return ascii_name


def literal_ip(host: str) -> IPAddress | None:
    """``host`` as an address when it is any IP spelling a resolver would accept, else ``None``.

    Example:
        >>> literal_ip("2130706433")
        IPv4Address('127.0.0.1')
    """
    ip = parse_ip(host)
    if ip is not None:
        return ip
    text = host.strip().rstrip(".")
    if not text or not all(c in "0123456789abcdefxABCDEFX." for c in text):
        return None
    try:  # inet_aton accepts 127.1, 2130706433, 0x7f.0.0.1, 0177.0.0.1
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class _Pattern:
    source: str
    exact: str | None
    suffix: str | None

    @classmethod
    def parse(cls, source: str, field: str) -> _Pattern:
        if not isinstance(source, str):
            raise ConfigError(f"NetworkPolicy.{field}: {source!r} is not a string")
        text = source.strip()
        if text == "*":
            return cls(source, None, "")
        bare = text[2:] if text.startswith("*.") else text
        if "*" in bare:
            raise ConfigError(
                f"NetworkPolicy.{field}: {source!r}: '*' is only allowed alone or as a "
                "leading '*.' (e.g. '*.pythonhosted.org')"
            )
        if literal_ip(bare) is not None:
            raise ConfigError(
                f"NetworkPolicy.{field}: {source!r} is an IP address; list addresses in "
                "allow_addresses (CIDR, e.g. '127.0.0.1/32')"
            )
        try:
            name = normalize_name(bare)
        except ValueError as exc:
            raise ConfigError(f"NetworkPolicy.{field}: {exc}") from None
        if text.startswith("*."):
            return cls(source, None, "." + name)
        return cls(source, name, None)

    def matches(self, name: str) -> bool:
        if self.exact is not None:
            return name == self.exact
        return self.suffix is not None and name.endswith(self.suffix)


@dataclass(frozen=True, slots=True)
class NetworkDecision:
    """One verdict of the policy.

    Attributes:
        verdict: ``"allow"`` or ``"deny"``.
        rule: what decided, e.g. ``"allow_domains:pypi.org"``, ``"deny_domains:*.evil.com"``,
            ``"not_allowed"`` (on no allow list), ``"ip_literal"``, ``"address"`` (a
            resolved address in a refused range), ``"allow_addresses:127.0.0.1/32"``,
            ``"invalid_name"``, ``"port"``.
        reason: the sentence shown in events and proxy error replies.
    """

    verdict: Literal["allow", "deny"]
    rule: str
    reason: str

    @property
    def allowed(self) -> bool:
        """``verdict == "allow"``."""
        return self.verdict == "allow"


def _strings(items: Iterable[str] | None, field: str) -> tuple[str, ...]:
    if items is None:
        return ()
    if isinstance(items, str):
        raise ConfigError(f"NetworkPolicy.{field} must be a list, not the string {items!r}")
    if isinstance(items, Mapping) or not isinstance(items, Iterable):
        raise ConfigError(
            f"NetworkPolicy.{field} must be a list of strings, got {type(items).__name__}"
        )
    values = tuple(items)
    for value in values:
        if not isinstance(value, str):
            raise ConfigError(f"NetworkPolicy.{field}: {value!r} is not a string")
    return values


class NetworkPolicy:
    """Egress by domain for the OS sandbox: names allowed, names denied, addresses allowed.

    Args:
        allow_domains: host patterns the command may reach (``"pypi.org"``,
            ``"*.pythonhosted.org"``, ``"*"``). Empty: no name is reachable.
        deny_domains: host patterns refused even when an allow pattern matches.
        allow_unix_sockets: absolute paths of unix sockets the command may connect to
            (e.g. ``/var/run/docker.sock``); see the sandbox guide for what the kernel
            enforces about them.
        allow_addresses: CIDR ranges that may be reached although they are literal,
            private, loopback or link-local (e.g. ``["127.0.0.1/32"]`` for a local index).
        allow_ports: if given, the only destination ports allowed (e.g. ``[80, 443]``).
        max_connections_per_command: connections one command may hold open through the
            proxy at once (default 64; the proxy serves 256 in all), so one command cannot
            starve another; one more is refused with rule ``connection_limit``.

    Raises:
        ConfigError: a malformed pattern, path, range or port, naming the field.
    """

    __slots__ = (
        "_addresses",
        "_allow",
        "_deny",
        "allow_addresses",
        "allow_domains",
        "allow_ports",
        "allow_unix_sockets",
        "deny_domains",
        "max_connections_per_command",
    )

    def __init__(
        self,
        *,
        allow_domains: Iterable[str] | None = None,
        deny_domains: Iterable[str] | None = None,
        allow_unix_sockets: Iterable[str] | None = None,
        allow_addresses: Iterable[str] | None = None,
        allow_ports: Iterable[int] | None = None,
        max_connections_per_command: int = DEFAULT_MAX_CONNECTIONS_PER_COMMAND,
    ) -> None:
        per = max_connections_per_command
        if isinstance(per, bool) or not isinstance(per, int) or not 0 < per <= 256:
            raise ConfigError(
                f"NetworkPolicy.max_connections_per_command: {per!r} is not an int from 1 "
                "to 256 (the proxy's total)"
            )
        self.max_connections_per_command = per
        self.allow_domains = _strings(allow_domains, "allow_domains")
        self.deny_domains = _strings(deny_domains, "deny_domains")
        self._allow = tuple(_Pattern.parse(p, "allow_domains") for p in self.allow_domains)
        self._deny = tuple(_Pattern.parse(p, "deny_domains") for p in self.deny_domains)
        sockets = _strings(allow_unix_sockets, "allow_unix_sockets")
        for path in sockets:
            if not isinstance(path, str) or not PurePosixPath(path).is_absolute():
                raise ConfigError(
                    f"NetworkPolicy.allow_unix_sockets: {path!r} is not an absolute path"
                )
            if "\x00" in path:
                raise ConfigError("NetworkPolicy.allow_unix_sockets: a path contains NUL")
        self.allow_unix_sockets = sockets
        self.allow_addresses = _strings(allow_addresses, "allow_addresses")
        try:
            self._addresses = AddressPolicy(self.allow_addresses)
        except ConfigError as exc:
            raise ConfigError(
                f"NetworkPolicy.allow_addresses: {str(exc).split(': ', 1)[-1]}"
            ) from None
        ports: tuple[int, ...] | None = None
        if allow_ports is not None:
            if isinstance(allow_ports, str | Mapping) or not isinstance(allow_ports, Iterable):
                raise ConfigError(
                    "NetworkPolicy.allow_ports must be a list of ports (1-65535), got "
                    f"{type(allow_ports).__name__}"
                )
            ports = tuple(allow_ports)
            for port in ports:
                if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
                    raise ConfigError(
                        f"NetworkPolicy.allow_ports: {port!r} is not a port (1-65535)"
                    )
        self.allow_ports = ports

    def _address_allowed(self, ip: IPAddress) -> str | None:
        """The ``allow_addresses`` range holding ``ip``, if any."""
        if not self._addresses.is_exempt(ip):
            return None
        bare = parse_ip(str(ip).split("%", 1)[0]) or ip
        nets = self._addresses.allow_networks
        return next((str(n) for n in nets if n.version == bare.version and bare in n), None)

    def check_target(self, host: str, port: int) -> NetworkDecision:
        """The verdict on a destination as the client named it, before resolution.

        Args:
            host: a DNS name or an IP literal (brackets allowed).
            port: the destination TCP port.
        """
        if self.allow_ports is not None and port not in self.allow_ports:
            return NetworkDecision("deny", "port", f"port {port} is not in allow_ports")
        if not 0 < port < 65536:
            return NetworkDecision("deny", "port", f"port {port} is not a valid port")
        ip = literal_ip(host)
        if ip is not None:
            net = self._address_allowed(ip)
            if net is not None:
                return NetworkDecision(
                    "allow", f"allow_addresses:{net}", f"{ip} is in allow_addresses ({net})"
                )
            kind = self._addresses.blocked_reason(ip)
            what = f" ({kind})" if kind else ""
            return NetworkDecision(
                "deny",
                "ip_literal",
                f"{host} is a literal IP address{what}; only names are resolved through the "
                "proxy unless the address is in allow_addresses",
            )
        try:
            name = normalize_name(host)
        except ValueError as exc:
            return NetworkDecision("deny", "invalid_name", str(exc))
        lists = (("deny", "deny_domains", self._deny), ("allow", "allow_domains", self._allow))
        for verdict, field, patterns in lists:
            for pattern in patterns:
                if pattern.matches(name):
                    return NetworkDecision(
                        "deny" if verdict == "deny" else "allow",
                        f"{field}:{pattern.source}",
                        f"{name} matches {field} entry {pattern.source!r}",
                    )
        return NetworkDecision(
            "deny", "not_allowed", f"{name} is not in allow_domains {list(self.allow_domains)}"
        )

    def check_address(self, host: str, ip: IPAddress | str) -> NetworkDecision:
        """The verdict on one address the proxy resolved ``host`` to.

        A string that is not an IP literal is refused (rule ``"address"``).
        """
        parsed = parse_ip(ip) if isinstance(ip, str) else ip
        if parsed is None:
            return NetworkDecision("deny", "address", f"{host} resolved to {ip!r}, not an IP")
        ip = parsed
        net = self._address_allowed(ip)
        if net is not None:
            return NetworkDecision(
                "allow", f"allow_addresses:{net}", f"{host} resolved to {ip}, in {net}"
            )
        why = self._addresses.blocked_reason(ip)
        if why is not None:
            return NetworkDecision("deny", "address", f"{host} resolved to {ip}, a {why}")
        return NetworkDecision("allow", "address", f"{host} resolved to {ip}, a public address")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "network") -> NetworkPolicy:
        """A policy from plain data (a TOML or JSON table with :meth:`to_dict`'s keys).

        Raises:
            ConfigError: ``data`` is not a table, has an unknown key (named with ``where``
                and the valid keys) or a bad value; every message starts with the field
                as ``where.KEY`` (e.g. ``sandbox.network.allow_ports: 0 is not a port``).

        Example:
            >>> NetworkPolicy.from_dict({"allow_domains": ["pypi.org"]}).allow_domains
            ('pypi.org',)
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where} must be a table, got {type(data).__name__}")
        unknown = sorted(set(data) - set(_KEYS))
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {unknown}; valid keys are {list(_KEYS)}")
        try:
            return cls(**data)
        except ConfigError as exc:
            text = str(exc)
            if text.startswith("NetworkPolicy."):
                text = f"{where}.{text.removeprefix('NetworkPolicy.')}"
            raise ConfigError(text) from None

    def to_dict(self) -> dict[str, list[str] | list[int] | int | None]:
        """The policy as plain data (the sidecar's ``[bash.network]`` shape)."""
        return {
            "allow_domains": list(self.allow_domains),
            "deny_domains": list(self.deny_domains),
            "allow_unix_sockets": list(self.allow_unix_sockets),
            "allow_addresses": list(self.allow_addresses),
            "allow_ports": None if self.allow_ports is None else list(self.allow_ports),
            "max_connections_per_command": self.max_connections_per_command,
        }

    def __repr__(self) -> str:
        parts: Sequence[str] = [
            f"{k}={v!r}"
            for k, v in self.to_dict().items()
            if v not in ([], None)
            and not (
                k == "max_connections_per_command" and v == DEFAULT_MAX_CONNECTIONS_PER_COMMAND
            )
        ]
        return f"NetworkPolicy({', '.join(parts)})"
