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
    backend = "sqlite"             # "sqlite" (a file), "redis", "postgres" or "memory"
    path = "chat.db"               # sqlite: the database file
    id = "default"                 # the conversation; helikon run --session ID overrides it

    [session]                      # or in Redis (extra helikon[redis])
    backend = "redis"
    url = "redis://127.0.0.1:6379/0"   # rediss:// for TLS
    prefix = "helikon"             # the key namespace (default "helikon")

    [session]                      # or in PostgreSQL (extra helikon[postgres])
    backend = "postgres"
    url = "postgresql://app@127.0.0.1:5432/app"
    schema = "public"              # the schema holding session_events (default "public")

``helikon run`` and ``helikon repl`` load the session's conversation before each run and
record the run into it. Every problem raises :class:`~helikon.cli.sidecar_file.SidecarError`
naming the file, the key and the fix.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from helikon.cli.sidecar_file import SidecarFile, unknown_keys
from helikon.cli.sidecar_store import StoreSession
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
_SESSION_KEYS = ("backend", "path", "id", "url", "prefix", "schema")
_BACKENDS = ("memory", "sqlite", "redis", "postgres")
_URL_SCHEMES = {"redis": ("redis://", "rediss://"), "postgres": ("postgresql://", "postgres://")}
_URL_EXAMPLES = {
    "redis": 'url = "redis://127.0.0.1:6379/0"',
    "postgres": 'url = "postgresql://app@127.0.0.1:5432/app"',
}
_NAMESPACES = {"redis": ("prefix", "helikon"), "postgres": ("schema", "public")}
_EXTRAS = {"sqlite": "aiosqlite", "redis": "redis", "postgres": "asyncpg"}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


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
        backend: ``"sqlite"``, ``"redis"``, ``"postgres"`` or ``"memory"``.
        path: the SQLite database file (absolute; ``None`` for the others).
        id: the conversation's session id.
        url: the Redis or PostgreSQL server (``None`` for the others).
        namespace: Redis: the key prefix; PostgreSQL: the schema (``""`` for the others).
    """

    backend: Literal["memory", "sqlite", "redis", "postgres"]
    path: Path | None
    id: str
    url: str | None = None
    namespace: str = ""

    def open(self, session_id: str | None = None) -> Session:
        """The session for ``session_id`` (default: :attr:`id`); nothing to close (a Redis
        or PostgreSQL session connects per operation, see
        :class:`~helikon.cli.sidecar_store.StoreSession`)."""
        sid = session_id or self.id
        if self.backend == "memory":
            return MemorySession()
        if self.backend in ("redis", "postgres"):
            assert self.url is not None
            return StoreSession(self.backend, self.url, sid, self.namespace)
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
            "session.backend", f"unknown backend {backend!r}", f"use one of {list(_BACKENDS)}"
        )
    sid = table.get("id", "default")
    if not isinstance(sid, str) or not sid.strip():
        raise sc.err("session.id", f"must be a non-empty string, got {sid!r}", 'id = "default"')
    raw_path = table.get("path")
    if backend in _URL_SCHEMES:
        return _check_store(sc, table, backend, sid)
    for key in ("url", *(name for name, _ in _NAMESPACES.values())):
        if key in table:
            raise sc.err(
                f"session.{key}",
                f"the {backend} backend takes no {key}",
                f'drop {key}, or use backend = "redis" or "postgres"',
            )
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
    _require_extra(sc, "sqlite")
    return SessionSettings("sqlite", (sc.folder / raw_path).resolve(), sid)


def _check_store(sc: SidecarFile, table: dict[str, Any], backend: str, sid: str) -> SessionSettings:
    """A Redis or PostgreSQL ``[session]``: its ``url``, its namespace, its extra."""
    if "path" in table:
        raise sc.err(
            "session.path", f"the {backend} backend keeps no file", "drop path (url names it)"
        )
    url = table.get("url")
    if not isinstance(url, str) or not url.startswith(_URL_SCHEMES[backend]):
        got = "no url" if url is None else f"url {url!r}"
        raise sc.err(
            "session.url",
            f"the {backend} backend needs its server's URL "
            f"({' or '.join(_URL_SCHEMES[backend])}), got {got}",
            _URL_EXAMPLES[backend],
        )
    key, default = _NAMESPACES[backend]
    other = next(name for name, _ in _NAMESPACES.values() if name != key)
    if other in table:
        raise sc.err(f"session.{other}", f"the {backend} backend takes no {other}", f"use {key}")
    namespace = table.get(key, default)
    valid = (
        isinstance(namespace, str) and bool(_IDENT.match(namespace))
        if backend == "postgres"
        else isinstance(namespace, str) and bool(namespace.strip())
    )
    if not valid:
        raise sc.err(
            f"session.{key}",
            f"must be {'an SQL identifier' if backend == 'postgres' else 'a non-empty string'}, "
            f"got {namespace!r}",
            f'{key} = "{default}"',
        )
    _require_extra(sc, backend)
    return SessionSettings(backend, None, sid, url, namespace)  # type: ignore[arg-type]


def _require_extra(sc: SidecarFile, backend: str) -> None:
    try:
        importlib.import_module(_EXTRAS[backend])
    except ImportError:
        raise sc.err(
            "session.backend",
            f"the {backend} backend needs the {backend} extra",
            f"pip install 'helikon[{backend}]'",
        ) from None
