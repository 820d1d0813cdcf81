"""The sidecar's run settings (``[run]``, an agent's ``run = {...}``) and its session
(``[session]``).

Format (paths are relative to the sidecar's directory)::

    [run]                          # every agent's run settings (helikon.RunConfig)
    max_turns = 8                  # model turns before the run fails (default 16)
    timeout = 120                  # seconds for the whole run (default: none)
    parallel_tool_call_limit = 4   # tool calls running at once (default: no cap)
    max_agent_depth = 4            # handoff / agent-as-tool nesting (default 8)
    max_handoffs = 6               # handoffs per run; set, it allows handoff cycles

    [agents.researcher]
    run = { max_turns = 20 }       # this agent's own values over [run]

    [session]                      # remember the conversation between runs
    backend = "sqlite"             # "sqlite" (a file) or "memory" (this process only)
    path = "chat.db"               # sqlite: the database file
    id = "default"                 # the conversation; helikon run --session ID overrides it

``helikon run`` and ``helikon repl`` load the session's conversation before each run and
record the run into it. Every problem raises :class:`~helikon.cli.sidecar_file.SidecarError`
naming the file, the key and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from helikon.cli.sidecar_file import SidecarFile, unknown_keys
from helikon.core.context import RunConfig
from helikon.sessions import MemorySession, Session

__all__ = ["SessionSettings", "check_run_table", "check_session_table", "merged_run_config"]

_RUN_KEYS = (
    "max_turns",
    "timeout",
    "parallel_tool_call_limit",
    "max_agent_depth",
    "max_handoffs",
)
_SESSION_KEYS = ("backend", "path", "id")
_BACKENDS = ("memory", "sqlite")


def _whole(sc: SidecarFile, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise sc.err(key, f"must be a whole number >= 1, got {value!r}", f"{_leaf(key)} = 8")
    return value


def _leaf(key: str) -> str:
    return key.rsplit(".", 1)[-1]


def check_run_table(sc: SidecarFile, key: str, table: Any) -> dict[str, Any]:
    """The checked values of a ``[run]`` table (or an agent's ``run = {...}``).

    Args:
        sc: the sidecar file, for error messages.
        key: the table's key (``"run"``, ``"agents.NAME.run"``).
        table: the parsed TOML value (``None`` when absent).

    Returns:
        The fields given, by :class:`~helikon.RunConfig` name (``timeout`` in seconds, a
        float).

    Raises:
        SidecarError: not a table, an unknown key, or a value out of range; the message
            names ``KEY.FIELD`` and the fix.
    """
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise sc.err(key, "must be a table", "e.g. run = { max_turns = 8, timeout = 120 }")
    unknown_keys(sc, key, table, _RUN_KEYS)
    out: dict[str, Any] = {}
    for name, value in table.items():
        where = f"{key}.{name}"
        if name == "timeout":
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise sc.err(
                    where, f"must be a number of seconds > 0, got {value!r}", "timeout = 120"
                )
            out[name] = float(value)
        else:
            out[name] = _whole(sc, where, value)
    return out


def merged_run_config(base: dict[str, Any], own: dict[str, Any]) -> RunConfig:
    """A :class:`~helikon.RunConfig` from the file's ``[run]`` values with an agent's own
    values over them (the defaults for what neither sets)."""
    names = {f.name for f in fields(RunConfig)}
    return RunConfig(**{k: v for k, v in {**base, **own}.items() if k in names})


@dataclass(frozen=True)
class SessionSettings:
    """The checked ``[session]`` table.

    Attributes:
        backend: ``"sqlite"`` or ``"memory"``.
        path: the SQLite database file (absolute; ``None`` for memory).
        id: the conversation's session id.
    """

    backend: Literal["memory", "sqlite"]
    path: Path | None
    id: str

    def open(self, session_id: str | None = None) -> Session:
        """The session for ``session_id`` (default: :attr:`id`); nothing to close."""
        sid = session_id or self.id
        if self.backend == "memory":
            return MemorySession()
        from helikon.sessions import SqliteSession  # the sqlite extra, when configured

        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        session: Session = SqliteSession(sid, self.path)
        return session


def check_session_table(sc: SidecarFile, table: Any) -> SessionSettings | None:
    """The checked ``[session]`` table, or ``None`` when the file has none.

    Raises:
        SidecarError: not a table, an unknown key or backend, a sqlite backend without a
            ``path``, a ``path`` for the memory backend, an empty ``id``, or the sqlite
            backend without its extra installed.
    """
    if table is None:
        return None
    if not isinstance(table, dict):
        raise sc.err("session", "must be a table", '[session] with backend = "sqlite"')
    unknown_keys(sc, "session", table, _SESSION_KEYS)
    backend = table.get("backend", "sqlite")
    if backend not in _BACKENDS:
        raise sc.err(
            "session.backend",
            f"unknown backend {backend!r}",
            f"use one of {list(_BACKENDS)} (Redis and PostgreSQL sessions: the Python API)",
        )
    sid = table.get("id", "default")
    if not isinstance(sid, str) or not sid.strip():
        raise sc.err("session.id", f"must be a non-empty string, got {sid!r}", 'id = "default"')
    raw_path = table.get("path")
    if backend == "memory":
        if raw_path is not None:
            raise sc.err(
                "session.path", "the memory backend keeps no file", 'drop path or use "sqlite"'
            )
        return SessionSettings("memory", None, sid)
    if not isinstance(raw_path, str) or not raw_path.strip():
        raise sc.err(
            "session.path",
            "the sqlite backend needs the database file",
            'path = "chat.db" (relative to the sidecar)',
        )
    try:
        import aiosqlite  # noqa: F401
    except ImportError:
        raise sc.err(
            "session.backend",
            "the sqlite backend needs the sqlite extra",
            "pip install 'helikon[sqlite]'",
        ) from None
    return SessionSettings("sqlite", (sc.folder / raw_path).resolve(), sid)
