"""Run the installed ``helikon`` console script for the CLI tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "budget_assistant"


def exe() -> str:
    found = shutil.which("helikon", path=str(Path(sys.executable).parent))
    assert found, "the helikon console script is not installed next to this Python"
    return found


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **extra}


def helikon(
    *args: str, cwd: Path | None = None, stdin: str | None = None, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [exe(), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env(**extra_env),
        input=stdin,
    )


def script(path: Path, turns: object) -> Path:
    path.write_text(json.dumps(turns))
    return path
