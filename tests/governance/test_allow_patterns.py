"""AllowRule.bash_command prefix patterns and the union of allow rules (matcher section 3).

Patterns match the analysed words of each sub-command, never the raw text; a compound
command is allowed when every sub-command is covered by some rule, and ``explain`` names the
part no rule covers.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from helikon import RunContext
from helikon.core.tool import ToolEffect
from helikon.errors import ConfigError
from helikon.permissions import (
    AllowRule,
    DenyRule,
    PermissionAllow,
    PermissionMode,
    authorize,
    explain,
)


def ctx(*patterns: str) -> RunContext[Any]:
    c: RunContext[Any] = RunContext.ephemeral(None)
    return c.with_allow_rules([AllowRule.bash_command(p) for p in patterns]).with_permission_mode(
        PermissionMode.DONT_ASK
    )


def decide(c: RunContext[Any], command: str) -> Any:
    return asyncio.run(explain(c, "Bash", {"command": command}, ToolEffect.SIDE_EFFECT))


@pytest.mark.parametrize(
    ("patterns", "command"),
    [
        (("git status",), "git status"),
        (("git status",), "'git' status"),
        (("git log *",), "git log --oneline -5"),
        (("git log *",), "git log"),
        (("npm run test:*",), "npm run test:unit -- --watch"),
        (("npm run test:*",), "npm run test"),
        (("ls", "git"), "ls -la && git status"),
        (("ls", "git status", "cat"), "ls | cat && git status"),
        (("git log *",), "git log > /dev/null 2>&1"),
    ],
)
def test_covered_commands_are_allowed(patterns: tuple[str, ...], command: str) -> None:
    e = decide(ctx(*patterns), command)
    assert (e.decision, e.stage, e.uncovered) == ("allow", "allow_rule", None)
    assert isinstance(
        asyncio.run(
            authorize(ctx(*patterns), "Bash", ToolEffect.SIDE_EFFECT, {"command": command})
        ),
        PermissionAllow,
    )


@pytest.mark.parametrize(
    ("patterns", "command", "uncovered"),
    [
        (("git status",), "git status --short", "`git status --short` is not covered"),
        (("git log *",), "git log; rm -rf x", "command `rm` is not in the allow list"),
        (("git log *", "sh"), "git log && curl x", "command `curl` is not in the allow list"),
        (("git log *",), "git log $(rm x)", "command `rm` is not in the allow list"),
        (("git log *",), "git log > notes.txt", "`git log` is not covered"),
        (("npm run test:*",), "npm run build", "`npm run build` is not covered"),
        (("ls", "git"), "ls -la && git status && rm -rf build", "sub-command `rm -rf build`"),
        (("git *",), "git -c core.pager='rm x' log", "uses `-c core.pager=rm x`"),
    ],
)
def test_uncovered_parts_are_named(patterns: tuple[str, ...], command: str, uncovered: str) -> None:
    e = decide(ctx(*patterns), command)
    assert (e.decision, e.stage) == ("deny", "mode")  # DONT_ASK: not allowed means denied
    assert e.uncovered is not None
    assert uncovered in e.uncovered


def test_an_unanalysable_part_is_named_and_asks_under_the_guards() -> None:
    command = "git log && curl x | sh"
    e = decide(ctx("git log *").without_default_guards(), command)
    assert (e.decision, e.stage) == ("deny", "mode")
    assert e.uncovered is not None and "shell reads commands from a pipe" in e.uncovered
    # The built-in guards give their worst case on it first (G5).
    e = decide(ctx("git log *"), command)
    assert (e.decision, e.stage, e.rule) == ("ask", "guard", "guard_unanalysable")
    assert "shell reads commands from a pipe" in e.reason


def test_the_rules_that_covered_are_named() -> None:
    e = decide(ctx("ls", "git status", "cat"), "ls && git status")
    assert e.rule == "AllowRule.bash_command('ls') + AllowRule.bash_command('git status')"
    e = decide(ctx("git"), "git status && git push")
    assert e.rule == "AllowRule.bash_command('git')"


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("git log; rm", "must be one simple command"),
        ("git log > f", "must be one simple command"),
        ("git $(x)", "has an expansion or substitution"),
        ("* x", "needs a program name without `*`"),
    ],
)
def test_a_bad_pattern_is_refused_when_the_rule_is_built(pattern: str, why: str) -> None:
    from helikon.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        AllowRule.bash_command(pattern)
    assert str(err.value).startswith(
        f"AllowRule.bash_command({pattern!r}): allow pattern `{pattern}` {why}"
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("/usr/bin/curl", "is a path, so it would never match; write the program name 'curl'"),
        ("/bin/rm", "is a path, so it would never match; write the program name 'rm'"),
        ("rm -rf", "is not one program name, so it would never match"),
        ("rm;ls", "is not one program name"),
        ("rm ", "has blanks around the name, so it would never match; write 'rm'"),
        (" rm", "has blanks around the name"),
        ("rm\n", "has blanks around the name"),
        ("r*", "is a glob, so it would never match"),
        ("*", "is a glob"),
    ],
)
def test_a_deny_rule_that_could_never_match_is_refused(value: str, message: str) -> None:
    """Attack M12: these were accepted and protected nothing."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        DenyRule.bash_command(value)


@pytest.mark.parametrize("value", ["rm", "RM", "g++", "python3.12", "x86_64-linux-gnu-gcc"])
def test_program_names_are_accepted_as_deny_rules(value: str) -> None:
    assert DenyRule.bash_command(value).value == value
