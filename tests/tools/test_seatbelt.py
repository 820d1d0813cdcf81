"""The macOS Seatbelt profile (generated and checked on every platform)."""

from __future__ import annotations

import asyncio
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


def test_proxy_port_allows_only_localhost_at_that_port(tmp_path: Path) -> None:
    lines = seatbelt_profile([tmp_path], proxy_port=3128).splitlines()
    # every network operation denied, then exactly one outbound destination re-allowed
    assert lines[-2:] == [
        "(deny network*)",
        '(allow network-outbound (remote ip "localhost:3128"))',
    ]
    assert sum("network" in line for line in lines) == 2
    for bad in (0, 65536, -1, True, "3128"):
        with pytest.raises(ConfigError, match="proxy_port"):
            seatbelt_profile([tmp_path], proxy_port=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="excludes allow_network"):
        seatbelt_profile([tmp_path], proxy_port=3128, allow_network=True)


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


# ------------------------------------------------------------------ real runs (macOS CI job)

macos = pytest.mark.skipif(sys.platform != "darwin", reason="Seatbelt runs on macOS only")


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "note.txt").write_text("outside\n")
    return {"root": root, "outside": outside}


@macos
async def test_seatbelt_runs_commands_in_the_root(places: dict[str, Path]) -> None:
    b = SeatbeltBackend(Sandbox.open(places["root"]))
    assert b.guarantees().label == "os-sandbox (seatbelt)"
    r = await b.run('pwd; echo hi > made.txt; echo tmp > "$TMPDIR/t"; cat made.txt')
    assert r.exit_code == 0, r.stderr
    assert r.stdout == f"{places['root'].resolve()}\nhi\n"
    assert (places["root"] / "made.txt").read_text() == "hi\n"


@macos
async def test_seatbelt_denies_writes_outside_but_allows_reads(places: dict[str, Path]) -> None:
    b = SeatbeltBackend(Sandbox.open(places["root"]))
    target = places["outside"] / "escape.txt"
    r = await b.run(f"echo x > '{target}'")
    assert r.exit_code != 0
    assert not target.exists()
    r = await b.run(f"touch '{places['outside']}/../escape2.txt'")
    assert r.exit_code != 0
    assert not (places["outside"].parent / "escape2.txt").exists()
    r = await b.run(f"cat '{places['outside']}/note.txt'")  # the spec's posture: reads allowed
    assert (r.exit_code, r.stdout) == (0, "outside\n")


@macos
async def test_seatbelt_denies_the_network_unless_allowed(places: dict[str, Path]) -> None:
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    probe = (
        f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2)"
        "; print('connected')\""
    )
    try:
        denied = await SeatbeltBackend(Sandbox.open(places["root"])).run(probe)
        allowed = await SeatbeltBackend(Sandbox.open(places["root"]), allow_network=True).run(probe)
    finally:
        server.close()
    assert denied.exit_code != 0 and "connected" not in denied.stdout
    assert allowed.exit_code == 0 and allowed.stdout == "connected\n", allowed.stderr


@macos
async def test_seatbelt_timeout_kills_the_group(places: dict[str, Path]) -> None:
    b = SeatbeltBackend(Sandbox.open(places["root"]))
    r = await b.run("sleep 30 & sleep 30; echo never", timeout=0.5)
    assert r.timed_out is True and r.exit_code is None
    assert "never" not in r.stdout


@macos
def test_best_available_backend_picks_seatbelt(places: dict[str, Path]) -> None:
    from helikon.tools import best_available_backend

    choice = best_available_backend(Sandbox.open(places["root"]))
    assert isinstance(choice.backend, SeatbeltBackend)
    assert choice.reason.startswith("os-sandbox (seatbelt)")
