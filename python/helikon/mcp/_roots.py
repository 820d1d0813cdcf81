"""The roots a handle declares to its server (``roots/list``).

Three settings (the handle's ``roots=``):

* a list of directories: those, until :meth:`Roots.set` replaces them;
* ``"workspace"`` (the default): the workspace of the agent whose tool call is in flight,
  that is the root directory of every sandbox its tools work in (``ReadTool``,
  ``WriteTool``, ``EditTool``: their ``sandbox``; ``BashTool``: its backend's); when a call
  comes from an agent whose workspace differs from what the server was last told, the
  handle sends ``notifications/roots/list_changed`` before the call. Until an agent with a
  workspace has called, the answer is the stdio server's working directory (its ``cwd=``,
  else this process's), and no root for an HTTP server;
* ``None``: roots are not offered (``roots/list`` is refused as an unknown method).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import mcp_types as types

__all__ = ["WORKSPACE", "Roots", "root_uris", "workspace_of"]

WORKSPACE = "workspace"
"""``roots=WORKSPACE``: the calling agent's workspace is the server's roots."""

RootsSetting = Sequence[str | Path] | Literal["workspace"] | None


def root_uris(roots: Sequence[str | Path]) -> list[types.Root]:
    """Each directory as a ``file://`` root named after its last component."""
    out = []
    for root in roots:
        path = Path(root).expanduser().resolve()
        out.append(types.Root(uri=path.as_uri(), name=path.name or str(path)))  # type: ignore[arg-type]
    return out


def workspace_of(agent: Any) -> list[Path]:
    """The root directories of the sandboxes ``agent``'s tools work in, in tool order."""
    out: list[Path] = []
    for tool in getattr(agent, "tools", ()):
        sandbox = getattr(tool, "sandbox", None)
        if sandbox is None:
            sandbox = getattr(getattr(tool, "backend", None), "sandbox", None)
        root = getattr(sandbox, "root", None)
        if isinstance(root, Path) and root not in out:
            out.append(root)
    return out


class Roots:
    """What ``roots/list`` answers (see the module docstring)."""

    def __init__(self, setting: RootsSetting, fallback: Path | None) -> None:
        self.workspace = setting == WORKSPACE
        self.fixed: list[str | Path] | None = (
            None if setting is None or isinstance(setting, str) else list(setting)
        )
        self._fallback = fallback
        self._seen: list[Path] | None = None

    @property
    def offered(self) -> bool:
        """The capability is declared."""
        return self.workspace or self.fixed is not None

    def current(self) -> list[str | Path]:
        """The directories to answer now."""
        if self.fixed is not None:
            return list(self.fixed)
        if self._seen is not None:
            return list(self._seen)
        return [self._fallback] if self._fallback is not None else []

    def set(self, roots: Sequence[str | Path]) -> None:
        """Fix the roots to ``roots`` (the workspace is no longer followed)."""
        self.fixed = list(roots)
        self.workspace = False

    def follow(self, agent: Any) -> bool:
        """An agent's tool call starts: True when its workspace is new to the server (the
        caller then sends ``notifications/roots/list_changed``)."""
        if not self.workspace or agent is None:
            return False
        found = workspace_of(agent)
        if not found or found == self._seen:
            return False
        changed = found != self.current()
        self._seen = found
        return changed
