"""The sandbox classes of /work/attack-findings.md, each with several spellings, closed:

* S1 ``no_exec_in_workspace`` bypassed without an ``execve`` of a workspace path: a memfd
  (``/proc/self/fd/N``, ``execveat``) and, with ``private_mounts``, the dynamic loader and
  ``dlopen`` (the workspace is mounted ``noexec``);
* S3 memory charged to no process (memfd pages) and S8 SysV / POSIX IPC objects in the host's
  IPC namespace (outlive the call, pass the memory ceiling, a channel between calls);
* S7 inotify watches on directories outside the workspace (with and without
  ``private_mounts``).

(S5, the egress proxy's connection cap and request timeout, is in
``tests/tools/egress/test_proxy.py``.)
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from helikon.tools import OsSandboxBackend, ResourceLimits, Sandbox

from .conftest import needs_os_sandbox, run_as

pytestmark = needs_os_sandbox


def _os(ws: dict[str, Path], **kw: Any) -> OsSandboxBackend:
    return OsSandboxBackend(Sandbox.open(ws["root"]), run_as=run_as(), timeout=20, **kw)


def _py(code: str) -> str:
    assert "'" not in code
    return f"python3 -c '{code}'"


MEMFD_EXEC = [
    # os.memfd_create, then exec through /proc/self/fd
    'import os; fd = os.memfd_create("x"); os.write(fd, open("/bin/echo", "rb").read()); '
    'os.execv(f"/proc/self/fd/{fd}", ["e", "RAN-IT"])',
    # the raw syscall, then execveat(fd, "", AT_EMPTY_PATH)
    "import ctypes, os; l = ctypes.CDLL(None, use_errno=True); "
    'fd = l.syscall(319, b"x", 0); assert fd >= 0, ctypes.get_errno(); '
    'os.write(fd, open("/bin/echo", "rb").read()); '
    'a = (ctypes.c_char_p * 3)(b"e", b"RAN-IT", None); '
    'l.syscall(322, fd, b"", a, None, 0x1000); raise OSError(ctypes.get_errno(), "execveat")',
    # fexecve through os.execve on a descriptor
    'import os; fd = os.memfd_create("y", 0); os.write(fd, open("/bin/echo", "rb").read()); '
    'os.execve(fd, ["e", "RAN-IT"], {})',
]


@pytest.mark.parametrize("code", MEMFD_EXEC)
async def test_no_exec_in_workspace_refuses_memfd_exec(code: str, ws: dict[str, Path]) -> None:
    r = await _os(ws, no_exec_in_workspace=True).run(_py(code))
    assert "RAN-IT" not in r.stdout
    assert r.exit_code != 0
    assert "Operation not permitted" in r.stderr or "AssertionError: 1" in r.stderr, r.stderr


@pytest.mark.parametrize(
    "command",
    [
        "cp /bin/echo ./e && /lib64/ld-linux-x86-64.so.2 ./e RAN-IT",
        'cp /bin/echo "$TMPDIR/e" && /lib64/ld-linux-x86-64.so.2 "$TMPDIR/e" RAN-IT',
        "cp /bin/echo ./e && /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 ./e RAN-IT",
        "cp /bin/echo ./e && chmod +x e && ./e RAN-IT",
        _py(
            'import ctypes, shutil; shutil.copy("/lib/x86_64-linux-gnu/libc.so.6", "l.so"); '
            'ctypes.CDLL("./l.so"); print("RAN-IT")'
        ),
    ],
)
async def test_no_exec_with_private_mounts_refuses_the_loader(
    command: str, ws: dict[str, Path]
) -> None:
    if not Path("/lib64/ld-linux-x86-64.so.2").exists():
        pytest.skip("an x86_64 glibc loader path is assumed")
    b = _os(ws, no_exec_in_workspace=True, private_mounts=True)
    r = await b.run(command)
    assert "RAN-IT" not in r.stdout and r.exit_code != 0, r
    # Scripts through a system interpreter still run.
    r = await b.run("printf 'echo ok\\n' > s.sh && sh s.sh && python3 -c 'print(6*7)'")
    assert r.stdout == "ok\n42\n"


@pytest.mark.parametrize(
    "code",
    [
        # S3: memfd pages no process maps
        'import os; fd = os.memfd_create("m"); os.write(fd, b"x" * (64 << 20)); print("HELD")',
        # S8: SysV shared memory, message queue, semaphores; POSIX message queue
        "import ctypes; l = ctypes.CDLL(None, use_errno=True); "
        'r = l.shmget(0, 64 << 20, 0o1666); assert r >= 0, ctypes.get_errno(); print("HELD")',
        "import ctypes; l = ctypes.CDLL(None, use_errno=True); "
        'r = l.msgget(0, 0o1666); assert r >= 0, ctypes.get_errno(); print("HELD")',
        "import ctypes; l = ctypes.CDLL(None, use_errno=True); "
        'r = l.semget(0, 1, 0o1666); assert r >= 0, ctypes.get_errno(); print("HELD")',
        'import ctypes; l = ctypes.CDLL("librt.so.1", use_errno=True); '
        'r = l.mq_open(b"/helikon-probe", 0o102, 0o666, None); '
        'assert r >= 0, ctypes.get_errno(); print("HELD")',
    ],
)
async def test_memory_and_ipc_outside_any_process_are_refused(
    code: str, ws: dict[str, Path]
) -> None:
    r = await _os(ws, limits=ResourceLimits(memory_bytes=256 << 20)).run(_py(code))
    assert "HELD" not in r.stdout and r.exit_code != 0, r
    assert "Operation not permitted" in r.stderr or "AssertionError: 1" in r.stderr, r.stderr


@pytest.mark.parametrize(
    "target",
    ["/tmp", "/etc", "{outside}", "/"],
)
@pytest.mark.parametrize("private", [False, True])
async def test_inotify_outside_is_refused(target: str, private: bool, ws: dict[str, Path]) -> None:
    path = target.format(outside=ws["outside"])
    code = (
        "import ctypes; l = ctypes.CDLL(None, use_errno=True); fd = l.inotify_init1(0); "
        f'w = l.inotify_add_watch(fd, b"{path}", 0xfff) if fd >= 0 else -1; '
        'print("WATCHING" if w >= 0 else f"refused {ctypes.get_errno()}")'
    )
    r = await _os(ws, private_mounts=private).run(_py(code))
    assert r.stdout == "refused 1\n", r


@pytest.mark.parametrize(
    "command",
    [
        "fallocate --punch-hole --offset 0 --length 8192 big.bin",
        _py(
            'import ctypes, os; fd = os.open("big.bin", os.O_RDWR); '
            "l = ctypes.CDLL(None, use_errno=True); "
            "r = l.fallocate(fd, 3, ctypes.c_long(0), ctypes.c_long(16384)); "
            "assert r == 0, ctypes.get_errno()"
        ),
        "fallocate --zero-range --offset 0 --length 8192 big.bin",
        "fallocate --collapse-range --offset 0 --length 8192 big.bin",
    ],
)
async def test_deny_delete_refuses_fallocate_data_destruction(
    command: str, ws: dict[str, Path]
) -> None:
    # S2: the TRUNCATE-free spellings of truncation, on a 16 KiB file of random bytes.
    if shutil.which("fallocate") is None:
        pytest.skip("fallocate (util-linux) is not installed")
    data = os.urandom(16384)
    big = ws["root"] / "big.bin"
    big.write_bytes(data)
    if os.geteuid() == 0:
        os.chown(big, 65534, 65534)
    b = _os(ws, deny_delete=True)
    r = await b.run(command)
    assert r.exit_code != 0, r
    assert big.read_bytes() == data
    r = await b.run("fallocate --length 8192 new.bin && stat -c %s new.bin")
    assert r.stdout == "8192\n", r
