"""Host allow/deny lists for ``WebFetch``: exact names and ``*.suffix`` patterns.

Names are compared in their ASCII (IDNA / punycode) form, lower-cased and without a trailing
dot, so ``Bücher.DE.`` and ``xn--bcher-kva.de`` are the same host. A pattern is either an
exact host (``"docs.python.org"``, an IP literal such as ``"127.0.0.1"`` or ``"[::1]"``) or
``"*.example.com"``, which matches every subdomain of ``example.com`` at any depth but not
``example.com`` itself (list both to allow both).

The deny list wins over the allow list. An empty or absent allow list allows every host that
is not denied. Host rules are checked on the URL's host before anything is resolved, on every
redirect hop; they complement the address check of :mod:`helikon.tools.web.ssrf`, which runs
on the resolved IP address.

Example:
    >>> rules = HostRules(allow=["*.python.org"], deny=["evil.python.org"])
    >>> rules.denial("docs.python.org") is None
    True
    >>> rules.denial("evil.python.org")
    "host 'evil.python.org' is on the deny list (matches 'evil.python.org')"
    >>> rules.denial("python.org")
    "host 'python.org' is not on the allow list (['*.python.org'])"
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import httpx

from helikon.errors import ConfigError
from helikon.tools.web.ssrf import parse_ip

__all__ = ["HostRules", "normalize_host"]

_HOST_CHARS = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")


def normalize_host(host: str) -> str:
    """The comparable form of a host: IDNA ASCII, lower case, no trailing dot or brackets.

    Raises:
        ConfigError: ``host`` is not a valid host name.

    Example:
        >>> normalize_host("Bücher.DE.")
        'xn--bcher-kva.de'
    """
    text = host.strip()
    if not text:
        raise ConfigError("empty host name")
    if ":" in text and not text.startswith("["):
        text = f"[{text}]"  # a bare IPv6 literal
    try:
        raw = httpx.URL(f"http://{text}/").raw_host
    except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
        raise ConfigError(f"{host!r} is not a valid host name: {exc}") from None
    name = raw.decode("ascii").lower().rstrip(".")
    if not _HOST_CHARS.fullmatch(name) and parse_ip(name) is None:
        raise ConfigError(f"{host!r} is not a valid host name")
    return name


class _Pattern:
    __slots__ = ("exact", "source", "suffix")

    def __init__(self, source: str) -> None:
        self.source = source
        text = source.strip()
        if text.startswith("*."):
            self.suffix: str | None = "." + normalize_host(text[2:])
            self.exact: str | None = None
        elif "*" in text:
            raise ConfigError(
                f"host pattern {source!r}: '*' is only allowed as a leading '*.' "
                "(e.g. '*.example.com')"
            )
        else:
            self.exact = normalize_host(text)
            self.suffix = None

    def matches(self, host: str) -> bool:
        if self.exact is not None:
            return host == self.exact
        return self.suffix is not None and host.endswith(self.suffix)


def _patterns(items: Iterable[str] | None, field: str) -> tuple[_Pattern, ...]:
    if items is None:
        return ()
    if isinstance(items, str):
        raise ConfigError(f"{field} must be a list of host patterns, not the string {items!r}")
    return tuple(_Pattern(p) for p in items)


class HostRules:
    """An allow list and a deny list of host patterns.

    Args:
        allow: if given and non-empty, only matching hosts are fetched.
        deny: matching hosts are never fetched (checked first).

    Raises:
        ConfigError: a pattern is malformed (a ``*`` elsewhere than a leading ``*.``, an
            invalid host name) or a list was given as a single string.
    """

    __slots__ = ("_allow", "_deny")

    def __init__(
        self, *, allow: Iterable[str] | None = None, deny: Iterable[str] | None = None
    ) -> None:
        self._allow = _patterns(allow, "allow_hosts")
        self._deny = _patterns(deny, "deny_hosts")

    def denial(self, host: str) -> str | None:
        """Why ``host`` may not be fetched, or ``None`` when the lists allow it."""
        name = normalize_host(host)
        for pattern in self._deny:
            if pattern.matches(name):
                return f"host {name!r} is on the deny list (matches {pattern.source!r})"
        if self._allow and not any(p.matches(name) for p in self._allow):
            listed = [p.source for p in self._allow]
            return f"host {name!r} is not on the allow list ({listed})"
        return None
