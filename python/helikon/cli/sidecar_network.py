"""The ``[sandbox.network]`` table: egress by domain for the sidecar's sandboxed ``Bash``.

Form (every key optional; the keys are :class:`~helikon.tools.egress.NetworkPolicy`'s)::

    [sandbox.network]
    allow_domains   = ["pypi.org", "*.pythonhosted.org", "github.com"]
    deny_domains    = ["upload.pypi.org"]
    allow_addresses = ["127.0.0.1/32"]        # CIDR ranges reachable although internal
    allow_ports     = [80, 443]
    max_connections_per_command = 64          # connections one command holds at once
    hosts           = { "pypi.test" = "127.0.0.1" }   # names the proxy resolves itself

With the table, ``Bash`` reaches only helikon's egress proxy, which allows what the policy
allows (see the sandbox guide); without it the network stays denied. ``hosts`` pins names to
addresses for the proxy's resolver (like ``/etc/hosts``, other names use the system
resolver); a pinned address is still checked against ``allow_addresses``. The ``host``
backend cannot enforce a policy, so the table with ``backend = "host"`` is refused, as is
``allow_network = true`` next to it. Every error names the field, e.g.
``sandbox.network.allow_ports: 0 is not a port (1-65535)``.
"""

from __future__ import annotations

import re
from typing import Any

from helikon.cli.sidecar_file import SidecarFile, unknown_keys
from helikon.errors import ConfigError

__all__ = ["NETWORK_KEYS", "network_options"]

NETWORK_KEYS = (
    "allow_domains",
    "deny_domains",
    "allow_unix_sockets",
    "allow_addresses",
    "allow_ports",
    "max_connections_per_command",
    "hosts",
)
_KEY = "sandbox.network"
_FIELD = re.compile(r"^(sandbox\.network(?:\.\w+)?):? (.*)$", re.S)
_FIX = '[sandbox.network] allow_domains = ["pypi.org", "*.pythonhosted.org"]'


def network_options(sc: SidecarFile, table: dict[str, Any], backend: str) -> dict[str, Any]:
    """``OsSandboxBackend`` keyword arguments (``network``, ``network_resolver``) from
    ``table["network"]``; empty when the key is absent.

    Raises:
        SidecarError: the value is not a table, has an unknown key or a bad value (naming
            ``sandbox.network.KEY``), or the backend cannot enforce it.
    """
    raw = table.get("network")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise sc.err(_KEY, "must be a table", _FIX)
    unknown_keys(sc, _KEY, raw, NETWORK_KEYS)
    if backend == "host":
        raise sc.err(
            _KEY,
            "the host backend cannot enforce a network policy (its commands reach every address)",
            'use backend = "os" (or "best", which then never falls back to the host)',
        )
    if table.get("allow_network") is True:
        raise sc.err(
            _KEY,
            "allow_network = true opens every address, so it cannot go with [sandbox.network]",
            "remove allow_network",
        )
    from helikon.tools.egress import NetworkPolicy, StaticResolver
    from helikon.tools.web.resolve import SystemResolver

    data = {k: v for k, v in raw.items() if k != "hosts"}
    try:
        policy = NetworkPolicy.from_dict(data, _KEY)
    except ConfigError as exc:
        found = _FIELD.match(str(exc))
        key, problem = (found.group(1), found.group(2)) if found else (_KEY, str(exc))
        raise sc.err(key, problem, f"see the sandbox guide's NetworkPolicy; e.g. {_FIX}") from None
    options: dict[str, Any] = {"network": policy}
    hosts = raw.get("hosts")
    if hosts is not None:
        if not isinstance(hosts, dict):
            raise sc.err(
                f"{_KEY}.hosts", "must be a table", 'hosts = { "pypi.test" = "127.0.0.1" }'
            )
        try:
            resolver = StaticResolver(hosts, fallback=SystemResolver())
        except ConfigError as exc:
            raise sc.err(
                f"{_KEY}.hosts",
                str(exc).removeprefix("StaticResolver: "),
                'map a name to an IP or a list of IPs: hosts = { "pypi.test" = "127.0.0.1" }',
            ) from None
        options["network_resolver"] = resolver
    return options
