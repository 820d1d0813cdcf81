"""Every backend runs commands with bash, the shell the command matcher models (M15-M18, M8).

The attack (``/work/attack-findings.md`` M8, M13, M15-M18) ran the same text through the
analyser (bash grammar) and ``/bin/sh`` (dash): ``echo $'\\'; touch PWNED; #'``,
``((touch PWNED))``, ``[[ -z x || sh ]]`` and ``function || touch PWNED`` ran a program the
analyser never saw. These tests run those spellings end to end through ``BashTool`` on every
backend and check nothing hidden ran; a backend built on another shell makes every command
the worst case under rules and guards.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helikon import Agent, AllowRule, DenyRule, PermissionMode, RunContext
from helikon.errors import ConfigError, ToolDenied
from helikon.permissions import explain
from helikon.testing import Call, MockModel, Text
from helikon.tools import BashTool, HostBackend, OsSandboxBackend, Sandbox, _policy_backend
from helikon.tools import _shell as shell_mod
from helikon.tools._policy_backend import PolicyBackend
from helikon.tools._posix_runner import PosixSpec

from .conftest import needs_command_policy, needs_os_sandbox, run_as, tool_ctx

Factory = Callable[..., PolicyBackend]
BASH = os.path.realpath("/bin/bash") if os.path.exists("/bin/bash") else None
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")
OTHER_SHELLS = [p for p in ("/bin/sh", "/bin/dash", "/usr/bin/zsh") if os.path.exists(p)]


def _host(root: Path, **kw: Any) -> PolicyBackend:
    return HostBackend(Sandbox.open(root), **kw)


def _portable(root: Path, **kw: Any) -> PolicyBackend:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_policy_backend, "NATIVE_LAUNCHER", False)
        return HostBackend(Sandbox.open(root), **kw)


def _os(root: Path, **kw: Any) -> PolicyBackend:
    return OsSandboxBackend(Sandbox.open(root), run_as=run_as(), **kw)


BACKENDS = [
    pytest.param(_host, id="host"),
    pytest.param(_portable, id="portable"),
    pytest.param(_os, id="os", marks=needs_os_sandbox),
]

# Each hides `touch PWNED` from a bash reader; dash (the old /bin/sh) ran every one of them.
HIDDEN = [
    "echo $'\\'; touch PWNED; #'",  # M15: ANSI-C quote
    "x=$'\\'\ntouch PWNED\n#'",  # M15 with newlines
    "echo $'\\' && touch PWNED; : '",
    "((touch PWNED))",  # M8
    "(((touch PWNED)))",
    "((true;touch PWNED))",
    "x=1; ((touch PWNED))",
    "if ((touch PWNED)); then :; fi",
    "! ((touch PWNED))",
    "echo 'touch PWNED' > ']]'; [[ -z x || sh ]]",  # M16
    "echo 'touch PWNED' > ']]'; [[ x =~ a|sh ]]",
    "[[ a ; touch PWNED ]]",
    "[[ a & touch PWNED ]]",
    "[[ a\ntouch PWNED ]]",
    "function || touch PWNED E",  # M18
    "function \n touch PWNED",
    "[[ \n touch PWNED",
    " [[ || touch PWNED",
    "(( touch PWNED } ))",
    "alias n='!'\nn touch PWNED",  # M17: dash expands aliases in -c scripts
    "alias p='('\np touch PWNED )",
]


@pytest.mark.parametrize("make", BACKENDS)
@needs_bash
def test_backends_run_bash_by_default(make: Factory, ws: dict[str, Path]) -> None:
    b = make(ws["root"])
    assert os.path.basename(b.shell) == "bash"
    assert b.unanalysed_shell is None
    r = asyncio.run(b.run("echo \"${BASH_VERSION:+bash}\"; echo $'a\\tb'; ((n = 2 + 3)); echo $n"))
    assert (r.exit_code, r.stdout) == (0, "bash\na\tb\n5\n")


@pytest.mark.parametrize("make", BACKENDS)
@pytest.mark.parametrize("command", HIDDEN)
@needs_bash
@needs_command_policy
def test_hidden_commands_do_not_run(make: Factory, ws: dict[str, Path], command: str) -> None:
    """What the matcher allows is what runs: the hidden `touch` never runs, whatever the
    lists say (a deny list on touch and sh, and an allow list of echo and true)."""
    backend = make(ws["root"])
    denying = BashTool(backend, deny_commands=["touch", "sh"])
    allowing = BashTool(backend, allow_commands=["echo", "true", ":"])
    for tool in (denying, allowing):
        with contextlib.suppress(ToolDenied):
            asyncio.run(tool.invoke(tool_ctx(), {"command": command}))
        assert not (ws["root"] / "PWNED").exists(), (command, tool)


@pytest.mark.parametrize("command", HIDDEN)
@needs_bash
@needs_command_policy
def test_hidden_commands_are_not_hidden_from_rules(ws: dict[str, Path], command: str) -> None:
    """Under rules through the agent loop: the call is allowed only where bash runs no touch."""
    tool = BashTool(HostBackend(Sandbox.open(ws["root"])))
    ctx = RunContext.ephemeral().with_deny_rules([DenyRule.bash_command("touch")])
    asyncio.run(tool.invoke(tool_ctx(), {"command": command}))
    assert not (ws["root"] / "PWNED").exists()
    e = asyncio.run(explain(ctx, "Bash", {"command": command}, sandbox=tool))
    assert e.decision in ("allow", "deny", "ask")


# ------------------------------------------------------------------ another shell


@needs_command_policy
@pytest.mark.parametrize("other", OTHER_SHELLS)
def test_another_shell_makes_every_command_the_worst_case(ws: dict[str, Path], other: str) -> None:
    backend = HostBackend(Sandbox.open(ws["root"]), shell=other)
    assert backend.shell == other
    reason = backend.unanalysed_shell
    assert reason is not None and f"runs commands with {other}, not bash" in reason
    tool = BashTool(backend)
    cmd = {"command": "ls"}
    # guards: ask, naming the shell
    e = asyncio.run(explain(RunContext.ephemeral(), "Bash", cmd, sandbox=tool))
    assert (e.decision, e.stage, e.rule) == ("ask", "guard", "unanalysable")
    assert e.reason == f"the command is not analysable: {reason}"
    # a deny rule on any program matches (worst case), an allow rule never covers
    deny = RunContext.ephemeral().with_deny_rules([DenyRule.bash_command("curl")])
    assert asyncio.run(explain(deny, "Bash", cmd, sandbox=tool)).decision == "deny"
    allow = (
        RunContext.ephemeral()
        .with_allow_rules([AllowRule.bash_command("ls")])
        .with_permission_mode(PermissionMode.DONT_ASK)
        .without_default_guards()
    )
    e = asyncio.run(explain(allow, "Bash", cmd, sandbox=tool))
    assert e.decision == "deny" and e.uncovered == f"the command is not analysable: {reason}"
    # without any rule or guard the command runs as configured
    bare = RunContext.ephemeral().without_default_guards()
    assert asyncio.run(explain(bare, "Bash", cmd, sandbox=tool)).decision == "allow"
    # the tool's own lists refuse every command
    listed = BashTool(backend, deny_commands=["curl"])
    with pytest.raises(ToolDenied, match="not analysable: HostBackend runs commands with"):
        asyncio.run(listed.invoke(tool_ctx(), {"command": "echo hi"}))
    # the same text with the bash backend: analysed, allowed
    analysed = BashTool(HostBackend(Sandbox.open(ws["root"])), deny_commands=["curl"])
    out = asyncio.run(analysed.invoke(tool_ctx(), {"command": "echo hi"}))
    assert out.value.stdout == "hi\n"


@needs_command_policy
def test_another_shell_through_the_agent_loop(ws: dict[str, Path]) -> None:
    """In a run the refusal is an error result the model reads, and nothing runs."""
    tool = BashTool(HostBackend(Sandbox.open(ws["root"]), shell="/bin/sh"))
    model = MockModel(
        [[Call("c1", "Bash", {"command": "echo $'\\'; touch PWNED; #'"})], [Text("done")]]
    )
    result = Agent(name="a", model=model, tools=[tool]).run_sync("go")
    assert result.final_text == "done"
    assert not (ws["root"] / "PWNED").exists()
    seen = result.new_items[-2]
    assert seen.is_error  # type: ignore[union-attr]
    assert seen.content[0].text.startswith(  # type: ignore[union-attr]
        "permission denied: guard unanalysable: the command is not analysable: HostBackend "
        "runs commands with /bin/sh, not bash"
    )


def test_resolve_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell_mod, "BASH_PATHS", ("/nonexistent/bash", "/also/missing/bash"))
    choice = shell_mod.resolve_shell("HostBackend", None)
    assert choice.path == "/bin/sh"
    assert choice.unanalysed is not None
    assert choice.unanalysed.startswith(
        "bash is not installed (looked for /nonexistent/bash, /also/missing/bash), so "
        "HostBackend runs commands with /bin/sh"
    )
    assert "install bash" in choice.unanalysed
    assert shell_mod.resolve_shell("X", "/opt/bash") == shell_mod.ShellChoice("/opt/bash", None)
    for bad in ("bash", "sh", "", "./bash"):
        with pytest.raises(ConfigError, match=r"X.shell must be an absolute path"):
            shell_mod.resolve_shell("X", bad)


@needs_bash
def test_portable_spec_defaults_to_bash() -> None:
    assert os.path.basename(PosixSpec(root="/").shell) == "bash"
