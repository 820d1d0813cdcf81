"""In a sidecar where each agent has its own mock script, a handoff target plays its own
script from its first turn, in every command (``run``, ``eval run`` with per-case scripts,
``repl``), and does not replay the transfer."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.clihelp import helikon

HANDOFF = {"tool_call": {"call_id": "h1", "name": "transfer_to_billing", "args": {}}}
LINES = (
    "→ transfer_to_billing({})\n"
    "← transfer_to_billing: Transferred to billing.\n"
    "⇢ handoff front → billing\n"
)


def _sidecar(tmp_path: Path) -> Path:
    (tmp_path / "front.json").write_text(
        json.dumps({"default": [[HANDOFF]], "cases": {"refund": [[HANDOFF]]}})
    )
    (tmp_path / "billing.json").write_text(
        json.dumps(
            {
                "default": [[{"token": "billing, first turn"}], [{"token": "billing, second"}]],
                "cases": {"refund": [[{"token": "refund issued"}]]},
            }
        )
    )
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(
        '[agents.front]\nmodel = { provider = "mock", script = "front.json" }\n'
        'handoffs = ["billing"]\n'
        '[agents.billing]\ndescription = "Billing desk"\n'
        'model = { provider = "mock", script = "billing.json" }\n'
    )
    return sidecar


def test_run_plays_the_targets_first_turn(tmp_path: Path) -> None:
    proc = helikon("run", "--agents", str(_sidecar(tmp_path)), "--agent", "front", "refund me")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == LINES + "billing, first turn\n"


def test_eval_plays_the_targets_case_script(tmp_path: Path) -> None:
    sidecar = _sidecar(tmp_path)
    (tmp_path / "d.jsonl").write_text(
        '{"id": "refund", "input": "refund me", "expected": "refund issued", '
        '"expected_tools": ["transfer_to_billing"]}\n'
    )
    proc = helikon(
        "eval", "run", str(tmp_path / "d.jsonl"), "-a", str(sidecar), "--agent", "front", "--json"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    case = json.loads(proc.stdout)["cases"][0]
    assert case["outcome"]["final_response"] == "refund issued"
    assert case["outcome"]["agent"] == "billing"
    assert [c["name"] for c in case["outcome"]["tool_calls"]] == ["transfer_to_billing"]


def test_repl_plays_the_targets_first_turn(tmp_path: Path) -> None:
    proc = helikon(
        "repl", "--agents", str(_sidecar(tmp_path)), "--agent", "front", stdin="refund me\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == LINES + "billing, first turn\n"
