"""``helikon repl`` driven through a pipe: turns share a conversation, editing the sidecar or a
tool module reloads the agent between turns, a broken edit keeps the old agent, Ctrl-C
cancels only the turn, end of input quits."""

from __future__ import annotations

import contextlib
import json
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.cli.clihelp import env, exe, helikon, script

pytest.importorskip("watchfiles")

WAIT = 30.0


class Repl:
    """A running ``helikon repl``: send lines, wait for output lines."""

    def __init__(self, cwd: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [exe(), "repl", *args],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env(),
        )
        self.out: queue.Queue[str] = queue.Queue()
        self.err: queue.Queue[str] = queue.Queue()
        for stream, q in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=self._pump, args=(stream, q), daemon=True).start()
        self.seen_out: list[str] = []
        self.seen_err: list[str] = []

    @staticmethod
    def _pump(stream: object, q: queue.Queue[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            q.put(line.rstrip("\n"))

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def _until(self, q: queue.Queue[str], seen: list[str], want: str) -> list[str]:
        """Lines read until one starting with ``want`` (included)."""
        got: list[str] = []
        deadline = time.monotonic() + WAIT
        while True:
            try:
                line = q.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.kill()
                pytest.fail(f"no line starting {want!r}; out={self.seen_out} err={self.seen_err}")
            got.append(line)
            seen.append(line)
            if line.startswith(want):
                return got

    def stdout_until(self, want: str) -> list[str]:
        return self._until(self.out, self.seen_out, want)

    def stderr_until(self, want: str) -> list[str]:
        return self._until(self.err, self.seen_err, want)

    def turn(self, text: str) -> list[str]:
        """Send a user line; its stdout lines up to the usage line on stderr."""
        self.send(text)
        self.stderr_until("usage: ")
        time.sleep(0.1)  # the answer's last line reaches stdout before usage reaches stderr
        lines = []
        while not self.out.empty():
            lines.append(self.out.get())
        self.seen_out.extend(lines)
        return lines

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail("the REPL did not end at end of input")

    def kill(self) -> None:
        """End the process if it still runs and close its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None and not stream.closed:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()


def _sidecar(root: Path, script_name: str = "s.json", extra: str = "") -> Path:
    path = root / "agents.toml"
    path.write_text(
        f'[agents.a]\ninstructions = "Be brief."\n'
        f'model = {{ provider = "mock", script = "{script_name}" }}\n{extra}'
    )
    return path


def _start(root: Path, *args: str) -> Repl:
    repl = Repl(root, *args)
    banner = repl.stderr_until("agent ")
    assert banner == ["agent a from agents.toml; /help lists the commands, Ctrl-D or /exit quits"]
    return repl


def test_turns_share_one_conversation(tmp_path: Path) -> None:
    script(tmp_path / "s.json", [[{"token": "first answer"}], [{"token": "second answer"}]])
    _sidecar(tmp_path)
    repl = _start(tmp_path)
    try:
        assert repl.turn("hello") == ["first answer"]
        assert repl.turn("and again") == ["second answer"]
        repl.send("/history")
        assert repl.stdout_until("assistant: second") == [
            "user: hello",
            "assistant: first answer",
            "user: and again",
            "assistant: second answer",
        ]
        repl.send("/bogus")
        assert repl.stderr_until("unknown") == [
            "unknown command '/bogus'; /help lists the commands"
        ]
        repl.send("/exit")
        assert repl.proc.wait(timeout=WAIT) == 0
    finally:
        repl.kill()


def test_editing_the_sidecar_reloads_between_turns_and_keeps_the_conversation(
    tmp_path: Path,
) -> None:
    script(tmp_path / "one.json", [[{"token": "from one"}], [{"token": "one again"}]])
    script(tmp_path / "two.json", [[{"token": "from two"}]])
    sidecar = _sidecar(tmp_path, "one.json")
    repl = _start(tmp_path)
    try:
        assert repl.turn("hi") == ["from one"]
        sidecar.write_text(sidecar.read_text() + "[tools\n")  # broken TOML
        failed = repl.stderr_until("reload failed")[-1]
        assert failed.startswith(
            "reload failed (changed: agents.toml), keeping the previous agent: "
            "agents.toml: invalid TOML: "
        )
        assert repl.turn("still there?") == ["one again"]  # the old agent, its next script
        _sidecar(tmp_path, "two.json")
        assert repl.stderr_until("reloaded") == [
            "reloaded agents.toml (changed: agents.toml): agent a"
        ]
        assert repl.turn("now?") == ["from two"]
        repl.send("/history")
        assert repl.stdout_until("assistant: from two") == [
            "user: hi",
            "assistant: from one",
            "user: still there?",
            "assistant: one again",
            "user: now?",
            "assistant: from two",
        ]
        assert repl.close() == 0
    finally:
        repl.kill()


TOOLS = """\
def version() -> str:
    '''The tool's version.'''
    return "{v}"
"""


def test_editing_a_tool_module_reloads_it(tmp_path: Path) -> None:
    call = {"tool_call": {"call_id": "c1", "name": "version", "args": {}}}
    script(tmp_path / "s.json", [[call], [{"token": "ok"}]])
    (tmp_path / "mytools.py").write_text(TOOLS.format(v="v1"))
    _sidecar(tmp_path, extra='tools = ["version"]\n[tools.version]\npython = "mytools:version"\n')
    repl = _start(tmp_path)
    try:
        assert repl.turn("which?") == ["→ version({})", "← version: v1", "ok"]
        (tmp_path / "mytools.py").write_text(TOOLS.format(v="v2"))
        assert repl.stderr_until("reloaded") == [
            "reloaded agents.toml (changed: mytools.py): agent a"
        ]
        assert repl.turn("which now?") == ["→ version({})", "← version: v2", "ok"]
        (tmp_path / "mytools.py").write_text("def version(:\n")
        failed = repl.stderr_until("reload failed")[-1]
        assert "importing 'mytools' failed: SyntaxError" in failed
        (tmp_path / "s.json").write_text(json.dumps([[call], [{"token": "still"}]]))
        failed = repl.stderr_until("reload failed")[-1]  # the script changed, the module is bad
        assert failed.startswith("reload failed (changed: s.json)")
        assert repl.close() == 0
    finally:
        repl.kill()


SLEEPY = """\
import time
from pathlib import Path


def sleepy(seconds: int) -> str:
    '''Sleep.'''
    Path(__file__).with_name("started").write_text("yes")
    time.sleep(seconds)
    return "woke"
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_cancels_the_turn_not_the_repl(tmp_path: Path) -> None:
    (tmp_path / "slow.py").write_text(SLEEPY)
    call = {"tool_call": {"call_id": "c1", "name": "sleepy", "args": {"seconds": 60}}}
    script(tmp_path / "s.json", [[call], [{"token": "after the interrupt"}]])
    _sidecar(tmp_path, extra='tools = ["sleepy"]\n[tools.sleepy]\npython = "slow:sleepy"\n')
    repl = _start(tmp_path)
    try:
        repl.send("sleep please")
        deadline = time.monotonic() + WAIT
        while not (tmp_path / "started").exists():
            assert time.monotonic() < deadline, "the tool never started"
            time.sleep(0.05)
        t0 = time.monotonic()
        repl.proc.send_signal(signal.SIGINT)
        assert repl.stderr_until("interrupted") == ["interrupted"]
        assert time.monotonic() - t0 < 10
        assert repl.turn("go on")[-1] == "after the interrupt"
        assert repl.close() == 0
        assert '→ sleepy({"seconds": 60})' in repl.seen_out
    finally:
        repl.kill()


def test_agent_switch_keeps_the_conversation(tmp_path: Path) -> None:
    script(tmp_path / "a.json", [[{"token": "from a"}]])
    script(tmp_path / "b.json", [[{"token": "from b"}]])
    (tmp_path / "agents.toml").write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "a.json" }\n'
        '[agents.b]\nmodel = { provider = "mock", script = "b.json" }\n'
    )
    repl = _start(tmp_path)
    try:
        assert repl.turn("one") == ["from a"]
        repl.send("/agent b")
        assert repl.stderr_until("reloaded") == ["reloaded agents.toml (/agent b): agent b"]
        repl.send("/agent zed")
        assert repl.stderr_until("no agent") == [
            "no agent 'zed' in agents.toml (agents: a, b); still agent b"
        ]
        repl.send("/agent")
        assert repl.stdout_until("agent ") == ["agent b (agents: a, b)"]
        assert repl.turn("two") == ["from b"]
        repl.send("/reset")
        assert repl.stderr_until("new conversation") == ["new conversation"]
        repl.send("/history")
        repl.send("/exit")
        assert repl.proc.wait(timeout=WAIT) == 0
        assert repl.out.empty()  # /history of a new conversation prints nothing
    finally:
        repl.kill()


def test_a_bad_sidecar_at_start_exits_2(tmp_path: Path) -> None:
    (tmp_path / "agents.toml").write_text("[agents.a]\nmodle = 1\n")
    proc = helikon("repl", cwd=tmp_path, stdin="")
    assert proc.returncode == 2
    assert proc.stderr == (
        "error: agents.toml: agents.a: unknown keys ['modle']. "
        "Fix: use ['description', 'handoffs', 'hooks', 'input_guardrails', 'instructions', "
        "'mcp', 'model', 'output_guardrails', 'output_mode', 'output_type', 'retries', 'run', "
        "'tools']\n"
    )


def test_end_of_input_quits(tmp_path: Path) -> None:
    script(tmp_path / "s.json", [[{"token": "hi"}]])
    _sidecar(tmp_path)
    proc = helikon("repl", "--agent", "a", cwd=tmp_path, stdin="hello\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "hi\n"
    assert proc.stderr.splitlines()[-1] == "usage: 0 input, 0 output, 0 total tokens"


_BASH_TOOL = '''
import json, os
from helikon import tool

@tool(name="Bash")
def bash(command: str) -> str:
    """Run a shell command (recorded, not run)."""
    with open("ran.txt", "a") as f:
        f.write(json.dumps(command) + "\\n")
    return "ran " + command
'''


def _asking_sidecar(root: Path, turns: list[list[dict[str, object]]]) -> None:
    (root / "cmdtools.py").write_text(_BASH_TOOL)
    script(root / "s.json", turns)
    _sidecar(root, extra='tools = ["Bash"]\n[tools.Bash]\npython = "cmdtools:bash"\n')


def _ran(root: Path) -> list[str]:
    path = root / "ran.txt"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_an_ask_in_a_turn_is_answered_at_the_prompt_and_the_turn_goes_on(
    tmp_path: Path,
) -> None:
    _asking_sidecar(
        tmp_path,
        [
            [{"tool_call": {"call_id": "c1", "name": "Bash", "args": {"command": "rm -rf ~"}}}],
            [{"token": "Cleaned."}],
            [{"tool_call": {"call_id": "c2", "name": "Bash", "args": {"command": "rm -rf /"}}}],
            [{"token": "Not done."}],
        ],
    )
    repl = _start(tmp_path)
    try:
        repl.send("clean up")
        asked = repl.stderr_until("allow? [y]es / [n]o / [e]dit")
        assert any(x.startswith("approval needed Bash") for x in asked)
        assert _ran(tmp_path) == []  # nothing ran before the answer
        repl.send("e")
        repl.stderr_until("new arguments (JSON object)")
        repl.send('{"command": "rm -rf ./build"}')
        repl.stderr_until("usage: ")
        assert repl.stdout_until("Cleaned.")[-1] == "Cleaned."
        assert _ran(tmp_path) == ["rm -rf ./build"]  # the edited call ran, once
        # a denial in the next turn: the same conversation goes on
        repl.send("now the root")
        repl.stderr_until("allow? [y]es / [n]o / [e]dit")
        repl.send("n")
        repl.stderr_until("reason (for the model)")
        repl.send("never")
        repl.stderr_until("usage: ")
        assert repl.stdout_until("Not done.")[-1] == "Not done."
        assert _ran(tmp_path) == ["rm -rf ./build"]
        repl.send("/history")
        history = repl.stdout_until("assistant: Not done.")
        assert "tool error: approval denied: never" in history
        assert "tool result: ran rm -rf ./build" in history
    finally:
        repl.kill()


def test_end_of_input_at_an_approval_prompt_denies_and_quits(tmp_path: Path) -> None:
    _asking_sidecar(
        tmp_path,
        [
            [{"tool_call": {"call_id": "c1", "name": "Bash", "args": {"command": "rm -rf ~"}}}],
            [{"token": "Denied then."}],
        ],
    )
    repl = _start(tmp_path)
    try:
        repl.send("clean up")
        repl.stderr_until("allow? [y]es / [n]o / [e]dit")
        assert repl.close() == 0
        assert _ran(tmp_path) == []
    finally:
        repl.kill()
