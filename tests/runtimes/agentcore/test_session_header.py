"""AgentCore reads its session header as UTF-8: a non-ASCII session id names one session
(not its latin-1 misreading), is echoed back byte for byte, and bytes that are not UTF-8 are
a 400."""

from __future__ import annotations

from typing import Any

import httpx

from helikon import Agent
from helikon.runtimes.agentcore import SESSION_HEADER, AgentCoreServer
from helikon.sessions import MemorySession
from helikon.testing import MockModel, Text
from tests.runtimes.agentcore.test_agentcore import serving


async def test_a_utf8_session_id_names_one_session() -> None:
    model = MockModel([[Text("one")], [Text("two")], [Text("three")]])
    sessions: dict[str, MemorySession] = {}

    def factory(sid: str) -> MemorySession:
        return sessions.setdefault(sid, MemorySession())

    server = AgentCoreServer(Agent(name="chat", model=model), session_factory=factory)
    bodies: list[dict[str, Any]] = []
    async with serving(server.app()) as url, httpx.AsyncClient(base_url=url) as http:
        for sid in ("café-会話", "café-会話", "plain"):
            r = await http.post(
                "/invocations",
                json={"prompt": "hi"},
                headers=[(SESSION_HEADER.encode(), sid.encode("utf-8"))],
            )
            assert r.status_code == 200, r.text
            assert r.headers.raw[
                [k.lower() for k, _ in r.headers.raw].index(SESSION_HEADER.lower().encode())
            ][1] == sid.encode("utf-8")
            bodies.append(r.json())
    assert sorted(sessions) == ["café-会話", "plain"]
    assert [b["session_id"] for b in bodies] == ["café-会話", "café-会話", "plain"]
    assert len(await sessions["café-会話"].snapshot()) == 4
    assert [len(req.messages) for req in model.requests] == [1, 3, 1]


async def test_a_session_id_that_is_not_utf8_is_a_400() -> None:
    server = AgentCoreServer(Agent(name="chat", model=MockModel([[Text("x")]])))
    async with serving(server.app()) as url, httpx.AsyncClient(base_url=url) as http:
        r = await http.post(
            "/invocations", json={"prompt": "hi"}, headers=[(SESSION_HEADER.encode(), b"caf\xe9")]
        )
    assert r.status_code == 400
    assert r.json()["error"] == {
        "kind": "BadRequest",
        "message": f"{SESSION_HEADER} must be UTF-8 text",
    }
