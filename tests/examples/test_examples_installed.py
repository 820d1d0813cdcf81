"""examples/provider_swap runs from a fresh copy of its folder, in a venv holding only the
built wheel and the extras its README names (``pip install 'helikon[...]'``).

Needs the wheel: ``HELIKON_WHEEL`` (scripts/test sets it to the wheel it built); without it
the test skips. The venv gets no test dependencies, so an import the README does not cover
fails here, not on a reader's machine.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "provider_swap"
_WHEEL = os.environ.get("HELIKON_WHEEL")


def readme_extras() -> list[str]:
    """The extras of the README's ``pip install 'helikon[...]'`` line."""
    named = re.search(r"pip install 'helikon\[([\w,]+)\]'", (EXAMPLE / "README.md").read_text())
    assert named, "the README says what to install"
    return sorted(named.group(1).split(","))


def test_the_readme_names_the_four_provider_extras() -> None:
    assert readme_extras() == ["anthropic", "bedrock", "gemini", "openai"]


@pytest.mark.skipif(not _WHEEL, reason="set HELIKON_WHEEL to a built wheel (scripts/test does)")
def test_provider_swap_runs_with_only_the_readme_extras(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "--only-binary=helikon", f"{_WHEEL}[{','.join(readme_extras())}]"],
        check=True, timeout=900,
    )  # fmt: skip
    folder = tmp_path / "provider_swap"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HELIKON_", "PYTHON"))}
    env.update(
        AWS_EC2_METADATA_DISABLED="true",
        AWS_CONFIG_FILE="/dev/null",
        AWS_SHARED_CREDENTIALS_FILE="/dev/null",
        PYTHONDONTWRITEBYTECODE="1",
    )
    proc = subprocess.run(
        [str(python), "main.py"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    answers = [line.strip() for line in proc.stdout.splitlines() if "final_output:" in line]
    assert answers == [
        "final_output: CityReport(city='Paris', country='France', temperature_c=30.0)"
    ] * 5
