"""sandbox_capabilities(): what the OS sandbox can enforce here, as a typed value."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from helikon.tools import SandboxCapabilities, sandbox_capabilities

from .conftest import kernel


def test_reports_this_machine() -> None:
    caps = sandbox_capabilities()
    assert isinstance(caps, SandboxCapabilities)
    k = kernel()
    assert caps.landlock_abi == k["landlock_abi"]
    assert caps.seccomp == k["seccomp"]
    assert caps.kernel_release == os.uname().release
    assert caps.landlock_truncate == (caps.landlock_abi >= 3)
    assert caps.landlock_tcp == (caps.landlock_abi >= 4)
    assert caps.landlock_scoping == (caps.landlock_abi >= 6)
    assert caps.os_sandbox == (caps.os_sandbox_missing is None)
    assert caps.cgroup_v2 == Path("/sys/fs/cgroup/cgroup.controllers").exists()
    if sys.platform.startswith("linux"):
        assert caps.memory == "watchdog"
        if os.geteuid() == 0:
            want = "mount_namespace"
        else:
            want = "user_mount_namespace" if caps.user_namespaces else "uid_only"
        assert caps.metadata == (want if caps.landlock_abi else "none")
    if os.geteuid() == 0:
        assert caps.user_namespaces
    if caps.cgroup_delegated is not None:
        assert caps.cgroup_v2 and Path(caps.cgroup_delegated).is_dir()
    rows = dict(caps.summary())
    assert rows["memory ceiling"] == caps.memory
    assert rows["kernel"] == caps.kernel_release


def test_parses_a_kernel_without_landlock() -> None:
    caps = SandboxCapabilities.from_json(
        '{"kernel": {"landlock_abi": 0, "landlock_missing": "disabled at boot",'
        ' "landlock_errata": 0, "seccomp": true, "arch_supported": true,'
        ' "kernel_release": "5.10.0"}, "os_sandbox": false,'
        ' "os_sandbox_missing": "Landlock filesystem confinement (Linux 5.13) is unavailable",'
        ' "landlock_tcp": false, "landlock_truncate": false, "landlock_scoping": false,'
        ' "user_namespaces": false, "cgroup_v2": true, "cgroup_delegated": null,'
        ' "memory": "watchdog", "metadata": "none"}'
    )
    rows = dict(caps.summary())
    assert rows["os sandbox"] == ("no: Landlock filesystem confinement (Linux 5.13) is unavailable")
    assert rows["landlock"] == "disabled at boot"
    assert rows["cgroup v2 delegation"] == "not delegated"
    assert caps.metadata == "none"
