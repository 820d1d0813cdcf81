""":class:`ServerConfig`: the limits and switches of an :class:`AgentServer`."""

from __future__ import annotations

from dataclasses import dataclass

from helikon.errors import ConfigError

__all__ = ["ServerConfig"]


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Limits, timeouts and optional routes.

    Args:
        max_body_bytes: largest accepted request body; larger answers 413 (default 1 MiB).
        max_concurrent_runs: runs in flight (including ones queued behind a session) before
            new runs answer 503 with ``Retry-After``; ``None`` = no cap (default 64).
        run_timeout: wall-clock limit of every run in seconds (the run ends with
            ``run_failed`` of kind ``Timeout``); the shorter of this and the agent's own
            ``RunConfig.timeout`` wins. ``None`` = the agent's own (default).
        retention: seconds a finished run stays readable and replayable (default 300).
        max_retained_runs: finished runs kept at most; the oldest go first (default 1000).
        keepalive: seconds between SSE keep-alive comments on an idle stream (default 15).
        cancel_grace: seconds a cancelled run may take to wind down (and be recorded)
            before its task is cancelled outright (default 5).
        openapi: serve ``GET /openapi.json`` (default True).
        health_path: path of a plain ``ok`` liveness route, exempt from auth; ``None`` for
            none (default ``"/healthz"``).

    Raises:
        ConfigError: a value is out of range (the message names the field).

    Example:
        >>> ServerConfig(max_concurrent_runs=8).max_concurrent_runs
        8
    """

    max_body_bytes: int = 1 << 20
    max_concurrent_runs: int | None = 64
    run_timeout: float | None = None
    retention: float = 300.0
    max_retained_runs: int = 1000
    keepalive: float = 15.0
    cancel_grace: float = 5.0
    openapi: bool = True
    health_path: str | None = "/healthz"

    def __post_init__(self) -> None:
        if self.max_body_bytes < 1:
            raise ConfigError(
                f"ServerConfig.max_body_bytes must be >= 1, got {self.max_body_bytes}"
            )
        if self.max_concurrent_runs is not None and self.max_concurrent_runs < 1:
            raise ConfigError(
                "ServerConfig.max_concurrent_runs must be >= 1 or None (no cap), got "
                f"{self.max_concurrent_runs}"
            )
        for name in ("run_timeout",):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ConfigError(f"ServerConfig.{name} must be > 0 seconds or None, got {value}")
        for name in ("retention", "keepalive", "cancel_grace"):
            value = getattr(self, name)
            if value <= 0:
                raise ConfigError(f"ServerConfig.{name} must be > 0 seconds, got {value}")
        if self.max_retained_runs < 0:
            raise ConfigError(
                f"ServerConfig.max_retained_runs must be >= 0, got {self.max_retained_runs}"
            )
        if self.health_path is not None and not self.health_path.startswith("/"):
            raise ConfigError(
                f"ServerConfig.health_path must start with '/', got {self.health_path!r}"
            )
