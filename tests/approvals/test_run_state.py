"""RunState's JSON form, its version check and the decisions a resume takes."""

from __future__ import annotations

import json

import pytest

from helikon.core.decisions import Approve, Deny, Edit, check_decisions, decision_input
from helikon.core.items import ToolCall, UserMessage
from helikon.core.run_state import PendingCall, RunState, config_fingerprint
from helikon.core.usage import Usage
from helikon.errors import ResumeRefused, RunStateError


def _state(**kw: object) -> RunState:
    base: dict[str, object] = {
        "agent": "root",
        "agent_path": ["root", "billing"],
        "config_fingerprint": config_fingerprint("billing", '{"max_turns": 4}'),
        "loop_state": {"state": "NeedsApproval", "turn": 1, "pending": []},
        "session_id": "s-1",
        "session_position": 7,
        "conversation": [UserMessage.text("refund me"), ToolCall(call_id="c1", name="refund")],
        "usage": Usage(input_tokens=3, output_tokens=4, total_tokens=7),
        "pending": [
            PendingCall(call_id="c1", tool="refund", args={"amount": 5}, reason="policy asks"),
            PendingCall(call_id="c2", tool="email", args={"to": "x"}, reason="guard ask"),
        ],
    }
    base.update(kw)
    return RunState.model_validate(base)


def test_round_trips_through_json_with_every_field() -> None:
    s = _state(remembered={"email": "approve"})
    text = s.to_json()
    raw = json.loads(text)
    assert raw["schema_version"] == 1
    assert raw["pending"][0] == {
        "call_id": "c1",
        "tool": "refund",
        "args": {"amount": 5},
        "reason": "policy asks",
        "agent": "",
    }
    assert raw["session_position"] == 7
    assert raw["usage"]["total_tokens"] == 7
    back = RunState.from_json(text)
    assert back == s
    assert back.asking_agent == "billing"
    assert RunState.from_json(text.encode()) == s


@pytest.mark.parametrize(
    ("version", "message"),
    [
        (0, "RunState schema_version 0 is older than the version this helikon reads (1)"),
        (2, "RunState schema_version 2 is newer than the version this helikon reads (1)"),
        (None, "RunState: schema_version must be an integer (this helikon reads 1), got None"),
        ("1", "RunState: schema_version must be an integer (this helikon reads 1), got '1'"),
        (True, "RunState: schema_version must be an integer (this helikon reads 1), got True"),
    ],
)
def test_an_unknown_schema_version_fails_naming_it(version: object, message: str) -> None:
    raw = json.loads(_state().to_json())
    raw["schema_version"] = version
    with pytest.raises(RunStateError) as err:
        RunState.from_json(json.dumps(raw))
    assert str(err.value).startswith(message)


def test_a_missing_version_and_bad_fields_are_named() -> None:
    raw = json.loads(_state().to_json())
    del raw["schema_version"]
    with pytest.raises(RunStateError, match="schema_version must be an integer"):
        RunState.from_json(json.dumps(raw))
    raw["schema_version"] = 1
    raw["pending"][1]["tool"] = 5
    with pytest.raises(RunStateError, match=r"^RunState: field pending\.1\.tool: "):
        RunState.from_json(json.dumps(raw))
    raw["pending"][1]["tool"] = "email"
    raw["surprise"] = 1
    with pytest.raises(RunStateError, match=r"field surprise: Extra inputs"):
        RunState.from_json(json.dumps(raw))
    with pytest.raises(RunStateError, match="not JSON"):
        RunState.from_json("{nope")
    with pytest.raises(RunStateError, match="expected a JSON object, got list"):
        RunState.from_json("[]")


def test_fingerprint_changes_with_the_agent_or_its_config() -> None:
    a = config_fingerprint("a", '{"tools": []}')
    assert a == config_fingerprint("a", '{"tools": []}')
    assert a != config_fingerprint("b", '{"tools": []}')
    assert a != config_fingerprint("a", '{"tools": [{"name": "x"}]}')
    assert len(a) == 16


def test_decisions_must_answer_exactly_the_waiting_calls() -> None:
    pending = _state().pending
    ok = check_decisions(pending, {"c2": Deny("no"), "c1": Approve()})
    assert list(ok) == ["c1", "c2"]  # in the order the calls wait
    with pytest.raises(ResumeRefused, match="no decision for waiting call"):
        check_decisions(pending, {"c1": Approve()})
    with pytest.raises(ResumeRefused, match="do not wait for approval: c9; waiting: c1, c2"):
        check_decisions(pending, {"c1": Approve(), "c2": Approve(), "c9": Approve()})
    with pytest.raises(ResumeRefused, match="must be Approve"):
        check_decisions(pending, {"c1": Approve(), "c2": True})  # type: ignore[dict-item]
    with pytest.raises(ResumeRefused, match="decisions must map call ids"):
        check_decisions(pending, [("c1", Approve())])  # type: ignore[arg-type]


def test_decision_values_check_their_fields() -> None:
    for blank in ("", "   "):
        with pytest.raises(ResumeRefused, match="non-empty reason"):
            Deny(blank)
    with pytest.raises(ResumeRefused, match="as a dict, got list"):
        Edit([1])  # type: ignore[arg-type]
    assert decision_input("c1", Approve(remember=True)) == {"call_id": "c1", "decision": "approve"}
    assert decision_input("c1", Edit({"a": 1})) == {
        "call_id": "c1",
        "decision": "edit",
        "args": {"a": 1},
    }
