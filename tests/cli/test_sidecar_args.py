"""One argument style: ``--agents`` names the sidecar and ``--agent`` defaults to the
alphabetically first agent in ``run``, ``repl``, ``eval run`` and ``mcp serve``; the old
positional sidecar still works with a note naming the new spelling."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.clihelp import EXAMPLE, env, exe, helikon

SIDECAR = EXAMPLE / "agents.toml"
NOTE = "note: a positional sidecar path is deprecated; use helikon {cmd} --agents {path} ...\n"


def _two(tmp_path: Path) -> Path:
    """Agents ``zeta`` (written first) and ``alpha``: the default is ``alpha``."""
    (tmp_path / "z.json").write_text(json.dumps({"default": [[{"token": "zeta here"}]]}))
    (tmp_path / "a.json").write_text(json.dumps({"default": [[{"token": "alpha here"}]]}))
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(
        '[agents.zeta]\nmodel = { provider = "mock", script = "z.json" }\n'
        '[agents.alpha]\nmodel = { provider = "mock", script = "a.json" }\n'
    )
    return sidecar


def test_every_command_takes_the_sidecar_as_agents(tmp_path: Path) -> None:
    sidecar = _two(tmp_path)
    elsewhere = tmp_path.parent
    run = helikon("run", "--agents", str(sidecar), "hi", cwd=elsewhere)
    assert (run.returncode, run.stdout) == (0, "alpha here\n"), run.stderr
    short = helikon("run", "-a", str(sidecar), "--agent", "zeta", "hi", cwd=elsewhere)
    assert (short.returncode, short.stdout) == (0, "zeta here\n"), short.stderr

    repl = helikon("repl", "--agents", str(sidecar), cwd=elsewhere, stdin="hi\n")
    assert repl.returncode == 0, repl.stderr
    assert repl.stdout == "alpha here\n"
    assert f"agent alpha from {sidecar};" in repl.stderr

    (tmp_path / "d.jsonl").write_text('{"id": "c", "input": "hi", "expected": "alpha here"}\n')
    ev = helikon("eval", "run", str(tmp_path / "d.jsonl"), "--agents", str(sidecar), "--json")
    assert ev.returncode == 0, ev.stderr
    report = json.loads(ev.stdout)
    assert report["cases"][0]["outcome"]["final_response"] == "alpha here"


def test_the_default_sidecar_is_agents_toml_in_the_cwd(tmp_path: Path) -> None:
    _two(tmp_path)
    run = helikon("run", "hi", cwd=tmp_path)
    assert (run.returncode, run.stdout) == (0, "alpha here\n"), run.stderr
    repl = helikon("repl", cwd=tmp_path, stdin="hi\n")
    assert (repl.returncode, repl.stdout) == (0, "alpha here\n"), repl.stderr


def test_the_positional_sidecar_still_works_with_a_note(tmp_path: Path) -> None:
    sidecar = _two(tmp_path)
    run = helikon("run", str(sidecar), "hi", cwd=tmp_path.parent)
    assert (run.returncode, run.stdout) == (0, "alpha here\n")
    assert run.stderr.startswith(NOTE.format(cmd="run", path=sidecar))

    repl = helikon("repl", str(SIDECAR), cwd=tmp_path, stdin="/agent\n")
    assert repl.returncode == 0, repl.stderr
    assert repl.stdout == "agent budget_assistant (agents: budget_assistant)\n"
    assert repl.stderr.startswith(NOTE.format(cmd="repl", path=SIDECAR))


def test_the_sidecar_given_twice_is_refused(tmp_path: Path) -> None:
    sidecar = _two(tmp_path)
    proc = helikon("run", str(sidecar), "hi", "--agents", str(SIDECAR))
    assert proc.returncode == 2
    assert proc.stderr == (
        f"error: the sidecar is given twice ({sidecar} and --agents {SIDECAR}). "
        f"Fix: helikon run --agents {SIDECAR} ...\n"
    )
    proc = helikon("run", "a", "b", "c", "--agents", str(SIDECAR))
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: expected one INPUT, got 3 arguments. Fix: quote")


@pytest.mark.parametrize("command", [("run", "hi"), ("repl",), ("eval", "run", "d.jsonl")])
def test_a_missing_sidecar_names_the_path_in_every_command(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    (tmp_path / "d.jsonl").write_text('{"input": "x"}\n')
    proc = helikon(*command, "--agents", "nope.toml", cwd=tmp_path, stdin="")
    assert proc.returncode == 2
    assert proc.stderr == (
        "error: nope.toml: cannot read the sidecar (No such file or directory). "
        "Fix: check the path\n"
    )


def test_mcp_serve_defaults_to_the_first_agent(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    sidecar = _two(tmp_path)
    proc = subprocess.Popen(
        [exe(), "mcp", "serve", "--agents", str(sidecar), "--http", "127.0.0.1:0"],
        cwd=tmp_path.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert first.startswith("serving MCP tool 'alpha' at http://127.0.0.1:"), first
    finally:
        proc.kill()
        proc.communicate(timeout=30)
