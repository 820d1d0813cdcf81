"""Picking the strongest execution backend this host can enforce, and saying why."""

from __future__ import annotations

import logging
import sys
from typing import Any, NamedTuple

from helikon.errors import SandboxUnavailable
from helikon.tools.backend import ExecutionBackend
from helikon.tools.host import HostBackend
from helikon.tools.os_sandbox import OsSandboxBackend
from helikon.tools.sandbox import Sandbox

__all__ = ["BackendChoice", "best_available_backend"]

log = logging.getLogger("helikon.tools")


class BackendChoice(NamedTuple):
    """A chosen backend and the stated reason for the choice (unpacks as a pair)."""

    backend: ExecutionBackend
    reason: str


def best_available_backend(
    sandbox: Sandbox,
    *,
    run_as: tuple[int, int] | None = None,
    timeout: float | None = None,
    **os_options: Any,
) -> BackendChoice:
    """The strongest backend this platform can enforce, with the reason for it.

    Tries :class:`OsSandboxBackend` (probe + self-test, fail-closed). If the OS refuses it,
    this returns a :class:`HostBackend` and a reason that starts with
    ``"host (no containment)"`` and quotes the refusal; calling this function is the
    explicit opt-in to that fallback (it is also logged as a warning on ``helikon.tools``).
    Check ``choice.backend.guarantees().contained`` (or
    log ``choice.reason``) before trusting commands to it; call
    :class:`OsSandboxBackend` directly when a fallback is not acceptable.

    Args:
        sandbox: the workspace.
        run_as: passed to :class:`OsSandboxBackend` (required there when running as root).
        timeout: default seconds per command for either backend.
        **os_options: further :class:`OsSandboxBackend` keyword arguments.

    Returns:
        ``BackendChoice(backend, reason)``.

    Raises:
        ConfigError: an invalid option.
        SandboxUnavailable: ``network=NetworkPolicy(...)`` was given and no OS sandbox can
            enforce it (the host backend would ignore it, so there is no fallback).
    """
    extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    network = os_options.get("network")
    if sys.platform == "darwin":
        from helikon.tools.seatbelt import SeatbeltBackend

        try:
            return BackendChoice(
                SeatbeltBackend(sandbox, network=network, **extra),
                "os-sandbox (seatbelt): writes confined to the root, network denied; reads are "
                "not restricted on macOS",
            )
        except SandboxUnavailable as exc:
            return _fallback(sandbox, extra, f"Seatbelt is unavailable: {exc}", network)
    if not sys.platform.startswith("linux"):
        return _fallback(
            sandbox,
            extra,
            f"this build has an OS sandbox for Linux only (platform {sys.platform})",
            network,
        )
    try:
        backend = OsSandboxBackend(sandbox, run_as=run_as, **extra, **os_options)
    except SandboxUnavailable as exc:
        return _fallback(sandbox, extra, f"the OS sandbox is unavailable: {exc}", network)
    g = backend.guarantees()
    reason = f"{g.summary()}: the kernel probe and self-test passed"
    if g.landlock_abi is not None:
        reason += f" (Landlock ABI {g.landlock_abi})"
    return BackendChoice(backend, reason)


def _fallback(
    sandbox: Sandbox, extra: dict[str, Any], why: str, network: object = None
) -> BackendChoice:
    """The host backend, with the reason; logged as a warning, since nothing is contained.

    Raises:
        SandboxUnavailable: a network policy was asked for (the host cannot enforce it).
    """
    if network is not None:
        raise SandboxUnavailable(
            f"network=NetworkPolicy(...) needs an OS sandbox and there is none: {why}; the "
            "host backend would give the command the whole network, so there is no fallback"
        )
    reason = f"host (no containment): {why}"
    log.warning("best_available_backend fell back to %s", reason)
    return BackendChoice(HostBackend(sandbox, **extra), reason)
