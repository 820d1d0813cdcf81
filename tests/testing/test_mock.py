"""MockModel and the script-file format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helikon import CancellationToken, ConfigError, ModelRequest, TokenDelta, UserMessage
from helikon.errors import ModelOther, RateLimited
from helikon.testing import Call, Fail, MockModel, ScriptFile, Text


def _req() -> ModelRequest:
    return ModelRequest(messages=[UserMessage.text("hi")])


async def test_plays_scripts_in_order_and_records_requests() -> None:
    m = MockModel([[Text("a")], [Call("c1", "f", {"x": "é"})]])
    first = [e async for e in m.invoke(_req(), CancellationToken())]
    assert [e.type for e in first] == ["token_delta", "finish"]
    assert first[-1].reason.value == "stop"
    second = [e async for e in m.invoke(_req(), CancellationToken())]
    assert second[0].args_delta == '{"x": "é"}'
    assert second[-1].reason.value == "tool_calls"
    assert len(m.requests) == 2
    m.assert_exhausted()
    with pytest.raises(ModelOther, match="script exhausted: call 3 has no script"):
        [e async for e in m.invoke(_req(), CancellationToken())]


async def test_scripted_errors_and_cancellation() -> None:
    m = MockModel([[Fail("RateLimited", "slow", 1.5)]])
    with pytest.raises(RateLimited) as exc:
        [e async for e in m.invoke(_req(), CancellationToken())]
    assert exc.value.retry_after == 1.5
    tok = CancellationToken()
    m = MockModel([[Text("a"), Text("b")]])
    got = []
    async for e in m.invoke(_req(), tok):
        got.append(e)
        tok.cancel()
    assert got == [TokenDelta(text="a")]
    with pytest.raises(AssertionError, match="1 unused script"):
        MockModel([[Text("left over")]]).assert_exhausted()


def test_script_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {
                "default": [[{"token": "hi"}, {"usage": [5, 2, 0, 0]}, {"finish": "stop"}]],
                "cases": {"c1": [[{"tool_call": {"call_id": "1", "name": "f", "args": {}}}]]},
            }
        )
    )
    sf = ScriptFile.load(path)
    assert len(sf.scripts_for()) == 1
    assert sf.scripts_for("c1")[0][0] == Call("1", "f", {})
    assert sf.scripts_for("missing") == sf.default
    assert MockModel.from_script_file(path, case="c1").remaining == 1


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ('{"default": [[{"tokn": "x"}]]}', "default[0][0]: unknown script step 'tokn'"),
        ('{"default": [[{"finish": "done"}]]}', "finish must be one of"),
        ('{"default": [[{"tool_call": {"name": "f"}}]]}', "malformed 'tool_call' step"),
        ('{"defaults": []}', "unknown keys ['defaults']"),
        ("[[{]]", "invalid JSON"),
    ],
)
def test_bad_script_files_name_the_problem(doc: str, message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        ScriptFile.loads(doc, source="s.json")
    assert message in str(exc.value)
    assert str(exc.value).startswith("s.json")
