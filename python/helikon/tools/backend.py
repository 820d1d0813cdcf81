"""The :class:`ExecutionBackend` protocol and the values it deals in."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from helikon.core.cancel import CancellationToken
from helikon.core.events import NetworkAccess
from helikon.errors import ConfigError

__all__ = [
    "DEFAULT_MEMORY_BYTES",
    "ExecResult",
    "ExecutionBackend",
    "Isolation",
    "ResourceLimits",
    "SandboxGuarantees",
]


class Isolation(enum.StrEnum):
    """How one axis (filesystem, network, syscalls) is enforced.

    * ``NONE`` — no OS enforcement: the command has this process's access on the axis.
    * ``OS_KERNEL`` — an OS kernel mechanism (Landlock, seccomp) enforces it.
    * ``VIRTUALIZED`` — a VM boundary enforces it.
    * ``PROXIED`` — egress goes through a policy-enforcing proxy.
    """

    NONE = "none"
    OS_KERNEL = "os_kernel"
    VIRTUALIZED = "virtualized"
    PROXIED = "proxied"


@dataclass(frozen=True, slots=True)
class SandboxGuarantees:
    """What a backend enforces, per axis.

    Attributes:
        filesystem: the filesystem axis.
        network: the network axis.
        syscalls: the syscall axis.
        label: a short tier name (``"host (no containment)"``,
            ``"os-sandbox (landlock+seccomp)"``); the Bash tool shows it to the model.
        landlock_abi: the Landlock ABI in force (``None`` without Landlock).
        waived: defaults the caller explicitly waived (``allow_weaker``).
        notes: known limits of this configuration, in plain words.

    Example:
        >>> g = SandboxGuarantees.from_json(
        ...     '{"filesystem": "none", "network": "none", "syscalls": "none",'
        ...     ' "label": "host (no containment)"}'
        ... )
        >>> g.contained
        False
    """

    filesystem: Isolation
    network: Isolation
    syscalls: Isolation
    label: str
    landlock_abi: int | None = None
    waived: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, text: str) -> SandboxGuarantees:
        """Parse the native ``guarantees()`` JSON."""
        raw: dict[str, Any] = json.loads(text)
        return cls(
            filesystem=Isolation(raw["filesystem"]),
            network=Isolation(raw["network"]),
            syscalls=Isolation(raw["syscalls"]),
            label=str(raw["label"]),
            landlock_abi=raw.get("landlock_abi"),
            waived=tuple(raw.get("waived") or ()),
            notes=tuple(raw.get("notes") or ()),
        )

    @property
    def contained(self) -> bool:
        """True when the filesystem axis is enforced (not ``NONE``)."""
        return self.filesystem is not Isolation.NONE

    def summary(self) -> str:
        """One line: the label and each axis, plus what was waived."""
        text = (
            f"{self.label}: filesystem={self.filesystem.value}, network={self.network.value}, "
            f"syscalls={self.syscalls.value}"
        )
        if self.waived:
            text += f"; waived: {', '.join(self.waived)}"
        return text


#: The default resident-memory ceiling of a command (2 GiB), see :class:`ResourceLimits`.
DEFAULT_MEMORY_BYTES = 2 << 30

KilledReason = Literal["timeout", "memory"]


@dataclass(frozen=True, slots=True)
class ResourceLimits:
    """``setrlimit`` values applied to every command; ``None`` disables one.

    Attributes:
        cpu_seconds: ``RLIMIT_CPU``; ``None`` means the call's timeout rounded up plus 5 s
            (CPU time is always bounded).
        file_size_bytes: ``RLIMIT_FSIZE`` (default 1 GiB).
        address_space_bytes: ``RLIMIT_AS`` (default off: it breaks runtimes that reserve
            address space).
        memory_bytes: ceiling on the resident memory of all the command's processes
            together (default 2 GiB). Only touched memory counts, so a JVM, Go or Node
            reserving a large heap is unaffected. On Linux the supervisor's watchdog kills
            the command's processes when they pass it and the result says
            ``killed_reason="memory"``; the portable runner (macOS) does not enforce it.
        max_processes: tasks the command may add to what its uid already runs (default
            256; not enforced by the kernel for root).
        open_files: ``RLIMIT_NOFILE`` (default 1024).

    Raises:
        ConfigError: a negative or zero value.
    """

    cpu_seconds: int | None = None
    file_size_bytes: int | None = 1 << 30
    address_space_bytes: int | None = None
    memory_bytes: int | None = DEFAULT_MEMORY_BYTES
    max_processes: int | None = 256
    open_files: int | None = 1024

    def __post_init__(self) -> None:
        for name in (
            "cpu_seconds",
            "file_size_bytes",
            "address_space_bytes",
            "memory_bytes",
            "max_processes",
            "open_files",
        ):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ConfigError(f"ResourceLimits.{name} must be a positive int or None")

    def to_config(self) -> dict[str, int | None]:
        """The native ``limits`` object."""
        return {
            "cpu_seconds": self.cpu_seconds,
            "file_size_bytes": self.file_size_bytes,
            "address_space_bytes": self.address_space_bytes,
            "memory_bytes": self.memory_bytes,
            "max_processes": self.max_processes,
            "open_files": self.open_files,
        }


@dataclass(frozen=True, slots=True)
class ExecResult:
    """The outcome of one command.

    Attributes:
        exit_code: the shell's exit status when it exited normally.
        signal: the signal that ended the shell (e.g. 9 after a timeout or a cancel).
        stdout: captured standard output; over the cap, its head and tail with the cut
            stated between them.
        stderr: captured standard error (same rule).
        truncated: whether either stream was cut.
        timed_out: whether the timeout fired (the process group was killed).
        cancelled: whether the cancellation token ended the call.
        duration_ms: wall-clock duration.
        notes: what the backend wants the reader to know (e.g. a cancel that could not
            confirm the process tree was gone).
        killed_reason: why the backend killed the command: ``"memory"`` (its resident
            memory passed ``ResourceLimits.memory_bytes``), ``"timeout"``, or ``None``.
        network: the command's connections through the egress proxy, allowed or refused
            (:class:`~helikon.core.events.NetworkAccess`; only with a ``NetworkPolicy``).
    """

    exit_code: int | None
    signal: int | None
    stdout: str
    stderr: str
    truncated: bool = False
    timed_out: bool = False
    cancelled: bool = False
    duration_ms: int = 0
    notes: tuple[str, ...] = field(default=())
    killed_reason: KilledReason | None = None
    network: tuple[NetworkAccess, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """Exit code 0, not timed out, not cancelled."""
        return self.exit_code == 0 and not self.timed_out and not self.cancelled

    @classmethod
    def from_native(cls, text: str) -> ExecResult:
        """Parse the native ``run()`` JSON."""
        raw: dict[str, Any] = json.loads(text)
        return cls(
            exit_code=raw.get("exit_code"),
            signal=raw.get("signal"),
            stdout=raw.get("stdout", ""),
            stderr=raw.get("stderr", ""),
            truncated=bool(raw.get("truncated", False)),
            timed_out=bool(raw.get("timed_out", False)),
            duration_ms=int(raw.get("duration_ms", 0)),
            killed_reason=_killed_reason(raw.get("killed_reason")),
        )


def _killed_reason(value: object) -> KilledReason | None:
    if value == "memory":
        return "memory"
    if value == "timeout":
        return "timeout"
    return None


@runtime_checkable
class ExecutionBackend(Protocol):
    """Runs shell commands for the Bash tool; swap it to change the containment tier."""

    def guarantees(self) -> SandboxGuarantees:
        """What this backend enforces."""
        ...

    async def run(
        self,
        command: str,
        *,
        timeout: float | None = None,
        cancel: CancellationToken | None = None,
    ) -> ExecResult:
        """Run ``command`` with ``bash -c`` in the workspace root.

        Bash is the shell the command matcher models; a backend that runs another shell
        must say so with an ``unanalysed_shell`` attribute (a reason string), so rules and
        guards treat its commands as not analysable.

        Args:
            command: the shell command.
            timeout: seconds before the process group is killed (``None``: the backend's
                default).
            cancel: when it fires, the call returns promptly with ``cancelled=True`` and
                the command's processes are killed.
        """
        ...
