"""macOS Seatbelt (``sandbox-exec``) backend: the spec's write-focused macOS posture.

Posture (from the spec's "Execution backends", macOS): writes are denied everywhere except
the sandbox root, a private temp directory and the safe device nodes; reads are NOT
restricted (weaker than Linux's read+write containment); the network is all-or-nothing —
denied by default, which also blocks AF_UNIX sockets — unless ``allow_network=True``.
Seatbelt is an operation MAC, not a syscall filter, so the syscall axis is ``NONE``.

:func:`seatbelt_profile` builds the SBPL profile text (unit-tested on every platform);
:class:`SeatbeltBackend` runs commands under ``/usr/bin/sandbox-exec -p PROFILE`` and is only
constructible on macOS: elsewhere it fails closed with ``SandboxUnavailable``.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from helikon.core.cancel import CancellationToken
from helikon.errors import ConfigError, SandboxUnavailable
from helikon.tools._posix_runner import PORTABLE_NOTES, PosixSpec, run_posix
from helikon.tools._shell import resolve_shell
from helikon.tools.backend import ExecResult, Isolation, SandboxGuarantees
from helikon.tools.egress.policy import NetworkPolicy
from helikon.tools.egress.runtime import EgressRuntime, proxy_env
from helikon.tools.sandbox import Sandbox
from helikon.tools.web.resolve import Resolver

__all__ = ["SANDBOX_EXEC", "SeatbeltBackend", "seatbelt_profile"]

SANDBOX_EXEC = "/usr/bin/sandbox-exec"
_DEVICES = ("/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/dtracehelper")


def _is_macos() -> bool:
    return sys.platform == "darwin"


def _quote(path: str) -> str:
    """An SBPL string literal (backslash and double quote escaped; no control chars)."""
    if any(ord(c) < 0x20 for c in path):
        raise ConfigError(f"seatbelt: path {path!r} contains a control character")
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def seatbelt_profile(
    writable: Sequence[str | os.PathLike[str]],
    *,
    allow_network: bool = False,
    proxy_port: int | None = None,
) -> str:
    """The SBPL profile for the spec's macOS posture.

    Args:
        writable: directories commands may write under (resolved with ``realpath``, since
            Seatbelt matches real paths: ``/tmp`` is ``/private/tmp`` on macOS).
        allow_network: permit every socket family (the network axis is then ``NONE``).
        proxy_port: with the network denied, allow outbound connections to this port on
            ``localhost`` only (helikon's egress proxy; the network axis is then
            ``PROXIED``).

    Returns:
        The profile text for ``sandbox-exec -p``.

    Raises:
        ConfigError: no writable directory, a path with a control character, a
            ``proxy_port`` outside 1-65535 or combined with ``allow_network``.

    Example:
        >>> print(seatbelt_profile(["/work"], allow_network=False))  # doctest: +ELLIPSIS
        (version 1)
        (allow default)
        (deny file-write*)
        (allow file-write* (subpath "/work") ...
        (deny network*)
    """
    dirs = [os.path.realpath(os.fspath(p)) for p in writable]
    if not dirs:
        raise ConfigError("seatbelt_profile needs at least one writable directory (the root)")
    allowed = " ".join(f"(subpath {_quote(d)})" for d in dirs)
    devices = " ".join(f"(literal {_quote(d)})" for d in _DEVICES)
    lines = [
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        f"(allow file-write* {allowed} {devices})",
    ]
    if proxy_port is not None:
        if isinstance(proxy_port, bool) or not isinstance(proxy_port, int):
            raise ConfigError(f"seatbelt_profile: proxy_port must be an int, got {proxy_port!r}")
        if not 0 < proxy_port < 65536 or allow_network:
            raise ConfigError(
                "seatbelt_profile: proxy_port must be 1-65535 and excludes allow_network, "
                f"got {proxy_port!r}"
            )
    if not allow_network:
        lines.append("(deny network*)")
    if proxy_port is not None:
        lines.append(f'(allow network-outbound (remote ip "localhost:{proxy_port}"))')
    return "\n".join(lines)


class SeatbeltBackend:
    """Runs Bash commands under macOS Seatbelt with the spec's posture.

    Args:
        sandbox: the workspace; commands run with it as their working directory.
        allow_network: opt out of the network axis only.
        timeout: default seconds before the process group is killed.
        network: egress by domain: the profile allows only ``localhost:<port>`` of helikon's
            egress proxy (which this backend runs), and the proxy variables are set.
        network_resolver: how the proxy resolves names (default: the system resolver).

    Raises:
        SandboxUnavailable: not macOS, or ``/usr/bin/sandbox-exec`` is missing (fail closed;
            choose another backend explicitly).
    """

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        allow_network: bool = False,
        timeout: float = 120.0,
        network: NetworkPolicy | None = None,
        network_resolver: Resolver | None = None,
    ) -> None:
        if not _is_macos() or not Path(SANDBOX_EXEC).exists():
            raise SandboxUnavailable(
                "the Seatbelt backend needs macOS with /usr/bin/sandbox-exec; on Linux use "
                "OsSandboxBackend (Landlock + seccomp)"
            )
        self.sandbox = sandbox
        self.allow_network = allow_network
        self.timeout = timeout
        self.network = network
        self.egress: EgressRuntime | None = None
        env: dict[str, str] = {}
        port: int | None = None
        if network is not None:
            self.egress = EgressRuntime(network, resolver=network_resolver)
            port = self.egress.start_host()
            env = proxy_env(port)
        self._tmp = tempfile.mkdtemp(prefix="helikon-seatbelt-")
        self.profile = seatbelt_profile(
            [sandbox.root, self._tmp], allow_network=allow_network, proxy_port=port
        )
        self._shell = resolve_shell("SeatbeltBackend", None)
        self._spec = PosixSpec(
            root=str(sandbox.root),
            shell=self._shell.path,
            prefix=(SANDBOX_EXEC, "-p", self.profile),
            env=env,
            tmp_parent=self._tmp,
        )

    @property
    def shell(self) -> str:
        """The absolute path of the shell commands run with (bash where installed)."""
        return self._shell.path

    @property
    def unanalysed_shell(self) -> str | None:
        """``None`` when commands run with bash, else why they cannot be analysed."""
        return self._shell.unanalysed

    def guarantees(self) -> SandboxGuarantees:
        """Filesystem (writes only) and network by the kernel; syscalls not filtered."""
        return SandboxGuarantees(
            filesystem=Isolation.OS_KERNEL,
            network=(
                Isolation.PROXIED
                if self.egress is not None
                else Isolation.NONE
                if self.allow_network
                else Isolation.OS_KERNEL
            ),
            syscalls=Isolation.NONE,
            label="os-sandbox (seatbelt)",
            notes=(
                "reads are not restricted on macOS; only writes outside the root are denied",
                *PORTABLE_NOTES,
            ),
        )

    async def run(
        self,
        command: str,
        *,
        timeout: float | None = None,
        cancel: CancellationToken | None = None,
    ) -> ExecResult:
        """Run ``command`` with ``bash -c`` under the profile.

        The process hygiene is the portable runner's (:mod:`helikon.tools._posix_runner`):
        scrubbed environment, a per-call temp dir inside the writable temp directory, rlimits,
        head-and-tail output capture, and the process group killed on timeout, on cancel and
        after every call.

        Raises:
            ConfigError: a NUL byte in the command.
        """
        t = timeout or self.timeout
        if self.egress is None:
            return await run_posix(self._spec, command, t, cancel)
        spec = self._spec
        return await self.egress.attach(
            lambda env, _tag: run_posix(
                dataclasses.replace(spec, env={**spec.env, **env}), command, t, cancel
            )
        )
