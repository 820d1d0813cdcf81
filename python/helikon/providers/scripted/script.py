"""Script steps for :class:`MockModel` and the JSON script-file format.

A script is one list of steps per model call. In Python, write steps with the constructors
below (the notation of helikon's field cases)::

    [Text("Checking."), Call("c1", "lookup", {"q": "x"}), Finish("tool_calls")]

In a JSON script file each step is a one-key object (the spec's ``ScriptEvent`` mirror)::

    {"token": "hello"}                       text delta
    {"reasoning": "thinking..."}             reasoning delta
    {"tool_call": {"call_id": "c1", "name": "lookup", "args": {"q": "x"}}}
    {"tool_call_delta": {"call_id": "c1", "name": "lookup", "args_delta": "{\\"q\\":"}}
    {"usage": {"input_tokens": 10, "output_tokens": 3}}   or [input, output, cached, reasoning]
    {"finish": "stop" | "length" | "tool_calls" | "content_filter" | "refusal" | "other"}
    {"delay_ms": 50}                         wait (honours cancellation)
    {"error": {"kind": "RateLimited", "message": "slow down", "retry_after": 1.5}}

A file holds ``{"default": [script, ...], "cases": {"case-id": [script, ...]}}``; a bare
list of scripts is accepted as the default set. A script without a ``finish`` step ends
with ``stop`` (or ``tool_calls`` when it made a call).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from helikon.core.model import FinishReason
from helikon.errors import ConfigError

__all__ = [
    "Call",
    "Delay",
    "Fail",
    "Finish",
    "Reasoning",
    "Script",
    "ScriptFile",
    "Step",
    "Text",
    "Usage",
    "step_from_json",
]


@dataclass(frozen=True, slots=True)
class Text:
    """Stream ``text`` as one token delta."""

    text: str


@dataclass(frozen=True, slots=True)
class Reasoning:
    """Stream a reasoning delta (with an optional provider signature)."""

    text: str
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class Call:
    """Make a tool call. ``args`` is a dict (sent as JSON) or a raw argument string."""

    call_id: str
    name: str
    args: Any = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Usage:
    """Report token usage for this call (``input``/``output`` tokens)."""

    input: int = 0
    output: int = 0
    cached_input: int = 0
    reasoning: int = 0


@dataclass(frozen=True, slots=True)
class Finish:
    """End the call with a finish reason (``"stop"``, ``"tool_calls"``, ...)."""

    reason: str = "stop"


@dataclass(frozen=True, slots=True)
class Delay:
    """Wait ``seconds`` before the next step; cancellation ends the wait."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Fail:
    """Raise a model error: ``kind`` is a ModelError variant (``RateLimited``, ...)."""

    kind: str = "Other"
    message: str = "scripted failure"
    retry_after: float | None = None


Step: TypeAlias = Text | Reasoning | Call | Usage | Finish | Delay | Fail
Script: TypeAlias = list[Step]

_FINISH = {r.value for r in FinishReason}


def step_from_json(obj: Any, where: str) -> Step:
    """Parse one JSON script step; ``where`` names it in errors.

    Raises:
        ConfigError: unknown or malformed step (the message names ``where`` and the keys).
    """
    if not isinstance(obj, dict) or len(obj) != 1:
        raise ConfigError(f"{where}: a script step is an object with exactly one key, got {obj!r}")
    ((key, val),) = obj.items()
    try:
        if key == "token":
            return Text(str(val))
        if key == "reasoning":
            return Reasoning(str(val))
        if key == "tool_call":
            return Call(str(val["call_id"]), str(val["name"]), val.get("args", {}))
        if key == "tool_call_delta":
            return Call(
                str(val["call_id"]), str(val.get("name", "")), str(val.get("args_delta", ""))
            )
        if key == "usage" and isinstance(val, list):
            return Usage(*(int(v) for v in val))
        if key == "usage":
            return Usage(
                int(val.get("input_tokens", 0)),
                int(val.get("output_tokens", 0)),
                int(val.get("cached_input_tokens", 0)),
                int(val.get("reasoning_tokens", 0)),
            )
        if key == "finish":
            if val not in _FINISH:
                raise ConfigError(f"{where}: finish must be one of {sorted(_FINISH)}, got {val!r}")
            return Finish(str(val))
        if key == "delay_ms":
            return Delay(float(val) / 1000.0)
        if key == "error":
            return Fail(
                str(val.get("kind", "Other")),
                str(val.get("message", "scripted failure")),
                val.get("retry_after"),
            )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(f"{where}: malformed {key!r} step {val!r}: {exc}") from None
    raise ConfigError(
        f"{where}: unknown script step {key!r}; use token, reasoning, tool_call, "
        "tool_call_delta, usage, finish, delay_ms or error"
    )


@dataclass(slots=True)
class ScriptFile:
    """A parsed script file: the default scripts and per-case scripts."""

    default: list[Script]
    cases: dict[str, list[Script]]

    @classmethod
    def loads(cls, text: str, *, source: str = "<script>") -> ScriptFile:
        """Parse script-file JSON text.

        Raises:
            ConfigError: invalid JSON or an invalid step (names ``source`` and the position).
        """
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{source}: invalid JSON: {exc}") from None
        if isinstance(doc, list):
            doc = {"default": doc}
        if not isinstance(doc, dict):
            raise ConfigError(f"{source}: a script file is an object with 'default' and 'cases'")
        unknown = set(doc) - {"default", "cases"}
        if unknown:
            raise ConfigError(
                f"{source}: unknown keys {sorted(unknown)}; use 'default' and 'cases'"
            )

        def scripts(raw: Any, where: str) -> list[Script]:
            if not isinstance(raw, list) or not all(isinstance(s, list) for s in raw):
                raise ConfigError(f"{where}: expected a list of scripts (each a list of steps)")
            return [
                [step_from_json(st, f"{where}[{i}][{j}]") for j, st in enumerate(s)]
                for i, s in enumerate(raw)
            ]

        default = scripts(doc.get("default", []), f"{source}: default")
        cases_raw = doc.get("cases", {})
        if not isinstance(cases_raw, dict):
            raise ConfigError(f"{source}: 'cases' must map case ids to script lists")
        cases = {k: scripts(v, f"{source}: cases.{k}") for k, v in cases_raw.items()}
        return cls(default, cases)

    @classmethod
    def load(cls, path: str | Path) -> ScriptFile:
        """Read and parse a script file.

        Raises:
            ConfigError: the file is missing or invalid.
        """
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read script file {p}: {exc.strerror}") from None
        return cls.loads(text, source=str(p))

    def scripts_for(self, case: str | None = None) -> list[Script]:
        """The scripts for ``case`` (falling back to the default set)."""
        if case is not None and case in self.cases:
            return self.cases[case]
        return self.default
