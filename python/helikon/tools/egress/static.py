""":class:`StaticResolver`: names resolved from a fixed table, nothing else."""

from __future__ import annotations

import socket
from collections.abc import Iterable, Mapping

from helikon.errors import ConfigError
from helikon.tools.egress.policy import normalize_name
from helikon.tools.web.ssrf import IPAddress, parse_ip

__all__ = ["StaticResolver"]


class StaticResolver:
    """Resolves only the names in ``table`` (case-insensitive, trailing dot ignored).

    Args:
        table: name to one address or a list of addresses.

    Raises:
        ConfigError: a name is invalid or an address is not an IP literal.

    Example:
        >>> import asyncio
        >>> r = StaticResolver({"pypi.test": "127.0.0.1"})
        >>> asyncio.run(r.resolve("PYPI.test.", 443))
        [IPv4Address('127.0.0.1')]
    """

    def __init__(self, table: Mapping[str, str | Iterable[str]]) -> None:
        self._table: dict[str, list[IPAddress]] = {}
        for name, value in table.items():
            try:
                key = normalize_name(name)
            except ValueError as exc:
                raise ConfigError(f"StaticResolver: {exc}") from None
            values = [value] if isinstance(value, str) else list(value)
            addresses = []
            for text in values:
                ip = parse_ip(text)
                if ip is None:
                    raise ConfigError(f"StaticResolver: {text!r} for {name!r} is not an IP")
                addresses.append(ip)
            self._table[key] = addresses

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """The table's addresses for ``host``.

        Raises:
            socket.gaierror: the name is not in the table.
        """
        try:
            key = normalize_name(host)
        except ValueError:
            key = ""
        found = self._table.get(key)
        if not found:
            raise socket.gaierror(socket.EAI_NONAME, f"{host!r} is not in the static table")
        return list(found)
