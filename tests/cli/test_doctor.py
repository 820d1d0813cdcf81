"""``helikon doctor`` and ``helikon --version``: what they report, from the installed package.

The command runs as a subprocess of the installed console script (so the report is the
installed wheel's); the per-check logic (extras, the sandbox rows on each platform, the
service probes) is driven in-process with the facts replaced.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from helikon import _native
from helikon.cli import doctor
from helikon.tools import sandbox_capabilities
from tests.conftest import require_service


def _helikon(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("helikon", path=str(Path(sys.executable).parent))
    assert exe, "the helikon console script is not installed next to this Python"
    return subprocess.run(
        [exe, *args], capture_output=True, text=True, timeout=120, check=False
    )


def _kernel() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(_native.sandbox_probe())
    return result


def test_version_prints_the_native_build() -> None:
    proc = _helikon("--version")
    assert proc.returncode == 0, proc.stderr
    native = json.loads(_native.build_info())
    assert proc.stdout == (
        f"helikon {version('helikon')} (native core {native['version']}, "
        f"{native['profile']} build, {native['target']})\n"
    )


def test_build_info_names_this_machine() -> None:
    info = json.loads(_native.build_info())
    assert set(info) == {"version", "profile", "target"}
    assert info["version"] == _native.__version__
    assert info["profile"] in ("release", "debug")
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower())
    assert info["target"].split("-")[0] == (machine or platform.machine())
    if sys.platform == "linux":
        assert re.fullmatch(r"[a-z0-9_]+-linux-(gnu|musl)", info["target"])


def test_doctor_json_reports_the_installation() -> None:
    proc = _helikon("doctor", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["version"] == version("helikon")
    assert report["native"] == json.loads(_native.build_info())
    assert report["python"] == f"CPython {platform.python_version()}"
    assert report["services"] is None
    extras = {c["name"]: c for c in report["extras"]}
    assert {"cli", "openai", "server", "temporal", "web"} <= set(extras)
    assert not {"all", "bench", "test"} & set(extras)
    assert extras["cli"] == {
        "name": "cli", "ok": True, "detail": "typer, rich, watchfiles, jsonschema", "fix": None
    }
    if sys.platform == "linux":
        rows = {c["name"]: c for c in report["sandbox"]["checks"]}
        kernel = _kernel()
        assert report["sandbox"]["platform"] == f"Linux {kernel['kernel_release']}"
        assert rows["Landlock"]["ok"] == (kernel["landlock_abi"] >= 6)
        if kernel["landlock_abi"]:
            assert rows["Landlock"]["detail"].startswith(f"ABI {kernel['landlock_abi']}")
        assert rows["seccomp"]["ok"] == kernel["seccomp"]
        can_build = kernel["landlock_abi"] >= 6 and kernel["seccomp"]
        assert rows["OsSandboxBackend"]["ok"] == can_build
        if can_build:
            assert rows["OsSandboxBackend"]["detail"] == "os-sandbox (landlock+seccomp)"


def test_doctor_text_puts_each_fix_under_its_check() -> None:
    proc = _helikon("doctor")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"helikon {version('helikon')}"
    assert lines[-1] == "services: not checked (--check-services)"
    for i, line in enumerate(lines):
        if line.lstrip().startswith("MISS"):
            assert lines[i + 1].strip().startswith("fix: "), line


def test_a_missing_extra_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "_installed", lambda dist: dist not in ("boto3", "rich"))
    checks = {c["name"]: c for c in doctor.extras()}
    assert checks["bedrock"] == {
        "name": "bedrock",
        "ok": False,
        "detail": "missing boto3",
        "fix": "pip install 'helikon[bedrock]'",
    }
    assert checks["cli"]["detail"] == "missing rich"
    assert checks["cli"]["fix"] == "pip install 'helikon[cli]'"
    assert checks["openai"]["ok"] is True


def _linux(monkeypatch: pytest.MonkeyPatch, **caps: Any) -> dict[str, dict[str, Any]]:
    facts = {
        "landlock_abi": 7, "landlock_missing": None, "seccomp": True,
        "kernel_release": "6.15.0", "user_namespaces": True, "cgroup_v2": True,
        "cgroup_delegated": "/sys/fs/cgroup/user.slice", "memory": "watchdog",
        "metadata": "user_mount_namespace", **caps,
    }
    monkeypatch.setattr(platform, "system", lambda: "Linux")
    monkeypatch.setattr(doctor, "_linux_capabilities", lambda: facts)
    monkeypatch.setattr(doctor, "_os_backend", lambda: doctor._check("OsSandboxBackend", True, "x"))
    report = doctor.sandbox()
    assert report["platform"] == "Linux 6.15.0"
    return {c["name"]: c for c in report["checks"]}


def test_linux_rows_when_everything_is_there(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _linux(monkeypatch)
    assert all(row["ok"] and row["fix"] is None for row in rows.values())
    assert list(rows) == [
        "Landlock", "seccomp", "user namespaces", "private_mounts", "network egress",
        "cgroup v2 delegation", "memory ceiling", "OsSandboxBackend",
    ]
    assert rows["network egress"]["detail"] == "namespace (a private network namespace per command)"
    assert rows["cgroup v2 delegation"]["detail"] == "/sys/fs/cgroup/user.slice"


@pytest.mark.parametrize(
    ("caps", "row", "detail", "fix_has"),
    [
        ({"landlock_abi": 4}, "Landlock", "ABI 4: no signal/abstract-socket scoping (ABI 6)",
         "allow_weaker=['signal_scope'"),
        ({"landlock_abi": 0, "landlock_missing": "disabled at boot"}, "Landlock",
         "disabled at boot", "lsm= boot"),
        ({"seccomp": False}, "seccomp", "filter mode unavailable", "CONFIG_SECCOMP_FILTER"),
        ({"user_namespaces": False}, "user namespaces", "cannot be created",
         "user.max_user_namespaces"),
        ({"cgroup_delegated": None}, "cgroup v2 delegation", "not delegated", "Delegate=yes"),
        ({"cgroup_delegated": None, "cgroup_v2": False}, "cgroup v2 delegation",
         "no cgroup v2 hierarchy", "Delegate=yes"),
        ({"memory": "none"}, "memory ceiling", "none", "Linux only"),
        ({"metadata": "uid_only"}, "private_mounts", "uid_only", "user.max_user_namespaces"),
    ],
)
def test_linux_missing_pieces_get_a_fix(
    monkeypatch: pytest.MonkeyPatch, caps: dict[str, Any], row: str, detail: str, fix_has: str
) -> None:
    rows = _linux(monkeypatch, **caps)
    assert rows[row]["ok"] is False
    assert rows[row]["detail"] == detail
    assert fix_has in rows[row]["fix"]
    # Without user namespaces the egress row says so too (its own test below).
    others = {row, "network egress"} if caps.get("user_namespaces") is False else {row}
    assert all(r["ok"] for name, r in rows.items() if name not in others)


def test_linux_egress_row_names_the_mechanism(monkeypatch: pytest.MonkeyPatch) -> None:
    row = _linux(monkeypatch, user_namespaces=False)["network egress"]
    assert row["ok"] is False
    assert row["detail"].startswith("landlock_port (the proxy's port number at other addresses")
    assert "user.max_user_namespaces" in row["fix"] and "run_as" in row["fix"]
    row = _linux(monkeypatch, user_namespaces=False, landlock_abi=3)["network egress"]
    assert row["detail"].startswith("none (network=NetworkPolicy is refused")


def test_windows_has_no_os_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform, "system", lambda: "Windows")
    monkeypatch.setattr(platform, "release", lambda: "11")
    report = doctor.sandbox()
    assert report["platform"] == "Windows 11"
    [row] = report["checks"]
    assert row["ok"] is False
    assert "HostBackend, which is not a boundary" in row["detail"]
    assert "WSL2" in row["fix"]


def test_macos_reports_seatbelt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform, "system", lambda: "Darwin")
    monkeypatch.setattr(platform, "mac_ver", lambda: ("14.5", ("", "", ""), "arm64"))
    report = doctor.sandbox()
    assert report["platform"] == "macOS 14.5"
    [row] = report["checks"]
    assert row["name"] == "Seatbelt (sandbox-exec)"
    assert row["ok"] == Path("/usr/bin/sandbox-exec").exists()


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux rows")
def test_linux_rows_follow_sandbox_capabilities() -> None:
    caps = sandbox_capabilities()
    rows = {c["name"]: c for c in doctor.sandbox()["checks"]}
    assert rows["user namespaces"]["ok"] == caps.user_namespaces
    assert rows["cgroup v2 delegation"]["ok"] == (caps.cgroup_delegated is not None)
    assert rows["memory ceiling"] == doctor._check("memory ceiling", True, caps.memory)
    assert rows["Landlock"]["ok"] == (caps.landlock_abi >= 6)


# ------------------------------------------------------------------------------- services


@pytest.fixture
def fake_server() -> Iterator[tuple[int, list[bytes]]]:
    """A one-connection-at-a-time TCP server answering with ``replies[0]``; yields its port."""
    replies: list[bytes] = [b""]
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(5)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(64)
                conn.sendall(replies[0])

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1], replies
    stop.set()
    listener.close()
    thread.join(5)


def _services(monkeypatch: pytest.MonkeyPatch, port: int) -> dict[str, dict[str, Any]]:
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{port}/0")
    monkeypatch.setenv("DATABASE_URL", f"postgresql://u@127.0.0.1:{port}/test")
    monkeypatch.setenv("TEMPORAL_ADDRESS", f"127.0.0.1:{port}")
    return {c["name"]: c for c in doctor.services()}


@pytest.mark.parametrize(
    ("reply", "answers"),
    [
        (b"+PONG\r\n", {"redis"}),
        (b"-NOAUTH Authentication required.\r\n", {"redis"}),
        (b"N", {"postgresql"}),
        (b"S", {"postgresql"}),
        (bytes([0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100]), {"temporal"}),
        (b"HTTP/1.1 400 Bad Request\r\n\r\n", set()),
    ],
)
def test_each_service_is_recognised_by_its_protocol(
    monkeypatch: pytest.MonkeyPatch,
    fake_server: tuple[int, list[bytes]],
    reply: bytes,
    answers: set[str],
) -> None:
    port, replies = fake_server
    replies[0] = reply
    checks = _services(monkeypatch, port)
    assert list(checks) == ["redis", "postgresql", "temporal"]
    for name, check in checks.items():
        assert check["ok"] == (name in answers), (name, check)
        if check["ok"]:
            assert check["detail"].endswith(": answers")
            assert check["fix"] is None
        else:
            assert check["detail"].endswith(f": not {name}")


def test_an_unreachable_service_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    checks = _services(monkeypatch, port)
    redis = checks["redis"]
    assert redis["ok"] is False
    assert redis["detail"].startswith(f"redis://127.0.0.1:{port}/0 (from REDIS_URL): ")
    assert redis["fix"] == "start redis there (redis-server), or set REDIS_URL to where it runs"
    assert "temporal server start-dev" in checks["temporal"]["fix"]


def test_defaults_are_named_when_the_variable_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("REDIS_URL", "DATABASE_URL", "TEMPORAL_ADDRESS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(doctor, "_talk", lambda host, port, hello: b"")
    details = [c["detail"] for c in doctor.services()]
    assert details == [
        "redis://127.0.0.1:6379 (default; set REDIS_URL): not redis",
        "postgresql://127.0.0.1:5432 (default; set DATABASE_URL): not postgresql",
        "127.0.0.1:7233 (default; set TEMPORAL_ADDRESS): not temporal",
    ]


def _redis_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1):
            return True
    except OSError:
        return False


def test_check_services_reaches_the_real_redis(monkeypatch: pytest.MonkeyPatch) -> None:
    require_service("redis", _redis_up)
    env = {**os.environ, "REDIS_URL": "redis://127.0.0.1:6379/0"}
    exe = shutil.which("helikon", path=str(Path(sys.executable).parent))
    assert exe
    proc = subprocess.run(
        [exe, "doctor", "--check-services", "--json"],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )
    report = json.loads(proc.stdout)
    down = [c["name"] for c in report["services"] if not c["ok"]]
    assert proc.returncode == (3 if down else 0), proc.stderr
    redis = report["services"][0]
    assert redis == {
        "name": "redis",
        "ok": True,
        "detail": "redis://127.0.0.1:6379/0 (from REDIS_URL): answers",
        "fix": None,
    }


def test_a_backend_that_fails_to_build_is_a_row_not_a_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from helikon.errors import ConfigError
    from helikon.tools import os_sandbox

    def broken(*args: Any, **kwargs: Any) -> None:
        raise ConfigError("invalid sandbox configuration: unknown field `x`")

    monkeypatch.setattr(os_sandbox.OsSandboxBackend, "__init__", broken)
    row = doctor._os_backend()
    assert row["ok"] is False
    assert row["detail"] == (
        "could not be built: ConfigError: invalid sandbox configuration: unknown field `x`"
    )
    assert "pip install --force-reinstall helikon" in row["fix"]


# ----------------------------------------------------------------------------- exit status


def _doctor(*args: str) -> Any:
    """``helikon doctor ARGS`` in-process (so the checks can be monkeypatched)."""
    from typer.testing import CliRunner

    from helikon.cli.main import app

    return CliRunner().invoke(app, ["doctor", *args])


@pytest.fixture
def quiet_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sandbox section that needs no kernel probe (one OK backend row)."""
    row = doctor._check("OsSandboxBackend", True, "os-sandbox (landlock+seccomp)")
    monkeypatch.setattr(doctor, "sandbox", lambda: {"platform": "Linux 6.15.0", "checks": [row]})


def test_this_installation_passes_the_core_checks() -> None:
    proc = _helikon("doctor", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["exit_code"] == 0 and report["required"] == []
    rows = {c["name"]: c for c in report["core"]}
    assert rows["helikon"] == {"name": "helikon", "ok": True, "detail": version("helikon"),
                               "fix": None}
    assert rows["native module"]["ok"] is True
    assert rows["native module"]["detail"] == _native.__version__
    assert {"pydantic", "typing-extensions"} <= set(rows)
    assert proc.stderr == ""


def test_a_native_module_of_another_version_exits_1(
    monkeypatch: pytest.MonkeyPatch, quiet_machine: None
) -> None:
    monkeypatch.setattr(doctor, "_native_version", lambda: "0.0.1")
    result = _doctor()
    assert result.exit_code == doctor.EXIT_REQUIRED_MISSING == 1
    assert result.stderr == "helikon doctor: required but missing: native module (exit 1)\n"
    lines = result.stdout.splitlines()
    at = lines.index(f"  MISS native module            version 0.0.1, but the package is "
                     f"{version('helikon')}")
    assert lines[at + 1].strip() == "fix: pip install --force-reinstall helikon"


def test_a_native_module_that_cannot_be_imported_exits_1(
    monkeypatch: pytest.MonkeyPatch, quiet_machine: None
) -> None:
    monkeypatch.setattr(doctor, "_native_version", lambda: None)
    report = doctor.collect()
    assert report["exit_code"] == 1
    [row] = [c for c in report["core"] if c["name"] == "native module"]
    assert row == {"name": "native module", "ok": False,
                   "detail": "helikon._native cannot be imported",
                   "fix": "pip install --force-reinstall helikon"}


def test_a_missing_core_dependency_exits_1_with_its_pip_line(
    monkeypatch: pytest.MonkeyPatch, quiet_machine: None
) -> None:
    monkeypatch.setattr(doctor, "_installed", lambda dist: dist != "pydantic")
    result = _doctor("--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    [row] = [c for c in report["core"] if c["name"] == "pydantic"]
    assert row["ok"] is False and row["detail"] == "missing"
    assert row["fix"].startswith("pip install 'pydantic>=")
    assert "required but missing: pydantic (exit 1)" in result.stderr


def test_a_missing_optional_extra_still_exits_0(
    monkeypatch: pytest.MonkeyPatch, quiet_machine: None
) -> None:
    monkeypatch.setattr(doctor, "_installed", lambda dist: dist != "boto3")
    result = _doctor()
    assert result.exit_code == 0, result.stderr
    assert "  MISS bedrock                  missing boto3" in result.stdout.splitlines()
    assert result.stderr == ""


def test_a_required_extra_that_is_missing_exits_1(
    monkeypatch: pytest.MonkeyPatch, quiet_machine: None
) -> None:
    monkeypatch.setattr(doctor, "_installed", lambda dist: dist not in ("boto3", "rich"))
    result = _doctor("--require", "bedrock", "--require", "openai", "--require", "cli")
    assert result.exit_code == 1
    assert result.stderr == "helikon doctor: required but missing: bedrock, cli (exit 1)\n"
    lines = result.stdout.splitlines()
    at = lines.index("required (--require)")
    assert lines[at + 1 : at + 6] == [
        "  MISS bedrock                  missing boto3",
        f"       {'':<24} fix: pip install 'helikon[bedrock]'",
        "  ok   openai                   openai",
        "  MISS cli                      missing rich",
        f"       {'':<24} fix: pip install 'helikon[cli]'",
    ]


@pytest.mark.parametrize("row", ["OsSandboxBackend", "Seatbelt (sandbox-exec)", "OS sandbox"])
def test_require_sandbox_exits_1_when_no_os_backend(
    monkeypatch: pytest.MonkeyPatch, row: str
) -> None:
    monkeypatch.setattr(doctor, "sandbox", lambda: {"platform": "X", "checks": [
        doctor._check("seccomp", True, "filter mode available"),
        doctor._check(row, False, "not here", "the fix"),
    ]})
    report = doctor.collect(require=("sandbox",))
    assert report["required"] == [
        {"name": "sandbox", "ok": False, "detail": "not here", "fix": "the fix"}
    ]
    assert report["exit_code"] == 1
    assert doctor.collect()["exit_code"] == 0  # not required: reported, status 0


def test_require_sandbox_passes_when_the_backend_builds(quiet_machine: None) -> None:
    report = doctor.collect(require=("sandbox",))
    assert report["required"] == [doctor._check("sandbox", True, "os-sandbox (landlock+seccomp)")]
    assert report["exit_code"] == 0


def test_an_unknown_require_name_is_a_usage_error(quiet_machine: None) -> None:
    result = _doctor("--require", "opneai")
    assert result.exit_code == doctor.EXIT_USAGE == 2
    message = " ".join(result.stderr.replace("│", " ").split())
    assert "Invalid value for --require: 'opneai' is not an extra or 'sandbox'; choose from " \
        "sandbox, " in message
    # the choices are the installed wheel's extras, so their exact list follows pyproject
    assert ", anthropic," in message and ", openai," in message


def _unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(host: str, port: int, hello: bytes) -> bytes:
        if port == 7233:
            raise ConnectionRefusedError(111, "Connection refused")
        return {6379: b"+PONG\r\n", 5432: b"N"}[port]

    for var in ("REDIS_URL", "DATABASE_URL", "TEMPORAL_ADDRESS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(doctor, "_talk", refuse)


def test_an_unreachable_service_exits_3(
    monkeypatch: pytest.MonkeyPatch, quiet_machine: None
) -> None:
    _unreachable(monkeypatch)
    result = _doctor("--check-services")
    assert result.exit_code == doctor.EXIT_SERVICE_UNREACHABLE == 3
    assert result.stderr == "helikon doctor: not reachable: temporal (exit 3)\n"
    assert _doctor().exit_code == 0  # services are only judged when asked for


def test_a_service_that_answers_another_protocol_exits_3(
    monkeypatch: pytest.MonkeyPatch, quiet_machine: None
) -> None:
    monkeypatch.setattr(doctor, "_talk", lambda host, port, hello: b"HTTP/1.1 400\r\n")
    result = _doctor("--check-services", "--json")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["exit_code"] == 3
    assert result.stderr == "helikon doctor: not reachable: redis, postgresql, temporal (exit 3)\n"


def test_a_missing_required_piece_wins_over_an_unreachable_service(
    monkeypatch: pytest.MonkeyPatch, quiet_machine: None
) -> None:
    _unreachable(monkeypatch)
    monkeypatch.setattr(doctor, "_native_version", lambda: "0.0.1")
    result = _doctor("--check-services")
    assert result.exit_code == 1
    assert result.stderr == "helikon doctor: required but missing: native module (exit 1)\n"
