"""The :class:`OsSandboxBackend`: Landlock + seccomp + rlimits, fail-closed."""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from helikon.core.cancel import CancellationToken
from helikon.errors import ConfigError
from helikon.tools._containment import containment_notes
from helikon.tools._policy_backend import (
    DEFAULT_TIMEOUT_S,
    PolicyBackend,
    base_config,
    check_timeout,
)
from helikon.tools._runner import run_policy
from helikon.tools._shell import resolve_shell
from helikon.tools._workspace_rules import relative_paths, workspace_rules
from helikon.tools.backend import ExecResult, ResourceLimits
from helikon.tools.egress.policy import NetworkPolicy
from helikon.tools.egress.runtime import EgressMechanism, EgressRuntime
from helikon.tools.sandbox import Sandbox
from helikon.tools.web.resolve import Resolver

__all__ = ["OsSandboxBackend"]

Weakening = Literal["signal_scope", "abstract_unix_scope"]
UnixSockets = Literal["pairs", "none", "connect"]


class OsSandboxBackend(PolicyBackend):
    """Runs commands under OS-kernel containment (Linux: Landlock + seccomp).

    Constructing it is the build step, and it fails closed: the kernel is probed (Landlock
    ABI and errata, seccomp, architecture), the rules are compiled, and a self-test runs
    ``true`` plus probes that must be refused (reading ``/``, an ``AF_INET`` socket, a user
    namespace). If any default guarantee cannot be enforced, construction raises
    :class:`helikon.errors.SandboxUnavailable` naming what the kernel lacks and the Linux
    release that adds it; nothing ever runs with silently weaker containment. Weaker modes
    exist only by explicit opt-in (``allow_weaker``, ``allow_network``), and what was waived
    is written into :meth:`guarantees`, which the Bash tool shows to the model.

    Inside: the root and a private temp dir are writable; system directories and a short
    list of ``/etc`` files are read+execute; ``/dev/null``-style devices work; ``/proc`` is
    hidden unless ``allow_proc``; the network is denied (TCP by Landlock, every socket family
    but ``AF_UNIX`` pairs by seccomp) unless ``allow_network``; dangerous syscalls
    (``ptrace``, ``mount``, user namespaces, ``io_uring``, ``bpf``, ...) fail.

    Running as root: a root process keeps capabilities under Landlock and seccomp, so
    ``run_as=(uid, gid)`` is required (for example ``(65534, 65534)``, with the root
    directory writable by that uid); without it construction raises ``SandboxUnavailable``
    saying so. Capabilities and supplementary groups are dropped in the child.

    Args:
        sandbox: the workspace; its root is every command's cwd.
        allow_network: opt out of the network axis (TCP/UDP over IPv4/IPv6 allowed; other
            families and io_uring stay denied). Recorded in the guarantees.
        run_as: ``(uid, gid)`` to run commands as; required when this process is root.
        timeout: default seconds per command (default 120).
        env_allowlist: host variables passed through (default ``PATH, LANG, LANGUAGE, LC_*,
            TERM, TZ``).
        env: variables set explicitly.
        limits: resource limits (default :class:`ResourceLimits`).
        read_paths: extra read+execute paths (absolute, not ``/``).
        allow_proc: grant read access to ``/proc`` (other processes' command lines become
            readable).
        allow_weaker: waive Landlock ABI 6 scoping on older kernels: ``"signal_scope"``,
            ``"abstract_unix_scope"``.
        unix_sockets: ``"pairs"`` (default: socketpair only), ``"none"``, or ``"connect"``
            (lets test servers in the root work; see the native docs for the caveat).
        output_cap_bytes: bytes kept per stream (default 65536).
        kill_grace_ms: between SIGTERM and SIGKILL on timeout (default 200).
        shell: the shell run as ``<shell> -c command``; default bash (``/bin/bash`` or
            ``/usr/bin/bash``), the shell the command matcher models. Another shell is
            allowed, but then every command counts as not analysable under deny/allow rules
            and guards (see :attr:`unanalysed_shell`).
        deny_delete: refuse deletion in the workspace by the kernel, whatever program runs
            (Landlock without ``REMOVE_FILE``/``REMOVE_DIR``/``TRUNCATE``, ABI 3, Linux
            6.2): ``unlink``, ``rmdir``, ``rename`` away from or over an entry, ``O_TRUNC``
            and ``truncate`` fail with ``EACCES``, also through a copied or symlinked
            ``rm``; seccomp refuses ``fallocate`` punch-hole, collapse-range and zero-range.
            Overwriting a file's bytes in place is still possible.
        deny_delete_except: relative paths inside the workspace that keep every right under
            ``deny_delete``, e.g. ``[".git"]`` so ``git commit`` can replace its lock files.
            They must exist when the backend is built and must not be symlinks.
        no_exec_in_workspace: no ``EXECUTE`` right on the workspace and the private temp
            dir: a binary copied or written there cannot run (``EACCES``, exit 126);
            interpreters from system directories still run scripts (``sh x.sh``).
        private_mounts: run each command in a private mount namespace that shows only the
            granted paths (system directories, ``/etc`` entries and devices read-only, the
            workspace and the temp dir read-write, ``/tmp`` empty and unwritable), so
            ``stat``/``access`` existence probes and ``chmod``/``chown``/``utime``/
            ``setxattr`` on any other path fail with ``ENOENT``. As root (with ``run_as``)
            the child mounts before it drops privileges; a host that is not root gets the
            same view through an unprivileged user namespace (its uid and gid mapped to
            themselves; other users' files show as owned by ``nobody``). Where the kernel
            refuses user namespaces, construction raises ``SandboxUnavailable`` saying so.
        read_only_paths: relative paths inside the workspace shown read-only to every
            command (e.g. ``[".git", ".env", ".ssh"]``): writes, deletion, renames and
            ``chmod`` there fail with ``EROFS`` whatever program runs. Needs
            ``private_mounts=True``. A path missing when a command starts is not protected
            during it; one that is (or passes through) a symlink makes the call fail before
            the command runs.
        network: egress by domain: the command reaches only helikon's egress proxy, which
            allows what this :class:`~helikon.tools.egress.NetworkPolicy` allows (see the
            sandbox guide); each connection becomes a ``network_access`` event in
            :attr:`ExecResult.network`. Excludes ``allow_network``.
        network_resolver: how the proxy resolves names (default: the system resolver).
        egress_mechanism: ``"auto"`` (a private network namespace per command, made from an
            unprivileged user namespace when this process is not root; Landlock TCP port
            rules only where user namespaces are refused), ``"namespace"`` or
            ``"landlock_port"``. :attr:`egress` ``.mechanism`` says which one runs.

    Raises:
        SandboxUnavailable: the kernel cannot enforce the requested containment, running as
            root without ``run_as``, or a failed self-test.
        ConfigError: an invalid option.
    """

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        allow_network: bool = False,
        run_as: tuple[int, int] | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        env_allowlist: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        limits: ResourceLimits | None = None,
        read_paths: Sequence[str] = (),
        allow_proc: bool = False,
        allow_weaker: Sequence[Weakening] = (),
        unix_sockets: UnixSockets = "pairs",
        output_cap_bytes: int = 65536,
        kill_grace_ms: int = 200,
        shell: str | None = None,
        deny_delete: bool = False,
        deny_delete_except: Sequence[str] = (),
        no_exec_in_workspace: bool = False,
        private_mounts: bool = False,
        read_only_paths: Sequence[str] = (),
        network: NetworkPolicy | None = None,
        network_resolver: Resolver | None = None,
        egress_mechanism: EgressMechanism = "auto",
    ) -> None:
        choice = resolve_shell("OsSandboxBackend", shell)
        self._shell = choice
        config = base_config(
            "OsSandboxBackend",
            sandbox,
            mode="os_sandbox",
            timeout=timeout,
            env_allowlist=env_allowlist,
            env=env,
            limits=limits,
            output_cap_bytes=output_cap_bytes,
            kill_grace_ms=kill_grace_ms,
            shell=choice.path,
        )
        if run_as is not None:
            if len(run_as) != 2 or not all(isinstance(x, int) and x >= 0 for x in run_as):
                raise ConfigError(
                    f"OsSandboxBackend.run_as must be (uid, gid) non-negative ints, got {run_as!r}"
                )
            config["run_as"] = [run_as[0], run_as[1]]
        if isinstance(read_paths, str):
            raise ConfigError("OsSandboxBackend.read_paths must be a list of paths")
        config.update(
            allow_network=bool(allow_network),
            read_paths=list(read_paths),
            allow_proc=bool(allow_proc),
            allow_weaker=list(allow_weaker),
            unix_sockets=unix_sockets,
        )
        config.update(
            workspace_rules(deny_delete, deny_delete_except, no_exec_in_workspace),
            private_mounts=bool(private_mounts),
            read_only_paths=relative_paths("read_only_paths", read_only_paths),
        )
        if config["read_only_paths"] and not private_mounts:
            raise ConfigError("OsSandboxBackend.read_only_paths needs private_mounts=True")
        self.run_as = run_as
        self.allow_network = bool(allow_network)
        self.deny_delete = bool(deny_delete)
        self.no_exec_in_workspace = bool(no_exec_in_workspace)
        self.private_mounts = bool(private_mounts)
        self.network = network
        self._egress: EgressRuntime | None = None
        if network is not None:
            if allow_network:
                raise ConfigError(
                    "OsSandboxBackend: network=NetworkPolicy(...) and allow_network=True "
                    "exclude each other (allow_network opens every address)"
                )
            self._egress = EgressRuntime(
                network, resolver=network_resolver, mechanism=egress_mechanism
            )
            config["egress"] = self._egress.native_config()
        try:
            self._init_policy(sandbox, timeout, config)
        except BaseException:
            if self._egress is not None:
                self._egress.close()
            raise
        if self._egress is not None:
            self._egress.start(self._policy)
            # The proxy thread stops with the backend even without close().
            weakref.finalize(self, self._egress.close)

    @property
    def egress(self) -> EgressRuntime | None:
        """The egress proxy's runtime (mechanism, port, event log), when ``network`` is set."""
        return self._egress

    async def run(
        self,
        command: str,
        *,
        timeout: float | None = None,
        cancel: CancellationToken | None = None,
    ) -> ExecResult:
        """As :meth:`PolicyBackend.run`; with ``network``, the command gets its own proxy
        credential and the result also carries the ``network_access`` events of its own
        connections (not those of a command running at the same time) and a note per refused
        destination."""
        if self._egress is None:
            return await super().run(command, timeout=timeout, cancel=cancel)
        t = self.timeout if timeout is None else timeout
        check_timeout("timeout", t)
        policy = self._policy
        return await self._egress.attach(
            lambda env, tag: run_policy(policy, command, t, cancel, env=env, egress_tag=tag)
        )

    def containment_notes(self, tool: str, args: Any) -> tuple[str, ...]:
        """What the kernel and the egress proxy refuse for this call whatever the permission
        decision (network, ``deny_delete``, ``no_exec_in_workspace``); ``()`` for tools
        other than ``Bash``. :func:`helikon.permissions.explain` shows them."""
        return containment_notes(self, tool, args)

    def close(self) -> None:
        """Stop the egress proxy, if any (the backend cannot reach the network after)."""
        if self._egress is not None:
            self._egress.close()

    def kernel_features(self) -> dict[str, Any]:
        """The probed kernel features (Landlock ABI, errata, seccomp, kernel release)."""
        result: dict[str, Any] = json.loads(self.policy.kernel_features())
        return result

    def __repr__(self) -> str:
        return f"OsSandboxBackend({self.sandbox!r}, label={self.guarantees().label!r})"
