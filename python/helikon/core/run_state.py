"""RunState: everything needed to resume a paused run, later and in another process.

A run that pauses for approval (``RunConfig(approval="defer")``) ends with a
``RunInterrupted`` event carrying a :class:`RunState`. It is a plain, versioned JSON value:

* ``loop_state`` — the loop machine's ``NeedsApproval`` state (turn, usage, waiting calls);
* ``agent`` / ``agent_path`` / ``config_fingerprint`` — the root agent, the chain of agents
  down to the one that asked (handoff targets, agents-as-tools, graph nodes), and a digest
  of that agent's loop configuration (tools, handoffs, output type, turn limit), so a
  resume with a changed agent is refused instead of guessing;
* ``session_id`` / ``session_position`` — the session the run recorded into and how many
  events its log held at the pause; without a session, ``conversation`` holds the
  conversation instead;
* ``run_input`` / ``run_items`` — the run's input (as ``RunResult.to_input_list`` starts
  it) and the items it added before the pause (``RunResult.new_items`` so far), so the
  resumed run's result carries the whole conversation on as an uninterrupted run's would;
* ``usage`` — tokens spent so far; ``pending`` — the waiting calls with the arguments the
  model gave and the permission reason; ``remembered`` — per-tool answers kept for the run;
  ``nested`` — the states of agent-as-tool sub-runs that paused inside a call;
* ``paused_in`` — a random id of the process that paused (a state paused without a session
  resumes without one only there, where its resume-once claim is kept);
* ``run_config`` — the :class:`~helikon.RunConfig` the run paused under (its fields), which a
  resume without ``run_config`` uses and a resume with a different one is refused against;
* ``pattern`` / ``steps`` — for a multi-agent pattern (``SequentialAgent``, ``ParallelAgent``,
  ``LoopAgent``, ``SwarmAgent``, ``GraphAgent``): how far it got (finished steps' answers,
  loop iteration, handoff count) and, per step key, the state of each step that paused.

Secrets are treated as in the session log: tool output in ``conversation`` was redacted
before it was recorded, and the permission reasons are redacted here; call arguments are
kept as the model gave them (the session log keeps them too, and a resume runs them).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from helikon.core.items import Item
from helikon.core.spellings import PEER_ATTRIBUTES, peer_attribute
from helikon.core.usage import Usage
from helikon.errors import RunStateError

__all__ = ["PROCESS_ID", "SCHEMA_VERSION", "PendingCall", "RunState", "config_fingerprint"]

PROCESS_ID = uuid.uuid4().hex
"""A random id of this process (``RunState.paused_in``)."""

SCHEMA_VERSION: Literal[1] = 1
"""The version :meth:`RunState.to_json` writes and the only one :meth:`RunState.from_json`
reads today (there is no older one to migrate)."""


def _now() -> datetime:
    return datetime.now(UTC)


class PendingCall(BaseModel):
    """One tool call waiting for a person.

    Attributes:
        call_id: the model's id for the call (the key of ``decisions``).
        tool: the tool's name.
        args: the arguments as the model gave them.
        reason: why the permission pipeline asks (the guard or policy prompt; redacted).
        agent: the name of the agent whose call it is.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    call_id: str
    tool: str
    args: Any = None
    reason: str = ""
    agent: str = ""


class RunState(BaseModel):
    """A paused run, serialisable with :meth:`to_json` and loaded with :meth:`from_json`.

    Example:
        >>> s = RunState(agent="a", config_fingerprint="f", loop_state={"state": "NeedsApproval"},
        ...              pending=[PendingCall(call_id="c1", tool="Bash", reason="ask")])
        >>> RunState.from_json(s.to_json()) == s
        True
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = SCHEMA_VERSION
    run_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    agent: str
    agent_path: list[str] = Field(default_factory=list)
    config_fingerprint: str
    loop_state: dict[str, Any]
    session_id: str | None = None
    session_position: int | None = None
    conversation: list[Item] | None = None
    run_input: list[Item] | None = None
    """The run's input items: what the caller passed (without a session's earlier history);
    ``None`` in a state written before this field existed."""
    run_items: list[Item] | None = None
    """The items the run added before the pause (assistant messages, tool calls, tool
    results), in order; ``None`` in a state written before this field existed."""
    usage: Usage = Field(default_factory=Usage)
    pending: list[PendingCall] = Field(default_factory=list)
    remembered: dict[str, Literal["approve", "deny"]] = Field(default_factory=dict)
    nested: dict[str, RunState] = Field(default_factory=dict)
    """Per call id of an agent-as-tool call: the state of its sub-run, which paused inside
    it (its waiting calls are listed in ``pending`` too)."""
    paused_in: str | None = Field(default_factory=lambda: PROCESS_ID)
    """The :data:`PROCESS_ID` of the process that paused the run. Without a session, the
    claim that makes a state resume once is kept in that process only, so a resume without
    a session elsewhere is refused (see :func:`helikon.runtimes.resume.claim_resume`)."""
    run_config: dict[str, Any] | None = None
    """The fields of the ``RunConfig`` the paused run ran under (``usage_limits`` as an
    object); ``None`` when it is not known (a pattern run on its own config). See
    :func:`helikon.core.pause.resume_config`."""
    pattern: dict[str, Any] | None = None
    """For a paused pattern: its kind and progress (``{"kind": "sequential", "done":
    {key: answer}, ...}``, see :mod:`helikon.agents.pause`); ``None`` for an agent."""
    steps: dict[str, RunState] = Field(default_factory=dict)
    """For a paused pattern: per step key (node, branch, member), the state of each step that
    paused (their waiting calls are listed in ``pending`` too)."""
    paused_at: datetime = Field(default_factory=_now)

    @property
    def asking_agent(self) -> str:
        """The name of the agent that asked (the last of ``agent_path``, else ``agent``)."""
        return self.agent_path[-1] if self.agent_path else self.agent

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            # another SDK's approve()/reject()/get_interruptions() gets helikon's spelling
            if name in PEER_ATTRIBUTES["RunState"]:
                raise peer_attribute("RunState", name, self)
            return super().__getattr__(name)

    def to_json(self) -> str:
        """The state as JSON text (UTF-8 safe, keys in a stable order)."""
        return self.model_dump_json(exclude_none=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> RunState:
        """Load a state :meth:`to_json` wrote.

        Raises:
            RunStateError: the text is not JSON, its ``schema_version`` is missing or not
                one this helikon reads (the message names it), or a field is wrong (named).
        """
        try:
            raw = json.loads(text)
        except (ValueError, TypeError) as exc:
            raise RunStateError(f"RunState: not JSON ({exc})") from exc
        if not isinstance(raw, dict):
            raise RunStateError(f"RunState: expected a JSON object, got {type(raw).__name__}")
        version = raw.get("schema_version")
        if type(version) is not int or version != SCHEMA_VERSION:
            if type(version) is int:
                newer = "newer than" if version > SCHEMA_VERSION else "older than"
                raise RunStateError(
                    f"RunState schema_version {version} is {newer} the version this helikon "
                    f"reads ({SCHEMA_VERSION}); resume it with the helikon release that wrote it"
                )
            raise RunStateError(
                f"RunState: schema_version must be an integer (this helikon reads "
                f"{SCHEMA_VERSION}), got {version!r}"
            )
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise RunStateError(f"RunState: field {where}: {first['msg']}") from exc


def config_fingerprint(agent_name: str, loop_config_json: str) -> str:
    """A digest of an agent's name and loop configuration (sha256, hex, 16 chars).

    Example:
        >>> config_fingerprint("a", "{}") == config_fingerprint("a", "{}")
        True
    """
    digest = hashlib.sha256(f"{agent_name}\0{loop_config_json}".encode()).hexdigest()
    return digest[:16]
