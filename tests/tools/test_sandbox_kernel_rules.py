"""OsSandboxBackend(deny_delete=..., no_exec_in_workspace=...): refused by the kernel.

A deny rule on ``rm`` is a promise about a program name; these settings make the kernel
(Landlock) refuse the effect whatever program runs: a copied ``rm``, a symlinked one,
``unlink`` from Python. The Bash tool's refusal of ``rm`` says the kernel backs it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helikon.errors import ConfigError, ToolDenied
from helikon.tools import BashTool, HostBackend, OsSandboxBackend, Sandbox

from .conftest import IS_ROOT, needs_command_policy, needs_os_sandbox, run_as, tool_ctx

pytestmark = needs_os_sandbox

PERM = "Permission denied"
GIT = "git -c user.name=t -c user.email=t@e"


def _os(ws: dict[str, Path], **kw: Any) -> OsSandboxBackend:
    return OsSandboxBackend(Sandbox.open(ws["root"]), run_as=run_as(), timeout=20, **kw)


def _git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    if IS_ROOT:
        subprocess.run(["chown", "-R", "65534:65534", ".git"], cwd=root, check=True)


@pytest.mark.parametrize(
    "command",
    [
        "rm hello.txt",
        "cp /bin/rm ./x && ./x hello.txt",
        "ln -s /bin/rm ./r && ./r hello.txt",
        "unlink hello.txt",
        "find . -name hello.txt -delete",
        "mv hello.txt moved.txt",
        "truncate -s 0 hello.txt",
        ": > hello.txt",
        "python3 -c 'import os; os.unlink(\"hello.txt\")'",
    ],
)
async def test_deny_delete_refuses_every_spelling(command: str, ws: dict[str, Path]) -> None:
    b = _os(ws, deny_delete=True)
    r = await b.run(command)
    assert r.exit_code != 0
    assert PERM in r.stderr
    assert (ws["root"] / "hello.txt").read_text() == "hello\nworld\n"


async def test_deny_delete_errno_is_eacces_and_writing_still_works(ws: dict[str, Path]) -> None:
    b = _os(ws, deny_delete=True)
    code = (
        "import os\n"
        "for f in (lambda: os.unlink('hello.txt'), lambda: os.truncate('hello.txt', 0),\n"
        "          lambda: os.rename('hello.txt', 'x')):\n"
        "    try:\n"
        "        f()\n"
        "    except OSError as e:\n"
        "        print(e.errno)\n"
    )
    (ws["root"] / "probe.py").write_text(code)
    r = await b.run("python3 probe.py && echo new > new.txt && echo x >> hello.txt && cat new.txt")
    assert r.stdout == "13\n13\n13\nnew\n", r
    assert b.guarantees().notes[-1].startswith("deny_delete: unlink, rmdir, rename")


async def test_git_commit_works_with_the_git_exception_only(ws: dict[str, Path]) -> None:
    _git_init(ws["root"])
    commit = f"git add hello.txt && {GIT} commit -qm one && git log --oneline | wc -l"
    r = await _os(ws, deny_delete=True, deny_delete_except=[".git"]).run(commit)
    assert (r.exit_code, r.stdout.strip()) == (0, "1"), r
    r = await _os(ws, deny_delete=True).run(f"echo x >> hello.txt && {GIT} commit -qam two")
    assert r.exit_code != 0
    assert PERM in r.stderr or "Unable to" in r.stderr or "unable to" in r.stderr, r.stderr


async def test_no_exec_in_workspace(ws: dict[str, Path]) -> None:
    b = _os(ws, no_exec_in_workspace=True)
    for command in ("cp /bin/true ./t && ./t", 'cp /bin/true "$TMPDIR/t" && "$TMPDIR/t"'):
        r = await b.run(command)
        assert r.exit_code == 126 and PERM in r.stderr, (command, r)
    r = await b.run("printf 'echo ran\\n' > s.sh && sh s.sh && ls | wc -l")
    assert r.stdout == "ran\n3\n"


def test_bad_settings_are_config_errors(ws: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match=r"deny_delete_except needs deny_delete=True"):
        _os(ws, deny_delete_except=[".git"])
    with pytest.raises(ConfigError, match=r"'\.\./x' must be a relative path inside"):
        _os(ws, deny_delete=True, deny_delete_except=["../x"])
    with pytest.raises(ConfigError, match=r"must be a list of relative paths, not a string"):
        _os(ws, deny_delete=True, deny_delete_except=".git")
    with pytest.raises(ConfigError, match=r"missing cannot be opened inside the root"):
        _os(ws, deny_delete=True, deny_delete_except=["missing"])
    assert not hasattr(HostBackend(Sandbox.open(ws["root"])), "deny_delete")


@needs_command_policy
async def test_bash_refusal_of_rm_says_the_kernel_backs_it(ws: dict[str, Path]) -> None:
    tool = BashTool(_os(ws, deny_delete=True), deny_commands=["rm", "curl"])
    with pytest.raises(ToolDenied) as e:
        await tool.invoke(tool_ctx(), {"command": "ls && /bin/rm -rf x"})
    assert str(e.value) == (
        "denied: Bash command refused by rule deny_list: command `rm` is blocked by the deny list, "
        "in sub-command `/bin/rm -rf x` on line 1; deletion is also refused by the kernel in "
        "this workspace (deny_delete: Landlock without REMOVE_FILE/REMOVE_DIR/TRUNCATE), so a "
        "renamed or copied rm cannot delete either"
    )
    with pytest.raises(ToolDenied) as e:
        await tool.invoke(tool_ctx(), {"command": "curl x"})
    assert "kernel" not in str(e.value)
    plain = BashTool(_os(ws), deny_commands=["rm"])
    with pytest.raises(ToolDenied) as e:
        await plain.invoke(tool_ctx(), {"command": "rm x"})
    assert "kernel" not in str(e.value)
    assert os.path.exists(ws["root"] / "hello.txt")
