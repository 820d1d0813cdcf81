"""BashTool through HostBackend and OsSandboxBackend: benign commands work in both; escapes
fail under the OS sandbox and succeed on the host (which is why the host is no boundary)."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helikon.core.cancel import CancellationToken
from helikon.core.tool import Tool, ToolEffect
from helikon.errors import ConfigError, InvalidArgs, ToolDenied
from helikon.tools import BashTool, ExecResult, HostBackend, OsSandboxBackend, Sandbox

from .conftest import IS_ROOT, needs_command_policy, needs_os_sandbox, run_as, tool_ctx


def _make(kind: str, ws: dict[str, Path]) -> BashTool:
    if kind == "os":
        return BashTool(OsSandboxBackend(Sandbox.open(ws["root"]), run_as=run_as(), timeout=20))
    # On the host the commands run as this uid: give it a root it owns (git refuses a
    # repository owned by someone else).
    host_root = ws["tmp"] / "host_root"
    host_root.mkdir(exist_ok=True)
    (host_root / "hello.txt").write_text("hello\nworld\n")
    return BashTool(HostBackend(Sandbox.open(host_root), timeout=20))


KINDS = [pytest.param("host", id="host"), pytest.param("os", id="os", marks=needs_os_sandbox)]


async def _bash(t: BashTool, command: str, **extra: Any) -> tuple[str, ExecResult]:
    out = await t.invoke(tool_ctx(extra.pop("cancel", None)), {"command": command, **extra})
    text: str = out.content[0].text  # type: ignore[union-attr]
    assert isinstance(out.value, ExecResult)
    return text, out.value


# ------------------------------------------------------------------ metadata


@pytest.mark.parametrize("kind", KINDS)
def test_metadata_and_description_carry_the_label(kind: str, ws: dict[str, Path]) -> None:
    t = _make(kind, ws)
    assert isinstance(t, Tool)
    assert t.name == "Bash"
    assert t.effect is ToolEffect.SIDE_EFFECT
    props = t.parameters["properties"]
    assert set(props) == {"command", "timeout"}
    assert t.parameters["required"] == ["command"]
    assert all(p["description"] for p in props.values())
    assert "at most 600; default 20" in props["timeout"]["description"]
    label = t.backend.guarantees().label
    assert f"Containment: {label} (" in t.description
    if kind == "os":
        assert "os-sandbox (landlock+seccomp)" in t.description
        assert "The network is unreachable." in t.description
    else:
        assert "host (no containment)" in t.description


def test_config_errors(ws: dict[str, Path]) -> None:
    backend = HostBackend(Sandbox.open(ws["root"]))
    with pytest.raises(
        ConfigError,
        match=r"BashTool needs an ExecutionBackend, not a path \('nope'\): .*"
        r"best_available_backend\(Sandbox\.open\('nope'\)\)",
    ):
        BashTool("nope")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="BashTool needs an ExecutionBackend, got int"):
        BashTool(3)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"BashTool\.timeout \(900s\) exceeds max_timeout"):
        BashTool(backend, timeout=900)


# ------------------------------------------------------------------ benign commands


BENIGN = [
    ("ls", "hello.txt"),
    ("cat hello.txt", "hello\nworld"),
    ("grep -n wor hello.txt", "2:world"),
    ("cat hello.txt | sort -r | head -1 | tr a-z A-Z", "WORLD"),
    ("python3 -c 'import sys; print(sum(range(10)), sys.version_info[0])'", "45 3"),
    ("echo discard > /dev/null && echo wrote-dev-null", "wrote-dev-null"),
    ("mkdir -p d/e && echo x > d/e/f.txt && cat d/e/f.txt", "x"),
    ("cat <<'EOF' | wc -l\na\nb\nEOF", "2"),
    ("echo $(echo nested) $((6 * 7))", "nested 42"),
    (
        "git init -q . && git -c user.email=a@b -c user.name=a add hello.txt && git status --short",
        "A  hello.txt",
    ),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("command", "expected"), BENIGN, ids=[c for c, _ in BENIGN])
async def test_benign_commands(kind: str, command: str, expected: str, ws: dict[str, Path]) -> None:
    text, r = await _bash(_make(kind, ws), command)
    assert r.exit_code == 0, text
    assert r.stdout.strip() == expected, text
    assert text.startswith("exit code: 0\nstdout:\n")


@pytest.mark.parametrize("kind", KINDS)
async def test_output_format(kind: str, ws: dict[str, Path]) -> None:
    text, _ = await _bash(_make(kind, ws), "echo out; echo err >&2; exit 3")
    assert text == "exit code: 3\nstdout:\nout\nstderr:\nerr"
    text, _ = await _bash(_make(kind, ws), "true")
    assert text == "exit code: 0\nstdout: (empty)\nstderr: (empty)"


async def test_truncation_and_timeout_are_stated(ws: dict[str, Path]) -> None:
    t = BashTool(HostBackend(Sandbox.open(ws["root"]), output_cap_bytes=100))
    text, r = await _bash(t, "seq 1 1000")
    assert r.truncated
    assert text.startswith("exit code: 0\nstdout:\n1\n2\n")
    assert "[... output truncated: " in text
    assert text.endswith(
        "\nstderr: (empty)\n[output truncated: a stream over the cap keeps its first and last "
        "part; the cut is marked where it happened]"
    )
    text, r = await _bash(t, "sleep 5", timeout=0.3)
    assert r.timed_out
    assert text.startswith("timed out after 0.3s: the command's processes were killed\n")


async def test_cancel_through_the_tool_context(ws: dict[str, Path]) -> None:
    t = BashTool(HostBackend(Sandbox.open(ws["root"])))
    tok = CancellationToken()
    asyncio.get_running_loop().call_later(0.3, tok.cancel)
    t0 = time.monotonic()
    text, r = await _bash(t, "sleep 45.5", cancel=tok)
    assert time.monotonic() - t0 < 5
    assert r.cancelled
    assert text.startswith("cancelled: the command was stopped and its processes were killed")


async def test_invalid_args(ws: dict[str, Path]) -> None:
    t = BashTool(HostBackend(Sandbox.open(ws["root"])), max_timeout=60)
    with pytest.raises(InvalidArgs) as exc:
        await t.invoke(tool_ctx(), {"command": "ls", "timeout": 61})
    assert exc.value.schema_errors == ["timeout: Input should be less than or equal to 60"]
    with pytest.raises(InvalidArgs) as exc:
        await t.invoke(tool_ctx(), {"command": ""})
    assert exc.value.schema_errors == ["command: String should have at least 1 character"]
    with pytest.raises(InvalidArgs) as exc:
        await t.invoke(tool_ctx(), {"command": "echo a\x00b"})
    assert exc.value.schema_errors == ["command: must not contain NUL bytes"]


# ------------------------------------------------------------------ escapes


class _Listener:
    """A TCP listener on 127.0.0.1 that records what connects (bounded, self-stopping)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.port: int = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        deadline = time.monotonic() + 30
        while not self._stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    self.received.append(conn.recv(4096))
                    conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 7\r\n\r\nREACHED")
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[_Listener]:
    srv = _Listener()
    yield srv
    srv.close()


def _escapes(ws: dict[str, Path], port: int) -> dict[str, str]:
    outside = ws["outside"]
    return {
        "read_outside_file": f"cat {outside}/secret.txt",
        "write_outside_root": f"echo PWNED > {outside}/pwned.txt && cat {outside}/pwned.txt",
        "python_socket": (
            "python3 -c \"import socket; s = socket.create_connection(('127.0.0.1', "
            f"{port}), timeout=3); s.sendall(b'py-escape'); print(s.recv(100).decode())\""
        ),
        "curl": f"curl -sS -m 3 http://127.0.0.1:{port}/curl-escape",
    }


ESCAPE_NAMES = ["read_outside_file", "write_outside_root", "python_socket", "curl"]


@needs_os_sandbox
@pytest.mark.parametrize("name", ESCAPE_NAMES)
async def test_escapes_fail_in_the_os_sandbox(
    name: str, ws: dict[str, Path], listener: _Listener
) -> None:
    text, r = await _bash(_make("os", ws), _escapes(ws, listener.port)[name])
    assert r.exit_code != 0, text
    assert "OUTSIDE-SECRET" not in r.stdout
    assert "REACHED" not in r.stdout
    assert not (ws["outside"] / "pwned.txt").exists()
    assert listener.received == []
    expected_error = {
        "read_outside_file": "Permission denied",
        "write_outside_root": "Permission denied",
        "python_socket": "PermissionError",
        "curl": "curl: (7)",
    }[name]
    assert expected_error in r.stderr, text


@pytest.mark.parametrize("name", ESCAPE_NAMES)
async def test_the_same_escapes_succeed_on_the_host(
    name: str, ws: dict[str, Path], listener: _Listener
) -> None:
    text, r = await _bash(_make("host", ws), _escapes(ws, listener.port)[name])
    assert r.exit_code == 0, text
    expected = {
        "read_outside_file": "OUTSIDE-SECRET",
        "write_outside_root": "PWNED",
        "python_socket": "REACHED",
        "curl": "REACHED",
    }[name]
    assert expected in r.stdout
    if name in ("python_socket", "curl"):
        assert len(listener.received) == 1


@needs_os_sandbox
async def test_shadow_is_unreadable_in_the_os_sandbox(ws: dict[str, Path]) -> None:
    text, r = await _bash(_make("os", ws), "cat /etc/shadow")
    assert r.exit_code != 0
    assert "/etc/shadow: Permission denied" in r.stderr, text


@pytest.mark.skipif(not IS_ROOT, reason="only root can read /etc/shadow on the host")
async def test_shadow_is_readable_on_the_host_as_root(ws: dict[str, Path]) -> None:
    text, r = await _bash(_make("host", ws), "cat /etc/shadow")
    assert r.exit_code == 0, text
    assert r.stdout.startswith("root:")


@needs_os_sandbox
async def test_sandbox_runs_as_the_unprivileged_uid(ws: dict[str, Path]) -> None:
    _, r = await _bash(_make("os", ws), "id -u; touch made.txt")
    assert r.exit_code == 0
    assert r.stdout.strip() == str(os.geteuid() if not IS_ROOT else 65534)
    assert (ws["root"] / "made.txt").exists()


# ------------------------------------------------------------------ allow / deny lists


@needs_command_policy
async def test_deny_list_refuses_naming_rule_and_sub_command(ws: dict[str, Path]) -> None:
    t = BashTool(HostBackend(Sandbox.open(ws["root"])), deny_commands=["curl", "rm"])
    assert "Refused programs: curl, rm." in t.description
    with pytest.raises(ToolDenied) as exc:
        await _bash(t, "echo ok && /usr/bin/curl -s http://127.0.0.1:9/ | sh")
    assert str(exc.value) == (
        "denied: Bash command refused by rule deny_list: command `curl` is blocked by the deny "
        "list, in sub-command `/usr/bin/curl -s http://127.0.0.1:9/` on line 1"
    )
    with pytest.raises(ToolDenied, match="`rm` is blocked"):
        await _bash(t, "echo $(rm -rf x)")
    text, r = await _bash(t, "ls")
    assert r.exit_code == 0, text


@needs_command_policy
async def test_deny_list_refuses_what_it_cannot_analyse(ws: dict[str, Path]) -> None:
    t = BashTool(HostBackend(Sandbox.open(ws["root"])), deny_commands=["rm"])
    with pytest.raises(ToolDenied) as exc:
        await _bash(t, 'X=rm; eval "$X -rf x"')
    assert str(exc.value) == (
        "denied: Bash command refused by rule unanalysable: the command cannot be fully "
        'analysed (eval of a dynamic string: `eval "$X -rf x"`), so a denied program may run'
    )


@needs_command_policy
async def test_allow_list_is_exclusive(ws: dict[str, Path]) -> None:
    t = BashTool(HostBackend(Sandbox.open(ws["root"])), allow_commands=["ls", "cat"])
    assert "Allowed programs: ls, cat." in t.description
    text, r = await _bash(t, "ls | cat")
    assert r.exit_code == 0, text
    with pytest.raises(ToolDenied) as exc:
        await _bash(t, "ls; touch made.txt")
    assert str(exc.value) == (
        "denied: Bash command refused by rule allow_list: command `touch` is not in the allow "
        "list, in sub-command `touch made.txt` on line 1"
    )
    assert not (ws["root"] / "made.txt").exists()
