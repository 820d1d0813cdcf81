""":class:`EgressRuntime`: the proxy side of one :class:`~helikon.tools.OsSandboxBackend`.

The backend asks it for the native ``egress`` config before the policy is built, hands it
the built policy, and runs each command through :meth:`EgressRuntime.attach`, which gives it
a proxy credential of its own and collects that command's :class:`NetworkAccess` events.

* Namespace mechanism: each command runs in a private network namespace of its own; its
  supervisor passes every connection the command makes to ``127.0.0.1:3128`` there over a
  unix socket bridge (``egress_bridge_fd``), tagged with the command, and the proxy serves
  them. As root the child makes the namespace directly, otherwise from an unprivileged user
  namespace.
* Landlock-port mechanism: the proxy serves a listener it made on ``127.0.0.1`` in the
  host's namespace; its port goes into the config as ``host_port``.

``"auto"`` prepares the host listener too, so the native side can fall back to it; it is
closed when the namespace was made.

Events are attributed per command, not by time: :meth:`EgressRuntime.attach` gives each
command its own proxy credential (``http://cN:TOKEN@127.0.0.1:PORT`` in ``HTTP_PROXY``,
``HTTPS_PROXY`` and ``ALL_PROXY``; ``TOKEN`` is 128 random bits, valid only while the
command runs), the proxy refuses a request without a valid one (rule ``proxy_auth``), and
each event goes to the command whose credential the request carried. So two commands
running at once on one backend each see only their own events. A refused request that
carried no valid credential cannot be attributed; it goes to every command running when it
happened.
"""

from __future__ import annotations

import itertools
import secrets
import socket
import threading
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Literal

from helikon.core.events import NetworkAccess
from helikon.errors import ConfigError, SandboxUnavailable
from helikon.tools.backend import ExecResult
from helikon.tools.egress.policy import NetworkPolicy
from helikon.tools.egress.proxy import EgressProxy, ProxyThread
from helikon.tools.sandbox_native import SandboxPolicy
from helikon.tools.web.resolve import Resolver

__all__ = ["EgressMechanism", "EgressRuntime"]

EgressMechanism = Literal["auto", "namespace", "landlock_port"]
_MECHANISMS = ("auto", "namespace", "landlock_port")
#: Events kept per backend (older ones are dropped; a command sees at most this many).
_LOG_LIMIT = 10_000


class EgressRuntime:
    """The egress proxy and its event log for one sandbox backend.

    Args:
        policy: what the command may reach.
        resolver: how the proxy resolves names (default: the system resolver).
        mechanism: ``"auto"`` (default), ``"namespace"`` or ``"landlock_port"``.

    Raises:
        ConfigError: ``policy`` is not a :class:`NetworkPolicy` or the mechanism is unknown.
        SandboxUnavailable: ``allow_unix_sockets`` is not empty (see :meth:`native_config`).
    """

    def __init__(
        self,
        policy: NetworkPolicy,
        *,
        resolver: Resolver | None = None,
        mechanism: EgressMechanism = "auto",
    ) -> None:
        if not isinstance(policy, NetworkPolicy):
            raise ConfigError(
                f"OsSandboxBackend.network must be a NetworkPolicy, got {type(policy).__name__}"
            )
        if mechanism not in _MECHANISMS:
            raise ConfigError(
                f"OsSandboxBackend.egress_mechanism must be one of {list(_MECHANISMS)}, "
                f"got {mechanism!r}"
            )
        if policy.allow_unix_sockets:
            raise SandboxUnavailable(
                "NetworkPolicy.allow_unix_sockets cannot be enforced on this kernel: limiting "
                "AF_UNIX connect to the listed paths needs Landlock ABI 9 (Linux 7.1), which "
                "helikon does not use yet; remove the entries (every AF_UNIX connect is then "
                "refused)"
            )
        self.policy = policy
        self.mechanism: str = mechanism
        self._ids = itertools.count(1)
        self._tokens: dict[str, str] = {}
        self._events: dict[str, list[NetworkAccess]] = {}
        self._lock = threading.Lock()
        self._proxy = EgressProxy(
            policy,
            resolver=resolver,
            identify=self._identify,
            on_client_event=self._record,
            max_connections_per_command=policy.max_connections_per_command,
        )
        self._host_sock: socket.socket | None = None
        self._thread: ProxyThread | None = None
        self.port: int | None = None

    def native_config(self) -> dict[str, Any]:
        """The native ``egress`` table; makes the host listener unless ``"namespace"``."""
        config: dict[str, Any] = {"mechanism": self.mechanism}
        if self.mechanism != "namespace":
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sock.listen(128)
            self._host_sock = sock
            config["host_port"] = sock.getsockname()[1]
        return config

    def start(self, native: SandboxPolicy) -> None:
        """Serve the listener the built policy uses (namespace or host port)."""
        self.mechanism = native.egress_mechanism() or self.mechanism
        self.port = native.egress_port()
        fd = native.egress_bridge_fd()
        if fd is not None:
            self.discard_host_listener()
            self._thread = ProxyThread(self._proxy, bridge=socket.socket(fileno=fd))
        elif self._host_sock is not None:
            sock, self._host_sock = self._host_sock, None
            self._thread = ProxyThread(self._proxy, sock)
        else:  # pragma: no cover - the native side refuses this combination
            raise SandboxUnavailable("the egress proxy has no listener to serve")

    def start_host(self) -> int:
        """Serve a new listener on ``127.0.0.1`` in this namespace (macOS Seatbelt, where
        the profile allows only that port); returns its port."""
        config = self.native_config() if self._host_sock is None else {}
        sock, self._host_sock = self._host_sock, None
        if sock is None:  # pragma: no cover - native_config always makes one here
            raise SandboxUnavailable(f"the egress proxy has no listener ({config})")
        self.port = sock.getsockname()[1]
        self.mechanism = "host_port"
        self._thread = ProxyThread(self._proxy, sock)
        return int(self.port)

    def discard_host_listener(self) -> None:
        """Close the host listener (unused, or the build failed)."""
        if self._host_sock is not None:
            self._host_sock.close()
            self._host_sock = None

    def _identify(self, user: str, password: str) -> str | None:
        with self._lock:
            token = self._tokens.get(user)
        if token is None or not secrets.compare_digest(token.encode(), password.encode()):
            return None
        return user

    def _record(self, event: NetworkAccess, tag: str | None) -> None:
        with self._lock:
            if tag is None:  # no valid credential: every command running now
                targets = list(self._events.values())
            else:  # a command that already ended has no list (its token is gone too)
                targets = [self._events[tag]] if tag in self._events else []
            for events in targets:
                if len(events) < _LOG_LIMIT:
                    events.append(event)

    def open_command(self) -> tuple[str, dict[str, str]]:
        """Register a command: its tag (``c`` and its number, the ``egress_tag`` the native
        run sends with its bridged connections) and the proxy variables carrying its
        credential."""
        if self.port is None:
            raise SandboxUnavailable("the egress proxy is not serving")
        tag = f"c{next(self._ids)}"
        token = secrets.token_urlsafe(16)
        with self._lock:
            self._tokens[tag] = token
            self._events[tag] = []
        return tag, proxy_env(int(self.port), (tag, token))

    def close_command(self, tag: str) -> tuple[NetworkAccess, ...]:
        """Unregister a command (its credential stops working); its events, oldest first."""
        with self._lock:
            self._tokens.pop(tag, None)
            return tuple(self._events.pop(tag, ()))

    async def attach(
        self, run: Callable[[dict[str, str], int], Awaitable[ExecResult]]
    ) -> ExecResult:
        """Run one command with its own proxy credential and attach its events.

        ``run`` gets the command's proxy variables (to set over the backend's environment)
        and its number (the native ``egress_tag``), and returns the backend's result; this
        adds the events the proxy attributed to that credential (:attr:`ExecResult.network`)
        and a note per refused destination.
        """
        tag, env = self.open_command()
        try:
            result = await run(env, int(tag[1:]))
        finally:
            events = self.close_command(tag)
        return replace(result, network=events, notes=result.notes + denial_notes(events))

    def close(self) -> None:
        """Stop the proxy (idempotent)."""
        self.discard_host_listener()
        if self._thread is not None:
            self._thread.close()
            self._thread = None


def proxy_env(port: int, credential: tuple[str, str] | None = None) -> dict[str, str]:
    """The proxy variables for a proxy at ``127.0.0.1:port`` (both spellings; ``ALL_PROXY``
    is SOCKS5 with proxy-side resolution), with ``credential`` as ``user:password@``.

    Example:
        >>> proxy_env(3128)["HTTPS_PROXY"]
        'http://127.0.0.1:3128'
        >>> proxy_env(3128, ("c1", "tok"))["ALL_PROXY"]
        'socks5h://c1:tok@127.0.0.1:3128'
    """
    auth = "" if credential is None else f"{credential[0]}:{credential[1]}@"
    http = f"http://{auth}127.0.0.1:{port}"
    env = {
        "HTTP_PROXY": http,
        "HTTPS_PROXY": http,
        "ALL_PROXY": f"socks5h://{auth}127.0.0.1:{port}",
    }
    env.update({k.lower(): v for k, v in env.items()})
    env.update({"NO_PROXY": "", "no_proxy": ""})
    return env


def denial_notes(events: tuple[NetworkAccess, ...]) -> tuple[str, ...]:
    """One note per refused destination, for the text the model reads."""
    seen: dict[tuple[str, int, str], str] = {}
    for e in events:
        if e.verdict == "deny":
            seen.setdefault((e.host, e.port, e.rule), e.reason)
    return tuple(
        f"network: {f'{host}:{port}' if host else 'a connection'} refused by the egress proxy "
        f"({rule}: {reason})"
        for (host, port, rule), reason in seen.items()
    )
