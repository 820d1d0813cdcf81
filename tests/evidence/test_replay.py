"""Replay: a recorded run served back from its log (no model, no tool), compared event by
event with the current code's; fork: a new session continuing from any event.

Every run is recorded for real (scripted model, real tools, real permission pipeline) into a
session; the replays use tools that fail the test if they run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helikon import Agent, RunContext, tool
from helikon.cli.main import app
from helikon.core.permissions import DenyRule
from helikon.errors import ConfigError
from helikon.evidence import fork, load_fixture, replay, replay_fixture, runs_of, write_fixture
from helikon.runtimes import Runner
from helikon.sessions import MemorySession, SessionForked
from helikon.testing import Call, MockModel, Text

RAN: list[str] = []


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    RAN.append(city)
    return f"{city}: 21 C"


@tool
def forecast(city: str, days: int) -> str:
    """A forecast."""
    RAN.append(f"forecast {city}")
    if days > 3:
        raise ValueError("at most 3 days")
    return f"{city}: sun"


def _agent(model: Any = None, tools: list[Any] | None = None) -> Agent:
    return Agent(
        name="wx",
        model=model if model is not None else MockModel([]),
        tools=tools if tools is not None else [weather, forecast],
    )


SCRIPT = [
    [Text("Looking."), Call("c1", "weather", {"city": "Oslo"})],
    [Call("c2", "forecast", {"city": "Oslo", "days": 5}), Call("c3", "weather", {"city": "Rome"})],
    [Text("Oslo 21 C, Rome 21 C.")],
]


async def _recorded() -> MemorySession:
    session = MemorySession()
    await Runner().run(_agent(MockModel([[Text("Hi.")]])), "hello", session=session)
    await Runner().run(_agent(MockModel(SCRIPT)), "weather?", session=session)
    RAN.clear()
    return session


async def test_the_session_holds_two_runs() -> None:
    session = await _recorded()
    events = await session.events()
    assert [(r.run_id, r.end, r.resumed) for r in runs_of(events)] == [
        (0, 2, False),
        (2, len(events), False),
    ]


async def test_a_replay_of_unchanged_code_is_identical_and_runs_nothing() -> None:
    session = await _recorded()
    report = await replay(session, 2, _agent())
    assert report.ok, str(report.divergence)
    assert report.steps == len(await session.events()) - 2
    assert [e.type for e in report.events][:4] == [
        "user_message",
        "assistant_message",
        "tool_called",
        "permission_decided",
    ]
    assert RAN == []  # no tool ran: results came from the log
    report.check()


async def test_a_new_deny_rule_diverges_at_the_first_decision_it_changes() -> None:
    session = await _recorded()
    ctx = RunContext.ephemeral().with_deny_rules([DenyRule.tool("forecast")])
    report = await replay(session, 2, _agent(), ctx=ctx)
    d = report.divergence
    assert d is not None
    assert (d.step, d.sequence) == (7, 9)
    assert d.expected == {
        "type": "permission_decided",
        "call_id": "c2",
        "tool": "forecast",
        "decision": "allow",
        "stage": "default",
        "reason": "no policy installed",
        "decided_by": "policy",
    }
    assert d.got is not None and (d.got["decision"], d.got["stage"]) == ("deny", "deny_rule")
    assert str(d).splitlines()[0] == "replay diverged at step 7 of the run (event 9):"
    assert str(d).splitlines()[-1] == "  differs in: decision, reason, rule, stage"
    with pytest.raises(AssertionError, match="replay diverged at step 7"):
        report.check()
    assert RAN == []


async def test_code_that_lost_a_tool_diverges_where_the_call_is_decided() -> None:
    session = await _recorded()
    report = await replay(session, 2, _agent(tools=[weather]))
    d = report.divergence
    assert d is not None and d.sequence == 9
    assert d.expected is not None and (d.expected["type"], d.expected["call_id"]) == (
        "permission_decided",
        "c2",
    )
    # an unknown tool is refused before the pipeline: c3's decision comes first
    assert d.got is not None and (d.got["type"], d.got["call_id"]) == ("permission_decided", "c3")


async def test_a_run_needing_more_model_turns_than_recorded_reports_the_shortfall() -> None:
    session = MemorySession()
    await Runner().run(_agent(MockModel([[Text("Hi.")]])), "hello", session=session)
    events = await session.events()
    # drop the recorded answer: the replay asks the model for a turn the log does not have
    report = await replay_fixture_of(events[:1], _agent())
    assert report.divergence is not None
    assert (report.divergence.step, report.divergence.expected) == (1, None)
    assert report.divergence.got == {
        "type": "model_turn",
        "detail": "the code asked the model for more turns than the 0 recorded",
    }
    assert report.error is not None and "script exhausted" in report.error


async def replay_fixture_of(run: list[Any], agent: Agent) -> Any:
    from helikon.evidence import replay_events

    return await replay_events([], run, agent)


async def test_a_fixture_replays_the_same_way(tmp_path: Path) -> None:
    session = await _recorded()
    events = await session.events()
    path = tmp_path / "regressions" / "wx.json"
    write_fixture(path, events[:2], events[2:], session_id="s1", run_id=2)
    doc = json.loads(path.read_text())
    assert (doc["format"], doc["session_id"], doc["run_id"]) == ("helikon-replay/1", "s1", 2)
    history, run, run_id = load_fixture(path)
    assert (len(history), len(run), run_id) == (2, len(events) - 2, 2)
    (await replay_fixture(path, _agent())).check()
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}')
    with pytest.raises(ConfigError, match="not a helikon-replay/1 fixture"):
        load_fixture(bad)


async def test_an_unknown_run_names_the_runs_there() -> None:
    session = await _recorded()
    with pytest.raises(
        ConfigError, match=r"no run starts at event 3 of this session; runs start at: 0, 2"
    ):
        await replay(session, 3, _agent())


async def test_fork_continues_from_an_event_with_a_new_model_and_leaves_the_parent() -> None:
    parent = await _recorded()
    before = await parent.events()
    child = MemorySession()
    forked = await fork(parent, 2, at=6, target=child)  # after c1's result
    assert (forked.at, forked.copied) == (6, 7)
    copied = await child.events()
    assert [e.type for e in copied[:7]] == [e.type for e in before[:7]]
    assert isinstance(copied[7], SessionForked) and copied[7].at == 6
    model = MockModel([[Text("Only Oslo then: 21 C.")]])
    result = await Runner().run(_agent(model), "just Oslo", session=child)
    assert result.final_output == "Only Oslo then: 21 C."
    sent = [m.type for m in model.requests[0].messages]
    assert sent[-4:] == ["assistant_message", "tool_call", "tool_result", "user_message"]
    assert await parent.events() == before  # untouched
    # the fork's own run is a run of its log, and replays
    runs = runs_of(await child.events())
    assert [(r.run_id, r.end) for r in runs] == [(0, 2), (2, 7), (8, len(await child.events()))]
    (await replay(child, 8, _agent())).check()
    with pytest.raises(ConfigError, match=r"fork\(at=1\) is not in run 2, whose events are 2\.\."):
        await fork(parent, 2, at=1, target=MemorySession())
    with pytest.raises(ConfigError, match="must be an empty session"):
        await fork(parent, at=1, target=child)


def test_the_cli_lists_runs_writes_a_fixture_and_replays(tmp_path: Path) -> None:
    import asyncio

    from helikon.sessions.sqlite import SqliteSession

    db = tmp_path / "runs.db"
    session = SqliteSession("s1", db)
    asyncio.run(Runner().run(_agent(MockModel([[Text("Hi.")]])), "hello", session=session))
    asyncio.run(Runner().run(_agent(MockModel(SCRIPT)), "weather?", session=session))
    url = f"sqlite://{db}#s1"
    listed = CliRunner().invoke(app, ["replay", url])
    assert listed.exit_code == 0, listed.output
    n = len(asyncio.run(session.events()))
    assert listed.output.splitlines() == [
        "RUN  EVENTS  INPUT",
        "0    2       hello",
        f"2    {n - 2:<7} weather?",
    ]
    out = tmp_path / "fx.json"
    wrote = CliRunner().invoke(app, ["replay", url, "2", "--out", str(out)])
    assert wrote.exit_code == 0, wrote.output
    assert wrote.output.strip() == f"wrote run 2 ({n - 2} events) of s1 to {out}"
    RAN.clear()
    asyncio.run(replay_fixture(out, _agent())).check()
    assert RAN == []
    missing = CliRunner().invoke(app, ["replay", url, "5", "--out", str(out)])
    assert missing.exit_code == 2
    assert "no run starts at event 5" in missing.output


WEATHER_TOOLS = '''
from helikon import tool


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    raise AssertionError("a replay must not run the tool")
'''


def test_the_cli_replays_with_a_sidecar_agent_and_reports_a_divergence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from helikon.sessions.sqlite import SqliteSession

    db = tmp_path / "runs.db"
    session = SqliteSession("s1", db)
    script = [[Call("c1", "weather", {"city": "Oslo"})], [Text("Oslo: 21 C.")]]
    asyncio.run(Runner().run(_agent(MockModel(script), [weather]), "weather?", session=session))
    # a module name no other test imports: the sidecar imports it by name, and a `tools`
    # module another test loaded earlier in the process would be found first
    (tmp_path / "replay_weather_tools.py").write_text(WEATHER_TOOLS, encoding="utf-8")
    (tmp_path / "script.json").write_text("[]", encoding="utf-8")
    agent = (
        '[tools.weather]\npython = "replay_weather_tools:weather"\n[agents.wx]\n'
        'model = { provider = "mock", script = "script.json" }\ntools = ["weather"]\n'
    )
    (tmp_path / "agents.toml").write_text(agent, encoding="utf-8")
    (tmp_path / "strict.toml").write_text(
        agent + '[permissions]\ndeny = ["tool:weather"]\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    url = f"sqlite://{db}#s1"
    same = CliRunner().invoke(app, ["replay", url, "0", "--agents", "agents.toml"])
    assert same.exit_code == 0, same.output
    assert same.output.strip() == "replayed run 0: 5 events, identical"
    strict = CliRunner().invoke(app, ["replay", url, "0", "--agents", "strict.toml"])
    assert strict.exit_code == 1, strict.output
    lines = strict.output.splitlines()
    assert lines[0] == "replay diverged at step 2 of the run (event 2):"
    assert lines[-1] == "  differs in: decision, reason, rule, stage"
