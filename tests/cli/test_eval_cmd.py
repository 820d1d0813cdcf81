"""``helikon eval run``: the report, exit codes, ``--json``, ``--trace``, ``[eval]`` checks."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from tests.cli.clihelp import EXAMPLE, helikon, script

EXAMPLE_TABLE = """\
case       result  exact_match  tool_trajectory
---------  ------  -----------  ---------------
dining     PASS    passed 1.00  passed 1.00
groceries  PASS    passed 1.00  passed 1.00

2/2 cases passed
exact_match: 2 passed, 0 failed, 0 skipped, 0 errors, mean 1.000
tool_trajectory: 2 passed, 0 failed, 0 skipped, 0 errors, mean 1.000
"""


def _messages(stderr: str) -> str:
    """stderr without the per-case progress lines (``[1/2] case PASS 0.01s``)."""
    return "".join(
        line for line in stderr.splitlines(keepends=True) if not re.match(r"\[\d+/\d+\] ", line)
    )


def test_the_example_dataset_passes_with_the_default_sidecar_path() -> None:
    proc = helikon("eval", "run", "evals.jsonl", "--agent", "budget_assistant", cwd=EXAMPLE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == EXAMPLE_TABLE
    assert _messages(proc.stderr) == ""


def _two_cases(tmp_path: Path, eval_table: str = "") -> Path:
    """Case 'good' answers as expected, case 'bad' does not; one mock script per case."""
    script(
        tmp_path / "s.json",
        {"cases": {"good": [[{"token": "yes"}]], "bad": [[{"token": "nope"}]]}},
    )
    (tmp_path / "agents.toml").write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\n' + eval_table
    )
    (tmp_path / "d.jsonl").write_text(
        '{"id": "good", "input": "q1", "expected": "yes"}\n'
        '{"id": "bad", "input": "q2", "expected": "no"}\n'
    )
    return tmp_path


def test_a_failed_case_exits_1_and_fail_under_names_the_mean(tmp_path: Path) -> None:
    root = _two_cases(tmp_path, '[eval]\nevaluators = ["exact_match"]\n')
    proc = helikon("eval", "run", "d.jsonl", "--agent", "a", "--fail-under", "0.9", cwd=root)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        "case  result  exact_match",
        "----  ------  -----------",
        "good  PASS    passed 1.00",
        "bad   FAIL    failed 0.00",
        "",
        "1/2 cases passed",
        "exact_match: 1 passed, 1 failed, 0 skipped, 0 errors, mean 0.500",
    ]
    assert _messages(proc.stderr) == "mean score 0.500 is under --fail-under 0.9\n"


def test_fail_under_fails_when_nothing_was_scored(tmp_path: Path) -> None:
    script(tmp_path / "s.json", [[{"token": "hi"}]])
    (tmp_path / "agents.toml").write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\n'
    )
    (tmp_path / "d.jsonl").write_text('{"input": "hello"}\n')
    ok = helikon("eval", "run", "d.jsonl", "--agent", "a", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "case-1  PASS    skip         skip" in ok.stdout
    proc = helikon("eval", "run", "d.jsonl", "--agent", "a", "--fail-under", "0.5", cwd=tmp_path)
    assert proc.returncode == 1
    assert _messages(proc.stderr) == "no score to compare with --fail-under 0.5\n"


def test_json_report_and_sqlite_trace(tmp_path: Path) -> None:
    root = _two_cases(tmp_path)
    db = tmp_path / "runs.db"
    proc = helikon(
        "eval", "run", "d.jsonl", "--agent", "a", "--json", f"--trace=sqlite:{db}", cwd=root
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["evaluators"] == ["exact_match", "tool_trajectory"]
    assert [(c["case"]["id"], c["outcome"]["final_response"]) for c in report["cases"]] == [
        ("good", "yes"),
        ("bad", "nope"),
    ]
    rows = sqlite3.connect(db).execute("SELECT run_id, case_count, passed FROM eval_runs")
    assert rows.fetchall() == [(report["run_id"], 2, 0)]


def test_an_unwritable_trace_still_prints_the_report_and_exits_3(tmp_path: Path) -> None:
    root = _two_cases(tmp_path, '[eval]\nevaluators = ["exact_match"]\n')
    (tmp_path / "db").mkdir()  # a directory where the database file should be
    proc = helikon("eval", "run", "d.jsonl", "--agent", "a", "--trace", "sqlite:db", cwd=root)
    assert proc.returncode == 3
    assert "1/2 cases passed" in proc.stdout
    assert _messages(proc.stderr).startswith(
        "error: --trace 'sqlite:db': SqliteTraceSink: could not record run "
    )
    assert proc.stderr.endswith(": OperationalError: unable to open database file\n")


def test_schema_path_is_relative_to_the_sidecar(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "schemas").mkdir(parents=True)
    (root / "schemas" / "answer.json").write_text(
        '{"type": "object", "required": ["total"], "properties": {"total": {"type": "number"}}}'
    )
    script(root / "s.json", {"cases": {"ok": [[{"token": '{"total": 3}'}]]}})
    (root / "agents.toml").write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\n'
        '[eval]\nevaluators = ["json_schema"]\n[eval.json_schema]\nschema = "schemas/answer.json"\n'
    )
    (tmp_path / "d.jsonl").write_text('{"id": "ok", "input": "sum"}\n{"id": "no", "input": "x"}\n')
    proc = helikon(
        "eval", "run", "d.jsonl", "--agent", "a", "--agents", "proj/agents.toml", cwd=tmp_path
    )
    assert proc.returncode == 1  # case 'no' gets the default script: none, so the run fails
    lines = proc.stdout.splitlines()
    assert lines[2].split() == ["ok", "PASS", "passed", "1.00"]
    assert lines[3].startswith("no    ERROR: ")
    assert lines[3].endswith("-")


def test_llm_judge_with_a_mock_judge(tmp_path: Path) -> None:
    script(tmp_path / "a.json", [[{"token": "hello"}]])
    script(tmp_path / "judge.json", [[{"token": '{"score": 0.6, "reason": "curt"}'}]])
    (tmp_path / "rubric.md").write_text("Is it polite?")
    (tmp_path / "agents.toml").write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "a.json" }\n'
        '[eval]\nevaluators = ["llm_judge"]\n[eval.llm_judge]\n'
        'model = { provider = "mock", script = "judge.json" }\n'
        'rubric = { file = "rubric.md" }\nthreshold = 0.8\n'
    )
    (tmp_path / "d.jsonl").write_text('{"id": "x", "input": "hi"}\n')
    proc = helikon("eval", "run", "d.jsonl", "--agent", "a", cwd=tmp_path)
    assert proc.returncode == 1
    assert "x     FAIL    failed 0.60" in proc.stdout


EVAL_ERRORS = [
    (
        "[eval]\nevaluator = []\n",
        "eval: unknown key 'evaluator'. Fix: did you mean 'evaluators'? "
        "use only ['evaluators', 'json_schema', 'llm_judge']",
    ),
    (
        '[eval]\nevaluators = ["exact_macth"]\n',
        "eval.evaluators: unknown evaluator 'exact_macth'. Fix: did you mean 'exact_match'? "
        "use ['exact_match', 'tool_trajectory', 'json_schema', 'llm_judge']",
    ),
    (
        "[eval]\nevaluators = []\n",
        "eval.evaluators: must be a non-empty list of evaluator names. Fix: evaluators = [...] "
        "with names from ['exact_match', 'tool_trajectory', 'json_schema', 'llm_judge']",
    ),
    (
        '[eval]\nevaluators = ["json_schema"]\n',
        "eval.evaluators: 'json_schema' needs its [eval.json_schema] table. "
        'Fix: [eval.json_schema] schema = "schemas/answer.json"',
    ),
    (
        '[eval]\nevaluators = ["exact_match"]\n[eval.json_schema]\nschema = "s.json"\n',
        "eval.json_schema: configured but 'json_schema' is not in evaluators. "
        'Fix: add "json_schema" to evaluators or remove [eval.json_schema]',
    ),
    (
        '[eval]\nevaluators = ["llm_judge"]\n[eval.llm_judge]\n'
        'model = { provider = "mock", script = "s.json" }\nrubric = "r"\nthreshold = 7\n',
        "eval.llm_judge.threshold: must be a number in [0, 1], got 7. Fix: 0.7",
    ),
    (
        '[eval]\nevaluators = ["llm_judge"]\n[eval.llm_judge]\n'
        'model = { provider = "mock", script = "s.json" }\n',
        "eval.llm_judge.rubric: missing or empty. "
        'Fix: rubric = "what a good answer does" or rubric = { file = "rubric.md" }',
    ),
    (
        '[eval]\nevaluators = ["llm_judge"]\n[eval.llm_judge]\nmodel = { provider = "x" }\n'
        'rubric = "r"\n',
        "eval.llm_judge.model.provider: unknown provider 'x'. Fix: use one of \"mock\", "
        '"openai", "anthropic", "gemini", "bedrock"',
    ),
]


@pytest.mark.parametrize(("table", "problem"), EVAL_ERRORS)
def test_a_bad_eval_table_is_one_error_line_for_eval_and_run(
    tmp_path: Path, table: str, problem: str
) -> None:
    script(tmp_path / "s.json", [[{"token": "hi"}]])
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text('[agents.a]\nmodel = { provider = "mock", script = "s.json" }\n' + table)
    (tmp_path / "d.jsonl").write_text('{"input": "x"}\n')
    proc = helikon("eval", "run", "d.jsonl", "--agent", "a", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"error: agents.toml: {problem}\n"
    also = helikon("run", "--agents", str(sidecar), "hi")
    assert (also.returncode, also.stderr) == (2, f"error: {sidecar}: {problem}\n")


def test_a_missing_schema_file_names_the_resolved_path(tmp_path: Path) -> None:
    script(tmp_path / "s.json", [[{"token": "hi"}]])
    (tmp_path / "agents.toml").write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\n'
        '[eval]\nevaluators = ["json_schema"]\n[eval.json_schema]\nschema = "nope.json"\n'
    )
    (tmp_path / "d.jsonl").write_text('{"input": "x"}\n')
    proc = helikon("eval", "run", "d.jsonl", "--agent", "a", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"error: agents.toml: eval.json_schema.schema: cannot read JSON Schema "
        f"{(tmp_path / 'nope.json').resolve()}: No such file or directory. Fix: point schema "
        "at a JSON Schema file (paths are relative to the sidecar)\n"
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--fail-under", "1.5"],
            "error: --fail-under 1.5: must be in [0, 1]. Fix: e.g. --fail-under 0.8\n",
        ),
        (
            ["--trace", "redis:x"],
            "error: --trace 'redis:x': expected sqlite:PATH or parquet:DIR. "
            "Fix: e.g. --trace sqlite:evals.db\n",
        ),
        (
            ["--trace", "sqlite:nodir/x.db"],
            "error: --trace 'sqlite:nodir/x.db': no directory nodir. "
            "Fix: create it or pick another path\n",
        ),
        (
            ["--agent", "zed"],
            "error: agents.toml: no agent 'zed'. Fix: use one of ['budget_assistant']\n",
        ),
    ],
)
def test_bad_flags_exit_2(args: list[str], expected: str) -> None:
    base = ["eval", "run", "evals.jsonl", "--agent", "budget_assistant"]
    proc = helikon(*base, *args, cwd=EXAMPLE)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", expected)


def test_dataset_problems_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"input": "x", "expected_tool": []}\n')
    proc = helikon("eval", "run", str(bad), "--agent", "budget_assistant", cwd=EXAMPLE)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"error: {bad}:1: field 'expected_tool': unknown key; did you mean 'expected_tools'? "
        "a case has id, input, expected, expected_tools, metadata, decisions\n"
    )
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    proc = helikon("eval", "run", str(empty), "--agent", "budget_assistant", cwd=EXAMPLE)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {empty}: no cases. Fix: add one JSON object per line")


def test_missing_sidecar_names_the_default_path(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text('{"input": "x"}\n')
    for extra in ((), ("--agent", "a")):
        proc = helikon("eval", "run", "d.jsonl", *extra, cwd=tmp_path)
        assert proc.returncode == 2
        assert proc.stderr.startswith("error: agents.toml: cannot read the sidecar")
