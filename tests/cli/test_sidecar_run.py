"""The sidecar's ``[run]`` settings and ``[session]``: run limits reach the agent, a stored
conversation continues across ``helikon run`` invocations, and every bad value names its key."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helikon import OutputGuardrailTripwire, RunError
from helikon.cli.sidecar import SidecarError, load_sidecar
from helikon.core.context import RunConfig

pytest.importorskip("aiosqlite")

LOOP = [  # a model that calls the tool forever
    [{"tool_call": {"call_id": "c1", "name": "ping", "args": {}}}, {"finish": "tool_calls"}],
    [{"tool_call": {"call_id": "c2", "name": "ping", "args": {}}}, {"finish": "tool_calls"}],
    [{"tool_call": {"call_id": "c3", "name": "ping", "args": {}}}, {"finish": "tool_calls"}],
]

TOOLS = '''
from helikon import tool


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"
'''


def _write(tmp_path: Path, toml: str, script: object = None) -> Path:
    (tmp_path / "script.json").write_text(
        json.dumps(script if script is not None else [[{"token": "hello"}]]), encoding="utf-8"
    )
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    path = tmp_path / "agents.toml"
    path.write_text(toml, encoding="utf-8")
    return path


MODEL = 'model = { provider = "mock", script = "script.json" }\n'


def test_run_table_and_agent_override_build_the_run_config(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "[run]\nmax_turns = 3\ntimeout = 90\nparallel_tool_call_limit = 2\n"
        f"[agents.a]\n{MODEL}run = {{ max_turns = 5, max_agent_depth = 2 }}\n"
        f"[agents.b]\n{MODEL}",
    )
    sc = load_sidecar(path)
    assert sc.build("a").run_config == RunConfig(
        max_turns=5, timeout=90.0, parallel_tool_call_limit=2, max_agent_depth=2
    )
    assert sc.build("b").run_config == RunConfig(
        max_turns=3, timeout=90.0, parallel_tool_call_limit=2
    )


def test_no_run_table_keeps_the_defaults(tmp_path: Path) -> None:
    sc = load_sidecar(_write(tmp_path, f"[agents.a]\n{MODEL}"))
    assert sc.build("a").run_config == RunConfig()
    assert sc.session is None


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ("[run]\nmax_turns = 0\n", "run.max_turns: must be a whole number >= 1, got 0"),
        ("[run]\nmax_turns = 2.5\n", "run.max_turns: must be a whole number >= 1, got 2.5"),
        ("[run]\nmax_turns = true\n", "run.max_turns: must be a whole number >= 1, got True"),
        ('[run]\ntimeout = "60s"\n', "run.timeout: must be a number of seconds > 0, got '60s'"),
        ("[run]\ntimeout = -1\n", "run.timeout: must be a number of seconds > 0, got -1"),
        ("[run]\nmax_turn = 4\n", "run: unknown key 'max_turn'. Fix: did you mean 'max_turns'?"),
        ("[run]\nparallel_tool_call_limit = 0\n", "run.parallel_tool_call_limit: must be"),
        ("run = 4\n", "run: must be a table"),
        (
            f"[agents.a]\n{MODEL}run = {{ timeout = 0 }}\n",
            "agents.a.run.timeout: must be a number of seconds > 0, got 0",
        ),
        ('[session]\nbackend = "redis"\n', "session.url: the redis backend needs its server"),
        ("[session]\n", "session.path: the sqlite backend needs the database file"),
        ('[session]\npath = "c.db"\nid = ""\n', "session.id: must be a non-empty string"),
        (
            '[session]\nbackend = "memory"\npath = "c.db"\n',
            "session.path: the memory backend keeps no file",
        ),
        ('[session]\npath = "c.db"\nname = "x"\n', "session: unknown key 'name'"),
    ],
)
def test_bad_values_name_the_key(tmp_path: Path, toml: str, expected: str) -> None:
    if "[agents.a]" not in toml:
        toml = f"[agents.a]\n{MODEL}" + toml
    path = _write(tmp_path, toml)
    with pytest.raises(SidecarError) as caught:
        load_sidecar(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert expected in str(caught.value)
    assert "Fix:" in str(caught.value)


def _helikon(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("helikon", path=str(Path(sys.executable).parent))
    assert exe, "the helikon console script is not installed next to this Python"
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [exe, *args], capture_output=True, text=True, timeout=60, cwd=cwd, env=env
    )


def test_max_turns_from_the_sidecar_stops_helikon_run(tmp_path: Path) -> None:
    _write(
        tmp_path,
        f'[run]\nmax_turns = 2\n[tools.ping]\npython = "tools:ping"\n'
        f'[agents.a]\n{MODEL}tools = ["ping"]\n',
        LOOP,
    )
    proc = _helikon("run", "go", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "run failed: max turns (2) exceeded" in proc.stderr
    assert proc.stdout.count("→ ping({})") == 2  # the third scripted call never ran


def _snapshot(db: Path, session_id: str) -> list[tuple[str, str]]:
    from helikon.core.items import text_of
    from helikon.sessions import SqliteSession

    items = asyncio.run(SqliteSession(session_id, db).snapshot())
    return [(i.type, text_of(getattr(i, "content", None) or [])) for i in items]


def test_a_session_continues_across_helikon_run(tmp_path: Path) -> None:
    _write(tmp_path, f'[session]\npath = "state/chat.db"\n[agents.a]\n{MODEL}')
    for message in ("first question", "second question"):
        proc = _helikon("run", message, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    proc = _helikon("run", "--session", "other", "third question", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    db = tmp_path / "state" / "chat.db"
    assert _snapshot(db, "default") == [
        ("user_message", "first question"),
        ("assistant_message", "hello"),
        ("user_message", "second question"),
        ("assistant_message", "hello"),
    ]
    assert _snapshot(db, "other") == [
        ("user_message", "third question"),
        ("assistant_message", "hello"),
    ]


def test_session_flag_without_a_session_table_names_the_fix(tmp_path: Path) -> None:
    _write(tmp_path, f"[agents.a]\n{MODEL}")
    proc = _helikon("run", "--session", "work", "hi", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "has no [session] table" in proc.stderr
    assert '[session] with backend = "sqlite"' in proc.stderr


def test_the_repl_continues_the_stored_conversation(tmp_path: Path) -> None:
    _write(tmp_path, f'[session]\npath = "chat.db"\nid = "talk"\n[agents.a]\n{MODEL}')
    proc = _helikon("run", "asked with run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    exe = shutil.which("helikon", path=str(Path(sys.executable).parent))
    assert exe
    repl = subprocess.run(
        [exe, "repl"],
        input="asked in the repl\n/history\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )
    assert repl.returncode == 0, repl.stderr
    assert _snapshot(tmp_path / "chat.db", "talk") == [
        ("user_message", "asked with run"),
        ("assistant_message", "hello"),
        ("user_message", "asked in the repl"),
        ("assistant_message", "hello"),
    ]


HOOKS = """
from helikon.core.guardrails import Pass, Tripwire
from helikon.core.hooks import Allow

SEEN: list[str] = []


class Recorder:
    async def on_event(self, ctx, event):
        SEEN.append(type(event).__name__)
        return Allow()


class NoSecrets:
    async def check(self, ctx, input):
        if "password" in input.text:
            return Tripwire("input_policy", {"found": "password"})
        return Pass()


class Needs:
    def __init__(self, word):
        self.word = word

    async def check(self, ctx, input):
        return Pass()


not_a_hook = 42


def plain(ctx, event):
    return None


def no_greeting(input):
    return Tripwire("output_policy", {"said": input.text}) if "hello" in input.text else Pass()


def three(a, b, c):
    return Pass()
"""


def _hooked(tmp_path: Path, agent_lines: str) -> Path:
    (tmp_path / "myhooks.py").write_text(HOOKS, encoding="utf-8")
    return _write(tmp_path, f"[agents.a]\n{MODEL}{agent_lines}")


def test_hooks_and_guardrails_from_the_sidecar_run(tmp_path: Path) -> None:
    import importlib

    path = _hooked(
        tmp_path,
        'hooks = ["myhooks:Recorder"]\ninput_guardrails = ["myhooks:NoSecrets"]\n',
    )
    agent = load_sidecar(path).build("a")
    assert agent.run_sync("hi").final_output == "hello"
    seen = importlib.import_module("myhooks").SEEN
    assert seen[0] == "OnRunStart" and seen[-1] == "OnRunComplete"

    async def stream() -> list[Any]:
        return [e async for e in agent.stream("my password is hunter2")]

    events = asyncio.run(stream())
    assert events[-1].type == "run_failed"
    assert events[-1].error["kind"] == "GuardrailTriggered"
    assert events[-1].error["info"] == {"found": "password"}


def test_a_plain_function_guardrail_from_the_sidecar_trips_as_output(tmp_path: Path) -> None:
    path = _hooked(tmp_path, 'output_guardrails = ["myhooks:no_greeting"]\n')
    agent = load_sidecar(path).build("a")
    with pytest.raises(RunError) as caught:
        agent.run_sync("hi")
    assert isinstance(caught.value.error, OutputGuardrailTripwire)
    assert caught.value.error.info == {"said": "hello"}


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            'input_guardrails = ["myhooks:three"]\n',
            "agents.a.input_guardrails[0]: the guardrail function 'three' takes 3 required",
        ),
        ('hooks = "myhooks:Recorder"\n', "agents.a.hooks: must be a list of module:attr names"),
        ('hooks = ["Recorder"]\n', "agents.a.hooks[0]: 'Recorder' is not module:attr"),
        ('hooks = ["myhooks:Nope"]\n', "agents.a.hooks[0]: myhooks has no 'Nope'"),
        ('hooks = ["myhooks:not_a_hook"]\n', "agents.a.hooks[0]:"),
        ('hooks = ["myhooks:plain"]\n', "agents.a.hooks[0]: got the function 'plain'"),
        (
            'output_guardrails = ["myhooks:Needs"]\n',
            "agents.a.output_guardrails[0]: cannot make myhooks:Needs without arguments",
        ),
        ('input_guardrails = ["myhooks:Recorder"]\n', "agents.a.input_guardrails[0]:"),
    ],
)
def test_bad_hooks_and_guardrails_name_the_entry(tmp_path: Path, lines: str, expected: str) -> None:
    path = _hooked(tmp_path, lines)
    with pytest.raises(SidecarError) as caught:
        load_sidecar(path).build("a")
    assert expected in str(caught.value)
    assert "Fix:" in str(caught.value)


ASKS = '''
from helikon import tool


@tool(name="Bash")
def bash(command: str) -> str:
    """Run a shell command (recorded, not run)."""
    return "ran " + command
'''


def test_a_paused_run_resumes_into_its_session(tmp_path: Path) -> None:
    (tmp_path / "cmdtools.py").write_text(ASKS, encoding="utf-8")
    script = [
        [{"tool_call": {"call_id": "c1", "name": "Bash", "args": {"command": "rm -rf ~"}}}],
        [{"token": "Cleaned."}],
    ]
    (tmp_path / "script.json").write_text(json.dumps(script), encoding="utf-8")
    (tmp_path / "agents.toml").write_text(
        '[session]\npath = "chat.db"\n[tools.Bash]\npython = "cmdtools:bash"\n'
        f'[agents.ops]\n{MODEL}tools = ["Bash"]\n',
        encoding="utf-8",
    )
    exe = shutil.which("helikon", path=str(Path(sys.executable).parent))
    assert exe
    paused = subprocess.run(
        [exe, "run", "--session", "ops-1", "clean up"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1"},
        stdin=subprocess.DEVNULL,
    )
    assert paused.returncode == 3, paused.stderr
    state = paused.stdout.strip().splitlines()[-1]
    (tmp_path / "script.json").write_text(json.dumps([[{"token": "Cleaned."}]]), encoding="utf-8")
    done = _helikon("resume", state, "--approve", "c1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _snapshot(tmp_path / "chat.db", "ops-1") == [
        ("user_message", "clean up"),
        ("tool_call", ""),
        ("tool_result", "ran rm -rf ~"),
        ("assistant_message", "Cleaned."),
    ]


def _cycle_file(tmp_path: Path, run: str) -> Path:
    def calls(tool: str) -> list[Any]:
        return [
            [{"tool_call": {"call_id": f"{tool}{i}", "name": tool, "args": {}}}] for i in range(5)
        ]

    (tmp_path / "a.json").write_text(json.dumps(calls("transfer_to_b")), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps(calls("transfer_to_a")), encoding="utf-8")
    return _write(
        tmp_path,
        f"{run}[agents.a]\n"
        'model = { provider = "mock", script = "a.json" }\nhandoffs = ["b"]\n'
        "[agents.b]\n"
        'model = { provider = "mock", script = "b.json" }\nhandoffs = ["a"]\n',
    )


def test_a_handoff_cycle_runs_under_max_handoffs_and_stops_past_it(tmp_path: Path) -> None:
    from helikon import MaxHandoffsExceeded

    agent = load_sidecar(_cycle_file(tmp_path, "[run]\nmax_handoffs = 3\n")).build("a")
    assert [h.name for h in agent.handoffs] == ["b"]
    assert [h.name for h in agent.handoffs[0].handoffs] == ["a"]
    assert agent.handoffs[0].handoffs[0] is agent
    with pytest.raises(RunError) as caught:
        agent.run_sync("go")
    assert isinstance(caught.value.error, MaxHandoffsExceeded)
    assert str(caught.value.error) == "max handoffs (3) exceeded"
    hops = [(e.from_agent, e.to_agent) for e in caught.value.events if e.type == "handoff_item"]
    assert hops == [("a", "b"), ("b", "a"), ("a", "b")]


def test_a_handoff_cycle_without_max_handoffs_is_refused_naming_the_fix(tmp_path: Path) -> None:
    with pytest.raises(SidecarError) as caught:
        load_sidecar(_cycle_file(tmp_path, ""))
    assert "agents.b.handoffs: handoff cycle detected (a -> b -> a)" in str(caught.value)
    assert "set max_handoffs = N in [run] to allow it" in str(caught.value)
