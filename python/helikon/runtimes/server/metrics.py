"""``GET /metrics``: the server's counters in the Prometheus text format (version 0.0.4).

Written by hand (the format is small; no client library needed). Every name starts with
``helikon_server_``:

* ``runs{status}`` (gauge): runs the server holds now, by status (retained finished ones
  included); ``queue_depth`` (gauge): requests waiting for a run slot; ``run_slots_in_use``
  (gauge);
* ``runs_started_total``, ``runs_finished_total{status}``, ``run_errors_total{kind}`` (the
  ``run_failed`` error kind, or why a run ended without one) and
  ``http_errors_total{status}`` (responses with a 4xx/5xx status) (counters);
* ``time_to_first_event_seconds`` (from the request's arrival, queueing included, to the
  run's first event) and ``run_duration_seconds`` (arrival to the run's end) (histograms).
"""

from __future__ import annotations

import bisect
import collections
import math
from collections.abc import Iterable, Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CONTENT_TYPE", "Histogram", "HttpErrorCounter", "ServerMetrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
"""Upper bounds in seconds (``+Inf`` is added)."""

_PREFIX = "helikon_server_"


class Histogram:
    """Observations counted per bucket (upper bounds in seconds), with their sum."""

    def __init__(self, bounds: tuple[float, ...] = BUCKETS) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last one: above every bound
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value

    def lines(self, name: str) -> list[str]:
        out = []
        total = 0
        for bound, count in zip((*self.bounds, math.inf), self.counts, strict=True):
            total += count
            out.append(f'{name}_bucket{{le="{_number(bound)}"}} {total}')
        out.append(f"{name}_sum {_number(self.sum)}")
        out.append(f"{name}_count {total}")
        return out


class ServerMetrics:
    """What an :class:`~helikon.runtimes.server.AgentServer` counts while it serves."""

    def __init__(self) -> None:
        self.started = 0
        self.finished: collections.Counter[str] = collections.Counter()
        self.run_errors: collections.Counter[str] = collections.Counter()
        self.http_errors: collections.Counter[int] = collections.Counter()
        self.first_event = Histogram()
        self.duration = Histogram()

    def render(self, *, runs: Mapping[str, int], queue_depth: int, slots_in_use: int) -> str:
        """The text exposition, given the gauges read at scrape time."""
        lines: list[str] = []
        _family(lines, "runs", "gauge", "Runs held by the server, by status.")
        lines += _labelled("runs", "status", runs)
        _family(lines, "queue_depth", "gauge", "Requests waiting for a run slot.")
        lines.append(f"{_PREFIX}queue_depth {queue_depth}")
        _family(lines, "run_slots_in_use", "gauge", "Run slots held (runs in flight).")
        lines.append(f"{_PREFIX}run_slots_in_use {slots_in_use}")
        _family(lines, "runs_started_total", "counter", "Runs started.")
        lines.append(f"{_PREFIX}runs_started_total {self.started}")
        _family(lines, "runs_finished_total", "counter", "Runs over, by final status.")
        lines += _labelled("runs_finished_total", "status", self.finished)
        _family(lines, "run_errors_total", "counter", "Runs that failed, by error kind.")
        lines += _labelled("run_errors_total", "kind", self.run_errors)
        _family(lines, "http_errors_total", "counter", "Error responses, by HTTP status.")
        lines += _labelled("http_errors_total", "status", self.http_errors)
        for name, help_text, hist in (
            (
                "time_to_first_event_seconds",
                "Seconds from a run request's arrival to the run's first event.",
                self.first_event,
            ),
            (
                "run_duration_seconds",
                "Seconds from a run request's arrival to the run's end.",
                self.duration,
            ),
        ):
            _family(lines, name, "histogram", help_text)
            lines += hist.lines(_PREFIX + name)
        return "\n".join(lines) + "\n"


class HttpErrorCounter:
    """ASGI middleware counting every HTTP response with a status of 400 or more."""

    def __init__(self, app: ASGIApp, metrics: ServerMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 400:
                self.metrics.http_errors[int(message["status"])] += 1
            await send(message)

        await self.app(scope, receive, sending)


def _family(lines: list[str], name: str, kind: str, help_text: str) -> None:
    lines.append(f"# HELP {_PREFIX}{name} {help_text}")
    lines.append(f"# TYPE {_PREFIX}{name} {kind}")


def _labelled(name: str, label: str, values: Mapping[str, int] | Mapping[int, int]) -> list[str]:
    pairs: Iterable[tuple[object, int]] = sorted(values.items(), key=lambda kv: str(kv[0]))
    return [f'{_PREFIX}{name}{{{label}="{_escape(str(key))}"}} {count}' for key, count in pairs]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf"
    return repr(float(value))
