"""Fixtures for the toolset tests: a workspace beside an outside directory, tool contexts.

The OS-sandbox tests run for real on this kernel. As root (as CI runs) the workspace root is
chowned to ``nobody`` and commands run with ``run_as=(65534, 65534)``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helikon import _native
from helikon.core.cancel import CancellationToken
from helikon.core.context import ToolContext

NOBODY = (65534, 65534)
IS_ROOT = os.geteuid() == 0


def kernel() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(_native.sandbox_probe())
    return result


def _os_sandbox_ok() -> bool:
    k = kernel()
    return bool(k["landlock_abi"] >= 6 and k["seccomp"] and k["arch_supported"])


needs_os_sandbox = pytest.mark.skipif(
    not _os_sandbox_ok(), reason="the OS sandbox needs Landlock ABI >= 6 and seccomp"
)
needs_root = pytest.mark.skipif(not IS_ROOT, reason="needs root (run_as to nobody)")
needs_command_policy = pytest.mark.skipif(
    not hasattr(_native, "CommandPolicy"),
    reason="helikon._native.CommandPolicy (the shell matcher binding) is not built yet",
)


def run_as() -> tuple[int, int] | None:
    """``(65534, 65534)`` as root, else ``None`` (commands run as this uid)."""
    return NOBODY if IS_ROOT else None


def tool_ctx(cancel: CancellationToken | None = None) -> ToolContext[Any]:
    return ToolContext(
        user_ctx=None,
        state={},
        cancel=cancel or CancellationToken(),
        call_id="call-1",
        agent_name="tester",
    )


@pytest.fixture
def ws() -> Iterator[dict[str, Path]]:
    """``root`` (the workspace, writable by the sandbox uid) and ``outside`` beside it.

    ``outside`` is world-writable and its ``secret.txt`` world-readable, so only the sandbox
    (not file permissions) can stop a command from reaching them. The directory is made
    directly in the system temp dir, not under pytest's ``0700`` base, so that the sandbox
    uid can resolve the workspace's path (git does).
    """
    tmp_path = Path(tempfile.mkdtemp(prefix="helikon-tools-"))
    tmp_path.chmod(0o755)
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    outside.chmod(0o777)
    (outside / "secret.txt").write_text("OUTSIDE-SECRET\n")
    (outside / "secret.txt").chmod(0o644)
    (root / "hello.txt").write_text("hello\nworld\n")
    if IS_ROOT:
        os.chown(root, *NOBODY)
        os.chown(root / "hello.txt", *NOBODY)
    try:
        yield {"root": root, "outside": outside, "tmp": tmp_path}
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)
