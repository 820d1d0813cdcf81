""":func:`sandbox_capabilities`: what the OS sandbox can enforce on this machine.

``helikon doctor`` prints it; the per-platform table in ``docs/guides/sandbox.md`` is
written in its terms.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from helikon.tools.sandbox_native import capabilities_json

__all__ = ["SandboxCapabilities", "sandbox_capabilities"]

MemoryMechanism = Literal["watchdog", "none"]
MetadataMechanism = Literal["mount_namespace", "user_mount_namespace", "uid_only", "none"]


@dataclass(frozen=True, slots=True)
class SandboxCapabilities:
    """What the OS sandbox can enforce here (one probe; nothing is spawned).

    Attributes:
        landlock_abi: the kernel's Landlock ABI (0: none).
        landlock_missing: why Landlock is unavailable, or ``None``.
        seccomp: seccomp filter mode works.
        kernel_release: ``uname -r``.
        os_sandbox: a default :class:`~helikon.tools.OsSandboxBackend` can be built as far as
            the kernel goes (as root it also needs ``run_as``).
        os_sandbox_missing: why not, naming the missing feature and the release adding it.
        landlock_tcp: Landlock TCP rules (ABI 4, Linux 6.7).
        landlock_truncate: Landlock ``TRUNCATE`` (ABI 3, Linux 6.2), needed by
            ``deny_delete``.
        landlock_scoping: signal and abstract-socket scoping (ABI 6, Linux 6.12).
        user_namespaces: this process can create user namespaces.
        cgroup_v2: the unified cgroup v2 hierarchy is mounted.
        cgroup_delegated: this process's own cgroup v2 directory when writable with the
            memory controller, else ``None``.
        memory: how ``ResourceLimits.memory_bytes`` is enforced: ``"watchdog"`` (the
            supervisor sums resident memory every 20 ms) or ``"none"``.
        metadata: how metadata calls and existence probes on paths outside the workspace
            can be contained here: ``"mount_namespace"`` (``private_mounts=True`` works:
            the host runs as root), ``"user_mount_namespace"`` (``private_mounts=True``
            works through an unprivileged user namespace: the host is not root and the
            kernel's sysctls allow user namespaces; the build's self-test is the final
            word), ``"uid_only"`` (``chown`` refused by seccomp, the rest limited to files
            the command's uid owns; existence probes work) or ``"none"``.
    """

    landlock_abi: int
    landlock_missing: str | None
    seccomp: bool
    kernel_release: str
    os_sandbox: bool
    os_sandbox_missing: str | None
    landlock_tcp: bool
    landlock_truncate: bool
    landlock_scoping: bool
    user_namespaces: bool
    cgroup_v2: bool
    cgroup_delegated: str | None
    memory: MemoryMechanism
    metadata: MetadataMechanism

    @classmethod
    def from_json(cls, text: str) -> SandboxCapabilities:
        """Parse the native ``sandbox_capabilities()`` JSON."""
        raw: dict[str, Any] = json.loads(text)
        kernel: dict[str, Any] = raw["kernel"]
        return cls(
            landlock_abi=int(kernel["landlock_abi"]),
            landlock_missing=kernel.get("landlock_missing"),
            seccomp=bool(kernel["seccomp"]),
            kernel_release=str(kernel["kernel_release"]),
            os_sandbox=bool(raw["os_sandbox"]),
            os_sandbox_missing=raw.get("os_sandbox_missing"),
            landlock_tcp=bool(raw["landlock_tcp"]),
            landlock_truncate=bool(raw["landlock_truncate"]),
            landlock_scoping=bool(raw["landlock_scoping"]),
            user_namespaces=bool(raw["user_namespaces"]),
            cgroup_v2=bool(raw["cgroup_v2"]),
            cgroup_delegated=raw.get("cgroup_delegated"),
            memory="watchdog" if raw["memory"] == "watchdog" else "none",
            metadata=_metadata(raw["metadata"]),
        )

    def summary(self) -> list[tuple[str, str]]:
        """``(check, value)`` rows for a report such as ``helikon doctor``."""
        return [
            ("kernel", self.kernel_release),
            ("os sandbox", "available" if self.os_sandbox else f"no: {self.os_sandbox_missing}"),
            (
                "landlock",
                f"ABI {self.landlock_abi}" if self.landlock_abi else str(self.landlock_missing),
            ),
            ("seccomp", "yes" if self.seccomp else "no"),
            ("user namespaces", "yes" if self.user_namespaces else "no"),
            (
                "cgroup v2 delegation",
                self.cgroup_delegated or ("not delegated" if self.cgroup_v2 else "no cgroup v2"),
            ),
            ("memory ceiling", self.memory),
            ("metadata outside the workspace", self.metadata),
        ]


def _metadata(value: object) -> MetadataMechanism:
    if value == "mount_namespace":
        return "mount_namespace"
    if value == "user_mount_namespace":
        return "user_mount_namespace"
    if value == "uid_only":
        return "uid_only"
    return "none"


def sandbox_capabilities() -> SandboxCapabilities:
    """Probe what the OS sandbox can enforce on this machine.

    Example:
        >>> caps = sandbox_capabilities()
        >>> caps.memory in ("watchdog", "none")
        True
    """
    return SandboxCapabilities.from_json(capabilities_json())
