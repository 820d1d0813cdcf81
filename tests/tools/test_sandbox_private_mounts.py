"""OsSandboxBackend(private_mounts=True): metadata and existence probes outside fail.

Landlock does not mediate ``stat``, ``access``, ``chmod``, ``utime``, ``setxattr``; the
private mount namespace makes every path outside the granted set absent (``ENOENT``), while
``ls``, ``git``, ``python`` and ``make`` in the workspace keep working.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from helikon.tools import OsSandboxBackend, Sandbox

from .conftest import needs_os_sandbox, needs_root, run_as

pytestmark = needs_os_sandbox

GIT = "git -c user.name=t -c user.email=t@e"


def _probe(code: str) -> str:
    return (
        "python3 -c 'import os\ntry:\n "
        + code
        + '\n print("ok")\nexcept OSError as e:\n print(e.errno)\''
    )


def _os(ws: dict[str, Path], private: bool) -> OsSandboxBackend:
    return OsSandboxBackend(
        Sandbox.open(ws["root"]), run_as=run_as(), timeout=20, private_mounts=private
    )


@needs_root
@pytest.mark.parametrize(
    ("what", "code", "errno"),
    [
        ("stat", 'os.stat("{secret}")', "2"),
        ("lstat", 'os.lstat("{outside}")', "2"),
        ("chmod", 'os.chmod("{secret}", 0o777)', "2"),
        ("utime", 'os.utime("{secret}", (1, 1))', "2"),
        ("setxattr", 'os.setxattr("{secret}", "user.x", b"1")', "2"),
        ("listdir", 'os.listdir("{outside}")', "2"),
        ("shadow", 'os.stat("/etc/shadow")', "2"),
        # chown never reaches the path: seccomp refuses it first (EPERM).
        ("chown", 'os.chown("{secret}", 65534, 65534)', "1"),
    ],
)
async def test_probe_outside_is_absent(
    what: str, code: str, errno: str, ws: dict[str, Path]
) -> None:
    secret = ws["outside"] / "secret.txt"
    before = secret.stat()
    filled = code.format(secret=secret, outside=ws["outside"])
    r = await _os(ws, True).run(_probe(filled))
    assert r.stdout == f"{errno}\n", (what, r)
    after = secret.stat()
    assert (after.st_mode, after.st_mtime_ns, after.st_uid) == (
        before.st_mode,
        before.st_mtime_ns,
        before.st_uid,
    )


@needs_root
async def test_without_private_mounts_the_probe_sees_the_file(ws: dict[str, Path]) -> None:
    secret = ws["outside"] / "secret.txt"
    r = await _os(ws, False).run(_probe(f'os.stat("{secret}")'))
    assert r.stdout == "ok\n"
    r = await _os(ws, True).run(f"test -e {secret} && echo seen; touch -d 2000-01-01 {secret}")
    assert "seen" not in r.stdout and r.exit_code != 0


@needs_root
async def test_workspace_tools_still_work(ws: dict[str, Path]) -> None:
    (ws["root"] / "Makefile").write_text("all:\n\tsort hello.txt > out.txt\n")
    os.chown(ws["root"] / "Makefile", 65534, 65534)
    b = _os(ws, True)
    command = (
        f"ls && make -s && cat out.txt && python3 -c 'print(6*7)' && git init -q . && "
        f"git add hello.txt && {GIT} commit -qm init && git log --oneline | wc -l"
    )
    r = await b.run(command)
    assert r.exit_code == 0, r
    assert r.stdout == "Makefile\nhello.txt\nhello\nworld\n42\n1\n"
    assert any(n.startswith("private_mounts: commands see only") for n in b.guarantees().notes)


def _protected(ws: dict[str, Path], paths: list[str]) -> OsSandboxBackend:
    root = ws["root"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".env").write_text("TOKEN=1\n")
    subprocess.run(["chown", "-R", "65534:65534", "."], cwd=root, check=True)
    return OsSandboxBackend(
        Sandbox.open(root),
        run_as=run_as(),
        timeout=20,
        private_mounts=True,
        read_only_paths=paths,
    )


@needs_root
@pytest.mark.parametrize(
    "command",
    [
        "echo x >> .env",
        "rm .env",
        "mv .env e2",
        "chmod 600 .env",
        "cp /bin/rm ./x && ./x .env",
        "echo x > .git/config",
        "rm -rf .git",
        "python3 -c 'import os; os.unlink(\".env\")'",
    ],
)
async def test_read_only_paths_refuse_writes(command: str, ws: dict[str, Path]) -> None:
    b = _protected(ws, [".git", ".env"])
    r = await b.run(command)
    assert r.exit_code != 0
    assert "Read-only file system" in r.stderr or "busy" in r.stderr, r.stderr
    assert (ws["root"] / ".env").read_text() == "TOKEN=1\n"
    assert (ws["root"] / ".git" / "HEAD").exists()


@needs_root
async def test_git_commit_only_when_git_is_writable(ws: dict[str, Path]) -> None:
    commit = f"echo y > o.txt && git add o.txt && {GIT} commit -qm one && git log --oneline"
    r = await _protected(ws, [".git", ".env"]).run(commit)
    assert r.exit_code != 0 and "Read-only file system" in r.stderr
    r = await _protected(ws, [".env"]).run(commit)
    assert r.exit_code == 0 and r.stdout.endswith(" one\n"), r


def test_read_only_paths_need_private_mounts(ws: dict[str, Path]) -> None:
    from helikon.errors import ConfigError

    with pytest.raises(ConfigError, match=r"read_only_paths needs private_mounts=True"):
        OsSandboxBackend(Sandbox.open(ws["root"]), run_as=run_as(), read_only_paths=[".git"])
    with pytest.raises(ConfigError, match=r"read_only_paths: '/etc' must be a relative path"):
        OsSandboxBackend(
            Sandbox.open(ws["root"]), run_as=run_as(), private_mounts=True, read_only_paths=["/etc"]
        )
