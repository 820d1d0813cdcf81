"""``helikon run`` after new-user trial 2: ``--model`` reaches handoff targets, Ctrl-C exits
promptly, ``--version``, empty input, and problems in any agent of the file fail at once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from helikon.cli.sidecar import SidecarError, load_sidecar
from helikon.core.items import text_of


def _exe() -> str:
    exe = shutil.which("helikon", path=str(Path(sys.executable).parent))
    assert exe, "the helikon console script is not installed next to this Python"
    return exe


def _env() -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}


def _helikon(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_exe(), *args], capture_output=True, text=True, timeout=60, cwd=cwd, env=_env()
    )


def _script(path: Path, turns: list[list[dict[str, object]]]) -> Path:
    path.write_text(json.dumps(turns))
    return path


HANDOFF = {"tool_call": {"call_id": "h1", "name": "transfer_to_billing", "args": {}}}


def _two_agents(tmp_path: Path) -> Path:
    _script(tmp_path / "front.json", [[HANDOFF]])
    _script(tmp_path / "billing.json", [[{"token": "from billing's own script"}]])
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(
        '[agents.front]\nmodel = { provider = "mock", script = "front.json" }\n'
        'handoffs = ["billing"]\n'
        '[agents.billing]\ndescription = "Billing desk"\n'
        'model = { provider = "mock", script = "billing.json" }\n'
    )
    return sidecar


# --------------------------------------------------------------------- #7 --model everywhere


def test_model_override_reaches_handoff_targets(tmp_path: Path) -> None:
    sidecar = _two_agents(tmp_path)
    handoff_lines = (
        "→ transfer_to_billing({})\n"
        "← transfer_to_billing: Transferred to billing.\n"
        "⇢ handoff front → billing\n"
    )
    own = _helikon("run", "--agents", str(sidecar), "--agent", "front", "refund me")
    assert own.returncode == 0, own.stderr
    assert own.stdout == handoff_lines + "from billing's own script\n"

    override = _script(tmp_path / "override.json", [[HANDOFF], [{"token": "from the override"}]])
    proc = _helikon(
        "run", "--agents", str(sidecar), "--agent", "front", "--model", f"mock:{override}", "hi"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == handoff_lines + "from the override\n"


def test_model_override_is_one_model_for_every_agent_built(tmp_path: Path) -> None:
    sidecar = _two_agents(tmp_path)
    override = _script(tmp_path / "override.json", [[{"token": "x"}]])
    front = load_sidecar(sidecar).build("front", model_override=f"mock:{override}")
    assert [h.name for h in front.handoffs] == ["billing"]
    assert front.handoffs[0].model is front.model
    plain = load_sidecar(sidecar).build("front")
    assert plain.handoffs[0].model is not plain.model


# --------------------------------------------------------------------- #17 every agent checked


def test_a_broken_agent_the_run_does_not_reach_fails_at_once(tmp_path: Path) -> None:
    _script(tmp_path / "a.json", [[{"token": "hi"}]])
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "a.json" }\n'
        '[agents.b]\nmodel = { provider = "mock", script = "missing.json" }\n'
    )
    proc = _helikon("run", "--agents", str(sidecar), "--agent", "a", "hi")
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: {sidecar}: agents.b.model.script: cannot read script file")
    assert lines[0].endswith(
        f"Fix: create {(tmp_path / 'missing.json').resolve()} or point script at an existing "
        "file (paths are relative to the sidecar's folder)"
    )


def test_every_agents_tools_and_model_table_are_checked(tmp_path: Path) -> None:
    _script(tmp_path / "a.json", [[{"token": "hi"}]])
    sidecar = tmp_path / "agents.toml"
    head = '[agents.a]\nmodel = { provider = "mock", script = "a.json" }\n'
    sidecar.write_text(
        head + '[agents.b]\nmodel = { provider = "mock", script = "a.json" }\ntools = ["nope"]\n'
    )
    with pytest.raises(SidecarError) as exc:
        load_sidecar(sidecar).build("a")
    assert str(exc.value) == (
        f"{sidecar}: agents.b.tools: unknown tool 'nope'. "
        'Fix: add [tools.nope] with python = "module:function"'
    )
    # the override replaces b's model too, but not its tools
    with pytest.raises(SidecarError, match=r"agents\.b\.tools: unknown tool 'nope'"):
        load_sidecar(sidecar).build("a", model_override=f"mock:{tmp_path / 'a.json'}")
    sidecar.write_text(
        head + '[agents.b]\nmodel = { provider = "openai", id = "gpt-5-mini", base_url = 1 }\n'
    )
    with pytest.raises(SidecarError) as exc:
        load_sidecar(sidecar).build("a")
    assert str(exc.value) == (
        f"{sidecar}: agents.b.model.base_url: not an http(s) URL: 1. "
        'Fix: base_url = "https://host/v1"'
    )


def test_an_unused_live_agent_needs_no_api_key(tmp_path: Path) -> None:
    _script(tmp_path / "a.json", [[{"token": "mock answer"}]])
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "a.json" }\n'
        '[agents.live]\nmodel = { provider = "openai", id = "gpt-5-mini" }\n'
        '[agents.live_b]\nmodel = { provider = "mock", script = "missing.json" }\n'
    )
    # with --model, no agent's own model table is used (nor checked): the run works
    proc = _helikon("run", "--agents", str(sidecar), "--model", f"mock:{tmp_path / 'a.json'}", "hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "mock answer\n"
    sidecar.write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "a.json" }\n'
        '[agents.live]\nmodel = { provider = "openai", id = "gpt-5-mini" }\n'
    )
    assert "OPENAI_API_KEY" not in os.environ
    proc = _helikon("run", "--agents", str(sidecar), "--agent", "a", "hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "mock answer\n"
    proc = _helikon("run", "--agents", str(sidecar), "--agent", "live", "hi")
    assert proc.returncode == 2
    assert "agents.live.model: OPENAI_API_KEY is not set" in proc.stderr


# --------------------------------------------------------------------- #17 version, input, help


def test_version() -> None:
    proc = _helikon("--version")
    assert proc.returncode == 0, proc.stderr
    # the native core's build follows in parentheses (tests/cli/test_doctor.py pins it)
    assert proc.stdout.startswith(f"helikon {version('helikon')} (native core ")
    assert proc.stderr == ""


@pytest.mark.parametrize("text", ["", "   ", " \n\t "])
def test_empty_input_is_refused_before_running(tmp_path: Path, text: str) -> None:
    sidecar = _two_agents(tmp_path)
    proc = _helikon("run", "--agents", str(sidecar), text)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        "error: INPUT is empty: there is nothing to send to the agent. "
        'Fix: pass the user message, e.g. helikon run --agents agents.toml "Hello"\n'
    )


def test_help_names_the_arguments() -> None:
    proc = _helikon("run", "--help")
    assert proc.returncode == 0
    assert "--agents" in proc.stdout
    assert "AGENTS_TOML" in proc.stdout
    assert "INPUT" in proc.stdout
    assert "{agents_toml}" not in proc.stdout
    assert "Override the model of every agent" in proc.stdout
    assert "--version" in _helikon("--help").stdout


# --------------------------------------------------------------------- #8 Ctrl-C

SLEEPY = """\
import time
from pathlib import Path


def sleepy(seconds: int) -> str:
    '''Sleep.'''
    Path(__file__).with_name("started").write_text("yes")
    time.sleep(seconds)
    return "woke"
"""


def _wait_for(path: Path, proc: subprocess.Popen[str], limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not path.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"exited early ({proc.returncode}): {out} {err}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the tool never started")
        time.sleep(0.05)


def _interrupt(proc: subprocess.Popen[str], started: Path) -> tuple[float, str, str]:
    """SIGINT once the tool runs; the seconds until the process ended, its output."""
    _wait_for(started, proc)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"still running 30 s after Ctrl-C: {out} {err}")
    return time.monotonic() - t0, out, err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_during_a_sync_tool_exits_promptly_with_130(tmp_path: Path) -> None:
    (tmp_path / "slowtools.py").write_text(SLEEPY)
    _script(
        tmp_path / "s.json",
        [
            [{"tool_call": {"call_id": "c1", "name": "sleepy", "args": {"seconds": 60}}}],
            [{"token": "done"}],
        ],
    )
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\ntools = ["sleepy"]\n'
        '[tools.sleepy]\npython = "slowtools:sleepy"\n'
    )
    proc = subprocess.Popen(
        [_exe(), "run", "--agents", str(sidecar), "hi"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    elapsed, out, err = _interrupt(proc, tmp_path / "started")
    assert proc.returncode == 130, err
    assert elapsed < 10, f"took {elapsed:.1f} s (the tool sleeps 60 s)"
    assert out == '→ sleepy({"seconds": 60})\n'
    assert err == "interrupted\n"


RUNNER_SCRIPT = """\
import sys
import time
from pathlib import Path

from helikon import Agent, tool
from helikon.cli.main import _drive
from helikon.runtimes import Runner
from helikon.sessions.sqlite import SqlitePool, SqliteSession
from helikon.testing import Call, MockModel, Text

db, started = sys.argv[1], Path(sys.argv[2])


@tool
def sleepy(seconds: int) -> str:
    '''Sleep.'''
    started.write_text("yes")
    time.sleep(seconds)
    return "woke"


async def main() -> int:
    async with await SqlitePool.connect(db) as pool:
        session = await SqliteSession.open(pool, "chat")
        model = MockModel([[Call("c1", "sleepy", {"seconds": 60})], [Text("done")]])
        agent = Agent(name="a", model=model, tools=[sleepy])
        await Runner().run(agent, "please sleep", session=session)
    return 0


sys.exit(_drive(main()))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_lets_the_runner_record_the_session_first(tmp_path: Path) -> None:
    """The loop driver behind ``helikon run`` exits 130 only after the cancelled run has
    written its session (the Runner's ``finally``), without waiting for the tool thread."""
    import asyncio

    from helikon.sessions.sqlite import SqlitePool, SqliteSession

    script = tmp_path / "run.py"
    script.write_text(RUNNER_SCRIPT)
    db = tmp_path / "chat.db"
    proc = subprocess.Popen(
        [sys.executable, str(script), str(db), str(tmp_path / "started")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    elapsed, _, err = _interrupt(proc, tmp_path / "started")
    assert proc.returncode == 130, err
    assert elapsed < 10, f"took {elapsed:.1f} s (the tool sleeps 60 s)"
    assert "Traceback" not in err

    async def read() -> list[Any]:
        async with await SqlitePool.connect(db) as pool:
            return await (await SqliteSession.open(pool, "chat")).snapshot()

    items = asyncio.run(read())
    assert [i.type for i in items] == ["user_message", "tool_call", "tool_result"]
    assert text_of(items[0].content) == "please sleep"
    assert items[2].is_error  # the interrupted call got its synthesized result
