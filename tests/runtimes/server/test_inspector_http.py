"""The inspector's routes over HTTP: off unless asked for, its files, its listing API, auth."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from helikon.errors import ConfigError
from helikon.runtimes.server import AgentServer, AuthRejection, ServerConfig
from tests.runtimes.server.conftest import calc_agent


def _client(server: AgentServer) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=server.app), base_url="http://t")


def _bearer(conn: Any) -> None:
    if conn.headers.get("authorization") != "Bearer s3cret":
        raise AuthRejection("missing or wrong bearer token")


@pytest.mark.parametrize("path", ["/ui", "/ui/", "/ui/inspector.js", "/ui/api/agents"])
async def test_the_inspector_is_off_by_default(path: str) -> None:
    async with _client(AgentServer([calc_agent()])) as client:
        r = await client.get(path)
    assert r.status_code == 404
    assert r.json()["error"] == "not_found"


@pytest.mark.parametrize(
    ("path", "media", "needle"),
    [
        ("/ui/", "text/html; charset=utf-8", '<script src="inspector.js" defer></script>'),
        ("/ui/inspector.js", "text/javascript; charset=utf-8", "textContent"),
        ("/ui/inspector.css", "text/css; charset=utf-8", "#timeline"),
    ],
)
async def test_the_page_and_its_files_are_served_with_a_strict_policy(
    path: str, media: str, needle: str
) -> None:
    server = AgentServer([calc_agent()], config=ServerConfig(ui=True))
    async with _client(server) as client:
        r = await client.get(path)
    assert r.status_code == 200
    assert r.headers["content-type"] == media
    assert needle in r.text
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "default-src 'none'" in csp
    assert "unsafe-inline" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"


async def test_the_page_loads_nothing_from_elsewhere() -> None:
    server = AgentServer([calc_agent()], config=ServerConfig(ui=True))
    async with _client(server) as client:
        texts = [
            (await client.get(p)).text for p in ("/ui/", "/ui/inspector.js", "/ui/inspector.css")
        ]
    for text in texts:
        for needle in (
            "http://",
            "https://",
            "//cdn",
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
        ):
            assert needle not in text


async def test_bare_ui_redirects_to_the_page_and_unknown_files_are_404() -> None:
    server = AgentServer([calc_agent()], config=ServerConfig(ui=True))
    async with _client(server) as client:
        r = await client.get("/ui")
        assert (r.status_code, r.headers["location"]) == (307, "/ui/")
        r = await client.get("/ui/secrets.txt")
        assert r.status_code == 404
        assert r.json() == {"error": "not_found", "message": "no inspector file 'secrets.txt'"}
        r = await client.get("/ui/..%2Fapp.py")
        assert r.status_code == 404


async def test_the_api_lists_agents_and_runs_newest_first() -> None:
    server = AgentServer(
        {"calc": calc_agent(runs=2), "other": calc_agent(name="other")},
        config=ServerConfig(ui=True),
    )
    async with _client(server) as client:
        r = await client.get("/ui/api/agents")
        assert r.json() == {
            "agents": [{"name": "calc", "description": ""}, {"name": "other", "description": ""}]
        }
        first = (await client.post("/agents/calc/runs", json={"input": "a"})).json()["run_id"]
        second = (
            await client.post(
                "/agents/calc/runs", json={"input": "b"}, headers={"X-Session-Id": "s1"}
            )
        ).json()["run_id"]
        r = await client.get("/ui/api/runs")
        only = await client.get("/ui/api/runs", params={"session_id": "s1"})
        none = await client.get("/ui/api/runs", params={"session_id": "s2"})
    assert [run["run_id"] for run in only.json()["runs"]] == [second]
    assert none.json() == {"runs": []}
    assert r.json() == {
        "runs": [
            {
                "run_id": second,
                "agent": "calc",
                "session_id": "s1",
                "status": "completed",
                "events": 9,
            },
            {
                "run_id": first,
                "agent": "calc",
                "session_id": None,
                "status": "completed",
                "events": 9,
            },
        ]
    }


@pytest.mark.parametrize("header", [None, "Bearer wrong", "s3cret", "bearer s3cret"])
@pytest.mark.parametrize("path", ["/ui/api/agents", "/ui/api/runs"])
async def test_the_api_needs_the_servers_auth(path: str, header: str | None) -> None:
    server = AgentServer([calc_agent()], auth=_bearer, config=ServerConfig(ui=True))
    headers = {"Authorization": header} if header is not None else {}
    async with _client(server) as client:
        refused = await client.get(path, headers=headers)
        admitted = await client.get(path, headers={"Authorization": "Bearer s3cret"})
    assert refused.status_code == 401
    assert refused.json() == {"error": "unauthorized", "message": "missing or wrong bearer token"}
    assert admitted.status_code == 200


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_ui_must_be_a_bool(value: object) -> None:
    with pytest.raises(ConfigError) as err:
        ServerConfig(ui=value)  # type: ignore[arg-type]
    assert (
        str(err.value)
        == f"ServerConfig.ui must be True or False, got {value!r} ({type(value).__name__})"
    )
