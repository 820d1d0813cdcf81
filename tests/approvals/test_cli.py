"""``helikon resume STATE`` in a new process, and the terminal prompt's answers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from helikon import RunConfig
from helikon.cli.resume_cmd import prompt_decisions, run_with_approvals
from helikon.cli.sidecar import load_sidecar
from helikon.core.decisions import Approve, Deny, Edit
from helikon.errors import RunInterruptedError
from helikon.runtimes.runner import Runner

_TOOLS = '''
import json, os
from helikon import tool

@tool(name="Bash")
def bash(command: str) -> str:
    """Run a shell command (recorded, not run)."""
    with open(os.environ["RAN_FILE"], "a") as f:
        f.write(json.dumps(command) + "\\n")
    return "ran " + command
'''


def _sidecar(tmp: Path, name: str, script: list[list[dict[str, object]]]) -> Path:
    (tmp / "cmdtools.py").write_text(_TOOLS)
    (tmp / f"{name}.json").write_text(json.dumps(script))
    toml = tmp / f"{name}.toml"
    toml.write_text(
        '[agents.ops]\ntools = ["Bash"]\n'
        f'model = {{ provider = "mock", script = "{name}.json" }}\n'
        '[tools.Bash]\npython = "cmdtools:bash"\n'
    )
    return toml


_ASKS = [[{"tool_call": {"call_id": "c1", "name": "Bash", "args": {"command": "rm -rf ~"}}}]]


def _helikon(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("helikon", path=str(Path(sys.executable).parent))
    assert exe
    full = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **env}
    return subprocess.run(
        [exe, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=full,
        stdin=subprocess.DEVNULL,
    )


async def _pause(tmp: Path) -> Path:
    agent = load_sidecar(_sidecar(tmp, "first", _ASKS)).build("ops")
    with pytest.raises(RunInterruptedError) as err:
        await Runner().run(agent, "clean up", run_config=RunConfig(approval="defer"))
    path = tmp / "state.json"
    path.write_text(err.value.state.to_json())
    assert err.value.state.pending[0].reason.startswith("guard ")
    return path


async def test_helikon_resume_approves_in_a_new_process_once(tmp_path: Path) -> None:
    os.environ["RAN_FILE"] = str(tmp_path / "ran.txt")
    state = await _pause(tmp_path)
    toml = _sidecar(tmp_path, "second", [[{"token": "Cleaned."}]])
    env = {"RAN_FILE": str(tmp_path / "ran.txt")}
    headless = _helikon("resume", str(state), "--agents", str(toml), cwd=tmp_path, env=env)
    assert headless.returncode == 2
    assert "no decisions given for the waiting calls c1 (Bash)" in headless.stderr
    proc = _helikon(
        "resume", str(state), "--agents", str(toml), "--approve", "c1", cwd=tmp_path, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert "← c1: ran rm -rf ~" in proc.stdout and "Cleaned." in proc.stdout
    again = _helikon(
        "resume", str(state), "--agents", str(toml), "--approve", "c1", cwd=tmp_path, env=env
    )
    assert again.returncode == 1
    assert "was already resumed" in again.stderr
    assert (tmp_path / "ran.txt").read_text().splitlines() == ['"rm -rf ~"']


async def test_helikon_run_headless_pauses_and_helikon_resume_finishes(tmp_path: Path) -> None:
    ran = tmp_path / "ran.txt"
    env = {"RAN_FILE": str(ran)}
    first = _sidecar(tmp_path, "first", _ASKS)
    paused = _helikon("run", "--agents", str(first), "clean up", cwd=tmp_path, env=env)
    assert paused.returncode == 3, paused.stderr
    path = Path(paused.stdout.strip().splitlines()[-1])
    assert path.parent == tmp_path.resolve() and path.name.startswith("helikon-paused-")
    assert "continue with: helikon resume" in paused.stderr
    assert not ran.exists()
    second = _sidecar(tmp_path, "second", [[{"token": "Cleaned."}]])
    done = _helikon(
        "resume", str(path), "--agents", str(second), "--approve", "c1", cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "Cleaned." in done.stdout
    assert ran.read_text().splitlines() == ['"rm -rf ~"']


async def test_helikon_run_applies_the_sidecars_deny_rules_without_pausing(tmp_path: Path) -> None:
    ran = tmp_path / "ran.txt"
    script = [
        [{"tool_call": {"call_id": "c1", "name": "Bash", "args": {"command": "curl evil.test"}}}],
        [{"token": "Could not."}],
    ]
    toml = _sidecar(tmp_path, "deny", script)
    toml.write_text(toml.read_text() + '[permissions]\ndeny = ["bash:curl"]\n')
    proc = _helikon(
        "run", "--agents", str(toml), "fetch it", cwd=tmp_path, env={"RAN_FILE": str(ran)}
    )
    assert proc.returncode == 0, proc.stderr
    assert "Could not." in proc.stdout
    assert not ran.exists()
    assert not list(tmp_path.glob("helikon-paused-*"))


async def test_a_resumed_run_keeps_the_sidecars_permissions(tmp_path: Path) -> None:
    """The resume runs under the sidecar's [permissions], as the run that paused did."""
    os.environ["RAN_FILE"] = str(tmp_path / "ran.txt")
    state = await _pause(tmp_path)
    script = [
        [{"tool_call": {"call_id": "c2", "name": "Bash", "args": {"command": "curl evil.test"}}}],
        [{"token": "Done."}],
    ]
    toml = _sidecar(tmp_path, "second", script)
    toml.write_text(toml.read_text() + '[permissions]\ndeny = ["bash:curl"]\n')
    proc = _helikon(
        "resume",
        str(state),
        "--agents",
        str(toml),
        "--approve",
        "c1",
        cwd=tmp_path,
        env={"RAN_FILE": str(tmp_path / "ran.txt")},
    )
    assert proc.returncode == 0, proc.stderr
    assert "← c1: ran rm -rf ~" in proc.stdout and "Done." in proc.stdout
    assert "← Bash: permission denied: DenyRule.bash_command('curl') matched" in proc.stdout
    assert (tmp_path / "ran.txt").read_text().splitlines() == ['"rm -rf ~"']


async def test_helikon_resume_denies_with_the_reason(tmp_path: Path) -> None:
    os.environ["RAN_FILE"] = str(tmp_path / "ran.txt")
    state = await _pause(tmp_path)
    toml = _sidecar(tmp_path, "second", [[{"token": "Left it."}]])
    proc = _helikon(
        "resume",
        str(state),
        "--agents",
        str(toml),
        "--deny",
        "c1=too risky",
        cwd=tmp_path,
        env={"RAN_FILE": str(tmp_path / "ran.txt")},
    )
    assert proc.returncode == 0, proc.stderr
    assert "← c1: approval denied: too risky" in proc.stdout
    assert not (tmp_path / "ran.txt").exists()


async def test_a_headless_pause_writes_the_state_file_and_prints_its_path(tmp_path: Path) -> None:
    os.environ["RAN_FILE"] = str(tmp_path / "ran.txt")
    agent = load_sidecar(_sidecar(tmp_path, "first", _ASKS)).build("ops")
    out, err = Console(record=True, width=200), Console(record=True, width=200, stderr=True)
    code = await run_with_approvals(agent, "clean up", out, err, state_dir=tmp_path)
    assert code == 3
    path = Path(out.export_text().strip().splitlines()[-1])
    assert path.parent == tmp_path.resolve() and path.name.startswith("helikon-paused-")
    assert json.loads(path.read_text())["pending"][0]["call_id"] == "c1"
    assert "continue with: helikon resume" in err.export_text()


async def test_a_terminal_answers_y_n_or_edit(tmp_path: Path) -> None:
    os.environ["RAN_FILE"] = str(tmp_path / "ran.txt")
    state_path = await _pause(tmp_path)
    from helikon import RunState

    state = RunState.from_json(state_path.read_text())
    err = Console(record=True, width=200)
    for answers, want in [
        (["y"], Approve()),
        (["x", "n", "not now"], Deny("not now")),
        (["n", ""], Deny("denied at the terminal")),
        (["e", "[1]", "e", '{"command": "ls"}'], Edit({"command": "ls"})),
    ]:
        feed = iter(answers)
        assert prompt_decisions(state, lambda _, f=feed: next(f), err) == {"c1": want}
    assert "approval needed Bash" in err.export_text()


async def test_mcp_serve_denies_an_ask_inline_and_reports_a_deferred_pause() -> None:
    from helikon import Agent
    from helikon.mcp.server import McpAgentServer
    from helikon.testing import Call, MockModel, Text
    from tests.approvals import _support as s

    def support(run_config: RunConfig | None = None) -> Agent:
        model = MockModel([[Call("c2", "refund", {"order": "A7", "amount": 40})], [Text("No.")]])
        return Agent(
            name="support",
            model=model,
            tools=[s.refund],
            run_config=run_config or RunConfig(),
        )

    s.RAN.clear()
    inline = await McpAgentServer(support(), ctx_factory=lambda: s.ctx()).call("refund A7")
    assert not inline.is_error
    assert inline.content[0].text == "No."  # type: ignore[union-attr]
    deferred = await McpAgentServer(
        support(RunConfig(approval="defer")), ctx_factory=lambda: s.ctx()
    ).call("refund A7")
    assert deferred.is_error
    assert "paused" in deferred.content[0].text  # type: ignore[union-attr]
    assert s.RAN == []
