""":class:`EgressRuntime`: the proxy side of one :class:`~helikon.tools.OsSandboxBackend`.

The backend asks it for the native ``egress`` config before the policy is built, hands it
the built policy, and brackets each command with :meth:`EgressRuntime.mark` /
:meth:`EgressRuntime.since` to collect that command's :class:`NetworkAccess` events.

* Namespace mechanism: the proxy serves the listener the native policy created inside the
  command's private network namespace (``egress_listener_fd``).
* Landlock-port mechanism: the proxy serves a listener it made on ``127.0.0.1`` in the
  host's namespace; its port goes into the config as ``host_port``.

``"auto"`` prepares the host listener too, so the native side can fall back to it; it is
closed when the namespace was made.

Events are attributed by time: every event logged between a command's start and its end
belongs to it. Two commands running at once on one backend each see both commands'
events (the proxy cannot tell their connections apart).
"""

from __future__ import annotations

import collections
import socket
import threading
from collections.abc import Awaitable
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
        self._log: collections.deque[tuple[int, NetworkAccess]] = collections.deque(
            maxlen=_LOG_LIMIT
        )
        self._seq = 0
        self._lock = threading.Lock()
        self._proxy = EgressProxy(policy, resolver=resolver, on_event=self._record)
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
        fd = native.egress_listener_fd()
        if fd is not None:
            sock = socket.socket(fileno=fd)
            self.discard_host_listener()
        elif self._host_sock is not None:
            sock, self._host_sock = self._host_sock, None
        else:  # pragma: no cover - the native side refuses this combination
            raise SandboxUnavailable("the egress proxy has no listener to serve")
        self._thread = ProxyThread(self._proxy, sock)

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

    def _record(self, event: NetworkAccess) -> None:
        with self._lock:
            self._seq += 1
            self._log.append((self._seq, event))

    def mark(self) -> int:
        """The position in the event log now (pass it to :meth:`since`)."""
        with self._lock:
            return self._seq

    def since(self, mark: int) -> tuple[NetworkAccess, ...]:
        """Events logged after ``mark``, oldest first."""
        with self._lock:
            return tuple(e for seq, e in self._log if seq > mark)

    async def attach(self, run: Awaitable[ExecResult]) -> ExecResult:
        """Await ``run`` (a backend's command, not started yet) and attach the events logged
        meanwhile (:attr:`ExecResult.network`) and a note per refused destination."""
        mark = self.mark()
        result = await run
        events = self.since(mark)
        return replace(result, network=events, notes=result.notes + denial_notes(events))

    def close(self) -> None:
        """Stop the proxy (idempotent)."""
        self.discard_host_listener()
        if self._thread is not None:
            self._thread.close()
            self._thread = None


def proxy_env(port: int) -> dict[str, str]:
    """The proxy variables for a proxy at ``127.0.0.1:port`` (both spellings; ``ALL_PROXY``
    is SOCKS5 with proxy-side resolution).

    Example:
        >>> proxy_env(3128)["HTTPS_PROXY"]
        'http://127.0.0.1:3128'
    """
    http = f"http://127.0.0.1:{port}"
    env = {"HTTP_PROXY": http, "HTTPS_PROXY": http, "ALL_PROXY": f"socks5h://127.0.0.1:{port}"}
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
        f"network: {host}:{port} refused by the egress proxy ({rule}: {reason})"
        for (host, port, rule), reason in seen.items()
    )
