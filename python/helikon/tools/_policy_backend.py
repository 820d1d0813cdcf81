"""The shared half of the native-policy backends (host and OS sandbox)."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from helikon.core.cancel import CancellationToken
from helikon.errors import ConfigError
from helikon.tools._posix_runner import DEFAULT_ENV_ALLOWLIST, PORTABLE_NOTES, PosixSpec, run_posix
from helikon.tools._runner import run_policy
from helikon.tools._shell import ShellChoice
from helikon.tools.backend import ExecResult, Isolation, ResourceLimits, SandboxGuarantees
from helikon.tools.sandbox import Sandbox
from helikon.tools.sandbox_native import SandboxPolicy

__all__ = ["PolicyBackend", "base_config"]

DEFAULT_TIMEOUT_S = 120.0
#: Whether this platform has the native launcher (Linux). Elsewhere host mode runs on the
#: portable POSIX runner (:mod:`helikon.tools._posix_runner`) and the OS sandbox refuses.
NATIVE_LAUNCHER = sys.platform.startswith("linux")


def base_config(
    owner: str,
    sandbox: Sandbox,
    *,
    mode: str,
    timeout: float,
    env_allowlist: Sequence[str] | None,
    env: Mapping[str, str] | None,
    limits: ResourceLimits | None,
    output_cap_bytes: int,
    kill_grace_ms: int,
    shell: str,
) -> dict[str, Any]:
    """The native config keys both backends share (``owner`` names the class in errors)."""
    check_timeout(f"{owner}.timeout", timeout)
    if output_cap_bytes < 1:
        raise ConfigError(f"{owner}.output_cap_bytes must be >= 1, got {output_cap_bytes}")
    if kill_grace_ms < 0:
        raise ConfigError(f"{owner}.kill_grace_ms must be >= 0, got {kill_grace_ms}")
    if isinstance(env_allowlist, str):
        raise ConfigError(f"{owner}.env_allowlist must be a list of names, not a string")
    config: dict[str, Any] = {
        "root": str(sandbox.root),
        "mode": mode,
        "limits": (limits or ResourceLimits()).to_config(),
        "output_cap_bytes": output_cap_bytes,
        "kill_grace_ms": kill_grace_ms,
        "shell": shell,
    }
    if env_allowlist is not None:
        config["env_allowlist"] = list(env_allowlist)
    if env:
        config["env"] = dict(env)
    return config


def check_timeout(label: str, timeout: float) -> None:
    """Raise :class:`ConfigError` unless ``timeout`` is a positive finite number."""
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise ConfigError(f"{label} must be a number of seconds, got {type(timeout).__name__}")
    if not math.isfinite(timeout) or timeout <= 0:
        raise ConfigError(f"{label} must be > 0 seconds, got {timeout}")


class PolicyBackend:
    """A backend over one compiled native :class:`~helikon._native.SandboxPolicy`."""

    _policy: SandboxPolicy
    _guarantees: SandboxGuarantees
    sandbox: Sandbox
    timeout: float

    _posix: PosixSpec | None = None
    _shell: ShellChoice

    @property
    def shell(self) -> str:
        """The absolute path of the shell commands run with (``<shell> -c command``)."""
        return self._shell.path

    @property
    def unanalysed_shell(self) -> str | None:
        """``None`` when commands run with bash (the shell the command matcher models),
        else why they cannot be analysed: every Bash call under deny/allow rules or guards
        then gets the worst case (refused, or asked), with this reason."""
        return self._shell.unanalysed

    def _init_policy(self, sandbox: Sandbox, timeout: float, config: dict[str, Any]) -> None:
        self.sandbox = sandbox
        self.timeout = float(timeout)
        if config["mode"] == "host" and not NATIVE_LAUNCHER:
            self._posix = _posix_spec(config)
            self._guarantees = SandboxGuarantees(
                filesystem=Isolation.NONE,
                network=Isolation.NONE,
                syscalls=Isolation.NONE,
                label="host (no containment)",
                notes=PORTABLE_NOTES,
            )
            return
        self._policy = SandboxPolicy(json.dumps(config))
        self._guarantees = SandboxGuarantees.from_json(self._policy.guarantees())

    @property
    def policy(self) -> SandboxPolicy:
        """The compiled native policy.

        Raises:
            ConfigError: this backend runs on the portable POSIX runner (not Linux), so
                there is no native policy.
        """
        if self._posix is not None:
            raise ConfigError(
                f"{type(self).__name__} runs on the portable POSIX runner on {sys.platform}; "
                "there is no native policy"
            )
        return self._policy

    def guarantees(self) -> SandboxGuarantees:
        """What this backend enforces."""
        return self._guarantees

    async def run(
        self,
        command: str,
        *,
        timeout: float | None = None,
        cancel: CancellationToken | None = None,
    ) -> ExecResult:
        """Run ``command`` with the shell in the sandbox root.

        The native call blocks, so it runs in a worker thread. When ``cancel`` fires, the
        call returns within a fraction of a second with ``cancelled=True`` (and whatever
        output was captured) after the command's process tree has been killed; if the
        asyncio task itself is cancelled, the same kill happens before ``CancelledError``
        propagates. See :mod:`helikon.tools._runner` for how, and for the one platform
        limit (no ``/proc/<pid>/task/<tid>/children``: the timeout ends the command).

        Args:
            command: the shell command (``<shell> -c command``).
            timeout: seconds (default: the backend's ``timeout``). On expiry the process
                group gets SIGTERM, then SIGKILL, and every descendant is swept.
            cancel: a cancellation token.

        Raises:
            ConfigError: a non-positive timeout or a NUL byte in the command.
            ToolOther: the child could not be confined, so it did not run.
        """
        t = self.timeout if timeout is None else timeout
        check_timeout("timeout", t)
        if self._posix is not None:
            return await run_posix(self._posix, command, t, cancel)
        return await run_policy(self._policy, command, t, cancel)


def _posix_spec(config: dict[str, Any]) -> PosixSpec:
    """The portable runner's settings from the same config the native policy takes."""
    return PosixSpec(
        root=config["root"],
        shell=config["shell"],
        env_allowlist=tuple(config.get("env_allowlist", DEFAULT_ENV_ALLOWLIST)),
        env=dict(config.get("env", {})),
        limits=ResourceLimits(**config["limits"]),
        output_cap_bytes=config["output_cap_bytes"],
        kill_grace_ms=config["kill_grace_ms"],
    )
