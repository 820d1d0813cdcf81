"""examples/remembering_chat: memory survives a process restart (SQLite session)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "remembering_chat"


def _chat(folder: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "main.py", *args], capture_output=True, text=True, timeout=60, cwd=folder
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_remembers_across_processes(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE / "main.py", tmp_path / "main.py")
    assert _chat(tmp_path, "What is my name?") == "You haven't told me your name."
    assert (
        _chat(tmp_path, "My name is Ada.") == "Noted. (2 message(s) in this conversation so far.)"
    )
    assert _chat(tmp_path, "What is my name?") == "Your name is Ada."
    assert _chat(tmp_path, "--reset") == "Forgotten."
    assert _chat(tmp_path, "What is my name?") == "You haven't told me your name."
