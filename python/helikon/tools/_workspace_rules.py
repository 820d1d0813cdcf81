"""Kernel-enforced workspace rules of the OS sandbox: ``deny_delete``, ``no_exec_in_workspace``.

The native side (``helikon-sandbox``'s ``workspace_rules``) enforces them with Landlock; this
module checks the Python arguments and says, for the Bash tool's refusals, when the kernel
would refuse the same effect anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from helikon.errors import ConfigError

__all__ = ["DELETING_PROGRAMS", "kernel_note", "relative_paths", "workspace_rules"]

#: Programs whose purpose is deleting or truncating files: a deny rule on one of them is
#: backed by the kernel when the backend runs with ``deny_delete``.
DELETING_PROGRAMS = frozenset({"rm", "rmdir", "unlink", "shred", "truncate", "find"})


def relative_paths(label: str, paths: Sequence[str]) -> list[str]:
    """``paths`` as plain relative paths inside the workspace.

    Raises:
        ConfigError: a string instead of a list, or an absolute, empty or ``..`` path
            (``label`` names the option).
    """
    if isinstance(paths, str):
        raise ConfigError(
            f"OsSandboxBackend.{label} must be a list of relative paths, not a string"
        )
    out = [str(p) for p in paths]
    for p in out:
        parts = p.split("/")
        if not p or p.startswith("/") or any(x in ("", ".", "..") for x in parts):
            raise ConfigError(
                f"OsSandboxBackend.{label}: {p!r} must be a relative path inside "
                "the workspace without '.', '..' or empty parts (e.g. '.git')"
            )
    return out


def workspace_rules(
    deny_delete: bool, deny_delete_except: Sequence[str], no_exec_in_workspace: bool
) -> dict[str, Any]:
    """The native config keys, checked.

    Raises:
        ConfigError: ``deny_delete_except`` is a string, has an absolute or ``..`` path, or is
            given without ``deny_delete``.
    """
    paths = relative_paths("deny_delete_except", deny_delete_except)
    if paths and not deny_delete:
        raise ConfigError("OsSandboxBackend.deny_delete_except needs deny_delete=True")
    return {
        "deny_delete": bool(deny_delete),
        "deny_delete_except": paths,
        "no_exec_in_workspace": bool(no_exec_in_workspace),
    }


def kernel_note(backend: object, programs: Sequence[str]) -> str | None:
    """The sentence the Bash tool adds to a refusal of ``programs`` on ``backend``.

    Returns a note when the backend refuses deletion in the kernel (``deny_delete``) and one
    of ``programs`` deletes files, else ``None``.
    """
    if not getattr(backend, "deny_delete", False):
        return None
    names = sorted({p.rsplit("/", 1)[-1] for p in programs} & DELETING_PROGRAMS)
    if not names:
        return None
    return (
        "deletion is also refused by the kernel in this workspace (deny_delete: Landlock "
        "without REMOVE_FILE/REMOVE_DIR/TRUNCATE), so a renamed or copied "
        f"{names[0]} cannot delete either"
    )
