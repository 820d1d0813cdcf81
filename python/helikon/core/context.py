"""Per-run state: :class:`RunConfig` knobs, :class:`RunContext` and the tools' narrower view."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from helikon.core.cancel import CancellationToken
from helikon.errors import ConfigError

__all__ = ["RunConfig", "RunContext", "ToolContext"]

C = TypeVar("C")


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Per-run knobs.

    Args:
        max_turns: model turns before the run fails with ``MaxTurnsExceeded`` (default 16).
        parallel_tool_call_limit: cap on concurrently running tool calls; ``None`` = no cap.
        max_agent_depth: nesting limit across handoffs and agent-as-tool runs (default 8).
        timeout: wall-clock deadline for the whole run, in seconds; ``None`` = none.

    Raises:
        ConfigError: a value is out of range (the message names the field).

    Example:
        >>> RunConfig(max_turns=4).max_turns
        4
    """

    max_turns: int = 16
    parallel_tool_call_limit: int | None = None
    max_agent_depth: int = 8
    timeout: float | None = None

    def __post_init__(self) -> None:
        if self.max_turns < 1:
            raise ConfigError(f"RunConfig.max_turns must be >= 1, got {self.max_turns}")
        if self.parallel_tool_call_limit is not None and self.parallel_tool_call_limit < 1:
            raise ConfigError(
                "RunConfig.parallel_tool_call_limit must be >= 1 or None (no cap), got "
                f"{self.parallel_tool_call_limit}"
            )
        if self.max_agent_depth < 1:
            raise ConfigError(f"RunConfig.max_agent_depth must be >= 1, got {self.max_agent_depth}")
        if self.timeout is not None and self.timeout <= 0:
            raise ConfigError(f"RunConfig.timeout must be > 0 seconds or None, got {self.timeout}")


@dataclass(slots=True)
class RunContext(Generic[C]):
    """The state one run shares across the loop, tools and sub-agents.

    Build with :meth:`ephemeral` for the all-defaults case and override parts with the
    ``with_*`` setters, which return a new context.

    Attributes:
        user_ctx: your application context (any object; ``None`` when you need none).
        cancel: the run's cancellation token.
        state: run-scoped key/value state shared with sub-agents.
        agent_depth: how deep in an agent nesting chain this run is (0 = root).

    Example:
        >>> ctx = RunContext.ephemeral({"user": "u-1"})
        >>> ctx.user_ctx["user"]
        'u-1'
    """

    user_ctx: C
    cancel: CancellationToken = field(default_factory=CancellationToken)
    state: dict[str, Any] = field(default_factory=dict)
    agent_depth: int = 0

    @classmethod
    def ephemeral(cls, user_ctx: C = None) -> RunContext[C]:  # type: ignore[assignment]
        """A context with a fresh cancellation token and empty state."""
        return cls(user_ctx=user_ctx)

    def with_cancel(self, cancel: CancellationToken) -> RunContext[C]:
        """A copy using ``cancel`` as the run's token."""
        return RunContext(self.user_ctx, cancel, self.state, self.agent_depth)

    def with_user_ctx(self, user_ctx: C) -> RunContext[C]:
        """A copy carrying ``user_ctx``."""
        return RunContext(user_ctx, self.cancel, self.state, self.agent_depth)

    def nested(self) -> RunContext[C]:
        """The context for a sub-agent: same token and state, depth + 1."""
        return RunContext(self.user_ctx, self.cancel, self.state, self.agent_depth + 1)


@dataclass(frozen=True, slots=True)
class ToolContext(Generic[C]):
    """A tool's view of the run: no session handle, so tools cannot bypass persistence.

    Attributes:
        user_ctx: the run's application context.
        state: run-scoped state shared across sub-agents.
        cancel: the run's cancellation token; long tools should honour it.
        call_id: the id of the tool call being served.
        agent_name: the agent that made the call.
        agent_depth: nesting depth of that agent.
        max_agent_depth: the run's nesting limit.
    """

    user_ctx: C
    state: dict[str, Any]
    cancel: CancellationToken
    call_id: str
    agent_name: str
    agent_depth: int = 0
    max_agent_depth: int = 8
