"""The :class:`HostBackend`: a cwd-pinned shell with no containment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from helikon.tools._policy_backend import DEFAULT_TIMEOUT_S, PolicyBackend, base_config
from helikon.tools._shell import resolve_shell
from helikon.tools.backend import ResourceLimits
from helikon.tools.sandbox import Sandbox

__all__ = ["HostBackend"]


class HostBackend(PolicyBackend):
    """Runs commands on the host: NOT a security boundary.

    What it does: the working directory is pinned to the sandbox root, the environment is
    scrubbed to an allowlist (``HOME`` and ``TMPDIR`` point at a private per-call temp
    dir), rlimits apply, the timeout kills the whole process group, every process the
    command started is killed before a call returns, and each output stream keeps its head
    and tail over the cap with the cut stated. What it does not do: a command can read and
    write anything this process can (absolute paths, ``..``, ``~``) and reach the network.
    Pair it with a permission policy, or use :class:`~helikon.tools.OsSandboxBackend`.

    Args:
        sandbox: the workspace; its root is every command's cwd.
        timeout: default seconds per command (default 120).
        env_allowlist: host variables passed through (exact names, or a prefix ending in
            ``*``); default ``PATH, LANG, LANGUAGE, LC_*, TERM, TZ``.
        env: variables set explicitly.
        limits: resource limits (default :class:`ResourceLimits`).
        output_cap_bytes: bytes kept per stream (default 65536).
        kill_grace_ms: between SIGTERM and SIGKILL on timeout (default 200).
        shell: the shell run as ``<shell> -c command``; default bash (``/bin/bash`` or
            ``/usr/bin/bash``), the shell the command matcher models. Another shell is
            allowed, but then every command counts as not analysable under deny/allow rules
            and guards (worst case: refused or asked); so is ``/bin/sh`` used when bash is
            not installed (see :attr:`unanalysed_shell`).

    Raises:
        ConfigError: an invalid option.

    Example:
        >>> import asyncio, tempfile
        >>> from helikon.tools import Sandbox
        >>> with tempfile.TemporaryDirectory() as d:
        ...     backend = HostBackend(Sandbox.open(d))
        ...     asyncio.run(backend.run("echo hi")).stdout
        'hi\\n'
    """

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        env_allowlist: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        limits: ResourceLimits | None = None,
        output_cap_bytes: int = 65536,
        kill_grace_ms: int = 200,
        shell: str | None = None,
    ) -> None:
        choice = resolve_shell("HostBackend", shell)
        config = base_config(
            "HostBackend",
            sandbox,
            mode="host",
            timeout=timeout,
            env_allowlist=env_allowlist,
            env=env,
            limits=limits,
            output_cap_bytes=output_cap_bytes,
            kill_grace_ms=kill_grace_ms,
            shell=choice.path,
        )
        self._shell = choice
        self._init_policy(sandbox, timeout, config)

    def __repr__(self) -> str:
        return f"HostBackend({self.sandbox!r})"
