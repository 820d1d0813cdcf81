"""What every part of the sidecar loader shares: the error type and the file being checked.

:class:`SidecarFile` is the bottom layer of the loader: the models (:mod:`.sidecar_models`),
the ``[eval]`` table (:mod:`.eval_config`), the tools (:mod:`.sidecar_tools`) and the agents
(:mod:`.sidecar`) all report problems through :meth:`SidecarFile.err`, so every error is one
line naming the file, the key, the problem and the fix.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helikon.errors import ConfigError

__all__ = ["SidecarError", "SidecarFile", "unknown_keys"]


class SidecarError(ConfigError):
    """A sidecar file is invalid; the message names the file, the key and the fix."""


@dataclass
class SidecarFile:
    """The sidecar file being checked: its path, and how to word its errors."""

    path: Path

    @property
    def folder(self) -> Path:
        """The sidecar's directory: relative paths in the file start here."""
        return self.path.parent

    def err(self, key: str, problem: str, fix: str) -> SidecarError:
        """``PATH: KEY: PROBLEM. Fix: FIX`` as a :class:`SidecarError` (to raise)."""
        return SidecarError(f"{self.path}: {key}: {problem}. Fix: {fix}")

    def _err(self, key: str, problem: str, fix: str) -> SidecarError:
        return self.err(key, problem, fix)

    def text_or_file(self, key: str, value: Any) -> str | None:
        """A string, or the text of ``{ file = "path" }`` (relative to the sidecar).

        Raises:
            SidecarError: the file cannot be read, or the value is neither form.
        """
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, dict) and set(value) == {"file"} and isinstance(value["file"], str):
            p = self.folder / value["file"]
            try:
                return p.read_text(encoding="utf-8")
            except OSError as exc:
                raise self.err(
                    key, f"cannot read {p} ({exc.strerror})", "check the file path"
                ) from None
            except UnicodeDecodeError:
                raise self.err(key, f"{p} is not UTF-8 text", "save the file as UTF-8") from None
        raise self.err(key, f"unsupported value {value!r}", 'use a string or { file = "path.md" }')


def unknown_keys(
    sc: SidecarFile, key: str, table: dict[str, Any], allowed: tuple[str, ...] | set[str]
) -> None:
    """Raise for the first key of ``table`` not in ``allowed``, suggesting the closest one.

    Raises:
        SidecarError: ``KEY: unknown key 'x'. Fix: did you mean 'y'? use only [...]``.
    """
    ordered = sorted(allowed)
    for name in table:
        if name not in allowed:
            close = difflib.get_close_matches(name, ordered, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise sc.err(key, f"unknown key {name!r}", f"{hint}use only {ordered}")
