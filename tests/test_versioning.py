"""One version, in one place: the Cargo workspace's.

pyproject.toml declares the version dynamic (maturin copies the workspace's), every crate
inherits it, and the installed package, ``helikon.__version__``, the native module and the
CHANGELOG's latest release all say the same.
"""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import helikon
from helikon import _native

REPO = Path(__file__).resolve().parents[1]


def _workspace_version() -> str:
    cargo = tomllib.loads((REPO / "Cargo.toml").read_text())
    found: str = cargo["workspace"]["package"]["version"]
    return found


def test_pyproject_takes_the_version_from_cargo() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert "version" not in project, "pyproject.toml must not type the version a second time"
    assert "version" in project["dynamic"]


def test_every_crate_inherits_the_workspace_version() -> None:
    crates = sorted(REPO.glob("rust/*/Cargo.toml"))
    assert crates
    for manifest in crates:
        package = tomllib.loads(manifest.read_text())["package"]
        assert package["version"] == {"workspace": True}, manifest


def test_installed_runtime_and_native_versions_agree() -> None:
    expected = _workspace_version()
    assert version("helikon") == expected
    assert helikon.__version__ == expected
    assert _native.__version__ == expected


def test_changelog_latest_release_is_this_version() -> None:
    text = (REPO / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+[^\]]*)\]", text, flags=re.MULTILINE)
    assert releases, "CHANGELOG.md has no '## [X.Y.Z]' release heading"
    assert releases[0] == _workspace_version()
