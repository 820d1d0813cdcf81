"""The release workflow (.github/workflows/wheels.yml) is valid and builds what issue 18 asks.

Every workflow is validated against the GitHub Actions workflow schema (check-jsonschema's
bundled copy, offline). Then the wheel matrix is pinned: abi3 wheels for manylinux_2_28 and
musllinux_1_2 on x86_64 and aarch64, macOS x86_64 and arm64, Windows x64, and an sdist; each
wheel tested on its own platform through scripts/test-installed-wheel; publishing only on a
tag, by trusted publishing with attestations.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / ".github" / "workflows"
MATURIN = "PyO3/maturin-action@v1"
TEST_SCRIPT = "scripts/test-installed-wheel dist"


def _workflow() -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load((WORKFLOWS / "wheels.yml").read_text())
    return loaded


def _uses(job: dict[str, Any]) -> list[str]:
    return [step["uses"] for step in job["steps"] if "uses" in step]


def _runs(job: dict[str, Any]) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


@pytest.mark.parametrize("name", sorted(p.name for p in WORKFLOWS.glob("*.yml")))
def test_workflow_matches_the_github_schema(name: str) -> None:
    exe = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    assert exe, "check-jsonschema (the 'test' extra) is not installed next to this Python"
    proc = subprocess.run(
        [exe, "--builtin-schema", "vendor.github-workflows", str(WORKFLOWS / name)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_schema_check_rejects_a_broken_workflow(tmp_path: Path) -> None:
    exe = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    assert exe
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  build:\n    steps:\n      - uses: actions/checkout@v4\n")
    proc = subprocess.run(
        [exe, "--builtin-schema", "vendor.github-workflows", str(broken)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode != 0  # a job without runs-on


def test_runs_on_tags_and_by_hand() -> None:
    triggers = _workflow()[True]  # YAML 1.1 reads the key `on` as True
    assert triggers["push"] == {"tags": ["v*"]}
    assert "workflow_dispatch" in triggers


def test_linux_wheels_glibc_and_musl_on_both_architectures() -> None:
    jobs = _workflow()["jobs"]
    builds = jobs["linux"]["strategy"]["matrix"]["include"]
    built = {(row["manylinux"], row["target"]) for row in builds}
    assert built == {
        ("2_28", "x86_64"), ("2_28", "aarch64"),
        ("musllinux_1_2", "x86_64"), ("musllinux_1_2", "aarch64"),
    }
    assert MATURIN in _uses(jobs["linux"])
    tests = jobs["linux-test"]["strategy"]["matrix"]["include"]
    tested = {(row["libc"], row["target"]) for row in tests}
    assert tested == {
        ("manylinux_2_28", "x86_64"), ("manylinux_2_28", "aarch64"),
        ("musllinux_1_2", "x86_64"), ("musllinux_1_2", "aarch64"),
    }
    for row in tests:
        arm = row["target"] == "aarch64"
        assert row["runner"].endswith("-arm") == arm, row  # tested on its own architecture
        assert (row["container"] != "") == (row["libc"] == "musllinux_1_2"), row
    assert jobs["linux-test"]["needs"] == "linux"
    assert TEST_SCRIPT in _runs(jobs["linux-test"])


def test_macos_windows_and_sdist() -> None:
    jobs = _workflow()["jobs"]
    mac = jobs["macos"]["strategy"]["matrix"]["include"]
    assert {row["target"] for row in mac} == {"x86_64", "aarch64"}
    assert {row["runner"] for row in mac} == {"macos-15-intel", "macos-15"}
    for name in ("macos", "windows"):
        assert MATURIN in _uses(jobs[name]), name
        assert TEST_SCRIPT in _runs(jobs[name]), name
    maturin = [s for s in jobs["windows"]["steps"] if s.get("uses") == MATURIN]
    assert maturin[0]["with"]["target"] == "x64"
    sdist = [s for s in jobs["sdist"]["steps"] if s.get("uses") == MATURIN]
    assert sdist[0]["with"]["command"] == "sdist"


def test_wheels_are_abi3_for_python_3_11_up() -> None:
    cargo = tomllib.loads((REPO / "Cargo.toml").read_text())
    assert "abi3-py311" in cargo["workspace"]["dependencies"]["pyo3"]["features"]
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11"


def test_publish_only_on_a_tag_with_trusted_publishing() -> None:
    workflow = _workflow()
    assert workflow["permissions"] == {"contents": "read"}
    publish = workflow["jobs"]["publish"]
    assert publish["if"] == "startsWith(github.ref, 'refs/tags/v')"
    assert set(publish["needs"]) == {"linux-test", "macos", "windows", "sdist"}
    assert publish["permissions"]["id-token"] == "write"
    assert publish["permissions"]["attestations"] == "write"
    uses = _uses(publish)
    assert "pypa/gh-action-pypi-publish@release/v1" in uses
    assert "actions/attest-build-provenance@v2" in uses
    step = next(s for s in publish["steps"] if s.get("uses", "").startswith("pypa/"))
    assert "password" not in step.get("with", {})  # OIDC, no token


def test_scripts_the_workflow_and_test_command_call_exist() -> None:
    for script in ("test-installed-wheel", "check-wheel", "build-wheel"):
        path = REPO / "scripts" / script
        assert path.is_file(), path
        assert os.access(path, os.X_OK), f"{path} is not executable"
    test = (REPO / "scripts" / "test").read_text()
    assert "scripts/build-wheel" in test
    assert "scripts/check-wheel" in test


def test_the_sdist_holds_every_crate_and_the_package(tmp_path: Path) -> None:
    """What the workflow's sdist job uploads can be built elsewhere: it holds the whole
    Cargo workspace (every crate's manifest and sources), the Python package and the README."""
    import tarfile

    exe = shutil.which("maturin", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("maturin is not installed next to this Python (scripts/test installs it)")
    proc = subprocess.run(
        [exe, "sdist", "--out", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    [sdist] = tmp_path.glob("helikon-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    crates = sorted(p.parent.name for p in REPO.glob("rust/*/Cargo.toml"))
    for crate in crates:
        assert f"rust/{crate}/Cargo.toml" in names, crate
        assert f"rust/{crate}/src/lib.rs" in names, crate
    for path in ("Cargo.toml", "Cargo.lock", "pyproject.toml", "README.md",
                 "python/helikon/__init__.py", "python/helikon/py.typed",
                 "python/helikon/_native.pyi"):
        assert path in names, path
