"""A resume runs under the ``RunConfig`` its run paused under.

A paused run's :class:`~helikon.RunState` keeps the fields of its config (``run_config``).
On resume:

* no ``run_config`` given: the stored one is used (so ``Runner.resume(agent, state, ...)``
  continues a run started with ``RunConfig(approval="defer", max_turns=4)`` under
  ``max_turns=4``, not under the agent's own config);
* a ``run_config`` given: every field but ``approval`` must equal the stored one, else the
  resume is refused (:class:`~helikon.errors.ResumeRefused`) naming each differing field
  with both values. ``approval`` may differ: a resume may answer later asks inline.

A state without ``run_config`` (a pattern run on its own config) resumes as before: under
the given config, else the agent's (pattern's) own with ``approval="defer"``.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from helikon.core.context import RunConfig
from helikon.core.run_state import RunState
from helikon.core.usage_limits import UsageLimits
from helikon.errors import ConfigError, ResumeRefused

__all__ = ["config_fields", "resume_config"]

_FREE = ("approval",)
"""Fields a resume may change."""


def config_fields(config: RunConfig) -> dict[str, Any]:
    """``config`` as a JSON-ready dict (what ``RunState.run_config`` holds).

    Example:
        >>> config_fields(RunConfig(max_turns=4))["max_turns"]
        4
    """
    return asdict(config)


def _config(raw: dict[str, Any]) -> RunConfig:
    """The ``RunConfig`` a state stored.

    Raises:
        ResumeRefused: the stored fields are not a RunConfig this helikon reads.
    """
    try:
        values = dict(raw)
        limits = values.get("usage_limits")
        if isinstance(limits, dict):
            values["usage_limits"] = UsageLimits(**limits)
        return RunConfig(**values)
    except (TypeError, ConfigError) as exc:
        raise ResumeRefused(f"the RunState's run_config is not readable: {exc}") from None


def resume_config(state: RunState, given: RunConfig | None, fallback: RunConfig) -> RunConfig:
    """The config a resume of ``state`` runs under (see the module doc).

    Raises:
        ResumeRefused: ``given`` differs from the stored config in a field other than
            ``approval`` (the message names each field, with the value at the pause and the
            value given, and the fix).
    """
    if state.run_config is None:
        return given if given is not None else fallback
    paused = _config(state.run_config)
    if given is None:
        return paused
    differ = [
        f"{f.name} ({getattr(paused, f.name)!r} at the pause, {getattr(given, f.name)!r} now)"
        for f in fields(RunConfig)
        if f.name not in _FREE and getattr(paused, f.name) != getattr(given, f.name)
    ]
    if differ:
        raise ResumeRefused(
            f"the resume's run_config differs from the one run {state.run_id} paused under: "
            f"{', '.join(differ)}; resume without run_config (the paused run's is used) or "
            "with the same values"
        )
    return given
