"""Attack classes left open after session 6, end to end through ``explain`` and ``BashTool``.

Each class (M3 residue, M5/M6 runners, M9 fed stdin, M11 subscripts, G2 escaping paths,
G4 writers, G6 links made in the same command) is checked with several spellings. For a
command that runs ``rm``:

* ``analyze`` names ``rm`` (reached through the construct) or records the construct as
  unanalysable with the reason of its class;
* under ``DenyRule.bash_command("rm")`` the decision is ``deny``;
* an allow rule for the outer program never covers it, and ``explain`` names what is not
  covered (the ``rm`` sub-command, or the unanalysable part);
* ``BashTool(deny_commands=["rm"])`` refuses it before anything runs.

Guard classes (G2, G4, G6) are checked through the built-in guards' ``explain``. The Rust
side runs the same classes from ``tests/data/bash_adversarial.json`` (ids ``s7-*``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from helikon import AllowRule, DenyRule, PermissionMode, RunContext, _native
from helikon.errors import ToolDenied
from helikon.permissions import explain
from helikon.shell import analyze
from helikon.tools import BashTool, HostBackend, Sandbox

from ..tools.conftest import needs_command_policy, tool_ctx

pytestmark = needs_command_policy


def _explain(ctx: RunContext[Any], command: str) -> Any:
    return asyncio.run(explain(ctx, "Bash", {"command": command}))


def _deny_rm() -> RunContext[Any]:
    return (
        RunContext.ephemeral()
        .with_deny_rules([DenyRule.bash_command("rm")])
        .without_default_guards()
    )


def _allow(*names: str) -> RunContext[Any]:
    return (
        RunContext.ephemeral()
        .with_allow_rules([AllowRule.bash_command(n) for n in names])
        .with_permission_mode(PermissionMode.DONT_ASK)
        .without_default_guards()
    )


def _refused_by_tool(tmp_path: Path, command: str) -> str:
    """The ToolDenied message of BashTool(deny_commands=["rm"]); the command never runs."""
    (tmp_path / "x").write_text("keep")
    tool = BashTool(HostBackend(Sandbox.open(tmp_path)), deny_commands=["rm"])
    with pytest.raises(ToolDenied) as err:
        asyncio.run(tool.invoke(tool_ctx(), {"command": command}))
    assert (tmp_path / "x").read_text() == "keep"
    return str(err.value)


def _outer(command: str) -> str:
    return command.split()[0]


def assert_runs_rm(command: str, via: str, tmp_path: Path) -> None:
    """The construct is analysed: `rm` is named, reached through `via`."""
    a = analyze(command)
    rms = [c for c in a.commands if c.program == "rm"]
    assert rms, a
    assert any(via in v for c in rms for v in c.via), [c.via for c in rms]
    assert _explain(_deny_rm(), command).decision == "deny"
    # Every other program covered: only `rm` is left uncovered.
    others = sorted({c.program for c in a.commands if c.program != "rm"})
    e = _explain(_allow(_outer(command), *others), command)
    assert e.decision == "deny"
    assert e.uncovered.startswith("allow_list: command `rm` is not in the allow list"), e.uncovered
    assert "refused by rule" in _refused_by_tool(tmp_path, command)


def assert_unanalysable(command: str, reason: str, tmp_path: Path) -> None:
    """The construct fails closed with its class's reason."""
    a = analyze(command)
    assert not a.analysable, a
    assert any(reason in u.reason for u in a.unanalysable), a.unanalysable
    assert _explain(_deny_rm(), command).decision == "deny"
    # Even with every program it names covered, it is never allowed.
    e = _explain(_allow(_outer(command), *{c.program for c in a.commands}), command)
    assert e.decision == "deny"
    assert e.uncovered.startswith("allow_list: the command cannot be fully analysed"), e.uncovered
    guards = _explain(RunContext.ephemeral(), command)
    assert (guards.decision, guards.rule) == ("ask", "guard_unanalysable")
    assert "refused by rule" in _refused_by_tool(tmp_path, command)


# ------------------------------------------------------------------ M3: options before -c/-e

M3_CODE = [
    "python3 -Z foo -c 'import os; os.system(\"rm x\")'",
    "python3 --unknown-opt value -c 'import os; os.remove(\"x\")'",
    "perl -x -e 'unlink \"x\"'",
    'node --max-old-space-size 10 -e \'require("fs").rmSync("x")\'',
    'node --stack-trace-limit 5 -p \'require("child_process").execSync("rm x")\'',
]
M3_SHELL = [
    "bash -O extglob -c 'rm x'",
    "sh -o errexit -c 'rm x'",
    "bash --rcfile /dev/null -c 'rm x'",
    "bash -o pipefail -xc 'rm x'",
]


@pytest.mark.parametrize("command", M3_CODE)
def test_m3_code_after_value_options_is_found(command: str, tmp_path: Path) -> None:
    assert_unanalysable(command, "code is not analysed", tmp_path)


@pytest.mark.parametrize("command", M3_SHELL)
def test_m3_shell_options_before_c_are_analysed(command: str, tmp_path: Path) -> None:
    assert_runs_rm(command, " -c", tmp_path)


def test_m3_inert_code_after_value_options_stays_allowed() -> None:
    for command in [
        "python3 -W ignore -c 'print(1+2)'",
        "node --max-old-space-size 10 -e 'console.log(1)'",
    ]:
        assert _explain(_deny_rm(), command).decision == "allow", command
        assert _explain(_allow(_outer(command)), command).decision == "allow", command


# ------------------------------------------------------------------ M5/M6: runners

M5_RUNS = [
    ("uv run rm x", "uv run"),
    ("uv run --with requests --python 3.12 -- rm x", "uv run"),
    ("uv --directory d run rm x", "uv run"),
    ("uv tool run rm x", "uv tool run"),
    ("uvx --from pkg rm x", "uvx"),
    ("conda run -n base rm x", "conda run"),
    ("mamba run --prefix /opt/env rm x", "mamba run"),
    ("pipx run rm x", "pipx run"),
    ("npm exec -- rm x", "npm exec"),
    ("npm x --yes rm x", "npm exec"),
    ("npx --yes rm x", "npx"),
    ("pnpm dlx rm x", "pnpm dlx"),
    ("yarn exec rm x", "yarn exec"),
    ("bunx rm x", "bunx"),
    ("poetry run rm x", "poetry run"),
    ("pipenv run rm x", "pipenv run"),
    ("direnv exec . rm x", "direnv exec"),
    ("fakeroot -- rm x", "fakeroot"),
    ("chpst -u nobody -m 1000 rm x", "chpst"),
    ("setpriv --reuid 1000 --clear-groups rm x", "setpriv"),
    ("cgexec -g cpu:grp rm x", "cgexec"),
    ("unshare --mount --pid --fork rm x", "unshare"),
    ("nsenter -t 1 -m rm x", "nsenter"),
    ("firejail --net=none rm x", "firejail"),
    ("systemd-run --user --scope rm x", "systemd-run"),
    ("flock -w 5 /tmp/l rm x", "flock"),
    ("ionice -c 3 rm x", "ionice"),
    ("chrt -f 10 rm x", "chrt"),
    ("taskset -c 0 rm x", "taskset"),
    ("torsocks rm x", "torsocks"),
    ("proxychains4 -q rm x", "proxychains4"),
    ("runuser -u nobody -- rm x", "runuser"),
    ("doas -u root rm x", "doas"),
]
M5_SHELL = [
    ("capsh -- -c 'rm x'", "capsh --"),
    ("capsh --drop=cap_net_raw -- -c 'rm x'", "capsh --"),
    ("nix-shell -p hello --run 'rm x'", "nix-shell --run"),
    ("script -q -c 'rm x' /dev/null", "script"),
    ("watch -n 1 'rm x'", "watch"),
    ("su root -c 'rm x'", "su"),
    ("sg wheel -c 'rm x'", "sg"),
    ("flock /tmp/l -c 'rm x'", "flock"),
]
M5_CLOSED = [
    ("uv run --some-new-flag value rm x", "is not known, so the program it runs is uncertain"),
    ("npx --unknown v rm x", "is not known, so the program it runs is uncertain"),
    ("capsh --shell=/bin/rm -- x", "capsh runs a program given by option"),
    ("capsh -- x.sh", "capsh runs a shell with arguments"),
    ("capsh == -c 'rm x'", "capsh runs a program given by option"),
    ("parallel ::: rm", "parallel reads commands from its input"),
    ("crontab x", "crontab installs commands that run later"),
    ("crontab -u root jobs.txt", "crontab installs commands that run later"),
    ("echo '* * * * * rm x' | crontab -", "crontab installs commands that run later"),
]


@pytest.mark.parametrize(("command", "via"), M5_RUNS)
def test_m5_runner_runs_the_program_it_is_given(command: str, via: str, tmp_path: Path) -> None:
    assert_runs_rm(command, via, tmp_path)


@pytest.mark.parametrize(("command", "via"), M5_SHELL)
def test_m5_runner_runs_a_shell_string(command: str, via: str, tmp_path: Path) -> None:
    assert_runs_rm(command, via, tmp_path)


@pytest.mark.parametrize(("command", "reason"), M5_CLOSED)
def test_m5_runner_fails_closed(command: str, reason: str, tmp_path: Path) -> None:
    assert_unanalysable(command, reason, tmp_path)


def test_m5_runner_and_program_both_covered_is_allowed() -> None:
    ctx = _allow("uv", "poetry", "pytest", "ls", "crontab", "npm")
    for command in [
        "uv run ls",
        "uv run --frozen -- pytest -x",
        "poetry run pytest -q",
        "crontab -l",
    ]:
        e = _explain(ctx, command)
        assert e.decision == "allow", (command, e)


# ------------------------------------------------------------------ M9: fed standard input

M9_CLOSED = [
    ("sh <&3", "shell reads its script from a file or descriptor on standard input"),
    ("sh 0<&3", "shell reads its script from a file or descriptor on standard input"),
    ("bash < file", "shell reads its script from a file or descriptor on standard input"),
    ("sh <> x", "shell reads its script from a file or descriptor on standard input"),
    ("sh -s < x.sh", "shell reads its script from a file or descriptor on standard input"),
    ("source /dev/stdin < x", "shell reads its script from a file or descriptor on standard input"),
    ("python3 < script", "python3 reads code from a file or descriptor on standard input"),
    ("perl 0< script.pl", "perl reads code from a file or descriptor on standard input"),
    ("exec 0<x; sh", "shell reads its script from a file or descriptor on standard input"),
    ("exec <&3\nbash", "shell reads its script from a file or descriptor on standard input"),
    ('exec <<< "$CMD"; sh', "shell reads its script from a file or descriptor on standard input"),
    ("exec <<E\nimport os\nE\npython3", "python3 here-document code is not analysed"),
    ("cat x | sh", "shell reads commands from a pipe"),
]
M9_RUNS = [
    ('sh <<<"rm -rf /"', "sh <<<"),
    ("exec 0<<E\nrm x\nE\nsh", "sh <<heredoc"),
    ("exec <<<'rm x'; sh", "sh <<heredoc"),
    ("exec <<'E'\nrm -rf x\nE\nbash -s", "bash <<heredoc"),
]


@pytest.mark.parametrize(("command", "reason"), M9_CLOSED)
def test_m9_script_on_standard_input_fails_closed(
    command: str, reason: str, tmp_path: Path
) -> None:
    assert_unanalysable(command, reason, tmp_path)


@pytest.mark.parametrize(("command", "via"), M9_RUNS)
def test_m9_literal_script_on_standard_input_is_analysed(
    command: str, via: str, tmp_path: Path
) -> None:
    assert_runs_rm(command, via, tmp_path)


def test_m9_standard_input_nobody_reads_as_code_stays_data() -> None:
    for command in ["exec <<E\nrm x\nE\ncat", "bash < /dev/null", "bash <&0"]:
        assert analyze(command).analysable, command
        assert _explain(_deny_rm(), command).decision == "allow", command


# ------------------------------------------------------------------ M11: subscripts

M11_RUNS = [
    "printf -v 'a[$(rm -rf x)]' %s 1",
    "printf -v'a[`rm x`]' %s 1",
    "read 'a[$(rm x)]' <<< 1",
    "read -r -p prompt 'a[$(rm x)]' <<< 1",
    "declare 'a[$(rm x)]=1'",
    "local 'a[$(rm x)]=1'",
    "[[ 'a[$(rm x)]' -eq 1 ]]",
    "[[ -v 'a[$(rm x)]' ]]",
    "test -v 'a[$(rm x)]'",
    "[ -v 'a[$(rm x)]' ]",
    "let 'x=a[$(rm x)]'",
]


@pytest.mark.parametrize("command", M11_RUNS)
def test_m11_subscript_arithmetic_runs_its_substitution(command: str, tmp_path: Path) -> None:
    assert_runs_rm(command, "arithmetic subscript", tmp_path)


@pytest.mark.parametrize("command", ["mapfile -C 'rm x' -c 1 arr < f", "readarray -C 'rm x' a < f"])
def test_m11_mapfile_callback_is_a_command(command: str, tmp_path: Path) -> None:
    assert_runs_rm(command, "mapfile -C", tmp_path)


def test_m11_text_not_evaluated_as_arithmetic_stays_data() -> None:
    for command in [
        "printf -v x %s 'a[$(rm x)]'",
        "test 'a[$(rm x)]' = x",
        "[[ $x == 'a[$(rm x)]' ]]",
        "read -p '$(rm x)' y <<< 1",
    ]:
        assert "rm" not in analyze(command).programs, command
        assert _explain(_deny_rm(), command).decision == "allow", command


# ------------------------------------------------------------------ G2, G4, G6: guards


def _guard(command: str) -> Any:
    return _explain(RunContext.ephemeral(), command)


G2_ASK = [
    ("rm -rf $(pwd)/../../..", "climbs above a directory not known statically"),
    ("rm -rf `pwd`/..", "climbs above a directory not known statically"),
    ("rm -rf ../../../", "climbs above a directory not known statically"),
    ("rm -r ../..", "climbs above a directory not known statically"),
    ("rm -fr ./a/../../..", "climbs above a directory not known statically"),
    ("rm -rf ~user/../..", "climbs above a directory not known statically"),
    ('rm -rf "$PWD/../.."', ""),
    ("cd ..; cd ..; rm -rf *", "in a directory not known statically"),
    ("rm -rf ~root", ""),
]


@pytest.mark.parametrize(("command", "why"), G2_ASK)
def test_g2_recursive_remove_climbing_out_asks(command: str, why: str) -> None:
    e = _guard(command)
    assert (e.decision, e.stage, e.rule) == ("ask", "guard", "rm_recursive_root_or_home")
    assert e.reason == "destructive command: recursive force-remove of / or ~"
    if why:
        native = _native_check(command)
        assert why in native["explain"], native["explain"]


def _native_check(command: str) -> dict[str, Any]:
    """The native policy's verdict under the built-in guards alone (its explain names the
    target the guard saw)."""
    result: dict[str, Any] = json.loads(_native.CommandPolicy("{}").check(command))
    return result


def test_g2_paths_inside_the_workspace_and_other_homes_pass() -> None:
    for command in ["rm -rf build", "rm -rf ./build/../dist", "rm -rf a/b/../c", "rm -rf ~user"]:
        assert _guard(command).decision == "allow", command


G4_ASK = [
    "perl -pi -e 's/a/b/' /etc/x",
    "perl -i.bak -pe 's/a/b/' /etc/hosts",
    "ruby -i -pe 'x' /etc/x",
    "sed -i.bak -e 's/a/b/' /etc/x",
    "patch -d /etc -p1 < p.diff",
    "patch /etc/x < p.diff",
    "git clone --depth 1 url /etc/x",
    "git -C /etc commit -am x",
    "git --work-tree /etc add .",
    "git diff --output=/etc/x",
    "git format-patch -o /etc HEAD~1",
    "cpio -idvD/etc < a.cpio",
    "cpio -p /etc < list",
    "tar -C /etc -x -f a.tar",
    "unzip a.zip -d /etc",
    "scp -P 22 host:x /etc/y",
    "rsync -a x/ /etc/",
    "sqlite3 /etc/db 'create table t(x)'",
    "install -D -m 644 x /etc/y/z",
    "cp -t /etc x",
    "dd if=x of=/etc/x",
    "echo x | tee -a /etc/x",
    "curl --output-dir /etc -O url",
    "wget -P /etc url",
]


@pytest.mark.parametrize("command", G4_ASK)
def test_g4_writers_into_system_paths_ask(command: str) -> None:
    e = _guard(command)
    assert (e.decision, e.stage, e.rule) == ("ask", "guard", "protected_path_write"), e
    assert "(target `/etc" in _native_check(command)["explain"]


def test_g4_the_same_writers_inside_the_workspace_pass() -> None:
    for command in [
        "perl -pi -e 's/a/b/' src/x.c",
        "perl -ne 'print' /etc/hosts",
        "git clone url vendor/x",
        "git -C /etc log -1",
        "scp x host:/etc/",
        "sqlite3 data.db .tables",
    ]:
        assert _guard(command).decision == "allow", command


G6_ASK = [
    ("ln -s /etc x; echo hi > x/passwd", "protected_path_write", "/etc/passwd"),
    ("ln -s / r && rm -rf r/", "rm_recursive_root_or_home", "/"),
    ("ln -s ~ h; rm -rf h/", "rm_recursive_root_or_home", "~"),
    ("cp -s /etc/passwd y; echo > y", "protected_path_write", "/etc/passwd"),
    ("mkdir -p a && ln -s /etc a/b && tee a/b/x", "protected_path_write", "/etc/x"),
    ("ln /etc/passwd h; echo x > h", "protected_path_write", "/etc/passwd"),
    ("cp -l /etc/shadow s && truncate -s 0 s", "protected_path_write", "/etc/shadow"),
    ("ln -s .git g; echo x > g/config", "protected_dotpath_write", ".git/config"),
    ('ln -s "$D" r; rm -rf r/', "rm_recursive_root_or_home", "/"),
    ("cd /tmp && ln -s /etc e && echo x > e/hosts", "protected_path_write", "/etc/hosts"),
]


@pytest.mark.parametrize(("command", "rule", "target"), G6_ASK)
def test_g6_writes_through_a_link_made_in_the_same_command(
    command: str, rule: str, target: str
) -> None:
    e = _guard(command)
    assert (e.decision, e.stage, e.rule) == ("ask", "guard", rule)
    assert f"(target `{target}`)" in _native_check(command)["explain"]


def test_g6_links_inside_the_workspace_and_earlier_writes_pass() -> None:
    for command in [
        "ln -s build b; rm -rf b/",
        "ln -s /tmp/a x; echo hi > x/y",
        "echo hi > x/passwd; ln -s /etc x",
    ]:
        assert _guard(command).decision == "allow", command


M11_PARAM = [
    "echo \"${x:-'$(rm x)'}\"",
    "echo \"${x:+'`rm x`'}\"",
    "echo \"${a['$(rm x)']}\"",
    "echo ${a['a[$(rm x)]']}",
]


@pytest.mark.parametrize("command", M11_PARAM)
def test_m11_quoted_text_inside_a_parameter_expansion_runs(command: str, tmp_path: Path) -> None:
    assert "rm" in analyze(command).programs
    assert _explain(_deny_rm(), command).decision == "deny"
    assert "refused by rule deny_list" in _refused_by_tool(tmp_path, command)


def test_m11_single_quoted_default_outside_double_quotes_is_data() -> None:
    for command in ["echo ${x:-'$(rm x)'}", "echo ${x:='`rm x`'}"]:
        assert "rm" not in analyze(command).programs, command
        assert _explain(_deny_rm(), command).decision == "allow", command
