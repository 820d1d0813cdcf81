"""The sandbox through the native boundary: ConfinedDir, SandboxPolicy, error mapping."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from helikon import _native
from helikon.errors import ConfigError, SandboxUnavailable, ToolDenied, ToolOther

NOBODY = (65534, 65534)
OUTCOME_KEYS = {
    "killed_reason",
    "exit_code",
    "signal",
    "stdout",
    "stderr",
    "truncated",
    "timed_out",
    "duration_ms",
}


def _kernel() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(_native.sandbox_probe())
    return result


needs_os_sandbox = pytest.mark.skipif(
    os.geteuid() != 0 or _kernel()["landlock_abi"] < 6 or not _kernel()["seccomp"],
    reason="the OS sandbox tests need root (for run_as) and Landlock ABI 6 + seccomp",
)


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, Path]:
    tmp_path.chmod(0o755)
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE-SECRET")
    (outside / "secret.txt").chmod(0o644)
    (root / "hello.txt").write_text("hello\n")
    if os.geteuid() == 0:
        os.chown(root, *NOBODY)
        os.chown(root / "hello.txt", *NOBODY)
    return {"root": root, "outside": outside}


def _policy(root: Path, **extra: Any) -> _native.SandboxPolicy:
    config: dict[str, Any] = {"root": str(root), **extra}
    if os.geteuid() == 0:
        config.setdefault("run_as", list(NOBODY))
    return _native.SandboxPolicy(json.dumps(config))


def _run(policy: _native.SandboxPolicy, command: str, timeout_s: float = 5.0) -> Any:
    return json.loads(policy.run(command, timeout_s))


# ------------------------------------------------------------------ ConfinedDir


def test_confined_dir_reads_writes_stats_and_lists(workspace: dict[str, Path]) -> None:
    d = _native.ConfinedDir(str(workspace["root"]))
    assert d.root == str(workspace["root"].resolve())
    assert d.read_text("hello.txt") == "hello\n"
    d.write_text("sub/dir/new.txt", "créé")
    assert (workspace["root"] / "sub/dir/new.txt").read_text() == "créé"
    d.write_atomic("bin.dat", b"\x00\xff")
    assert d.read_bytes("bin.dat") == b"\x00\xff"
    st = json.loads(d.stat("sub/dir/new.txt"))
    assert st["kind"] == "file"
    assert st["size"] == len("créé".encode())
    assert d.exists("sub") and not d.exists("nope")
    names = [e["name"] for e in json.loads(d.list())]
    assert names == ["bin.dat", "hello.txt", "sub"]


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../outside/secret.txt", "'..'"),
        ("/etc/passwd", "absolute"),
        ("link", "outside the root"),
        ("hl", "hard links"),
    ],
)
def test_confined_dir_denies_escapes(workspace: dict[str, Path], path: str, reason: str) -> None:
    (workspace["root"] / "link").symlink_to(workspace["outside"] / "secret.txt")
    os.link(workspace["outside"] / "secret.txt", workspace["root"] / "hl")
    d = _native.ConfinedDir(str(workspace["root"]))
    with pytest.raises(ToolDenied) as info:
        d.read_text(path)
    assert isinstance(info.value, PermissionError)
    assert path in str(info.value)
    assert reason in str(info.value)
    with pytest.raises(ToolDenied):
        d.write_text(path, "overwrite")
    assert (workspace["outside"] / "secret.txt").read_text() == "OUTSIDE-SECRET"


def test_confined_dir_other_failures_are_tool_other(workspace: dict[str, Path]) -> None:
    d = _native.ConfinedDir(str(workspace["root"]))
    with pytest.raises(ToolOther, match="not found"):
        d.read_text("missing.txt")
    with pytest.raises(ToolOther, match="limit"):
        d.read_bytes("hello.txt", max_bytes=3)
    (workspace["root"] / "latin1.txt").write_bytes(b"caf\xe9")
    with pytest.raises(ToolOther, match="UTF-8"):
        d.read_text("latin1.txt")


# ------------------------------------------------------------------ SandboxPolicy, host mode


def test_host_mode_runs_and_reports_the_outcome_shape(workspace: dict[str, Path]) -> None:
    p = _policy(workspace["root"], mode="host", output_cap_bytes=100)
    assert p.label == "host (no containment)"
    g = json.loads(p.guarantees())
    assert (g["filesystem"], g["network"], g["syscalls"]) == ("none", "none", "none")
    out = _run(p, "cat hello.txt; echo oops >&2; exit 4")
    assert set(out) == OUTCOME_KEYS
    assert (out["exit_code"], out["stdout"], out["stderr"]) == (4, "hello\n", "oops\n")
    out = _run(p, "seq 1 1000")
    assert out["truncated"] and "bytes omitted" in out["stdout"]
    assert out["stdout"].startswith("1\n") and out["stdout"].endswith("1000\n")
    out = _run(p, "sleep 30", timeout_s=0.5)
    assert out["timed_out"] and out["signal"] == 15
    assert out["killed_reason"] == "timeout"


def test_bad_config_and_arguments_raise_config_error(workspace: dict[str, Path]) -> None:
    with pytest.raises(ConfigError):
        _native.SandboxPolicy("{not json")
    with pytest.raises(ConfigError, match="unknown field"):
        _native.SandboxPolicy(json.dumps({"root": str(workspace["root"]), "bogus": 1}))
    p = _policy(workspace["root"], mode="host")
    with pytest.raises(ConfigError):
        p.run("true", 0)
    with pytest.raises(ConfigError):
        p.run("true", float("nan"))


def test_run_releases_the_gil(workspace: dict[str, Path]) -> None:
    p = _policy(workspace["root"], mode="host")
    results: list[Any] = []

    def call() -> None:
        results.append(_run(p, "sleep 0.5"))

    started = time.monotonic()
    threads = [threading.Thread(target=call) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert time.monotonic() - started < 1.4
    assert [r["exit_code"] for r in results] == [0, 0, 0]


# ------------------------------------------------------------------ SandboxPolicy, OS sandbox


@needs_os_sandbox
def test_os_sandbox_contains_and_lets_benign_commands_work(workspace: dict[str, Path]) -> None:
    p = _policy(workspace["root"])
    assert p.label == "os-sandbox (landlock+seccomp)"
    g = json.loads(p.guarantees())
    assert (g["filesystem"], g["network"], g["syscalls"]) == ("os_kernel",) * 3
    assert g["landlock_abi"] >= 6
    secret = workspace["outside"] / "secret.txt"
    out = _run(p, f"cat {secret}")
    assert out["exit_code"] != 0 and "Permission denied" in out["stderr"]
    assert "OUTSIDE-SECRET" not in out["stdout"]
    out = _run(p, f"echo pwned > {workspace['outside']}/new.txt")
    assert not (workspace["outside"] / "new.txt").exists()
    out = _run(p, "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 9))'")
    assert "Operation not permitted" in out["stderr"]
    out = _run(p, "grep -c hello hello.txt | cat && echo made > made.txt && cat made.txt")
    assert (out["exit_code"], out["stdout"]) == (0, "1\nmade\n")


@needs_os_sandbox
def test_os_sandbox_as_root_without_run_as_is_unavailable(workspace: dict[str, Path]) -> None:
    with pytest.raises(SandboxUnavailable, match="run_as"):
        _native.SandboxPolicy(json.dumps({"root": str(workspace["root"])}))


@needs_os_sandbox
def test_allow_network_opens_only_the_network_axis(workspace: dict[str, Path]) -> None:
    p = _policy(workspace["root"], allow_network=True)
    g = json.loads(p.guarantees())
    assert (g["filesystem"], g["network"], g["syscalls"]) == ("os_kernel", "none", "os_kernel")
    out = _run(p, f"cat {workspace['outside'] / 'secret.txt'}")
    assert "Permission denied" in out["stderr"]
