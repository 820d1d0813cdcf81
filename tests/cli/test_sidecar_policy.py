"""Sidecar ``[permissions]`` (mode, deny/allow rules, guards) reach every command's runs, and
an agent's ``output_type`` is a pydantic model (``module:Model``) or a JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helikon.cli.sidecar import SidecarError, load_sidecar
from helikon.core.permissions import AllowRule, DenyRule, PermissionMode
from tests.cli.clihelp import helikon

TOOLS_PY = '''\
from helikon import ToolEffect, tool


@tool(effect=ToolEffect.READ_ONLY)
def balance() -> str:
    """The account balance."""
    return "42 EUR"


@tool
def transfer(amount: int) -> str:
    """Move money."""
    return f"moved {amount}"
'''


def _write(tmp_path: Path, permissions: str, calls: list[str]) -> Path:
    (tmp_path / "bank_tools.py").write_text(TOOLS_PY)
    script = [
        [
            {
                "tool_call": {
                    "call_id": f"c{i}",
                    "name": n,
                    "args": {"amount": 5} if n == "transfer" else {},
                }
            }
        ]
        for i, n in enumerate(calls)
    ]
    (tmp_path / "s.json").write_text(json.dumps([*script, [{"token": "done"}]]))
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\n'
        'tools = ["balance", "transfer"]\n'
        '[tools.balance]\npython = "bank_tools:balance"\n'
        '[tools.transfer]\npython = "bank_tools:transfer"\n' + permissions
    )
    return sidecar


def _results(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("← ")]


def test_deny_rules_reach_helikon_run(tmp_path: Path) -> None:
    sidecar = _write(tmp_path, '[permissions]\ndeny = ["tool:transfer"]\n', ["balance", "transfer"])
    proc = helikon("run", "--agents", str(sidecar), "hi")
    assert proc.returncode == 0, proc.stderr
    balance, transfer = _results(proc.stdout)
    assert balance == "← balance: 42 EUR"
    assert transfer.startswith("← transfer: ") and "moved" not in transfer
    assert "deny rule" in transfer or "denied" in transfer.lower(), transfer


def test_plan_mode_with_an_allow_rule(tmp_path: Path) -> None:
    sidecar = _write(
        tmp_path,
        '[permissions]\nmode = "dont_ask"\nallow = ["tool:balance"]\n',
        ["balance", "transfer"],
    )
    proc = helikon("run", "--agents", str(sidecar), "hi")
    assert proc.returncode == 0, proc.stderr
    balance, transfer = _results(proc.stdout)
    assert balance == "← balance: 42 EUR"
    assert "moved" not in transfer


def test_permissions_reach_the_repl_and_eval(tmp_path: Path) -> None:
    sidecar = _write(tmp_path, '[permissions]\ndeny = ["tool:transfer"]\n', ["transfer"])
    repl = helikon("repl", "--agents", str(sidecar), stdin="hi\n")
    assert repl.returncode == 0, repl.stderr
    assert "moved" not in repl.stdout
    assert _results(repl.stdout)[0].startswith("← transfer: ")
    (tmp_path / "d.jsonl").write_text('{"id": "x", "input": "hi", "expected": "done"}\n')
    ev = helikon("eval", "run", str(tmp_path / "d.jsonl"), "--agents", str(sidecar), "--json")
    report = json.loads(ev.stdout)
    events = json.dumps(report["cases"][0])
    assert "moved 5" not in events


def test_the_checked_settings(tmp_path: Path) -> None:
    sidecar = _write(
        tmp_path,
        '[permissions]\nmode = "plan"\ndeny = ["bash:rm", "edit:secrets/**"]\n'
        'allow = ["read:docs/**"]\ndefault_guards = false\n'
        'guards = [{ name = "no-push", program = "git", args_contain = ["push"], '
        'action = "deny", reason = "no pushing" }]\n',
        [],
    )
    sc = load_sidecar(sidecar)
    ctx = sc.context()
    p = ctx.permissions
    assert p.mode is PermissionMode.PLAN
    assert p.deny_rules == (DenyRule.bash_command("rm"), DenyRule.edit("secrets/**"))
    assert p.allow_rules == (AllowRule.read("docs/**"),)
    assert [g.name for g in p.guard_rules] == ["no-push"]
    assert p.default_guards is False
    assert sc.context() is not ctx  # a fresh context per run


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ('mode = "yolo"\n', "permissions.mode: unknown mode 'yolo'. Fix: use one of 'default', "),
        ('deny = ["rm"]\n', "permissions.deny[0]: 'rm' is not KIND:VALUE with KIND one of "),
        ('allow = ["shell:git"]\n', "permissions.allow[0]: 'shell:git' is not KIND:VALUE"),
        ('deny = "tool:x"\n', "permissions.deny: must be a list of KIND:VALUE rules"),
        ("modes = 1\n", "permissions: unknown key 'modes'. Fix: did you mean 'mode'?"),
        (
            'guards = [{ name = "g" }]\n',
            "permissions.guards[0]: GuardRule 'g' matches nothing: give program=... or "
            "write_paths=...",
        ),
        ('guards = [{ name = "g", prog = "git" }]\n', "permissions.guards[0]: unknown key 'prog'"),
    ],
)
def test_a_bad_permissions_table_is_one_error_line(
    tmp_path: Path, table: str, problem: str
) -> None:
    sidecar = _write(tmp_path, "[permissions]\n" + table, [])
    proc = helikon("run", "--agents", str(sidecar), "hi")
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {sidecar}: {problem}"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------- output_type

ANSWERS_PY = """\
from pydantic import BaseModel


class Spending(BaseModel):
    category: str
    total: float
"""


def _typed(tmp_path: Path, output_type: str, answer: str) -> Path:
    (tmp_path / "answers.py").write_text(ANSWERS_PY)
    (tmp_path / "schema.json").write_text(
        json.dumps(
            {
                "title": "Spending",
                "type": "object",
                "properties": {"category": {"type": "string"}, "total": {"type": "number"}},
                "required": ["category", "total"],
                "additionalProperties": False,
            }
        )
    )
    (tmp_path / "s.json").write_text(json.dumps([[{"token": answer}], [{"token": answer}]]))
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\n'
        f"output_type = {output_type}\n"
    )
    return sidecar


GOOD = '{"category": "dining", "total": 312.4}'


def test_output_type_as_a_pydantic_model(tmp_path: Path) -> None:
    agent = load_sidecar(_typed(tmp_path, '"answers:Spending"', GOOD)).build()
    out = agent.run_sync("hi").final_output
    assert type(out).__name__ == "Spending"
    assert (out.category, out.total) == ("dining", 312.4)


@pytest.mark.parametrize(
    "form",
    [
        '{ schema = "schema.json" }',
        '{ schema = { type = "object", properties = { category = { type = "string" }, '
        'total = { type = "number" } }, required = ["category", "total"], '
        'additionalProperties = false }, name = "Spending" }',
    ],
)
def test_output_type_as_a_json_schema(tmp_path: Path, form: str) -> None:
    agent = load_sidecar(_typed(tmp_path, form, GOOD)).build()
    assert agent.output_type is not None
    assert agent.output_type.name == "Spending"
    assert agent.run_sync("hi").final_output == {"category": "dining", "total": 312.4}


def test_a_json_schema_output_type_validates_the_answer(tmp_path: Path) -> None:
    sidecar = _typed(tmp_path, '{ schema = "schema.json" }', '{"category": "dining"}')
    proc = helikon("run", "--agents", str(sidecar), "hi")
    assert proc.returncode == 1
    assert "invalid structured output" in proc.stderr
    output_type = load_sidecar(sidecar).build().output_type
    assert output_type is not None
    assert output_type.validate_text('{"category": "dining", "total": "lots"}') == (
        None,
        ["<root>: Value error, total: 'lots' is not of type 'number'"],
    )


@pytest.mark.parametrize(
    ("form", "problem"),
    [
        ('"answers:Nope"', "agents.a.output_type: answers has no 'Nope'"),
        ("{ }", "agents.a.output_type: needs exactly one of python or schema"),
        ('{ schema = "missing.json" }', "agents.a.output_type.schema: cannot read "),
        (
            '{ schema = { type = "objekt" } }',
            "agents.a.output_type.schema: not a valid JSON Schema",
        ),
        (
            '{ python = "answers:Spending", strikt = true }',
            "agents.a.output_type: unknown key 'strikt'",
        ),
        (
            '{ schema = { type = "object", additionalProperties = true } }',
            "agents.a.output_type: output_type ",
        ),
    ],
)
def test_a_bad_output_type_is_one_error_line(tmp_path: Path, form: str, problem: str) -> None:
    sidecar = _typed(tmp_path, form, GOOD)
    with pytest.raises(SidecarError) as info:
        load_sidecar(sidecar).build()
    assert str(info.value).startswith(f"{sidecar}: {problem}"), str(info.value)


def test_output_mode_and_retries_in_the_sidecar(tmp_path: Path) -> None:
    sidecar = _typed(tmp_path, '"answers:Spending"', GOOD)
    sidecar.write_text(sidecar.read_text() + 'output_mode = "tool"\nretries = 3\n')
    agent = load_sidecar(sidecar).build()
    assert (agent.output_mode, agent.retries) == ("tool", 3)
    assert agent.native_config(16).to_json().endswith('"mode":"tool","retries":3}}')
    plain = load_sidecar(_typed(tmp_path, '"answers:Spending"', GOOD)).build()
    assert (plain.output_mode, plain.retries) == (None, 1)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (
            'output_mode = "json"',
            "agents.a.output_mode: 'json' is not an output mode. Fix: output_mode = \"tool\", "
            '"native" or "finalize", or leave it out',
        ),
        ("retries = -1", "agents.a.retries: -1 is not a count. Fix: retries = 2"),
        ('retries = "2"', "agents.a.retries: '2' is not a count. Fix: retries = 2"),
    ],
)
def test_bad_output_mode_or_retries_name_the_key(tmp_path: Path, line: str, problem: str) -> None:
    sidecar = _typed(tmp_path, '"answers:Spending"', GOOD)
    sidecar.write_text(sidecar.read_text() + line + "\n")
    with pytest.raises(SidecarError) as exc:
        load_sidecar(sidecar).build()
    assert str(exc.value).endswith(problem)
