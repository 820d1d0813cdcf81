"""Network egress by domain for the OS sandbox: the policy, the proxy, a fixed-table resolver.

* :class:`NetworkPolicy` — allowed and denied domain patterns, unix sockets and address
  ranges; :meth:`NetworkPolicy.check_target` / :meth:`NetworkPolicy.check_address` give a
  :class:`NetworkDecision` naming the rule.
* :class:`EgressProxy` — HTTP CONNECT, plain-HTTP forwarding and SOCKS5 on one socket; it
  resolves names itself and reports each decision as a
  :class:`~helikon.core.events.NetworkAccess` event. :class:`ProxyThread` serves it from a
  daemon thread.
* :class:`StaticResolver` — a name-to-addresses table (tests, pinned hosts).

:class:`helikon.tools.OsSandboxBackend` takes ``network=NetworkPolicy(...)`` and runs the
proxy as the command's only way out (see the sandbox guide).
"""

from helikon.tools.egress.policy import NetworkDecision, NetworkPolicy, literal_ip, normalize_name
from helikon.tools.egress.proxy import EgressProxy, ProxyThread
from helikon.tools.egress.static import StaticResolver

__all__ = [
    "EgressProxy",
    "NetworkDecision",
    "NetworkPolicy",
    "ProxyThread",
    "StaticResolver",
    "literal_ip",
    "normalize_name",
]
