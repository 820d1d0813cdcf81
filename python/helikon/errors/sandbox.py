"""Sandbox errors (raised by ``helikon._native.SandboxPolicy``).

Part of the one tree of :mod:`helikon.errors` (import from there).
"""

from __future__ import annotations

from helikon.errors.base import HelikonError

__all__ = ["SandboxUnavailable"]


class SandboxUnavailable(HelikonError):
    """The OS sandbox cannot enforce the requested containment on this host.

    Raised when a sandbox policy is built: the message names what the kernel (or the
    process) lacks and which Linux release adds it, e.g. Landlock signal scoping (ABI 6,
    Linux 6.12), or that running as root requires ``run_as``. Also raised when the built-in
    self-test sees an escape that should have been refused. The backend never silently runs
    with weaker containment; choosing an unconfined backend instead is the caller's explicit
    decision.
    """

    kind = "Unavailable"
