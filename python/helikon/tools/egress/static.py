""":class:`StaticResolver`: names resolved from a fixed table, nothing else."""

from __future__ import annotations

import socket
from collections.abc import Iterable, Mapping

from helikon.errors import ConfigError
from helikon.tools.egress.policy import normalize_name
from helikon.tools.web.resolve import Resolver
from helikon.tools.web.ssrf import IPAddress, parse_ip

__all__ = ["StaticResolver"]


class StaticResolver:
    """Resolves only the names in ``table`` (case-insensitive, trailing dot ignored).

    Args:
        table: name to one address or a list of addresses.
        fallback: resolves the names not in ``table`` (e.g. :class:`SystemResolver`);
            without it they do not resolve.

    Raises:
        ConfigError: a name is invalid or an address is not an IP literal.

    Example:
        >>> import asyncio
        >>> r = StaticResolver({"pypi.test": "127.0.0.1"})
        >>> asyncio.run(r.resolve("PYPI.test.", 443))
        [IPv4Address('127.0.0.1')]
    """

    def __init__(
        self, table: Mapping[str, str | Iterable[str]], *, fallback: Resolver | None = None
    ) -> None:
        self._fallback = fallback
        self._table: dict[str, list[IPAddress]] = {}
        for name, value in table.items():
            try:
                key = normalize_name(name)
            except ValueError as exc:
                raise ConfigError(f"StaticResolver: {exc}") from None
            if not isinstance(value, str) and not isinstance(value, list | tuple):
                raise ConfigError(
                    f"StaticResolver: the address of {name!r} must be an IP or a list of IPs"
                )
            values = [value] if isinstance(value, str) else list(value)
            addresses = []
            for text in values:
                ip = parse_ip(text) if isinstance(text, str) else None
                if ip is None:
                    raise ConfigError(f"StaticResolver: {text!r} for {name!r} is not an IP")
                addresses.append(ip)
            self._table[key] = addresses

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """The table's addresses for ``host``, else the fallback's answer.

        Raises:
            socket.gaierror: the name is not in the table and there is no fallback.
        """
        try:
            key = normalize_name(host)
        except ValueError:
            key = ""
        found = self._table.get(key)
        if not found and self._fallback is not None:
            return await self._fallback.resolve(host, port)
        if not found:
            raise socket.gaierror(socket.EAI_NONAME, f"{host!r} is not in the static table")
        return list(found)
