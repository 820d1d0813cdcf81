"""helikon.redaction: the shared case file, the Python surface and the native boundary."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from helikon import _native
from helikon.errors import ConfigError
from helikon.redaction import DEFAULT_MASK, Finding, Redactor, redact

CASES_PATH = Path(__file__).resolve().parent / "data" / "redaction_cases.json"
CASES: list[dict[str, Any]] = json.loads(CASES_PATH.read_text(encoding="utf-8"))["cases"]
GH = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _build(case: dict[str, Any]) -> Redactor:
    return Redactor(case["extra_secrets"], env=case["env"], mask=case.get("mask", DEFAULT_MASK))


def test_case_file_has_at_least_forty_cases() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    r = _build(case)
    out = r.redact(case["input"])
    assert out == case["expected"]
    assert r.redact(out) == out
    found = r.findings(case["input"])
    if "kinds" in case:
        assert [f.kind for f in found] == case["kinds"]
    # findings are str indices: splicing the mask over them reproduces redact()
    text, pieces, at = case["input"], [], 0
    for f in found:
        pieces += [text[at : f.start], r.mask]
        at = f.end
    assert "".join([*pieces, text[at:]]) == out


def test_br21_exception_text_and_echo_output() -> None:
    r = Redactor(env={"GH_TOKEN": GH})
    err = RuntimeError(f"POST /repos failed; headers={{'Authorization': 'token {GH}'}}")
    out = r.redact(str(err))
    assert GH not in out
    assert out.startswith("POST /repos failed")
    assert r.redact(f"{GH}\n") == "***\n"


def test_env_none_reads_os_environ_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELIKON_TEST_SERVICE_TOKEN", "tok-live-998877")
    monkeypatch.setenv("HELIKON_TEST_HOME_DIR", "/home/someuser-dir")
    r = Redactor()
    monkeypatch.delenv("HELIKON_TEST_SERVICE_TOKEN")
    assert r.redact("t=tok-live-998877 h=/home/someuser-dir") == "t=*** h=/home/someuser-dir"
    assert Redactor(env={}).redact("t=tok-live-998877") == "t=tok-live-998877"


def test_module_function_uses_environment_and_extras(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELIKON_TEST_DB_PASSWORD", "pw-from-env-123")
    assert redact("a pw-from-env-123 b extra-secret-1") == "a *** b extra-secret-1"
    assert redact("a pw-from-env-123 b extra-secret-1", ["extra-secret-1"]) == "a *** b ***"


def test_findings_use_str_indices() -> None:
    text = "🔑é secretvalue99 ключ"
    (f,) = Redactor(["secretvalue99"], env={}).findings(text)
    assert f == Finding("known_value", 3, 16)
    assert text[f.start : f.end] == "secretvalue99"


def test_lone_surrogates_are_handled_without_loss() -> None:
    raw = b"A_TOKEN=abc \xff tail hunter2hunter2".decode("utf-8", "surrogateescape")
    r = Redactor(["hunter2hunter2"], env={})
    # An unquoted value ends with its word; the lone surrogate after it survives as it was.
    assert r.redact(raw) == "A_TOKEN=*** \udcff tail ***"
    text = "x\udcffy hunter2hunter2 z"
    assert r.redact(text) == "x\udcffy *** z"
    assert [(f.start, f.end) for f in r.findings(text)] == [(4, 18)]


def test_redact_value_walks_json() -> None:
    r = Redactor(env={})
    value = {
        "headers": {"Authorization": "Bearer abc", "Accept": "*/*"},
        "lines": ["A_TOKEN=x", "ok"],
        "n": 3,
        "none": None,
    }
    assert r.redact_value(value) == {
        "headers": {"Authorization": "Bearer ***", "Accept": "*/*"},
        "lines": ["A_TOKEN=***", "ok"],
        "n": 3,
        "none": None,
    }
    with pytest.raises(ValueError, match="JSON"):
        r.redact_value({"x": float("nan")})


def test_custom_mask_and_properties() -> None:
    r = Redactor(["hunter2hunter2", "short", "12345678"], env={}, mask="[REDACTED]")
    assert r.mask == "[REDACTED]"
    assert r.known_secret_count == 1
    assert r.redact("p hunter2hunter2") == "p [REDACTED]"
    assert "hunter2" not in repr(r)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"extra_secrets": "hunter2hunter2"}, "not a single string"),
        ({"extra_secrets": ["ok-secret-1", 5]}, r"extra_secrets\[1\]"),
        ({"env": {"A_TOKEN": 5}}, "env"),
        ({"mask": "hunter2hunter2" * 40}, "256"),
    ],
)
def test_config_errors_never_echo_secrets(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match) as info:
        Redactor(**{"env": {}, **kwargs})
    assert "hunter2" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_native_boundary_rejects_bad_json_without_echo() -> None:
    with pytest.raises(ConfigError) as info:
        _native.Redactor('"hunter2hunter2"', "{}", "***")
    assert "hunter2" not in str(info.value)
    with pytest.raises(ConfigError, match="extra_secrets_json"):
        _native.Redactor("[", "{}", "***")
    with pytest.raises(ConfigError, match="env"):
        _native.Redactor("[]", '{"A_TOKEN": 1}', "***")
    env_json = json.dumps({"GH_TOKEN": GH, "HOME": "/root"})
    native = _native.Redactor('["hunter2hunter2"]', env_json, "#")
    assert native.known_secret_count == 2
    assert native.redact("hunter2hunter2 /root") == "# /root"
    assert json.loads(native.findings(GH)) == [{"kind": "known_value", "start": 0, "end": 40}]
    with pytest.raises(ConfigError, match="json_text"):
        native.redact_json("{")


@pytest.mark.parametrize("repeat", [1, 2_000], ids=["short", "long-gil-released"])
def test_clean_text_comes_back_as_the_same_object(repeat: int) -> None:
    r = Redactor(["hunter2hunter2"], env={})
    clean = "".join(f"line {i}: nothing to see, sha {i:040x}\n" for i in range(repeat))
    assert r.redact(clean) is clean
    dirty = clean + "DB_PASSWORD=x\n"
    out = r.redact(dirty)
    assert out is not dirty
    assert out == clean + "DB_PASSWORD=***\n"
    assert [(f.kind, f.start) for f in r.findings(dirty)] == [
        ("secret_key_value", len(clean) + len("DB_PASSWORD="))
    ]


def test_scans_run_in_parallel_threads() -> None:
    r = Redactor(["hunter2hunter2"], env={})
    text = ("log line FOO=1 DB_PASSWORD=x hunter2hunter2 " + GH + "\n") * 5_000
    expected = r.redact(text)
    results: list[str] = []

    def work() -> None:
        results.append(r.redact(text))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4
    assert "hunter2" not in expected and GH not in expected
