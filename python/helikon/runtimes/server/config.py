""":class:`ServerConfig`: the limits and switches of an :class:`AgentServer`."""

from __future__ import annotations

import math
from dataclasses import dataclass

from helikon.errors import ConfigError

__all__ = ["ServerConfig"]


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Limits, timeouts and optional routes.

    Args:
        max_body_bytes: largest accepted request body; larger answers 413 (default 1 MiB).
        max_concurrent_runs: runs in flight (including ones queued behind a session); a
            request over it waits for a slot in the queue below. ``None`` = no cap
            (default 64). A run paused for approval gives its slot back; its resume is
            not capped.
        max_queued_runs: requests waiting for a slot at most, served in arrival order
            (their responses are held back: backpressure); one more answers 503
            ``too_many_runs`` with ``Retry-After``. 0 = refuse at once when every slot
            is taken (default 256).
        queue_timeout: seconds a request may wait for a slot before it answers 503
            ``too_many_runs``; ``None`` = as long as it takes (default 30).
        run_timeout: wall-clock limit of every run in seconds (the run ends with
            ``run_failed`` of kind ``Timeout``); the shorter of this and the agent's own
            ``RunConfig.timeout`` wins. ``None`` = the agent's own (default).
        retention: seconds a finished run stays readable and replayable (default 300).
        max_retained_runs: finished runs kept at most; the oldest go first (default 1000).
        keepalive: seconds between SSE keep-alive comments on an idle stream (default 15).
        cancel_grace: seconds a cancelled run may take to wind down (and be recorded)
            before its task is cancelled outright (default 5).
        approval_timeout: seconds a run paused for approval (status ``needs_approval``)
            waits for ``POST .../approvals``; then every waiting call is denied (a wait that
            times out is a denial, never an approval). ``None`` = wait as long as the server
            runs (default 3600).
        openapi: serve ``GET /openapi.json`` (default True).
        health_path: path of a plain ``ok`` liveness route, exempt from auth; ``None`` for
            none (default ``"/healthz"``).
        metrics_path: path of the Prometheus text metrics (runs by status, queue depth,
            time to first event, run duration, errors by kind; behind ``auth`` like every
            route but the health one); ``None`` for none (default ``"/metrics"``).
        ui: serve the run inspector page at ``/ui`` (default False: off unless asked for;
            ``helikon serve --ui``).

    Raises:
        ConfigError: a value has the wrong type or is out of range (the message names the
            field and what it accepts).

    Example:
        >>> ServerConfig(max_concurrent_runs=8).max_concurrent_runs
        8
    """

    max_body_bytes: int = 1 << 20
    max_concurrent_runs: int | None = 64
    max_queued_runs: int = 256
    queue_timeout: float | None = 30.0
    run_timeout: float | None = None
    retention: float = 300.0
    max_retained_runs: int = 1000
    keepalive: float = 15.0
    cancel_grace: float = 5.0
    approval_timeout: float | None = 3600.0
    openapi: bool = True
    health_path: str | None = "/healthz"
    metrics_path: str | None = "/metrics"
    ui: bool = False

    def __post_init__(self) -> None:
        _count("max_body_bytes", self.max_body_bytes, minimum=1)
        _count("max_concurrent_runs", self.max_concurrent_runs, minimum=1, none="no cap")
        _count("max_queued_runs", self.max_queued_runs, minimum=0)
        _seconds("queue_timeout", self.queue_timeout, none="as long as it takes")
        _seconds("run_timeout", self.run_timeout, none="the agent's own")
        _seconds("approval_timeout", self.approval_timeout, none="wait as long as the server runs")
        for name in ("retention", "keepalive", "cancel_grace"):
            _seconds(name, getattr(self, name))
        _count("max_retained_runs", self.max_retained_runs, minimum=0)
        if not isinstance(self.openapi, bool):
            raise ConfigError(
                f"ServerConfig.openapi must be True or False, got {_shown(self.openapi)}"
            )
        for name, example in (("health_path", "/healthz"), ("metrics_path", "/metrics")):
            path = getattr(self, name)
            if path is not None and (not isinstance(path, str) or not path.startswith("/")):
                raise ConfigError(
                    f"ServerConfig.{name} must be a path starting with '/' (e.g. "
                    f"'{example}') or None (no {name[:-5]} route), got {_shown(path)}"
                )
        if not isinstance(self.ui, bool):
            raise ConfigError(f"ServerConfig.ui must be True or False, got {_shown(self.ui)}")


def _shown(value: object) -> str:
    return f"{value!r} ({type(value).__name__})"


def _count(name: str, value: object, *, minimum: int, none: str | None = None) -> None:
    """Check an int field (``none``: what ``None`` means, when it is allowed)."""
    if value is None and none is not None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        alt = f" or None ({none})" if none is not None else ""
        raise ConfigError(
            f"ServerConfig.{name} must be an int >= {minimum}{alt}, got {_shown(value)}"
        )


def _seconds(name: str, value: object, *, none: str | None = None) -> None:
    """Check a duration in seconds: a finite number > 0 (``None`` allowed when ``none``)."""
    if value is None and none is not None:
        return
    ok = (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )
    if not ok:
        alt = f" or None ({none})" if none is not None else ""
        raise ConfigError(
            f"ServerConfig.{name} must be a number of seconds > 0{alt}, got {_shown(value)}"
        )
