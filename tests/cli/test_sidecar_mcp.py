"""Sidecar MCP servers: ``[mcp.NAME]`` started by the command, their tools added to the
agents that name them, in ``run``, ``repl`` and ``eval run``; bad tables are one error."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from helikon.cli.sidecar import SidecarError, load_sidecar
from tests.cli.clihelp import REPO, helikon

pytest.importorskip("mcp")

SERVER = REPO / "tests" / "mcp" / "mcp_test_server.py"
ECHO = {"tool_call": {"call_id": "c1", "name": "t_echo", "args": {"text": "héllo"}}}


def _sidecar(tmp_path: Path, mcp_table: str | None = None) -> Path:
    (tmp_path / "s.json").write_text(json.dumps([[ECHO], [{"token": "done"}]]))
    table = mcp_table or (
        f"[mcp.test]\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(SERVER))}, "
        '"tools"]\ntool_prefix = "t_"\n'
    )
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\nmcp = ["test"]\n' + table
    )
    return sidecar


def test_run_and_repl_call_the_servers_tools(tmp_path: Path) -> None:
    sidecar = _sidecar(tmp_path)
    expected = '→ t_echo({"text": "héllo"})\n← t_echo: héllo\ndone\n'
    run = helikon("run", "--agents", str(sidecar), "hi")
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected
    repl = helikon("repl", "--agents", str(sidecar), stdin="hi\n")
    assert repl.returncode == 0, repl.stderr
    assert repl.stdout == expected


def test_eval_runs_each_case_with_the_servers_tools(tmp_path: Path) -> None:
    sidecar = _sidecar(tmp_path)
    (tmp_path / "d.jsonl").write_text(
        '{"id": "x", "input": "hi", "expected": "done", "expected_tools": ["t_echo"]}\n'
    )
    proc = helikon("eval", "run", str(tmp_path / "d.jsonl"), "-a", str(sidecar))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1/1 cases passed" in proc.stdout


def test_a_server_that_does_not_start_is_one_error(tmp_path: Path) -> None:
    sidecar = _sidecar(tmp_path, '[mcp.test]\ncommand = ["/nonexistent/server"]\n')
    proc = helikon("run", "--agents", str(sidecar), "hi")
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {sidecar}: mcp.test: cannot connect: ")
    assert proc.stderr.rstrip().endswith("Fix: check the server")


@pytest.mark.parametrize(
    ("tables", "problem"),
    [
        ("[mcp.test]\n", "mcp.test: needs exactly one of command or url"),
        ('[mcp.test]\ncommand = "server.py"\n', "mcp.test.command: must be a list"),
        ('[mcp.test]\nurl = "ftp://x"\n', "mcp.test.url: not an http(s) URL: 'ftp://x'"),
        ('[mcp.test]\nurl = "http://x/mcp"\nlazzy = true\n', "mcp.test: unknown key 'lazzy'"),
        ('[mcp.other]\nurl = "http://x/mcp"\n', "agents.a.mcp: unknown MCP server 'test'"),
    ],
)
def test_a_bad_mcp_table_is_one_error(tmp_path: Path, tables: str, problem: str) -> None:
    sidecar = _sidecar(tmp_path, tables)
    with pytest.raises(SidecarError) as info:
        load_sidecar(sidecar).build()
    assert str(info.value).startswith(f"{sidecar}: {problem}"), str(info.value)
