"""The :class:`Sandbox`: a workspace directory opened as an OS capability."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from helikon.errors import ConfigError, ToolDenied
from helikon.tools.sandbox_native import ConfinedDir

__all__ = ["Sandbox"]


class Sandbox:
    """A directory opened as a capability; the Read, Write and Edit tools work inside it.

    Every file operation resolves its path beneath the opened directory (``openat2``
    ``RESOLVE_BENEATH`` semantics through cap-std): ``..``, absolute paths, symlinks that
    lead outside (also one swapped in between a check and the use) and regular files with
    more than one hard link are refused with :class:`helikon.errors.ToolDenied`.

    Absolute paths are accepted when they lie inside the root (given as opened or in its
    canonical form); they are made relative before the capability sees them. An absolute
    path outside the root is refused without touching the filesystem.

    The same object can back several tools and execution backends; it holds an open
    directory descriptor, so a root renamed after :meth:`open` is still the one used.

    Attributes:
        root: the canonical path of the root directory.
        dir: the underlying :class:`helikon._native.ConfinedDir`.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     sb = Sandbox.open(d)
        ...     sb.dir.write_text("notes.txt", "hi")
        ...     sb.relative(str(sb.root / "notes.txt"))
        'notes.txt'
    """

    __slots__ = ("_dir", "_root", "_roots")

    def __init__(self, directory: ConfinedDir, opened_as: str | None = None) -> None:
        self._dir = directory
        self._root = Path(directory.root)
        roots = [PurePosixPath(directory.root).parts]
        if opened_as is not None:
            alt = PurePosixPath(opened_as).parts
            if alt not in roots:
                roots.append(alt)
        self._roots = roots

    @classmethod
    def open(cls, root: str | os.PathLike[str]) -> Sandbox:
        """Open ``root`` (an existing directory; a relative path is taken from the cwd).

        Raises:
            ConfigError: ``root`` is not an existing directory.
        """
        path = os.path.abspath(os.fspath(root))
        if not os.path.isdir(path):
            raise ConfigError(f"Sandbox.open: {path} is not an existing directory")
        return cls(ConfinedDir(path), opened_as=path)

    @property
    def root(self) -> Path:
        """The canonical root path."""
        return self._root

    @property
    def dir(self) -> ConfinedDir:
        """The confined directory capability."""
        return self._dir

    def relative(self, path: str) -> str:
        """``path`` relative to the root, for :class:`~helikon._native.ConfinedDir`.

        A relative path is returned unchanged (the capability resolves and checks it). An
        absolute path inside the root loses the root prefix (the root itself becomes
        ``""``); components after the prefix, ``..`` included, are kept for the capability
        to judge.

        Raises:
            ToolDenied: an absolute path outside the root (the message names the path and
                the root).
        """
        if not path.startswith("/"):
            return path
        parts = PurePosixPath(path).parts
        for base in self._roots:
            if parts[: len(base)] == base:
                return "/".join(parts[len(base) :])
        raise ToolDenied(f"{path}: absolute path outside the sandbox root {self._root}")

    def __repr__(self) -> str:
        return f"Sandbox({str(self._root)!r})"
