"""The sidecar's ``[session]`` in Redis and PostgreSQL: a conversation continues across
``helikon run`` invocations in the real services, and every bad value names its key."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from helikon.cli.sidecar import SidecarError, load_sidecar
from helikon.cli.sidecar_store import StoreSession
from helikon.core.items import text_of
from helikon.errors import SessionUnavailable
from tests.cli.test_sidecar_run import MODEL, _helikon, _write
from tests.conftest import require_service
from tests.sessions.backends import REDIS_URL, postgres_dsn, redis_available

EXPECTED = [
    ("user_message", "first question"),
    ("assistant_message", "hello"),
    ("user_message", "second question"),
    ("assistant_message", "hello"),
]


def _pairs(session: StoreSession) -> list[tuple[str, str]]:
    items = asyncio.run(session.snapshot())
    return [(i.type, text_of(getattr(i, "content", None) or [])) for i in items]


def _two_runs_and_another_id(tmp_path: Path, table: str) -> None:
    _write(tmp_path, f"{table}[agents.a]\n{MODEL}")
    for message in ("first question", "second question"):
        proc = _helikon("run", message, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == "usage: 0 input, 0 output, 0 total tokens\n"  # no warning
    proc = _helikon("run", "--session", "other", "third question", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.service("redis")
def test_a_redis_session_continues_across_helikon_run(tmp_path: Path) -> None:
    require_service("redis", redis_available)
    import redis

    prefix = f"h16test{uuid.uuid4().hex[:8]}"
    try:
        _two_runs_and_another_id(
            tmp_path, f'[session]\nbackend = "redis"\nurl = "{REDIS_URL}"\nprefix = "{prefix}"\n'
        )
        assert _pairs(StoreSession("redis", REDIS_URL, "default", prefix)) == EXPECTED
        assert _pairs(StoreSession("redis", REDIS_URL, "other", prefix)) == [
            ("user_message", "third question"),
            ("assistant_message", "hello"),
        ]
        client = redis.Redis.from_url(REDIS_URL)
        assert sorted(k.decode() for k in client.keys(f"{prefix}:*")) == [
            f"{prefix}:session:default:events",
            f"{prefix}:session:default:seq",
            f"{prefix}:session:other:events",
            f"{prefix}:session:other:seq",
        ]
    finally:
        client = redis.Redis.from_url(REDIS_URL)
        for key in client.keys(f"{prefix}:*"):
            client.delete(key)
        client.close()


@pytest.mark.service("postgres")
def test_a_postgres_session_continues_across_helikon_run(tmp_path: Path) -> None:
    require_service("postgres", lambda: postgres_dsn() is not None)
    dsn = postgres_dsn()
    assert dsn is not None
    import asyncpg  # type: ignore[import-untyped]

    schema = f"h16test_{uuid.uuid4().hex[:8]}"
    try:
        _two_runs_and_another_id(
            tmp_path, f'[session]\nbackend = "postgres"\nurl = "{dsn}"\nschema = "{schema}"\n'
        )
        assert _pairs(StoreSession("postgres", dsn, "default", schema)) == EXPECTED

        async def rows() -> list[tuple[str, int]]:
            conn = await asyncpg.connect(dsn)
            try:
                found = await conn.fetch(
                    f'SELECT session_id, COUNT(*) AS n FROM "{schema}".session_events'
                    " GROUP BY session_id ORDER BY session_id"
                )
            finally:
                await conn.close()
            return [(r["session_id"], r["n"]) for r in found]

        assert asyncio.run(rows()) == [("default", 4), ("other", 2)]
    finally:

        async def drop() -> None:
            conn = await asyncpg.connect(dsn)
            try:
                await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            finally:
                await conn.close()

        asyncio.run(drop())


def test_an_unreachable_postgres_names_the_host_not_the_password() -> None:
    session = StoreSession("postgres", "postgresql://app:s3cret@127.0.0.1:1/app", "x", "public")
    with pytest.raises(SessionUnavailable) as caught:
        asyncio.run(session.events())
    assert str(caught.value).startswith("postgres: connect to 127.0.0.1: ")
    assert "s3cret" not in str(caught.value)


def test_an_unreachable_redis_is_unavailable() -> None:
    session = StoreSession("redis", "redis://127.0.0.1:1/0", "x", "helikon")
    with pytest.raises(SessionUnavailable):
        asyncio.run(session.snapshot())


def test_the_settings_keep_url_and_namespace(tmp_path: Path) -> None:
    sc = load_sidecar(
        _write(
            tmp_path,
            f'[session]\nbackend = "redis"\nurl = "rediss://cache:6380/1"\nid = "t"\n'
            f"[agents.a]\n{MODEL}",
        )
    )
    assert sc.session is not None
    assert (sc.session.backend, sc.session.url, sc.session.namespace, sc.session.id) == (
        "redis",
        "rediss://cache:6380/1",
        "helikon",
        "t",
    )
    opened = sc.session.open("w")
    assert isinstance(opened, StoreSession)
    assert (opened.backend, opened.session_id, opened.namespace) == ("redis", "w", "helikon")
    sc = load_sidecar(
        _write(
            tmp_path,
            '[session]\nbackend = "postgres"\nurl = "postgres://u@db/app"\nschema = "chat"\n'
            f"[agents.a]\n{MODEL}",
        )
    )
    assert sc.session is not None
    assert (sc.session.backend, sc.session.namespace, sc.session.path) == (
        "postgres",
        "chat",
        None,
    )


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        (
            'backend = "redis"\n',
            "session.url: the redis backend needs its server's URL "
            "(redis:// or rediss://), got no url",
        ),
        (
            'backend = "redis"\nurl = "http://x"\n',
            "session.url: the redis backend needs its server's URL (redis:// or rediss://), "
            "got url 'http://x'",
        ),
        (
            'backend = "postgres"\nurl = "redis://x"\n',
            "session.url: the postgres backend needs its server's URL "
            "(postgresql:// or postgres://), got url 'redis://x'",
        ),
        (
            'backend = "redis"\nurl = "redis://x"\npath = "c.db"\n',
            "session.path: the redis backend keeps no file",
        ),
        (
            'backend = "postgres"\nurl = "postgresql://x/db"\nschema = "a-b"\n',
            "session.schema: must be an SQL identifier, got 'a-b'",
        ),
        (
            'backend = "redis"\nurl = "redis://x"\nprefix = ""\n',
            "session.prefix: must be a non-empty string, got ''",
        ),
        (
            'backend = "postgres"\nurl = "postgresql://x/db"\nprefix = "p"\n',
            "session.prefix: the postgres backend takes no prefix",
        ),
        (
            'backend = "sqlite"\npath = "c.db"\nurl = "redis://x"\n',
            "session.url: the sqlite backend takes no url",
        ),
        (
            'backend = "memory"\nschema = "x"\n',
            "session.schema: the memory backend takes no schema",
        ),
        ('backend = "mongo"\n', "session.backend: unknown backend 'mongo'"),
    ],
)
def test_bad_store_values_name_the_key(tmp_path: Path, table: str, expected: str) -> None:
    path = _write(tmp_path, f"[agents.a]\n{MODEL}[session]\n{table}")
    with pytest.raises(SidecarError) as caught:
        load_sidecar(path)
    assert expected in str(caught.value)
    assert "Fix:" in str(caught.value)
