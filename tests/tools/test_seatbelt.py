"""The macOS Seatbelt profile (generated and checked on every platform)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helikon.errors import ConfigError, SandboxUnavailable
from helikon.tools import Sandbox
from helikon.tools.seatbelt import SeatbeltBackend, seatbelt_profile


def test_profile_denies_writes_outside_the_root_and_the_network(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    profile = seatbelt_profile([root, tmp_path / "tmp"])
    lines = profile.splitlines()
    assert lines[:3] == ["(version 1)", "(allow default)", "(deny file-write*)"]
    tmp = (tmp_path / "tmp").resolve()
    assert lines[3].startswith(f'(allow file-write* (subpath "{root.resolve()}") (subpath "{tmp}")')
    assert '(literal "/dev/null")' in lines[3]
    assert lines[-1] == "(deny network*)"
    assert "file-read" not in profile  # reads stay unrestricted, as the spec's posture says


def test_allow_network_drops_only_the_network_rule(tmp_path: Path) -> None:
    profile = seatbelt_profile([tmp_path], allow_network=True)
    assert "(deny network" not in profile
    assert "(deny file-write*)" in profile


def test_paths_are_resolved_and_escaped(tmp_path: Path) -> None:
    odd = tmp_path / 'we"ird\\dir'
    odd.mkdir()
    link = tmp_path / "link"
    link.symlink_to(odd)
    profile = seatbelt_profile([link])
    quoted = str(odd.resolve()).replace("\\", "\\\\").replace('"', '\\"')
    assert f'(subpath "{quoted}")' in profile
    with pytest.raises(ConfigError, match="control character"):
        seatbelt_profile(["/tmp/a\nb"])
    with pytest.raises(ConfigError, match="at least one writable directory"):
        seatbelt_profile([])


@pytest.mark.skipif(sys.platform == "darwin", reason="checks the non-macOS refusal")
def test_backend_fails_closed_off_macos(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable, match="needs macOS"):
        SeatbeltBackend(Sandbox.open(tmp_path))
