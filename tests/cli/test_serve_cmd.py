"""``helikon serve``: the sidecar's agents over HTTP/SSE, in a real process."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.cli.clihelp import EXAMPLE, env, exe, helikon

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

DINING = "You're over budget on dining this month: you've spent $312.40"
SIDECAR = EXAMPLE / "agents.toml"
WAIT = 30.0


class Served:
    """A ``helikon serve`` process; its stdout and stderr lines arrive on queues."""

    def __init__(self, *args: str, **extra_env: str) -> None:
        self.proc = subprocess.Popen(
            [exe(), "serve", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env(**extra_env),
        )
        self.threads: list[threading.Thread] = []
        self.out = self._lines(self.proc.stdout)
        self.err = self._lines(self.proc.stderr)
        first = self.out.get(timeout=WAIT)
        assert first.startswith("helikon server at http://127.0.0.1:"), first
        self.url = first.split(" at ", 1)[1].split(" ", 1)[0]
        self.agent_lines = [self.out.get(timeout=WAIT).rstrip("\n")]

    def _lines(self, stream: Any) -> queue.Queue[str]:
        q: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            for line in stream:
                q.put(line)

        thread = threading.Thread(target=pump, daemon=True)
        thread.start()
        self.threads.append(thread)
        return q

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str, str]:
        """Send ``sig``; the exit code and the rest of stdout and stderr."""
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=WAIT)
        for thread in self.threads:  # they end at the pipes' end of file
            thread.join(timeout=WAIT)
        rest_out, rest_err = [], []
        for q, rest in ((self.out, rest_out), (self.err, rest_err)):
            while not q.empty():
                rest.append(q.get_nowait())
        return code, "".join(rest_out), "".join(rest_err)

    def kill(self) -> None:
        """Kill the process if it still runs; close its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for thread in self.threads:
            thread.join(timeout=WAIT)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


def _sse(response: Any) -> list[dict[str, Any]]:
    frames = []
    for block in response.text.split("\n\n"):
        data = [line[6:] for line in block.splitlines() if line.startswith("data: ")]
        if data:
            frames.append(json.loads("".join(data)))
    return frames


pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def test_serves_every_agent_streams_a_run_and_stops_on_sigterm() -> None:
    served = Served(str(SIDECAR), "--port", "0")
    try:
        assert served.agent_lines == [
            f"  budget_assistant: POST {served.url}/agents/budget_assistant/runs"
        ]
        response = httpx.post(
            f"{served.url}/agents/budget_assistant/runs?stream=sse",
            json={"input": "How is my dining budget?"},
            timeout=WAIT,
        )
        assert response.status_code == 200
        events = _sse(response)
        types = [e["type"] for e in events]
        assert types[0] == "run_started" and types[-1] == "run_completed"
        assert [e["item"]["name"] for e in events if e["type"] == "tool_call_item"] == [
            "lookup_spending",
            "budget_status",
        ]
        answer = [e for e in events if e["type"] == "message_output"][-1]
        assert answer["item"]["content"][0]["text"].startswith(DINING)
        request_line = served.out.get(timeout=WAIT)
        assert '"POST /agents/budget_assistant/runs?stream=sse HTTP/1.1" 200' in request_line
        code, _, err = served.stop(signal.SIGTERM)
    finally:
        served.kill()
    assert code == 0, err
    assert "stopped (SIGTERM)" in err


def test_ctrl_c_stops_cleanly_too() -> None:
    served = Served(str(SIDECAR), "--port", "0", "--log-level", "warning")
    try:
        assert httpx.get(f"{served.url}/healthz", timeout=WAIT).text == "ok"
        code, out, err = served.stop(signal.SIGINT)
    finally:
        served.kill()
    assert code == 0, err
    assert "stopped (SIGINT)" in err
    assert "GET /healthz" not in out  # --log-level warning: no request lines


def test_token_guards_every_route_but_health() -> None:
    served = Served("--agents", str(SIDECAR), "--port", "0", HELIKON_SERVER_TOKEN="s3cret-t0ken")
    try:
        runs = f"{served.url}/agents/budget_assistant/runs"
        body = {"input": "How is my dining budget?"}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-t0ken"}):
            refused = httpx.post(runs, json=body, headers=headers, timeout=WAIT)
            assert refused.status_code == 401, headers
            assert refused.json()["error"] == "unauthorized"
        assert httpx.get(f"{served.url}/openapi.json", timeout=WAIT).status_code == 401
        assert httpx.get(f"{served.url}/healthz", timeout=WAIT).text == "ok"
        ok = httpx.post(
            runs, json=body, headers={"Authorization": "Bearer s3cret-t0ken"}, timeout=WAIT
        )
        assert ok.status_code == 200
        assert ok.json()["output"].startswith(DINING)
    finally:
        served.stop()
        served.kill()


def test_ui_flag_is_passed_to_the_server_config() -> None:
    from helikon.cli.serve_cmd import _build_agents
    from helikon.cli.sidecar import load_sidecar

    assert sorted(_build_agents(load_sidecar(SIDECAR), None)) == ["budget_assistant"]
    served = Served(str(SIDECAR), "--port", "0", "--ui")
    try:
        assert served.out.get(timeout=WAIT).strip() == f"inspector: {served.url}/ui"
    finally:
        served.stop()
        served.kill()


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    proc = helikon("serve", str(missing), "--port", "0")
    assert proc.returncode == 2
    assert f"{missing}: cannot read the sidecar" in proc.stderr


def test_a_broken_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "agents.toml"
    bad.write_text("[agents.x]\nmodel = 3\n")
    proc = helikon("serve", str(bad), "--port", "0")
    assert proc.returncode == 2
    assert "agents.x.model" in proc.stderr


def test_an_unknown_agent_is_named_with_the_known_ones() -> None:
    proc = helikon("serve", str(SIDECAR), "--agent", "nobody", "--port", "0")
    assert proc.returncode == 2
    assert "no agent 'nobody'" in proc.stderr
    assert "['budget_assistant']" in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--log-level", "loud"], "--log-level 'loud': expected one of critical"),
        (["--port", "70000"], "--port 70000: expected 0 to 65535"),
        (["--token", ""], "--token: the token is empty"),
        (["--token", "two words"], "--token: the token is empty or contains whitespace"),
        (["--agents", "other.toml"], "the sidecar is given twice"),
    ],
)
def test_bad_arguments_are_named(args: list[str], message: str) -> None:
    proc = helikon("serve", str(SIDECAR), *args)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_a_port_in_use_fails_with_exit_1() -> None:
    served = Served(str(SIDECAR), "--port", "0")
    try:
        port = served.url.rsplit(":", 1)[1]
        proc = helikon("serve", str(SIDECAR), "--port", port)
        assert proc.returncode == 1
        assert f"cannot bind 127.0.0.1:{port}" in proc.stderr
    finally:
        served.stop()
        served.kill()
