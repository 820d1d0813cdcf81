"""Sidecar tools: Rhai script tools as the spec's CLI chapter describes them (the
``lookup_spending`` example; runaway, deep, huge and file-reaching scripts fail their call with
a clear tool error and the run goes on), and the sandboxed Read/Write/Edit/Bash toolset."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from helikon.cli.sidecar import SidecarError, load_sidecar
from helikon.errors import ToolError
from tests.cli.clihelp import helikon

LOOKUP_RHAI = """\
// tools/lookup_spending.rhai: the spec's example tool, a canned ledger by month
fn run(args) {
    let ledger = #{
        "2025-01": #{ total: 312.40, count: 18 },
        "2025-02": #{ total: 540.10, count: 9 },
    };
    let month = args.month;
    if month in ledger { ledger[month] } else { #{ total: 0.0, count: 0 } }
}
"""

SPEC_SIDECAR = """\
[agents.triage]
description  = "Routes personal-finance questions"
instructions = "Classify the question and route it to the right specialist."
model        = { provider = "mock", script = "triage_script.json" }
tools        = ["lookup_spending"]
handoffs     = ["budgeting"]

[agents.budgeting]
description  = "Answers budgeting questions"
instructions = "Answer using the spending lookup tool when asked about spending."
model        = { provider = "mock", script = "budgeting_script.json" }
tools        = ["lookup_spending"]

[tools.lookup_spending]
description = "Look up spending for a month"
params      = PARAMS
script      = "tools/lookup_spending.rhai"

[eval]
evaluators = ["exact_match", "tool_trajectory"]
""".replace(
    "PARAMS",
    '{ type = "object", properties = { month = { type = "string" } }, required = ["month"] }',
)


def _call(name: str, args: object, call_id: str = "c1") -> dict[str, object]:
    return {"tool_call": {"call_id": call_id, "name": name, "args": args}}


def _spec_example(tmp_path: Path) -> Path:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "lookup_spending.rhai").write_text(LOOKUP_RHAI)
    handoff = _call("transfer_to_budgeting", {}, "h1")
    (tmp_path / "triage_script.json").write_text(json.dumps([[handoff]]))
    (tmp_path / "budgeting_script.json").write_text(
        json.dumps(
            [
                [_call("lookup_spending", {"month": "2025-01"})],
                [{"token": "You spent $312.40 in January."}],
            ]
        )
    )
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(SPEC_SIDECAR)
    return sidecar


def test_the_spec_lookup_spending_example_runs(tmp_path: Path) -> None:
    sidecar = _spec_example(tmp_path)
    args = ("run", "--agents", str(sidecar), "How much did I spend in January?")
    # the default agent is the alphabetically first (budgeting), as in the spec
    proc = helikon(*args, "--agent", "triage")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        "→ transfer_to_budgeting({})\n"
        "← transfer_to_budgeting: Transferred to budgeting.\n"
        "⇢ handoff triage → budgeting\n"
        '→ lookup_spending({"month": "2025-01"})\n'
        '← lookup_spending: {"count":18,"total":312.4}\n'
        "You spent $312.40 in January.\n"
    )
    tool = load_sidecar(sidecar).build("budgeting").tools[0]
    assert (tool.name, tool.description) == ("lookup_spending", "Look up spending for a month")
    assert tool.parameters["required"] == ["month"]


def _one_script(tmp_path: Path, table: str, args: object = None) -> Path:
    """Agent ``a`` calls tool ``t`` once, then answers "went on"."""
    (tmp_path / "s.json").write_text(
        json.dumps([[_call("t", args if args is not None else {})], [{"token": "went on"}]])
    )
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json", retry = false }\n'
        'tools = ["t"]\n[tools.t]\ndescription = "A test tool"\n' + table
    )
    return sidecar


HOSTILE = [
    (
        "fn run(args) { let n = 0; loop { n += 1; } }",
        "script tool 't': the script was stopped after 1000000 operations (a runaway loop?)",
    ),
    (
        "fn run(args) { run(args) }",
        "script tool 't': the script was stopped: calls nested deeper than 32 (runaway recursion?)",
    ),
    (
        'fn run(args) { let s = "x"; loop { s += s; } }',
        "script tool 't': the script was stopped: Length of string grew past its limit",
    ),
    (
        'fn run(args) { open("/etc/passwd") }',
        "script tool 't': the script used something the sandbox does not provide: Function not "
        "found: open",
    ),
    (
        'import "/etc/passwd" as p; fn run(args) { p::x }',
        "script tool 't': the script used something the sandbox does not provide: Module not "
        "found: /etc/passwd",
    ),
]


@pytest.mark.parametrize(("source", "error"), HOSTILE)
def test_a_runaway_or_malicious_script_fails_its_call_and_the_run_goes_on(
    tmp_path: Path, source: str, error: str
) -> None:
    sidecar = _one_script(tmp_path, f"inline = '''{source}'''\n")
    started = time.monotonic()
    proc = helikon("run", "--agents", str(sidecar), "hi")
    assert time.monotonic() - started < 30
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "→ t({})"
    assert lines[1].startswith(f"← t: {error}"), lines[1]
    assert lines[2] == "went on"


def test_the_file_system_is_out_of_reach_in_every_spelling(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    for body in (
        f'open("{secret}")',
        f'read_file("{secret}")',
        f'File::open("{secret}")',
        f'fs::read("{secret}")',
        'system("cat /etc/passwd")',
        f'eval("read_file(\\"{secret}\\")")',
    ):
        sidecar = _one_script(tmp_path, f"inline = '''fn run(args) {{ {body} }}'''\n")
        try:
            tool = load_sidecar(sidecar).build().tools[0]
        except SidecarError as exc:  # refused at compile time (eval, a module path)
            refused = str(exc)
            tool = None
        if tool is None:
            assert "tools.t.inline" in refused, body
            continue
        with pytest.raises(ToolError) as info:
            tool.call_sync({})  # type: ignore[attr-defined]
        assert "top secret" not in str(info.value)
        assert "does not provide" in str(info.value), (body, str(info.value))


def test_limits_can_be_tightened_per_tool(tmp_path: Path) -> None:
    table = (
        "limits = { max_operations = 1000 }\n"
        "inline = '''fn run(args) { let n = 0; for i in 0..100000 { n += i; } n }'''\n"
    )
    tool = load_sidecar(_one_script(tmp_path, table)).build().tools[0]
    with pytest.raises(ToolError, match="stopped after 1000 operations"):
        tool.call_sync({})  # type: ignore[attr-defined]


def test_inline_scripts_take_args_and_return_text(tmp_path: Path) -> None:
    table = (
        'params = { type = "object", properties = { name = { type = "string" } } }\n'
        "inline = '''fn run(args) { `hello ${args.name}` }'''\n"
    )
    proc = helikon("run", "--agents", str(_one_script(tmp_path, table, {"name": "Ana"})), "hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1] == "← t: hello Ana"


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        (
            "inline = '''fn run(a) { 1 }'''\nscript = \"t.rhai\"\n",
            "tools.t: needs exactly one of script or inline (both given). Fix: script = ",
        ),
        ("params = {}\n", "tools.t: needs exactly one of script or inline (or python)."),
        (
            "inline = '''fn run(args) { '''\n",
            "tools.t.inline: the script does not compile: ",
        ),
        (
            "inline = '''fn main(args) { 1 }'''\n",
            "tools.t.inline: the script has no fn run(args) taking one argument. Fix: fix the "
            "script (it must define fn run(args))",
        ),
        (
            'script = "nope.rhai"\n',
            "tools.t.script: cannot read ",
        ),
        (
            "inline = '''fn run(a) { 1 }'''\nlimits = { max_ops = 3 }\n",
            "tools.t.limits: unknown script limit 'max_ops'",
        ),
        (
            "inline = '''fn run(a) { 1 }'''\nparams = { type = \"string\" }\n",
            "tools.t.params: must be a JSON Schema object schema",
        ),
        (
            "inline = '''fn run(a) { 1 }'''\npython = \"m:t\"\n",
            "tools.t: python cannot be combined with ['description', 'inline']",
        ),
    ],
)
def test_a_bad_script_table_is_one_error_line(tmp_path: Path, table: str, problem: str) -> None:
    sidecar = _one_script(tmp_path, table)
    proc = helikon("run", "--agents", str(sidecar), "hi")
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {sidecar}: {problem}"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_missing_description_is_refused(tmp_path: Path) -> None:
    sidecar = tmp_path / "agents.toml"
    (tmp_path / "s.json").write_text("[]")
    sidecar.write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\ntools = ["t"]\n'
        "[tools.t]\ninline = '''fn run(a) { 1 }'''\n"
    )
    with pytest.raises(SidecarError, match=r"tools\.t\.description: missing or empty"):
        load_sidecar(sidecar).build()


# ---------------------------------------------------------------------- the sandboxed toolset


def _sandboxed(tmp_path: Path, sandbox: str, calls: list[dict[str, object]]) -> Path:
    (tmp_path / "ws").mkdir(exist_ok=True)
    (tmp_path / "s.json").write_text(json.dumps([*([c] for c in calls), [{"token": "done"}]]))
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\n'
        'tools = ["Read", "Write", "Edit", "Bash"]\n' + sandbox
    )
    return sidecar


def test_the_builtin_tools_work_in_the_sandbox_root(tmp_path: Path) -> None:
    calls = [
        _call("Write", {"path": "notes.txt", "content": "one\n"}, "w"),
        _call("Edit", {"path": "notes.txt", "old_string": "one", "new_string": "two"}, "e"),
        _call("Bash", {"command": "cat notes.txt"}, "b"),
        _call("Read", {"path": "../agents.toml"}, "r"),
    ]
    sidecar = _sandboxed(tmp_path, '[sandbox]\nroot = "ws"\nbackend = "host"\n', calls)
    proc = helikon("run", "--agents", str(sidecar), "hi")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "ws" / "notes.txt").read_text() == "two\n"
    out = proc.stdout
    bash = out.split("← Bash: ", 1)[1].split("\n→ ", 1)[0]
    assert "exit code: 0" in bash and "two" in bash, bash
    assert "[agents.a]" not in out  # Read of ../agents.toml is refused
    read_line = next(line for line in out.splitlines() if line.startswith("← Read: "))
    assert "outside" in read_line or "escape" in read_line or "denied" in read_line, read_line


def test_the_os_backend_fails_closed_naming_the_fix(tmp_path: Path) -> None:
    sidecar = _sandboxed(tmp_path, '[sandbox]\nroot = "ws"\n', [])
    if os.geteuid() != 0:
        pytest.skip("the root-without-run_as refusal needs root")
    with pytest.raises(SidecarError) as info:
        load_sidecar(sidecar).build()
    assert str(info.value).startswith(
        f"{sidecar}: sandbox.backend: the OS sandbox is unavailable here: "
    )
    assert "run_as" in str(info.value)
    assert str(info.value).endswith('opt out of containment with backend = "host" (or "best")')


@pytest.mark.parametrize(
    ("sandbox", "problem"),
    [
        ("", "agents.a.tools: the built-in 'Read' tool needs a [sandbox] table. Fix: [sandbox]"),
        ('[sandbox]\nroot = "nope"\n', "sandbox.root: "),
        ('[sandbox]\nroot = "ws"\nbackend = "docker"\n', "sandbox.backend: unknown backend"),
        ('[sandbox]\nroot = "ws"\nrot = 1\n', "sandbox: unknown key 'rot'. Fix: did you mean"),
        ('[sandbox]\nroot = "ws"\nrun_as = [1]\n', "sandbox.run_as: must be [uid, gid]"),
    ],
)
def test_a_bad_sandbox_table_is_one_error(tmp_path: Path, sandbox: str, problem: str) -> None:
    sidecar = _sandboxed(tmp_path, sandbox, [])
    with pytest.raises(SidecarError) as info:
        load_sidecar(sidecar).build()
    assert str(info.value).startswith(f"{sidecar}: {problem}"), str(info.value)
