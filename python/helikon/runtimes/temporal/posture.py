"""The worker-side security posture and the seeded context factory.

The caller's :class:`~helikon.RunContext` never crosses the client→worker boundary. The
worker builds each tool call's context from its own :class:`WorkerPosture` (permission
settings and output redaction: the worker's configuration is authoritative) and, when the
client attached a seed, from ``ctx_factory(seed)`` (request-scoped caller data, never
posture).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from helikon.core.context import RunContext
from helikon.core.permissions import Permissions, RedactionSettings
from helikon.errors import ConfigError

__all__ = ["CtxFactory", "WorkerPosture"]

CtxFactory = Callable[[Any], Any]
"""``fn(seed) -> user_ctx``: rebuilds the caller's request data from the JSON seed."""


@dataclass(frozen=True, slots=True)
class WorkerPosture:
    """Permissions and redaction every tool call on this worker runs under.

    ``WorkerPosture()`` is the default posture of an ephemeral run: ``DEFAULT`` mode, no
    rules, the built-in destructive guards, redaction on.

    Args:
        permissions: mode, deny/allow/guard rules, policy, approval handler, built-in guards.
        redaction: output redaction on or off, extra literal secrets.

    Raises:
        ConfigError: a field is not a :class:`~helikon.core.permissions.Permissions` /
            :class:`~helikon.core.permissions.RedactionSettings`.

    Example:
        >>> from helikon import PermissionMode
        >>> from helikon.core.permissions import Permissions
        >>> WorkerPosture(Permissions(mode=PermissionMode.PLAN)).permissions.mode.value
        'plan'
    """

    permissions: Permissions = field(default_factory=Permissions)
    redaction: RedactionSettings = field(default_factory=RedactionSettings)

    def __post_init__(self) -> None:
        if not isinstance(self.permissions, Permissions):
            raise ConfigError(
                "WorkerPosture(permissions=...) must be a Permissions, got "
                f"{type(self.permissions).__name__}"
            )
        if not isinstance(self.redaction, RedactionSettings):
            raise ConfigError(
                "WorkerPosture(redaction=...) must be a RedactionSettings, got "
                f"{type(self.redaction).__name__}"
            )

    def context(self, user_ctx: Any) -> RunContext[Any]:
        """A fresh run context carrying ``user_ctx`` under this posture."""
        return replace(
            RunContext.ephemeral(user_ctx), permissions=self.permissions, redaction=self.redaction
        )
