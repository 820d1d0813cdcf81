"""Load an ``agents.toml`` sidecar into agents.

Format (paths are relative to the sidecar's directory)::

    [agents.budget_assistant]
    description  = "Answers budgeting questions"
    instructions = "You are a budgeting assistant."      # or { file = "instructions.md" }
    model        = { provider = "mock", script = "script.json" }
    # or model   = { provider = "openai", id = "gpt-5-mini" }
    tools        = ["lookup_spending"]
    handoffs     = ["investing"]                         # other agents in this file (a
                                                         # cycle needs [run] max_handoffs)
    run          = { max_turns = 8 }                     # over [run]; see .sidecar_run
    hooks        = ["audit:AuditHook"]                   # also input_guardrails,
                                                         # output_guardrails: .sidecar_hooks

    [tools.lookup_spending]
    python = "tools:lookup_spending"                     # module:function, a @tool or a function

    [eval]                                               # optional: see helikon.cli.eval_config
    evaluators = ["exact_match", "tool_trajectory"]

    [run]                                                # optional: helikon.RunConfig values
    max_turns = 8
    timeout   = 120                                      # seconds

    [session]                                            # optional: remember conversations
    backend = "sqlite"
    path    = "chat.db"

Every problem raises :class:`SidecarError` naming the file, the key and the fix.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helikon.cli.eval_config import EvalConfig, check_eval
from helikon.cli.sidecar_file import SidecarError, SidecarFile
from helikon.cli.sidecar_hooks import HOOK_FIELDS, build_hooks
from helikon.cli.sidecar_mcp import McpConnector, check_mcp_tables
from helikon.cli.sidecar_models import build_model, check_model, override_model
from helikon.cli.sidecar_policy import PermissionSettings, build_output_type, check_permissions
from helikon.cli.sidecar_run import (
    SessionSettings,
    check_run_table,
    check_session_table,
    merged_run_config,
)
from helikon.cli.sidecar_tools import Toolbox, check_sandbox_table
from helikon.core.agent import Agent
from helikon.core.context import RunConfig, RunContext
from helikon.core.model import Model
from helikon.core.retries import check_output_mode, check_retries
from helikon.core.tool import Tool
from helikon.errors import ConfigError

__all__ = ["Sidecar", "SidecarError", "load_sidecar"]

_AGENT_KEYS = {
    "description",
    "instructions",
    "model",
    "tools",
    "handoffs",
    "output_type",
    "output_mode",
    "retries",
    "mcp",
    "run",
    *HOOK_FIELDS,
}
_TOP_KEYS = {"agents", "tools", "eval", "permissions", "sandbox", "mcp", "run", "session"}


@dataclass
class Sidecar(SidecarFile):
    """A parsed sidecar: agent definitions and tool references, built on demand."""

    agents: dict[str, dict[str, Any]]
    tools: dict[str, dict[str, Any]]
    eval: EvalConfig = field(default_factory=EvalConfig)
    """The checked ``[eval]`` table (the defaults when the file has none)."""
    permissions: PermissionSettings = field(default_factory=PermissionSettings)
    """The checked ``[permissions]`` table (the defaults when the file has none)."""
    sandbox: dict[str, Any] | None = None
    """The ``[sandbox]`` table of the built-in Read/Write/Edit/Bash tools, if any."""
    mcp: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The checked ``[mcp.NAME]`` tables."""
    run: dict[str, Any] = field(default_factory=dict)
    """The checked ``[run]`` values every agent starts from."""
    session: SessionSettings | None = None
    """The checked ``[session]`` table, if any."""
    _toolbox: Toolbox | None = None

    def mcp_connector(self) -> McpConnector:
        """A connector that starts the MCP servers agents name and adds their tools (use
        ``async with``; see :mod:`helikon.cli.sidecar_mcp`)."""
        wanted = {n: self._mcp_names(f"agents.{n}", s) for n, s in self.agents.items()}
        return McpConnector(self, self.mcp, wanted)

    def _mcp_names(self, key: str, spec: dict[str, Any]) -> list[str]:
        names = self._names(f"{key}.mcp", spec, "mcp")
        for n in names:
            if n not in self.mcp:
                raise self.err(
                    f"{key}.mcp", f"unknown MCP server {n!r}", f"add [mcp.{n}] with command = [...]"
                )
        return names

    def context(self) -> RunContext[Any]:
        """A fresh run context with the sidecar's ``[permissions]``; every command runs
        the agent with one."""
        return self.permissions.context()

    def _tool(self, key: str, name: str) -> Tool:
        if self._toolbox is None:
            self._toolbox = Toolbox(self, self.tools, self.sandbox)
        return self._toolbox.get(key, name)

    @property
    def default_agent(self) -> str:
        """The alphabetically first agent name."""
        return sorted(self.agents)[0]

    def build(
        self,
        name: str | None = None,
        *,
        model_override: str | None = None,
        case: str | None = None,
    ) -> Agent:
        """Build agent ``name`` (default: the alphabetically first) with its handoffs.

        ``model_override`` (``PROVIDER:ID``) replaces the model of every agent the call
        builds, handoff targets included; they share one model instance, so a
        ``mock:script.json`` override plays one script across the handoffs. Every other
        agent of the file is checked too (without creating live provider clients), so a
        broken file fails here whichever agent is chosen.

        ``case`` (an eval case id) makes every ``mock`` model of the built agents play that
        case's scripts of its script file (``"cases"``), or the ``"default"`` ones.

        Raises:
            SidecarError: unknown agent, bad model, bad tool reference, handoff cycle, in
                any agent of the file.
        """
        name = name or self.default_agent
        if name not in self.agents:
            raise SidecarError(
                f"{self.path}: no agent {name!r}. Fix: use one of {sorted(self.agents)}"
            )
        override = override_model(model_override) if model_override is not None else None
        built = self._build(name, override, {}, case)
        for other in sorted(self.agents):
            if other != name:
                self._check(other, override)
        return built

    def _build(
        self, name: str, override: Model | None, built: dict[str, Agent], case: str | None = None
    ) -> Agent:
        """Build ``name``; ``built`` holds the agents made so far (a handoff cycle, allowed by
        ``[run] max_handoffs`` at load, reuses the agent already made)."""
        if name in built:
            return built[name]
        spec = self.agents[name]
        key = f"agents.{name}"
        instructions = self._instructions(key, spec.get("instructions"))
        model = (
            override
            if override is not None
            else build_model(self, f"{key}.model", spec.get("model"), case=case)
        )
        tools = [self._tool(f"{key}.tools", t) for t in self._names(f"{key}.tools", spec, "tools")]
        targets = self._names(f"{key}.handoffs", spec, "handoffs")
        for h in targets:
            if h not in self.agents:
                raise self.err(
                    f"{key}.handoffs", f"unknown agent {h!r}", "define [agents." + h + "]"
                )
        output_type = build_output_type(self, f"{key}.output_type", spec.get("output_type"))
        output_mode, retries = self._retry_settings(key, spec)
        self._mcp_names(key, spec)
        run_config = self.run_config(name)
        hooks = {f: build_hooks(self, key, f, spec.get(f)) for f in HOOK_FIELDS}
        try:
            agent = Agent(
                name=name,
                model=model,
                instructions=instructions,
                description=self._description(key, spec),
                tools=tools,
                output_type=output_type,
                run_config=run_config,
                output_mode=output_mode,
                retries=retries,
                hooks=hooks["hooks"],
                input_guardrails=hooks["input_guardrails"],
                output_guardrails=hooks["output_guardrails"],
            )
        except ConfigError as exc:
            raise self.err(key, str(exc), "correct the agent's tools and handoffs") from None
        built[name] = agent
        agent.handoffs.extend(self._build(h, override, built, case) for h in targets)
        return agent

    def _check(self, name: str, override: Model | None) -> None:
        """Check agent ``name`` as :meth:`_build` would, without building the agent.

        A live provider's table is checked but no client is made, so a missing API key
        only matters for the agents a run uses.
        """
        spec = self.agents[name]
        key = f"agents.{name}"
        self._instructions(key, spec.get("instructions"))
        if override is None:
            check_model(self, f"{key}.model", spec.get("model"))
        for t in self._names(f"{key}.tools", spec, "tools"):
            self._tool(f"{key}.tools", t)
        self._description(key, spec)
        build_output_type(self, f"{key}.output_type", spec.get("output_type"))
        self._retry_settings(key, spec)
        self._mcp_names(key, spec)
        self.run_config(name)
        for f in HOOK_FIELDS:
            build_hooks(self, key, f, spec.get(f))

    def run_config(self, name: str) -> RunConfig:
        """Agent ``name``'s run settings: ``[run]`` with its own ``run = {...}`` over it.

        Raises:
            SidecarError: a bad ``agents.NAME.run`` value (named).
        """
        key = f"agents.{name}.run"
        return merged_run_config(self.run, check_run_table(self, key, self.agents[name].get("run")))

    def _retry_settings(self, key: str, spec: dict[str, Any]) -> tuple[str | None, int]:
        """``output_mode`` (``"tool"``, ``"native"``, ``"finalize"``; absent: the model's
        default) and ``retries`` (absent: 1) of an agent table."""
        try:
            mode = check_output_mode(f"{key}.output_mode", spec.get("output_mode"))
        except ConfigError:
            raise self.err(
                f"{key}.output_mode",
                f"{spec.get('output_mode')!r} is not an output mode",
                'output_mode = "tool", "native" or "finalize", or leave it out',
            ) from None
        try:
            retries = check_retries(f"{key}.retries", spec.get("retries", 1))
        except ConfigError:
            raise self.err(
                f"{key}.retries", f"{spec.get('retries')!r} is not a count", "retries = 2"
            ) from None
        return mode, retries

    def _description(self, key: str, spec: dict[str, Any]) -> str:
        description = spec.get("description", "")
        if not isinstance(description, str):
            raise self.err(f"{key}.description", "must be a string", 'description = "..."')
        return description

    def _names(self, key: str, spec: dict[str, Any], field_name: str) -> list[str]:
        value = spec.get(field_name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.err(key, "must be a list of names", f'{field_name} = ["name", ...]')
        return value

    def _instructions(self, key: str, value: Any) -> str | None:
        return self.text_or_file(f"{key}.instructions", value)


def load_sidecar(path: str | Path) -> Sidecar:
    """Parse and check a sidecar file.

    Raises:
        SidecarError: unreadable file, bad TOML, unknown keys, missing agents.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise SidecarError(
            f"{p}: cannot read the sidecar ({exc.strerror}). Fix: check the path"
        ) from None
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SidecarError(f"{p}: invalid TOML: {exc}. Fix: correct the syntax") from None
    unknown = set(doc) - _TOP_KEYS
    if unknown:
        raise SidecarError(
            f"{p}: unknown top-level keys {sorted(unknown)}. "
            "Fix: use [agents.*], [tools.*], [mcp.*], [permissions], [sandbox], [eval], [run] "
            "and [session]"
        )
    agents = doc.get("agents")
    if not isinstance(agents, dict) or not agents:
        raise SidecarError(f"{p}: agents: no agents defined. Fix: add an [agents.NAME] table")
    for name, spec in agents.items():
        if not isinstance(spec, dict):
            raise SidecarError(f"{p}: agents.{name}: must be a table. Fix: [agents.{name}]")
        extra = set(spec) - _AGENT_KEYS
        if extra:
            raise SidecarError(
                f"{p}: agents.{name}: unknown keys {sorted(extra)}. Fix: use {sorted(_AGENT_KEYS)}"
            )
    tools = doc.get("tools", {})
    if not isinstance(tools, dict):
        raise SidecarError(f"{p}: tools: must be a table of [tools.NAME]. Fix: [tools.NAME]")
    sc = Sidecar(p, agents, tools)
    sc.run = check_run_table(sc, "run", doc.get("run"))  # max_handoffs allows a cycle
    _check_handoffs(sc)
    sc.eval = check_eval(sc, doc.get("eval"))
    sc.permissions = check_permissions(sc, doc.get("permissions"))
    sc.sandbox = check_sandbox_table(sc, doc.get("sandbox"))
    sc.mcp = check_mcp_tables(sc, doc.get("mcp"))
    sc.session = check_session_table(sc, doc.get("session"))
    for name in sc.agents:
        sc.run_config(name)
    return sc


def _check_handoffs(sc: Sidecar) -> None:
    """Reject dangling handoff references and cycles at load time."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(name: str, path: tuple[str, ...]) -> None:
        state[name] = 1
        targets = sc._names(f"agents.{name}.handoffs", sc.agents[name], "handoffs")
        for t in targets:
            if t not in sc.agents:
                raise sc.err(
                    f"agents.{name}.handoffs", f"unknown agent {t!r}", f"define [agents.{t}]"
                )
            if state.get(t) == 1 and "max_handoffs" not in sc.run:
                raise sc.err(
                    f"agents.{name}.handoffs",
                    f"handoff cycle detected ({' -> '.join((*path, name, t))})",
                    "set max_handoffs = N in [run] to allow it (a run then fails with "
                    "MaxHandoffsExceeded past N handoffs), or declare one-way handoff chains",
                )
            if state.get(t) is None:
                visit(t, (*path, name))
        state[name] = 2

    for name in sorted(sc.agents):
        if state.get(name) is None:
            visit(name, ())
