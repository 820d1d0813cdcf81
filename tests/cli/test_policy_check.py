"""``helikon policy check`` and :func:`helikon.audit.dry_run` on runs recorded into SQLite.

Two real runs of the scripted model, with a Bash tool and a Write tool under one policy
(``deny = ["bash:curl"]``), are recorded into one SQLite file; a stricter and a looser
candidate then give exactly the expected rows and exit codes, as text and as JSON.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

pytest.importorskip("aiosqlite")

from helikon import Agent
from helikon.audit import Change, dry_run, recorded_calls
from helikon.cli.main import app
from helikon.cli.policy_cmd import load_policy
from helikon.errors import ConfigError
from helikon.runtimes import Runner
from helikon.sessions import Session, tool_called, tool_returned
from helikon.sessions.sqlite import SqliteSession
from helikon.testing import Call, MockModel, Text
from helikon.tools import BashTool, HostBackend, Sandbox, WriteTool
from tests.conftest import require_service
from tests.sessions import backends

RECORDED = """
[permissions]
mode = "default"
deny = ["bash:curl"]
"""

STRICTER = """
[permissions]
deny = ["bash:curl", "bash:echo", "edit:secrets/**"]
guards = [{ name = "look-first", program = "ls", action = "ask", reason = "listing needs a look" }]
"""

LOOSER = """
[permissions]
mode = "default"
"""

SCRIPTS = {
    "alpha": [
        [Call("a1", "Bash", {"command": "echo hi"})],
        [Call("a2", "Bash", {"command": "curl http://example.invalid/x"})],
        [Call("a3", "Write", {"path": "notes/a.txt", "content": "note"})],
        [Text("done")],
    ],
    "beta": [
        [Call("b1", "Bash", {"command": "ls"})],
        [Call("b2", "Write", {"path": "secrets/key.txt", "content": "k"})],
        [Text("done")],
    ],
}


async def _record(tmp_path: Path, open_session: Callable[[str], Session]) -> None:
    """Run the two scripts (sessions ``alpha`` and ``beta``) under RECORDED, recording them."""
    root = tmp_path / "ws"
    root.mkdir()
    policy = tmp_path / "recorded.toml"
    policy.write_text(RECORDED)
    settings = load_policy(policy)
    for sid, script in SCRIPTS.items():
        sandbox = Sandbox.open(root)
        agent = Agent(
            name="worker",
            model=MockModel(script),
            tools=[BashTool(HostBackend(sandbox, timeout=20)), WriteTool(sandbox)],
        )
        result = await Runner().run(agent, "go", session=open_session(sid), ctx=settings.context())
        assert result.final_output == "done"
    assert (root / "notes" / "a.txt").read_text() == "note"  # the runs really ran
    assert (root / "secrets" / "key.txt").read_text() == "k"


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A SQLite file holding the two recorded runs."""
    db = tmp_path / "runs.db"
    asyncio.run(_record(tmp_path, lambda sid: SqliteSession(sid, db)))
    return db


def _policy(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _check(*args: str) -> Any:
    return CliRunner().invoke(app, ["policy", "check", *args])


def test_the_recording_holds_each_call_and_its_outcome(recorded: Path) -> None:
    events = asyncio.run(SqliteSession("alpha", recorded).events())
    calls = [(c.call_id, c.tool, c.outcome) for c in recorded_calls(events)]
    assert calls == [
        ("a1", "Bash", "allowed"),
        ("a2", "Bash", "denied"),
        ("a3", "Write", "allowed"),
    ]
    denied = recorded_calls(events)[1]
    # read from the log's permission_decided event, not inferred from the result text
    assert (
        denied.decided_by,
        denied.recorded_stage,
        denied.recorded_rule,
        denied.recorded_reason,
    ) == (
        "policy",
        "deny_rule",
        "DenyRule.bash_command('curl')",
        "DenyRule.bash_command('curl') matched",
    )
    assert [c.decided_by for c in recorded_calls(events)] == ["policy"] * 3


def test_a_log_without_decisions_is_read_from_its_result_text(recorded: Path) -> None:
    events = asyncio.run(SqliteSession("alpha", recorded).events())
    old = [e for e in events if e.type != "permission_decided"]  # as written before
    calls = recorded_calls(old)
    assert [(c.call_id, c.outcome, c.decided_by) for c in calls] == [
        ("a1", "allowed", None),
        ("a2", "denied", None),
        ("a3", "allowed", None),
    ]
    assert calls[1].recorded_reason.startswith("permission denied: DenyRule.bash_command('curl')")


def test_the_recording_policy_itself_changes_nothing(recorded: Path, tmp_path: Path) -> None:
    policy = _policy(tmp_path, "same.toml", RECORDED)
    r = _check("--policy", str(policy), "--sessions", f"sqlite://{recorded}")
    assert r.exit_code == 0, r.output
    assert r.output.strip() == "no changes: 5 recorded calls in 2 sessions decide the same"


def test_a_stricter_policy_lists_the_calls_it_would_deny_or_ask(
    recorded: Path, tmp_path: Path
) -> None:
    policy = _policy(tmp_path, "strict.toml", STRICTER)
    r = _check("--policy", str(policy), "--sessions", f"sqlite://{recorded}", "--format", "json")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.output)
    assert doc["sessions"] == 2
    assert doc["calls"] == 5
    rows = [
        (c["session_id"], c["call_id"], c["tool"], c["before"], c["after"], c["stage"], c["rule"])
        for c in doc["changes"]
    ]
    assert rows == [
        ("alpha", "a1", "Bash", "allowed", "deny", "deny_rule", "DenyRule.bash_command('echo')"),
        ("beta", "b1", "Bash", "allowed", "ask", "guard", "look-first"),
        ("beta", "b2", "Write", "allowed", "deny", "deny_rule", "DenyRule.edit('secrets/**')"),
    ]
    assert doc["changes"][1]["reason"] == "listing needs a look"
    assert doc["changes"][2]["args"] == {"path": "secrets/key.txt", "content": "k"}
    assert doc["changes"][0]["sequence"] == 1  # after the user message


def test_a_looser_policy_lists_the_calls_it_would_now_allow(recorded: Path, tmp_path: Path) -> None:
    policy = _policy(tmp_path, "loose.toml", LOOSER)
    r = _check("--policy", str(policy), "--sessions", f"sqlite://{recorded}", "--format", "json")
    assert r.exit_code == 1, r.output
    changes = json.loads(r.output)["changes"]
    assert [(c["session_id"], c["call_id"], c["before"], c["after"]) for c in changes] == [
        ("alpha", "a2", "denied", "allow")
    ]
    assert changes[0]["args"] == {"command": "curl http://example.invalid/x"}
    assert (changes[0]["stage"], changes[0]["reason"]) == ("default", "no policy installed")


def test_the_text_table_shows_each_change_with_its_reason(recorded: Path, tmp_path: Path) -> None:
    policy = _policy(tmp_path, "strict.toml", STRICTER)
    r = _check("--policy", str(policy), "--sessions", f"sqlite://{recorded}")
    assert r.exit_code == 1, r.output
    assert r.output.splitlines() == [
        "3 of 5 recorded calls change (2 sessions):",
        "SESSION  SEQ  TOOL   ARGS                                         WAS      NOW   WHY",
        'alpha    1    Bash   {"command": "echo hi"}                       allowed  deny  '
        "deny_rule: DenyRule.bash_command('echo')",
        'beta     1    Bash   {"command": "ls"}                            allowed  ask   '
        "guard: listing needs a look",
        'beta     4    Write  {"content": "k", "path": "secrets/key.txt"}  allowed  deny  '
        "deny_rule: DenyRule.edit('secrets/**')",
    ]


def test_one_session_by_fragment(recorded: Path, tmp_path: Path) -> None:
    policy = _policy(tmp_path, "strict.toml", STRICTER)
    r = _check(
        "--policy", str(policy), "--sessions", f"sqlite://{recorded}#beta", "--format", "json"
    )
    assert r.exit_code == 1, r.output
    doc = json.loads(r.output)
    assert (doc["sessions"], doc["calls"]) == (1, 2)
    assert [c["call_id"] for c in doc["changes"]] == ["b1", "b2"]


def test_an_unknown_session_names_the_ones_there(recorded: Path, tmp_path: Path) -> None:
    policy = _policy(tmp_path, "strict.toml", STRICTER)
    r = _check("--policy", str(policy), "--sessions", f"sqlite://{recorded}#gamma")
    assert r.exit_code == 2
    assert "has no session 'gamma'" in r.output
    assert "['alpha', 'beta']" in r.output


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://example.com/runs.db", "the http scheme is not supported"),
        ("mysql://localhost/test", "the mysql scheme is not supported"),
        ("runs.db", "the missing scheme is not supported"),
        ("sqlite:///nowhere/runs.db", "/nowhere/runs.db does not exist"),
    ],
)
def test_bad_session_urls_exit_2_with_the_fix(tmp_path: Path, url: str, message: str) -> None:
    policy = _policy(tmp_path, "p.toml", LOOSER)
    r = _check("--policy", str(policy), "--sessions", url)
    assert r.exit_code == 2
    assert message in r.output
    assert "Fix: use sqlite:///ABSOLUTE/PATH.db" in r.output
    assert not Path("/nowhere/runs.db").exists()


def test_a_file_that_is_not_a_session_database(tmp_path: Path) -> None:
    policy = _policy(tmp_path, "p.toml", LOOSER)
    other = tmp_path / "other.db"
    other.write_bytes(b"not sqlite at all, just text" * 10)
    r = _check("--policy", str(policy), "--sessions", f"sqlite://{other}")
    assert r.exit_code == 2
    assert "not a helikon session database" in r.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[agents.a]\nmodel = 'x'\n", "permissions: the file has no [permissions] table"),
        ("[permissions]\nmode = 'strict'\n", "permissions.mode: unknown mode 'strict'"),
        ("[permissions]\ndeny = ['shell:rm']\n", "permissions.deny[0]: 'shell:rm' is not"),
        ("[permissions]\ndenny = []\n", "unknown key 'denny'. Fix: did you mean 'deny'?"),
        ("[permissions\n", "not valid TOML"),
    ],
)
def test_bad_policy_files_exit_2_naming_the_key(
    recorded: Path, tmp_path: Path, text: str, message: str
) -> None:
    policy = _policy(tmp_path, "bad.toml", text)
    r = _check("--policy", str(policy), "--sessions", f"sqlite://{recorded}")
    assert r.exit_code == 2
    assert message in r.output


def test_an_agents_toml_is_a_policy_file(recorded: Path, tmp_path: Path) -> None:
    sidecar = _policy(
        tmp_path,
        "agents.toml",
        '[agents.worker]\nmodel = "openai:gpt-4o"\n\n[permissions]\nmode = "plan"\n',
    )
    r = _check("--policy", str(sidecar), "--sessions", f"sqlite://{recorded}", "--format", "json")
    assert r.exit_code == 1, r.output
    changes = json.loads(r.output)["changes"]
    # plan denies every call that is not read-only: the four that ran
    assert [(c["call_id"], c["after"], c["stage"]) for c in changes] == [
        ("a1", "deny", "mode"),
        ("a3", "deny", "mode"),
        ("b1", "deny", "mode"),
        ("b2", "deny", "mode"),
    ]


def test_bad_format_exits_2(recorded: Path, tmp_path: Path) -> None:
    policy = _policy(tmp_path, "p.toml", LOOSER)
    r = _check("--policy", str(policy), "--sessions", f"sqlite://{recorded}", "--format", "csv")
    assert r.exit_code == 2
    assert "--format 'csv' is not supported" in r.output


async def test_dry_run_counts_only_flips() -> None:
    from helikon import RunContext
    from helikon.permissions import AllowRule

    log = [
        tool_called("c1", "Bash", {"command": "rm -rf /"}),
        tool_returned("c1", "permission denied: guard rm: recursive delete", is_error=True),
        tool_called("c2", "Bash", {"command": "git status"}),
        tool_returned("c2", "permission denied: mode dont_ask", is_error=True),
        tool_called("c3", "Bash", {"command": "false"}),
        tool_returned("c3", "exit 1", is_error=True),  # ran and failed: allowed
        tool_called("c4", "Bash", {"command": "git push"}),  # no result: unknown
    ]
    ctx = RunContext.ephemeral().with_allow_rules([AllowRule.bash_command("git")])
    changes = await dry_run(ctx, log, session_id="s")
    # c1 still asks (the default rm guard): not a flip; c2 is now allowed by the rule;
    # c3 stays allowed; c4 has no recorded outcome
    assert changes == [
        Change(
            "s",
            2,
            "c2",
            "Bash",
            {"command": "git status"},
            "denied",
            "allow",
            "allow_rule",
            "AllowRule.bash_command('git')",
            "AllowRule.bash_command('git')",
        )
    ]


def test_load_policy_raises_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read it"):
        load_policy(tmp_path / "missing.toml")


STRICT_ROWS = [
    ("alpha", "a1", "deny", "DenyRule.bash_command('echo')"),
    ("beta", "b1", "ask", "look-first"),
    ("beta", "b2", "deny", "DenyRule.edit('secrets/**')"),
]


def _strict_rows(tmp_path: Path, url: str) -> list[tuple[str, str, str, str | None]]:
    policy = _policy(tmp_path, "strict.toml", STRICTER)
    r = _check("--policy", str(policy), "--sessions", url, "--format", "json")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.output)
    assert (doc["sessions"], doc["calls"]) == (2, 5)
    return [(c["session_id"], c["call_id"], c["after"], c["rule"]) for c in doc["changes"]]


def test_sessions_recorded_in_redis(tmp_path: Path) -> None:
    require_service("redis", backends.redis_available)
    import redis.asyncio as aioredis

    from helikon.sessions.redis import RedisSession

    prefix = f"helikon-test-{uuid.uuid4().hex[:12]}"

    async def record() -> None:
        client = aioredis.Redis.from_url(backends.REDIS_URL)
        try:
            await _record(tmp_path, lambda sid: RedisSession(client, sid, prefix=prefix))
        finally:
            await client.aclose()

    async def clean() -> None:
        client = aioredis.Redis.from_url(backends.REDIS_URL)
        keys = [k async for k in client.scan_iter(match=f"{prefix}:*", count=500)]
        if keys:
            await client.delete(*keys)
        await client.aclose()

    asyncio.run(record())
    try:
        url = f"{backends.REDIS_URL}?prefix={prefix}"
        assert _strict_rows(tmp_path, url) == STRICT_ROWS
        r = _check("--policy", str(tmp_path / "strict.toml"), "--sessions", url + "#gamma")
        assert r.exit_code == 2
        assert f"redis prefix '{prefix}' has no session 'gamma'" in r.output
    finally:
        asyncio.run(clean())


def test_sessions_recorded_in_postgres(tmp_path: Path) -> None:
    require_service("postgres", lambda: backends.postgres_dsn() is not None)
    dsn = backends.postgres_dsn()
    assert dsn is not None
    import asyncpg  # type: ignore[import-untyped]

    from helikon.sessions.postgres import PostgresSession

    schema = f"helikon_test_{uuid.uuid4().hex[:12]}"

    async def record() -> None:
        pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4)
        try:
            await PostgresSession.migrate(pool, schema=schema)
            await _record(
                tmp_path,
                lambda sid: PostgresSession.open_without_migrate(pool, sid, schema=schema),
            )
        finally:
            await pool.close()

    async def clean() -> None:
        conn = await asyncpg.connect(dsn)
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await conn.close()

    asyncio.run(record())
    try:
        sep = "&" if "?" in dsn else "?"
        assert _strict_rows(tmp_path, f"{dsn}{sep}schema={schema}") == STRICT_ROWS
        r = _check(
            "--policy",
            str(tmp_path / "strict.toml"),
            "--sessions",
            f"{dsn}{sep}schema=nothing_here",
        )
        assert r.exit_code == 2
        assert "schema 'nothing_here' has no helikon sessions" in r.output
    finally:
        asyncio.run(clean())


def test_an_unreachable_redis_exits_2(tmp_path: Path) -> None:
    policy = _policy(tmp_path, "p.toml", LOOSER)
    r = _check("--policy", str(policy), "--sessions", "redis://127.0.0.1:1/0")
    assert r.exit_code == 2
    assert "redis: list the sessions of redis://127.0.0.1:1/0" in r.output


CURL_SPELLINGS = [
    "/usr/bin/curl http://x",
    "echo ok && curl http://x",
    "env curl http://x",
    "echo $(curl http://x)",
    'bash -c "curl http://x"',
    "c\\url http://x",
    "ls | xargs curl",
    "sudo curl http://x",
    "echo ok\ncurl http://x",
]
SECRET_SPELLINGS = [
    {"path": "secrets/key.txt"},
    {"path": "./secrets/key.txt"},
    {"path": "notes/../secrets/key.txt"},
    {"path": "secrets//key.txt"},
    {"file_path": "secrets/key.txt"},
]


async def test_a_stricter_rule_catches_every_recorded_spelling() -> None:
    from helikon import RunContext
    from helikon.permissions import DenyRule

    log: list[Any] = []
    for i, command in enumerate(CURL_SPELLINGS):
        log += [tool_called(f"b{i}", "Bash", {"command": command}), tool_returned(f"b{i}", "ok")]
    for i, args in enumerate(SECRET_SPELLINGS):
        call = tool_called(f"w{i}", "Write", {**args, "content": "x"})
        log += [call, tool_returned(f"w{i}", "ok")]
    # a path outside the anchored glob is not caught
    log += [tool_called("w9", "Write", {"path": "a/secrets/k", "content": "x"})]
    log += [tool_returned("w9", "ok")]
    ctx = RunContext.ephemeral().with_deny_rules(
        [DenyRule.bash_command("curl"), DenyRule.edit("secrets/**")]
    )
    changes = await dry_run(ctx, log)
    assert [(c.call_id, c.before, c.after, c.rule) for c in changes] == [
        *[
            (f"b{i}", "allowed", "deny", "DenyRule.bash_command('curl')")
            for i in range(len(CURL_SPELLINGS))
        ],
        *[
            (f"w{i}", "allowed", "deny", "DenyRule.edit('secrets/**')")
            for i in range(len(SECRET_SPELLINGS))
        ],
    ]


async def test_hook_denials_are_not_compared_and_approved_asks_are_not_changes() -> None:
    from helikon import RunContext
    from helikon.permissions import GuardRule
    from helikon.sessions.events import ApprovalsAnswered

    log = [
        tool_called("h1", "Bash", {"command": "ls"}),
        tool_returned("h1", "denied by hook: not on fridays", is_error=True),
        tool_called("p1", "Bash", {"command": "git push"}),
        ApprovalsAnswered(run_id="r", claim="k", decisions={"p1": "approve", "p2": "deny"}),
        tool_returned("p1", "pushed"),
        tool_called("p2", "Bash", {"command": "git push -f"}),
        tool_returned("p2", "approval denied: not now", is_error=True),
        tool_called("p3", "Bash", {"command": "git push origin"}),
        tool_returned("p3", "pushed"),
    ]
    calls = recorded_calls(log)
    assert [(c.call_id, c.outcome, c.asked) for c in calls] == [
        ("h1", "hook_denied", False),
        ("p1", "allowed", True),
        ("p2", "denied", False),
        ("p3", "allowed", False),
    ]
    guard = GuardRule(name="push", program="git", args_contain=["push"], action="ask")
    ctx = RunContext.ephemeral().with_guard_rules([guard])
    # h1: a hook's call is not the permissions' to judge; p1 asked then and asks now;
    # p2 was refused by a person and would be asked again; p3 ran unasked and now asks
    assert [(c.call_id, c.before, c.after) for c in await dry_run(ctx, log)] == [
        ("p3", "allowed", "ask")
    ]
    loose = await dry_run(RunContext.ephemeral(), log)
    assert [(c.call_id, c.before, c.after) for c in loose] == [("p2", "denied", "allow")]


def test_effect_options_let_a_mode_judge_other_tools(tmp_path: Path) -> None:
    db = tmp_path / "custom.db"
    log = [
        tool_called("s1", "search", {"q": "x"}),
        tool_returned("s1", "found"),
        tool_called("s2", "publish", {"doc": "x"}),
        tool_returned("s2", "published"),
    ]
    asyncio.run(SqliteSession("one", db).append(log))
    policy = _policy(tmp_path, "plan.toml", '[permissions]\nmode = "plan"\n')
    url = f"sqlite://{db}"

    def denied(*extra: str) -> list[str]:
        r = _check("--policy", str(policy), "--sessions", url, "--format", "json", *extra)
        assert r.exit_code == 1, r.output
        return [c["call_id"] for c in json.loads(r.output)["changes"]]

    # unknown tools count as side effects: plan denies both
    assert denied() == ["s1", "s2"]
    assert denied("--effect", "search=read_only") == ["s2"]
    r = _check("--policy", str(policy), "--sessions", url, "--effect", "search=readonly")
    assert r.exit_code == 2
    assert "--effect 'search=readonly' is not TOOL=EFFECT" in r.output
    r = _check("--policy", str(policy), "--sessions", url, "--effect", "search")
    assert r.exit_code == 2


def test_help_names_the_permissions_table_and_the_exit_codes() -> None:
    r = CliRunner().invoke(app, ["policy", "check", "--help"], terminal_width=200)
    assert r.exit_code == 0
    assert "A TOML file with a [permissions] table." in r.output
    assert "Exit 0 when nothing changes, 1 when some call changes, 2 on a bad file or URL." in (
        r.output
    )
