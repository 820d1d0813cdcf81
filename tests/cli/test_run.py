"""``helikon run``: the main job, and clear errors for bad sidecars."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "budget_assistant"


def _helikon(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("helikon", path=str(Path(sys.executable).parent))
    assert exe, "the helikon console script is not installed next to this Python"
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [exe, *args], capture_output=True, text=True, timeout=60, cwd=cwd, env=env
    )


def test_runs_the_budget_assistant_example() -> None:
    proc = _helikon(
        "run", "--agents", str(EXAMPLE / "agents.toml"), "How am I doing on my dining budget?"
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Let me check your dining spending and budget." in out
    assert '→ lookup_spending({"category": "Dining", "month": "2026-11"})' in out
    assert '← lookup_spending: {"total":312.4,"count":18}' in out
    assert '→ budget_status({"category": "Dining"})' in out
    assert '← budget_status: {"budget":250.0,"spent":312.4,"remaining":-62.4}' in out
    assert "so you're $62.40 over." in out
    assert "usage: 950 input, 119 output, 1069 total tokens" in proc.stderr


def test_the_python_example_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "main.py"], capture_output=True, text=True, timeout=60, cwd=EXAMPLE
    )
    assert proc.returncode == 0, proc.stderr
    assert "→ budget_status({'category': 'Dining'})" in proc.stdout
    assert "[usage: 1069 tokens]" in proc.stdout


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ("[agents.a]\nmodel = 3\n", "agents.a.model: missing or not a table"),
        ('[agents.a]\nmodel = { provider = "mock" }\n', "agents.a.model: mock model needs script"),
        (
            '[agents.a]\nmodel = { provider = "llama" }\n',
            "agents.a.model.provider: unknown provider",
        ),
        ("[agents.a]\nmodle = 1\n", "agents.a: unknown keys ['modle']"),
        ("[agents.a\n", "invalid TOML"),
        ("", "agents: no agents defined"),
        (
            '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\ntools = ["t"]\n',
            "agents.a.tools: unknown tool 't'",
        ),
        (
            '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\nhandoffs = ["b"]\n'
            '[agents.b]\nmodel = { provider = "mock", script = "s.json" }\nhandoffs = ["a"]\n',
            "handoff cycle detected",
        ),
        (
            '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\ntools = ["t"]\n'
            '[tools.t]\nscript = "t.rhai"\n',
            "tools.t.description: missing or empty",
        ),
        (
            '[agents.a]\nmodel = { provider = "mock", script = "missing.json" }\n',
            "agents.a.model.script: cannot read script file",
        ),
    ],
)
def test_bad_sidecar_is_one_clear_error(tmp_path: Path, toml: str, expected: str) -> None:
    (tmp_path / "s.json").write_text('{"default": [[{"token": "hi"}]]}')
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(toml)
    proc = _helikon("run", "--agents", str(sidecar), "hi")
    assert proc.returncode == 2
    err = " ".join(proc.stderr.split())
    assert str(sidecar) in err
    assert expected in err
    assert "Fix:" in err
    assert "Traceback" not in proc.stderr


def test_missing_openai_key_is_reported(tmp_path: Path) -> None:
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text('[agents.a]\nmodel = { provider = "openai", id = "gpt-5-mini" }\n')
    proc = _helikon("run", "--agents", str(sidecar), "hi")
    assert proc.returncode == 2
    assert "OPENAI_API_KEY" in proc.stderr


def test_model_override_and_agent_choice(tmp_path: Path) -> None:
    script = tmp_path / "other.json"
    script.write_text('{"default": [[{"token": "from override"}]]}')
    proc = _helikon(
        "run",
        str(EXAMPLE / "agents.toml"),
        "hi",
        "--agent",
        "budget_assistant",
        "--model",
        f"mock:{script}",
    )
    assert proc.returncode == 0, proc.stderr
    assert "from override" in proc.stdout
    bad = _helikon("run", "--agents", str(EXAMPLE / "agents.toml"), "hi", "--agent", "nobody")
    assert bad.returncode == 2
    assert "no agent 'nobody'" in bad.stderr


@pytest.mark.parametrize(
    ("module", "toml_tail", "expected"),
    [
        (
            "raise RuntimeError('boom at import')\n",
            "",
            "importing 'mod' failed: RuntimeError: boom",
        ),
        ("def f(:\n", "", "importing 'mod' failed: SyntaxError"),
        ("import nonexistent_pkg_zz\n", "", "it imports 'nonexistent_pkg_zz', which is missing"),
        ("class f:\n    pass\n", "", "mod:f is a type, not a function or a tool"),
    ],
)
def test_broken_tool_modules_are_one_clear_error(
    tmp_path: Path, module: str, toml_tail: str, expected: str
) -> None:
    (tmp_path / "s.json").write_text('{"default": [[{"token": "hi"}]]}')
    (tmp_path / "mod.py").write_text(module)
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\ntools = ["f"]\n'
        '[tools.f]\npython = "mod:f"\n' + toml_tail
    )
    proc = _helikon("run", "--agents", str(sidecar), "hi")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert expected in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1  # one error line, never wrapped


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (
            '{ provider = "mock", script = "s.json", temperature = 1 }',
            "agents.a.model: unknown keys ['temperature'] for provider 'mock'",
        ),
        (
            '{ provider = "openai", id = "gpt-5-mini", base_url = 42 }',
            "agents.a.model.base_url: not an http(s) URL: 42",
        ),
    ],
)
def test_model_table_is_checked(tmp_path: Path, model: str, expected: str) -> None:
    (tmp_path / "s.json").write_text('{"default": [[{"token": "hi"}]]}')
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(f"[agents.a]\nmodel = {model}\n")
    proc = _helikon("run", "--agents", str(sidecar), "hi")
    assert proc.returncode == 2
    assert expected in proc.stderr


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            "foo:bar",
            "--model 'foo:bar': expected PROVIDER:ID with PROVIDER one of mock, openai, "
            "openai-responses, anthropic, gemini, bedrock. Fix: e.g. --model openai:gpt-5-mini",
        ),
        ("mock:nope.json", "--model 'mock:nope.json': cannot read script file"),
        ("openai:gpt-5-mini", "--model 'openai:gpt-5-mini': OPENAI_API_KEY is not set"),
    ],
)
def test_model_override_errors_name_the_flag(value: str, expected: str) -> None:
    proc = _helikon("run", "--agents", str(EXAMPLE / "agents.toml"), "hi", "--model", value)
    assert proc.returncode == 2
    assert expected in proc.stderr
    assert "agents.toml" not in proc.stderr


def _write(tmp_path: Path, toml: str, module: str = "") -> Path:
    (tmp_path / "s.json").write_text('{"default": [[{"token": "hi"}]]}')
    if module:
        (tmp_path / "mod.py").write_text(module)
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text(toml)
    return sidecar


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


AGENT_WITH_F = '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\ntools = ["f"]\n'


def test_a_typo_in_a_tool_table_names_the_key(tmp_path: Path) -> None:
    sidecar = _write(tmp_path, AGENT_WITH_F + '[tools.f]\npyhton = "mod:f"\n')
    err = _one_error_line(_helikon("run", "--agents", str(sidecar), "hi"))
    assert f"{sidecar}: tools.f: unknown key 'pyhton'" in err
    assert "Fix: did you mean 'python'? use only ['description', 'inline', 'limits', " in err


def test_a_tool_without_python_gets_a_fix_for_its_own_name(tmp_path: Path) -> None:
    sidecar = _write(tmp_path, AGENT_WITH_F + "[tools.f]\n")
    err = _one_error_line(_helikon("run", "--agents", str(sidecar), "hi"))
    assert "tools.f: empty: a tool is a Python function or a Rhai script" in err
    assert 'Fix: python = "module:f", or description, params and script = "tools/f.rhai"' in err


def test_a_missing_function_suggests_the_closest_name(tmp_path: Path) -> None:
    module = "def budget_status(category: str) -> str:\n    return category\n"
    toml = (
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\ntools = ["budget_stat"]\n'
        '[tools.budget_stat]\npython = "mod:budget_stat"\n'
    )
    err = _one_error_line(_helikon("run", "--agents", str(_write(tmp_path, toml, module)), "hi"))
    assert "mod has no 'budget_stat'. Fix: did you mean 'budget_status'?" in err
    far = _write(tmp_path, AGENT_WITH_F + '[tools.f]\npython = "mod:f"\n', module)
    err = _one_error_line(_helikon("run", "--agents", str(far), "hi"))
    assert "mod has no 'f'. Fix: use one of ['budget_status']" in err


def test_a_missing_script_names_the_resolved_path(tmp_path: Path) -> None:
    sidecar = _write(tmp_path, '[agents.a]\nmodel = { provider = "mock", script = "nope.json" }\n')
    err = _one_error_line(_helikon("run", "--agents", str(sidecar), "hi", cwd=tmp_path.parent))
    assert f"Fix: create {(tmp_path / 'nope.json').resolve()} or point script at" in err
    proc = _helikon(
        "run", "--agents", str(sidecar), "hi", "--model", "mock:nope.json", cwd=tmp_path
    )
    assert f"Fix: create {(tmp_path / 'nope.json').resolve()} or pass the path" in proc.stderr


def test_a_missing_openai_extra_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from helikon.cli.sidecar import SidecarError, load_sidecar

    monkeypatch.setitem(sys.modules, "helikon.providers.openai", None)  # import fails
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    sidecar = _write(tmp_path, '[agents.a]\nmodel = { provider = "openai", id = "gpt-5-mini" }\n')
    with pytest.raises(SidecarError) as exc:
        load_sidecar(sidecar).build("a")
    assert "the openai provider is not installed" in str(exc.value)
    assert str(exc.value).endswith("Fix: pip install 'helikon[cli,openai]'")
    with pytest.raises(SidecarError) as exc:
        load_sidecar(sidecar).build("a", model_override="openai:gpt-5-mini")
    assert str(exc.value).endswith("Fix: pip install 'helikon[cli,openai]'")


def test_a_missing_extra_is_reported_before_a_missing_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from helikon.cli.sidecar import SidecarError, load_sidecar

    monkeypatch.setitem(sys.modules, "helikon.providers.anthropic", None)  # import fails
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    sidecar = _write(tmp_path, '[agents.a]\nmodel = { provider = "anthropic", id = "claude" }\n')
    with pytest.raises(SidecarError) as exc:
        load_sidecar(sidecar).build("a")
    assert "the anthropic provider is not installed" in str(exc.value)
    assert "ANTHROPIC_API_KEY" not in str(exc.value)
    assert str(exc.value).endswith("Fix: pip install 'helikon[cli,anthropic]'")


def test_a_repair_before_a_model_call_is_reported(tmp_path: Path) -> None:
    script = tmp_path / "cut.json"
    cut = {"call_id": "c1", "name": "budget_status", "args": '{"category": "Din'}
    script.write_text(
        json.dumps({"default": [[{"tool_call": cut}], [{"token": "Could not look it up."}]]})
    )
    proc = _helikon(
        "run", "--agents", str(EXAMPLE / "agents.toml"), "hi", "--model", f"mock:{script}"
    )
    assert proc.returncode == 0, proc.stderr
    assert "Could not look it up." in proc.stdout
    assert (
        "! conversation repaired (tool_args_replaced): arguments were not valid JSON "
        """(truncated?): '{"category": "Din'"""
    ) in proc.stderr


def test_a_bad_step_in_an_existing_script_asks_to_correct_it(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"default": [[{"tokn": "hi"}]]}')
    sidecar = tmp_path / "agents.toml"
    sidecar.write_text('[agents.a]\nmodel = { provider = "mock", script = "bad.json" }\n')
    proc = _helikon("run", "--agents", str(sidecar), "hi")
    assert proc.returncode == 2
    assert "default[0][0]: unknown script step 'tokn'" in proc.stderr
    assert "Fix: correct the script file (its format: docs/guides/testing.md#script-files)" in (
        proc.stderr
    )
    assert "create" not in proc.stderr
