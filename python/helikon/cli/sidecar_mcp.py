"""A sidecar's MCP servers: ``[mcp.NAME]`` tables, and an agent's ``mcp = ["NAME"]``.

Forms (``cwd`` is relative to the sidecar's directory)::

    [mcp.files]
    command = ["python", "files_server.py"]      # a stdio server: program and arguments
    env     = { ROOT = "/srv/data" }             # optional
    tool_prefix = "files_"                        # optional; lazy = true, connect_timeout, ...

    [mcp.search]
    url     = "http://127.0.0.1:8000/mcp"        # a streamable-HTTP server
    headers = { Authorization = "Bearer ..." }

    [agents.researcher]
    mcp = ["files", "search"]                    # the servers' tools join the agent's tools

The servers are started (connected) by the command that runs the agent, once per process,
before the first run; their tools are added to every built agent that names them.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from helikon.cli.sidecar_file import SidecarFile, unknown_keys
from helikon.errors import ConfigError

if TYPE_CHECKING:
    from helikon.core.agent import Agent

__all__ = ["McpConnector", "check_mcp_tables"]

_KEYS = (
    "command",
    "url",
    "env",
    "cwd",
    "headers",
    "tool_prefix",
    "lazy",
    "connect_timeout",
    "call_timeout",
)
_FIX = '[mcp.NAME] command = ["python", "server.py"] or url = "http://127.0.0.1:8000/mcp"'


def _str_map(sc: SidecarFile, key: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise sc.err(key, "must be a table of strings", f'{key.rsplit(".", 1)[-1]} = {{ K = "v" }}')
    return dict(value)


def check_mcp_tables(sc: SidecarFile, raw: Any) -> dict[str, dict[str, Any]]:
    """Check the ``[mcp.NAME]`` tables (``None``: no servers).

    Raises:
        SidecarError: naming the key, the problem and the fix.
    """
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise sc.err("mcp", "must be a table of [mcp.NAME] tables", _FIX)
    for name, spec in raw.items():
        key = f"mcp.{name}"
        if not isinstance(spec, dict):
            raise sc.err(key, "must be a table", _FIX)
        unknown_keys(sc, key, spec, _KEYS)
        if ("command" in spec) == ("url" in spec):
            raise sc.err(key, "needs exactly one of command or url", _FIX)
        command = spec.get("command")
        if command is not None and (
            not isinstance(command, list)
            or not command
            or not all(isinstance(c, str) and c for c in command)
        ):
            raise sc.err(f"{key}.command", "must be a list: the program, then its arguments", _FIX)
        url = spec.get("url")
        if url is not None and not (
            isinstance(url, str) and url.startswith(("http://", "https://"))
        ):
            raise sc.err(f"{key}.url", f"not an http(s) URL: {url!r}", _FIX)
        for k in ("env", "headers"):
            if k in spec:
                _str_map(sc, f"{key}.{k}", spec[k])
        for k in ("cwd", "tool_prefix"):
            if k in spec and not isinstance(spec[k], str):
                raise sc.err(f"{key}.{k}", "must be a string", f'{k} = "..."')
        if "lazy" in spec and not isinstance(spec["lazy"], bool):
            raise sc.err(f"{key}.lazy", "must be true or false", "lazy = true")
        for k in ("connect_timeout", "call_timeout"):
            v = spec.get(k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | float) or v <= 0):
                raise sc.err(f"{key}.{k}", f"must be seconds > 0, got {v!r}", f"{k} = 30")
    return raw


@dataclass
class McpConnector:
    """Connects a sidecar's MCP servers on demand and adds their tools to built agents.

    Use one per command: ``async with McpConnector(sc, tables) as mcp: await mcp.attach(a)``.
    """

    sc: SidecarFile
    tables: dict[str, dict[str, Any]]
    wanted: dict[str, list[str]]
    """Agent name -> the servers its ``mcp`` key names."""
    _stack: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)
    _remotes: dict[str, Any] = field(default_factory=dict)
    _attached: set[int] = field(default_factory=set)

    async def __aenter__(self) -> McpConnector:
        await self._stack.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def attach(self, agent: Agent | Any) -> None:
        """Add the MCP tools ``agent`` and its handoff targets name (connecting as needed).

        Raises:
            SidecarError: the ``mcp`` extra is missing or a server cannot be reached.
        """
        seen: set[int] = set()
        todo = [agent]
        while todo:
            a = todo.pop()
            if id(a) in seen:
                continue
            seen.add(id(a))
            todo.extend(getattr(a, "handoffs", []))
            names = self.wanted.get(a.name, [])
            if not names or id(a) in self._attached:
                continue
            for server in names:
                remote = await self._remote(server)
                a.tools.extend(remote.tools())
            self._attached.add(id(a))

    async def _remote(self, name: str) -> Any:
        if name in self._remotes:
            return self._remotes[name]
        try:
            from helikon.mcp import McpServerHandle
        except ImportError:
            raise self.sc.err(
                f"mcp.{name}", "MCP servers need the 'mcp' extra", "pip install 'helikon[mcp]'"
            ) from None
        spec = self.tables[name]
        options: dict[str, Any] = {
            k: spec[k]
            for k in ("tool_prefix", "lazy", "connect_timeout", "call_timeout")
            if k in spec
        }
        if "command" in spec:
            program, *args = spec["command"]
            handle = McpServerHandle.stdio(
                program,
                args=args,
                env=spec.get("env"),
                cwd=self.sc.folder / spec["cwd"] if "cwd" in spec else self.sc.folder,
                **options,
            )
        else:
            handle = McpServerHandle.streamable_http(
                spec["url"], headers=spec.get("headers"), **options
            )
        try:
            remote = await self._stack.enter_async_context(handle)
        except (ConfigError, OSError) as exc:
            raise self.sc.err(f"mcp.{name}", f"cannot connect: {exc}", "check the server") from None
        except Exception as exc:  # an McpError of any kind: the server did not come up
            raise self.sc.err(
                f"mcp.{name}", f"cannot connect: {type(exc).__name__}: {exc}", "check the server"
            ) from None
        self._remotes[name] = remote
        return remote
