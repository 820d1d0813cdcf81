"""C1: text UTF-8 cannot encode (lone surrogates) never ends a run with an internal error.

The attack (``/work/attack-findings.md`` C1) ended runs with ``RunError: internal error`` from
a lone surrogate in a tool's arguments, a tool's output and the model's text, and from a
workspace file whose name has a non-UTF-8 byte (``os.listdir`` decodes it with
``surrogateescape``). Each path now reaches the native core as U+FFFD and the run goes on.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import pytest

from helikon import Agent, DenyRule, RunContext, tool
from helikon.core._unicode import has_surrogates, scrub, scrub_text
from helikon.core.items import ToolResult
from helikon.permissions import explain
from helikon.testing import Call, MockModel, Text
from helikon.tools import BashTool, HostBackend, ReadTool, Sandbox

LONE = ["a\ud800b", "\udcff", "x\udfff", "end\ud83d", "\ude00start", "bad\udcffname.txt"]


@tool
def say(text: str) -> str:
    """Echo the text back."""
    return f"said {text}"


@tool
def emit() -> str:
    """Return text with a lone surrogate."""
    return "out\ud800put"


def _results(items: list[object]) -> list[ToolResult]:
    return [i for i in items if isinstance(i, ToolResult)]


@pytest.mark.parametrize("text", LONE)
def test_tool_arguments(text: str) -> None:
    model = MockModel([[Call("c1", "say", {"text": text})], [Text("ok")]])
    r = Agent(name="a", model=model, tools=[say]).run_sync("go")
    assert r.final_text == "ok"
    (res,) = _results(r.new_items)
    assert not res.is_error
    assert res.content[0].text == f"said {scrub_text(text)}"  # type: ignore[union-attr]
    assert "\ufffd" in res.content[0].text  # type: ignore[union-attr]


def test_tool_output() -> None:
    model = MockModel([[Call("c1", "emit", {})], [Text("ok")]])
    r = Agent(name="a", model=model, tools=[emit]).run_sync("go")
    assert r.final_text == "ok"
    (res,) = _results(r.new_items)
    assert res.content[0].text == "out\ufffdput"  # type: ignore[union-attr]


@pytest.mark.parametrize("text", LONE)
def test_model_text(text: str) -> None:
    r = Agent(name="a", model=MockModel([[Text(f"answer {text}")]])).run_sync("go")
    assert r.final_text == f"answer {scrub_text(text)}"
    assert r.final_text is not None and not has_surrogates(r.final_text)


def test_bash_command_with_a_surrogate_is_a_result_not_a_crash() -> None:
    with tempfile.TemporaryDirectory() as d:
        bash = BashTool(HostBackend(Sandbox.open(d)), deny_commands=["touch"])
        model = MockModel(
            [[Call("c1", "Bash", {"command": "echo \ud800; touch PWNED"})], [Text("ok")]]
        )
        ctx = RunContext.ephemeral().with_deny_rules([DenyRule.bash_command("touch")])
        r = Agent(name="a", model=model, tools=[bash]).run_sync("go", ctx=ctx)
        assert r.final_text == "ok"
        (res,) = _results(r.new_items)
        assert res.is_error
        assert "DenyRule.bash_command('touch')" in res.content[0].text  # type: ignore[union-attr]
        assert not os.path.exists(os.path.join(d, "PWNED"))
    e = asyncio.run(explain(RunContext.ephemeral(), "Bash", {"command": "rm -rf / x\udcff; echo"}))
    assert e.decision == "ask"


def test_non_utf8_file_name_listed_by_bash_and_read() -> None:
    with tempfile.TemporaryDirectory() as d:
        (Path(os.fsencode(d).decode()) / "ok.txt").write_text("fine\n")
        with open(os.path.join(os.fsencode(d), b"bad\xffname.txt"), "wb") as f:
            f.write(b"payload\n")
        listed = os.listdir(d)
        assert "bad\udcffname.txt" in listed  # surrogateescape, as os.listdir returns it
        sb = Sandbox.open(d)
        model = MockModel(
            [
                [Call("c1", "Bash", {"command": "ls"})],
                [Call("c2", "Read", {"path": "bad\udcffname.txt"})],
                [Call("c3", "Read", {"path": "ok.txt"})],
                [Text("done")],
            ]
        )
        agent = Agent(name="a", model=model, tools=[BashTool(HostBackend(sb)), ReadTool(sb)])
        r = agent.run_sync("go")
        assert r.final_text == "done"
        ls, bad, ok = _results(r.new_items)
        assert "bad\ufffdname.txt" in ls.content[0].text  # type: ignore[union-attr]
        assert bad.is_error  # the name the model can send is not the file's name
        assert not has_surrogates(bad.content[0].text)  # type: ignore[union-attr]
        assert "fine" in ok.content[0].text  # type: ignore[union-attr]


def test_scrub_keeps_everything_else() -> None:
    assert scrub_text("plain é 😀") == "plain é 😀"
    assert scrub_text("\ud83d\ude00") == "😀"  # a pair written as two code points
    value = {"k": ["a", ("b", 1)], "n": None}
    assert scrub(value) is value
    dirty = {"k\ud800": ["a\udc00", ("b", 1)]}
    assert scrub(dirty) == {"k\ufffd": ["a\ufffd", ("b", 1)]}
