"""An approval asked inside an agent served over MCP goes to the MCP client as an elicitation
form when the client declares the capability (the ``mcp`` SDK's own client here); otherwise
the call is denied."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from helikon.core.permissions import ApprovalAllow
from helikon.mcp._elicit_approval import APPROVAL_SCHEMA
from helikon.mcp.server import McpAgentServer
from helikon.testing import Call, MockModel, Text
from tests.mcp._support import bounded

from . import _support as s

MESSAGE = (
    'Agent \'support\' asks to run refund with {"order": "A7", "amount": 40}: '
    "refund of 40 needs approval"
)


@pytest.fixture(autouse=True)
def _clear() -> None:
    s.RAN.clear()


def _served(ctx_factory: Any = s.ctx) -> tuple[McpAgentServer, Any]:
    model = MockModel([[Call("c2", "refund", {"order": "A7", "amount": 40})], [Text("Done.")]])
    agent = s.agent([])
    agent.model = model
    return McpAgentServer(agent, ctx_factory=ctx_factory), model


@asynccontextmanager
async def _client(server: McpAgentServer, elicit: Any) -> AsyncIterator[ClientSession]:
    task = asyncio.create_task(server.serve_streamable_http("127.0.0.1", 0))
    try:
        for _ in range(500):
            if server.port is not None:
                break
            await asyncio.sleep(0.01)
        url = f"http://127.0.0.1:{server.port}/mcp"
        extra = {"elicitation_callback": elicit} if elicit is not None else {}
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write, **extra) as session,
        ):
            await bounded(session.initialize())
            yield session
    finally:
        server.shutdown()
        await bounded(task, 10)


def _answering(result: types.ElicitResult, seen: list[Any]) -> Any:
    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        seen.append(params)
        return result

    return elicit


def _tool_result(model: MockModel) -> str:
    last = model.requests[1].messages[-1]
    return str(last.content[0].text)  # type: ignore[union-attr]


async def test_an_accepted_form_runs_the_call_once() -> None:
    server, model = _served()
    seen: list[Any] = []
    accept = types.ElicitResult(action="accept", content={"approve": True})
    async with _client(server, _answering(accept, seen)) as session:
        result = await bounded(session.call_tool("support", {"input": "refund A7"}))
    assert not result.is_error
    assert [c.text for c in result.content] == ["Done."]  # type: ignore[union-attr]
    assert len(seen) == 1
    assert seen[0].message == MESSAGE
    assert seen[0].requested_schema == APPROVAL_SCHEMA
    assert s.RAN == [("refund", {"order": "A7", "amount": 40})]
    assert _tool_result(model) == "refunded 40 on A7"


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            types.ElicitResult(action="accept", content={"approve": False, "reason": "no"}),
            "no",
        ),
        (
            types.ElicitResult(action="accept", content={"approve": False}),
            "denied by the MCP client",
        ),
        (types.ElicitResult(action="accept"), "denied by the MCP client"),
        (types.ElicitResult(action="decline"), "the MCP client answered decline to the approval"),
        (types.ElicitResult(action="cancel"), "the MCP client answered cancel to the approval"),
    ],
)
async def test_anything_but_an_approving_form_denies(
    answer: types.ElicitResult, reason: str
) -> None:
    server, model = _served()
    async with _client(server, _answering(answer, [])) as session:
        result = await bounded(session.call_tool("support", {"input": "refund A7"}))
    assert not result.is_error
    assert s.RAN == []
    assert _tool_result(model) == f"permission denied: refund of 40 needs approval: {reason}"


async def test_a_client_without_elicitation_is_not_asked_and_the_call_is_denied() -> None:
    server, model = _served()
    async with _client(server, None) as session:
        result = await bounded(session.call_tool("support", {"input": "refund A7"}))
    assert not result.is_error
    assert s.RAN == []
    assert _tool_result(model).startswith("permission denied")


async def test_the_contexts_own_approval_handler_wins_over_elicitation() -> None:
    class Yes:
        async def decide(self, tool: str, prompt: str, args: Any) -> Any:
            return ApprovalAllow()

    server, _ = _served(lambda: s.ctx().with_approval_handler(Yes()))
    seen: list[Any] = []
    decline = types.ElicitResult(action="decline")
    async with _client(server, _answering(decline, seen)) as session:
        await bounded(session.call_tool("support", {"input": "refund A7"}))
    assert seen == []
    assert s.RAN == [("refund", {"order": "A7", "amount": 40})]


@pytest.mark.parametrize("accept", [True, False])
async def test_helikon_mcp_serve_asks_the_client_over_stdio(tmp_path: Path, accept: bool) -> None:
    import shutil
    import sys

    from mcp.client.stdio import StdioServerParameters, stdio_client

    from tests.approvals.test_cli import _ASKS, _sidecar

    script = [*_ASKS, [{"token": "Stopped."}]]
    toml = _sidecar(tmp_path, "served", script)
    ran = tmp_path / "ran.jsonl"
    exe = shutil.which("helikon", path=str(Path(sys.executable).parent))
    assert exe
    params = StdioServerParameters(
        command=exe,
        args=["mcp", "serve", "--agents", str(toml), "--agent", "ops"],
        env={**os.environ, "RAN_FILE": str(ran), "NO_COLOR": "1"},
        cwd=str(tmp_path),
    )
    seen: list[Any] = []
    answer = types.ElicitResult(
        action="accept" if accept else "decline", content={"approve": True} if accept else None
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, elicitation_callback=_answering(answer, seen)) as session,
    ):
        await bounded(session.initialize())
        result = await bounded(session.call_tool("ops", {"input": "clean up"}))
    assert [c.text for c in result.content] == ["Stopped."]  # type: ignore[union-attr]
    assert len(seen) == 1
    assert seen[0].message.startswith(
        'Agent \'ops\' asks to run Bash with {"command": "rm -rf ~"}: guard '
    )
    commands = ran.read_text().splitlines() if ran.exists() else []
    assert commands == (['"rm -rf ~"'] if accept else [])
