"""The OS sandbox from a host that is not root, for real: a small driver
(``unprivileged_driver.py``) runs under ``setpriv`` as ``nobody``.

* ``private_mounts=True`` works there through an unprivileged user namespace: probes of
  paths outside are absent (``ENOENT``), ``read_only_paths`` refuse writes (``EROFS``), and
  ``ls``/``git``/``python`` in the workspace still work; ``sandbox_capabilities()`` says
  ``metadata == "user_mount_namespace"``.
* Where the kernel refuses user namespaces (a namespace whose ``user.max_user_namespaces``
  is 0, made by ``no_userns.py``), the build is refused (``SandboxUnavailable``: fail closed)
  and ``sandbox_capabilities()`` says ``user_namespaces == False``, ``metadata == "uid_only"``.
* ``network=NetworkPolicy(...)`` without root runs each command in a private network
  namespace made from an unprivileged user namespace (``egress_mechanism == "namespace"``):
  curl reaches an allowed name through the proxy by every proxy protocol; a direct connect,
  DNS, UDP and a raw IP fail, and the events say why. Where user namespaces are refused,
  ``"auto"`` falls back to Landlock TCP port rules (``"landlock_port"``) and says so, and
  ``"namespace"`` is refused (fail closed).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import needs_os_sandbox

pytestmark = needs_os_sandbox

HERE = Path(__file__).parent
SETPRIV = shutil.which("setpriv")
NOBODY = ["--reuid=65534", "--regid=65534", "--clear-groups"]
GIT = "git -c user.name=t -c user.email=t@e"

if os.geteuid() != 0:
    DROP: list[str] | None = []  # already not root
elif SETPRIV is None:
    DROP = None
else:
    DROP = [SETPRIV, *NOBODY]


def _can_drop() -> str | None:
    """Why the driver cannot run as nobody here, or ``None``."""
    if DROP is None:
        return "running as root needs setpriv (util-linux) to become nobody"
    if not DROP:
        return None
    probe = subprocess.run([*DROP, sys.executable, "-c", "import helikon"], capture_output=True)
    if probe.returncode != 0:
        return f"nobody cannot run {sys.executable} with helikon (e.g. it lives under /root)"
    return None


WHY_NOT = _can_drop()
needs_drop = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")


@pytest.fixture
def tree() -> Iterator[dict[str, Path]]:
    base = Path(tempfile.mkdtemp(prefix="helikon-unpriv-"))
    base.chmod(0o755)
    root, outside = base / "root", base / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "hello.txt").write_text("hello\nworld\n")
    (root / ".env").write_text("TOKEN=1\n")
    (outside / "secret.txt").write_text("OUTSIDE-SECRET\n")
    (outside / "secret.txt").chmod(0o666)  # only the sandbox stands in the way
    outside.chmod(0o777)
    if os.geteuid() == 0:
        for path in (root, root / "hello.txt", root / ".env"):
            os.chown(path, 65534, 65534)
    try:
        yield {"root": root, "outside": outside}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _drive(spec: dict[str, Any], wrap: list[str] | None = None) -> dict[str, Any]:
    assert DROP is not None
    argv = [*(wrap or []), *DROP, sys.executable, str(HERE / "unprivileged_driver.py")]
    proc = subprocess.run(
        [*argv, json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"},
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    assert out["euid"] != 0
    return out


def _probe(code: str) -> str:
    body = f'import os\ntry:\n {code}\n print("ok")\nexcept OSError as e:\n print(e.errno)'
    return f"python3 -c '{body}'"


PROBES = [
    'os.stat("{secret}")',
    'os.chmod("{secret}", 0o600)',
    'os.utime("{secret}", (1, 1))',
    'os.setxattr("{secret}", "user.x", b"1")',
    'os.listdir("{outside}")',
    'os.access("{secret}", os.F_OK) or os.stat("/nonexistent-marker")',
]


@needs_drop
def test_private_mounts_without_root_use_a_user_namespace(tree: dict[str, Path]) -> None:
    secret = tree["outside"] / "secret.txt"
    before = secret.stat()
    probes = [_probe(p.format(secret=secret, outside=tree["outside"])) for p in PROBES]
    work = (
        f"ls && python3 -c 'print(6*7)' && git init -q . && git add hello.txt && "
        f"{GIT} commit -qm init && git log --oneline | wc -l"
    )
    out = _drive({"root": str(tree["root"]), "private_mounts": True, "commands": [*probes, work]})
    caps = out["capabilities"]
    assert (caps["user_namespaces"], caps["metadata"]) == (True, "user_mount_namespace")
    assert "refused" not in out, out.get("refused")
    results = out["results"]
    assert [r["stdout"] for r in results[: len(PROBES)]] == ["2\n"] * len(PROBES), results
    assert results[-1]["exit_code"] == 0, results[-1]
    assert results[-1]["stdout"] == "hello.txt\n42\n1\n"
    assert any(
        n.startswith("private_mounts through an unprivileged user namespace") for n in out["notes"]
    ), out["notes"]
    after = secret.stat()
    assert (after.st_mode, after.st_mtime_ns) == (before.st_mode, before.st_mtime_ns)


@needs_drop
def test_the_same_probes_reach_outside_without_private_mounts(tree: dict[str, Path]) -> None:
    # The control: as nobody without the mount namespace, metadata calls on a file the
    # uid may change do reach it (Landlock does not mediate them).
    secret = tree["outside"] / "secret.txt"
    out = _drive({"root": str(tree["root"]), "commands": [_probe(f'os.stat("{secret}")')]})
    assert out["results"][0]["stdout"] == "ok\n"
    assert out["capabilities"]["metadata"] == "user_mount_namespace"


@needs_drop
@pytest.mark.parametrize(
    "command",
    [
        "echo x >> .env",
        "rm .env",
        "mv .env e2",
        "chmod 600 .env",
        "python3 -c 'import os; os.unlink(\".env\")'",
        "echo x > .git/config",
    ],
)
def test_read_only_paths_without_root(tree: dict[str, Path], command: str) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tree["root"], check=True)
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", "65534:65534", "."], cwd=tree["root"], check=True)
    out = _drive(
        {
            "root": str(tree["root"]),
            "private_mounts": True,
            "read_only_paths": [".env", ".git"],
            "commands": [command, "cat .env"],
        }
    )
    done, cat = out["results"]
    assert done["exit_code"] != 0
    assert "Read-only file system" in done["stderr"] or "busy" in done["stderr"], done
    assert cat["stdout"] == "TOKEN=1\n"
    assert (tree["root"] / ".env").read_text() == "TOKEN=1\n"


@pytest.mark.skipif(
    os.geteuid() != 0 or WHY_NOT is not None, reason=WHY_NOT or "needs root (to map ids)"
)
def test_refused_when_the_kernel_refuses_user_namespaces(tree: dict[str, Path]) -> None:
    wrap = [sys.executable, str(HERE / "no_userns.py")]
    out = _drive({"root": str(tree["root"]), "private_mounts": True, "commands": ["true"]}, wrap)
    caps = out["capabilities"]
    assert (caps["user_namespaces"], caps["metadata"]) == (False, "uid_only")
    assert "results" not in out
    assert out["refused"].startswith(
        "unsupported: private_mounts: this process is not root, so the child needs an "
        "unprivileged user namespace for its mounts, and that failed ("
    ), out["refused"]
    assert "at 'user namespace': No space left on device" in out["refused"]
    assert "or run as root with run_as=(uid, gid)" in out["refused"]
    # Without private_mounts the same host still gets the Landlock + seccomp sandbox.
    out = _drive({"root": str(tree["root"]), "commands": ["cat hello.txt"]}, wrap)
    assert out["results"][0]["stdout"] == "hello\nworld\n"


CURL = shutil.which("curl")


@needs_drop
@pytest.mark.skipif(CURL is None, reason="curl is not installed (scripts/test installs it)")
def test_egress_without_root_uses_a_user_and_network_namespace(tree: dict[str, Path]) -> None:
    from tests.tools.egress.servers import ORIGIN_BODY, origin, received, udp_listener

    with origin() as (port, seen), udp_listener() as (uport, usock):
        url = f"http://pypi.test:{port}/"
        commands = [
            f'curl -sS {url}; curl -sS -p {url}; curl -sS --proxy "$ALL_PROXY" {url}',
            f"curl -sS --noproxy '*' --max-time 3 http://127.0.0.1:{port}/; echo direct=$?; "
            f"curl -sS --noproxy '*' --max-time 3 {url}; echo dns=$?; "
            "python3 -c 'import socket\n"
            "try:\n"
            "    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f'    u.sendto(b"x", ("127.0.0.1", {uport}))\n'
            'except OSError as e: print("udp", e.errno)\n'
            "try:\n"
            "    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)\n"
            'except OSError as e: print("raw", e.errno)\n'
            "try:\n"
            '    socket.getaddrinfo("pypi.org", 443)\n'
            'except OSError as e: print("getaddrinfo failed")\'',
            f"curl -sS -f http://127.0.0.2:{port}/; echo literal=$?; "
            f"curl -sS -f http://other.test:{port}/; echo other=$?",
        ]
        network = {"hosts": {"pypi.test": "127.0.0.1", "other.test": "127.0.0.1"}}
        network["allow_addresses"] = ["127.0.0.1/32"]
        out = _drive({"root": str(tree["root"]), "network": network, "commands": commands})
        assert received(usock) is None
    assert "refused" not in out, out.get("refused")
    assert out["egress_mechanism"] == "namespace"
    assert any("made from an unprivileged user namespace" in n for n in out["notes"]), out
    via, bypass, refused = out["results"]
    assert via["exit_code"] == 0, via
    assert via["stdout"] == ORIGIN_BODY.decode() * 3
    assert via["network"] == [
        ["pypi.test", "allow", "allow_domains:pypi.test", "http"],
        ["pypi.test", "allow", "allow_domains:pypi.test", "connect"],
        ["pypi.test", "allow", "allow_domains:pypi.test", "socks5"],
    ]
    # Nothing but the proxy exists in the namespace: no route, no resolver, no UDP, no raw.
    assert "direct=7" in bypass["stdout"], bypass
    assert "dns=6" in bypass["stdout"], bypass
    assert "udp 1" in bypass["stdout"] and "raw 1" in bypass["stdout"], bypass
    assert "getaddrinfo failed" in bypass["stdout"], bypass
    assert bypass["network"] == []
    assert "literal=22" in refused["stdout"] and "other=22" in refused["stdout"], refused
    assert refused["network"] == [
        ["127.0.0.2", "deny", "ip_literal", "http"],
        ["other.test", "deny", "not_allowed", "http"],
    ]
    assert seen == ["/", "/", "/"]


@pytest.mark.skipif(
    os.geteuid() != 0 or WHY_NOT is not None, reason=WHY_NOT or "needs root (to map ids)"
)
def test_egress_falls_back_to_landlock_ports_where_user_namespaces_are_refused(
    tree: dict[str, Path],
) -> None:
    wrap = [sys.executable, str(HERE / "no_userns.py")]
    out = _drive({"root": str(tree["root"]), "network": True, "commands": ["true"]}, wrap)
    assert out["capabilities"]["user_namespaces"] is False
    assert out["egress_mechanism"] == "landlock_port"
    assert out["results"][0]["exit_code"] == 0
    assert any("Landlock matches ports, not addresses" in n for n in out["notes"]), out
    # Asking for the namespace there is refused, naming why.
    spec = {"root": str(tree["root"]), "network": {"mechanism": "namespace"}, "commands": []}
    out = _drive(spec, wrap)
    assert out["refused"].startswith(
        'unsupported: egress.mechanism "namespace" cannot be enforced: the host process is '
        "not root and the kernel refuses unprivileged user namespaces"
    ), out["refused"]
