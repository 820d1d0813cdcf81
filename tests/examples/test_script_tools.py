"""examples/script_tools: the spec's sidecar (two agents, Rhai script tools) runs and scores."""

from __future__ import annotations

from tests.cli.clihelp import REPO, helikon

EXAMPLE = REPO / "examples" / "script_tools"


def test_the_example_runs_and_scores() -> None:
    sidecar = str(EXAMPLE / "agents.toml")
    run = helikon("run", "--agents", sidecar, "--agent", "triage", "January?")
    assert run.returncode == 0, run.stderr
    assert run.stdout == (
        "→ transfer_to_budgeting({})\n"
        "← transfer_to_budgeting: Transferred to budgeting.\n"
        "⇢ handoff triage → budgeting\n"
        '→ lookup_spending({"month": "2025-01"})\n'
        '← lookup_spending: {"count":18,"total":312.4}\n'
        '→ monthly_summary({"total": 312.4, "count": 18})\n'
        "← monthly_summary: 18 transactions, $312.4 in total\n"
        "In January you spent $312.40 across 18 transactions.\n"
    )
    evals = str(EXAMPLE / "evals.jsonl")
    ev = helikon("eval", "run", evals, "--agents", sidecar, "--agent", "triage")
    assert ev.returncode == 0, ev.stdout + ev.stderr
    assert "1/1 cases passed" in ev.stdout
