"""The inspector page in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

Skips with a reason when Playwright or the browser is missing; fails instead under
``HELIKON_REQUIRE_SERVICES=1``. Each test saves a screenshot of what it checked under
``HELIKON_TEST_ARTIFACTS`` (default ``test-artifacts/inspector``); the docs page about the
inspector uses them (copied to ``docs/guides/inspector/``).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from helikon import Agent, RunConfig, tool
from helikon.runtimes.server import AgentServer, AuthRejection, ServerConfig
from helikon.testing import Call, MockModel, Text, Usage
from tests.conftest import require_service
from tests.runtimes.server.conftest import BOUND, Live, calc_agent

CHROMIUM = os.environ.get("HELIKON_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = BOUND * 1000
ARTIFACTS = Path(os.environ.get("HELIKON_TEST_ARTIFACTS", "test-artifacts")) / "inspector"


def _have_browser() -> bool:
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return False
    return shutil.which(CHROMIUM) is not None or Path(CHROMIUM).is_file()


@pytest.fixture
async def tab() -> AsyncIterator[Any]:
    """A fresh Chromium page (skips when there is no browser)."""
    require_service(f"chromium at {CHROMIUM} with playwright", _have_browser)
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(viewport={"width": 1280, "height": 720})
            tab = await context.new_page()
            tab.set_default_timeout(TIMEOUT_MS)
            yield tab
        finally:
            await browser.close()


async def _shot(tab: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    await tab.screenshot(path=str(ARTIFACTS / f"{name}.png"))


async def _timeline(tab: Any) -> list[tuple[str, str]]:
    """The timeline's entries as ``(event id, event type)``, in order."""
    rows: list[list[str]] = await tab.eval_on_selector_all(
        "#timeline li[data-id]",
        "els => els.map(e => [e.dataset.id, e.querySelector('.type').textContent])",
    )
    return [(row[0], row[1]) for row in rows]


async def test_chat_streams_the_answer_and_shows_the_tool_call(live: type[Live], tab: Any) -> None:
    server = AgentServer([calc_agent()], config=ServerConfig(ui=True))
    async with live(server) as srv:
        await tab.goto(srv.url + "/ui/")
        await tab.locator("#agent option[value=calc]").wait_for(state="attached")
        await tab.fill("#message", "what is 1 + 2?")
        await tab.click("#send-button")
        await tab.locator(".msg.assistant").filter(has_text="3").wait_for()
        await tab.locator("#timeline .type", has_text="run_completed").wait_for()
        # the call with its arguments, then its result, in the timeline
        call = tab.locator("#timeline li", has=tab.locator(".type", has_text="tool_call_item"))
        assert await call.locator("summary").text_content() == 'tool_call_item add({"a":1,"b":2})'
        result = tab.locator("#timeline li", has=tab.locator(".type", has_text="tool_output_item"))
        assert await result.locator("summary").text_content() == "tool_output_item → 3"
        await call.locator("summary").click()  # expands to the event's JSON
        shown = await call.locator("pre").text_content()
        assert '"name": "add"' in shown
        assert '"call_id": "c1"' in shown
        assert [t for _, t in await _timeline(tab)] == [
            "run_started",
            "turn_started",
            "tool_call_delta",
            "tool_call_item",
            "tool_output_item",
            "turn_started",
            "token_delta",
            "message_output",
            "run_completed",
        ]
        assert await tab.locator(".msg.user").text_content() == "what is 1 + 2?"
        assert await tab.locator(".msg.assistant").text_content() == "3"
        await _shot(tab, "chat")


async def test_a_reload_mid_run_resumes_the_stream_without_duplicates(
    live: type[Live], tab: Any
) -> None:
    release = asyncio.Event()

    @tool
    async def hold() -> str:
        """Wait until the test releases the run."""
        await release.wait()
        return "released"

    model = MockModel([[Call("h1", "hold", {})], [Text("all "), Text("done")]])
    server = AgentServer(
        [Agent(name="slow", model=model, tools=[hold])], config=ServerConfig(ui=True)
    )
    resumed: list[str | None] = []
    async with live(server) as srv:
        await tab.goto(srv.url + "/ui/")
        await tab.locator("#agent option[value=slow]").wait_for(state="attached")
        await tab.fill("#message", "take your time")
        await tab.click("#send-button")
        await tab.locator("#timeline .type", has_text="tool_call_item").wait_for()
        await _shot(tab, "mid-run")

        def on_request(request: Any) -> None:
            if request.url.endswith("/events"):
                resumed.append(request.headers.get("last-event-id"))

        tab.on("request", on_request)
        await tab.reload()
        await tab.locator("#timeline .type", has_text="tool_call_item").wait_for()
        await tab.locator("#status", has_text="streaming").wait_for()
        release.set()
        await tab.locator("#timeline .type", has_text="run_completed").wait_for()
        ids = [int(i) for i, _ in await _timeline(tab)]
        assert ids == list(range(10)), ids  # every event once, in order
        assert resumed[0] == "3"  # the stream resumed after the last event seen
        assert await tab.locator(".msg.assistant").text_content() == "all done"
        assert await tab.locator(".msg.user").text_content() == "take your time"
        await _shot(tab, "resumed")
    assert server.runs.listed()[0].status == "completed"  # the reload did not cancel it


async def test_a_finished_run_opens_read_only(live: type[Live], tab: Any) -> None:
    server = AgentServer([calc_agent()], config=ServerConfig(ui=True))
    async with live(server) as srv:
        import httpx

        async with httpx.AsyncClient(base_url=srv.url) as client:
            r = await client.post("/agents/calc/runs", json={"input": "sum"})
            assert r.status_code == 200
            run_id = r.json()["run_id"]
        await tab.goto(srv.url + "/ui/")
        button = tab.locator(f"#runs button[data-run='{run_id}']")
        assert await button.text_content() == f"calc · completed · {run_id[:8]}"
        await button.click()
        await tab.locator("#timeline .type", has_text="run_completed").wait_for()
        assert await tab.locator("#chat-title").text_content() == "Run (read-only)"
        assert not await tab.locator("#send").is_visible()
        assert await tab.locator(".msg.assistant").text_content() == "3"
        assert len(await _timeline(tab)) == 9
        await _shot(tab, "finished-run")


@pytest.mark.parametrize(
    "payload",
    [
        "<script>window.__pwned = 1</script>",
        '<img src=x onerror="window.__pwned = 1">',
        "<svg onload=window.__pwned=1></svg><b>bold</b>",
    ],
)
async def test_tool_output_is_shown_as_text(live: type[Live], tab: Any, payload: str) -> None:
    @tool
    def fetch_page() -> str:
        """Return hostile markup."""
        return payload

    model = MockModel([[Call("x1", "fetch_page", {})], [Text(payload)]])
    server = AgentServer(
        [Agent(name="web", model=model, tools=[fetch_page])], config=ServerConfig(ui=True)
    )
    async with live(server) as srv:
        await tab.goto(srv.url + "/ui/")
        await tab.locator("#agent option[value=web]").wait_for(state="attached")
        await tab.fill("#message", "read it")
        await tab.click("#send-button")
        await tab.locator("#timeline .type", has_text="run_completed").wait_for()
        result = tab.locator("#timeline li", has=tab.locator(".type", has_text="tool_output_item"))
        assert await result.locator("summary").text_content() == f"tool_output_item → {payload}"
        assert await tab.locator(".msg.assistant").text_content() == payload
        assert await tab.evaluate("window.__pwned") is None
        for tag in ("script", "img", "svg", "b"):
            assert await tab.locator(f"#chat {tag}, #timeline {tag}").count() == 0
        if payload.startswith("<script>"):
            await _shot(tab, "markup-as-text")


async def test_with_a_token_the_page_asks_for_it_and_sends_it(live: type[Live], tab: Any) -> None:
    def bearer(conn: Any) -> None:
        if conn.headers.get("authorization") != "Bearer s3cret":
            raise AuthRejection("missing or wrong bearer token")

    server = AgentServer([calc_agent()], auth=bearer, config=ServerConfig(ui=True))
    prompts: list[str] = []

    async def answer(dialog: Any) -> None:
        prompts.append(dialog.message)
        await dialog.accept("s3cret")

    tab.on("dialog", lambda d: asyncio.ensure_future(answer(d)))
    async with live(server) as srv:
        await tab.goto(srv.url + "/ui/")
        await tab.locator("#agent option[value=calc]").wait_for(state="attached")
        assert prompts == ["This server needs a token:"]
        await tab.fill("#message", "sum")
        await tab.click("#send-button")
        await tab.locator(".msg.assistant").filter(has_text="3").wait_for()
    assert prompts == ["This server needs a token:"]  # asked once, then sent every time


@tool(needs_approval=True)
def refund(order: str, amount: int) -> str:
    """Refund part of an order."""
    return f"refunded {amount} on {order}"


def _refund_agent(calls: list[dict[str, Any]]) -> Agent:
    turns: list[Any] = [[Call(f"r{i}", "refund", args) for i, args in enumerate(calls)]]
    return Agent(
        name="support",
        model=MockModel([*turns, [Text("Refunded.")]]),
        tools=[refund],
        run_config=RunConfig(approval="defer"),
    )


@pytest.mark.parametrize(
    ("button", "answer", "result"),
    [
        ("approve", None, "→ refunded 5 on A7"),
        ("deny", "not this order", "error: "),
        ("edit", '{"order": "A7", "amount": 2}', "→ refunded 2 on A7"),
    ],
)
async def test_a_paused_run_is_answered_from_the_page(
    live: type[Live], tab: Any, button: str, answer: str | None, result: str
) -> None:
    server = AgentServer(
        [_refund_agent([{"order": "A7", "amount": 5}])], config=ServerConfig(ui=True)
    )

    async def reply(dialog: Any) -> None:
        await dialog.accept(answer or "")

    tab.on("dialog", lambda d: asyncio.ensure_future(reply(d)))
    async with live(server) as srv:
        await tab.goto(srv.url + "/ui/")
        await tab.locator("#agent option[value=support]").wait_for(state="attached")
        await tab.fill("#message", "refund A7")
        await tab.click("#send-button")
        card = tab.locator(".approval-call[data-call=r0]")
        assert await card.locator(".approval-what").text_content() == (
            'refund({"order":"A7","amount":5})'
        )
        if button == "approve":
            await _shot(tab, "approval")
        await card.locator(f"button.{button}").click()
        await tab.locator("#timeline .type", has_text="run_completed").wait_for()
        output = tab.locator("#timeline li", has=tab.locator(".type", has_text="tool_output_item"))
        summary = await output.locator("summary").text_content()
        assert summary.startswith(f"tool_output_item {result}"), summary
        if button == "deny":
            assert "not this order" in summary
        assert await tab.locator(".msg.assistant").last.text_content() == "Refunded."
    assert server.runs.listed()[0].status == "completed"


async def test_two_waiting_calls_are_answered_together(live: type[Live], tab: Any) -> None:
    calls = [{"order": "A7", "amount": 5}, {"order": "B8", "amount": 9}]
    server = AgentServer([_refund_agent(calls)], config=ServerConfig(ui=True))
    posted: list[str] = []
    tab.on(
        "request",
        lambda r: (
            posted.append(r.post_data or "")
            if r.url.endswith("/approvals") and r.method == "POST"
            else None
        ),
    )
    async with live(server) as srv:
        await tab.goto(srv.url + "/ui/")
        await tab.locator("#agent option[value=support]").wait_for(state="attached")
        await tab.fill("#message", "refund both")
        await tab.click("#send-button")
        await tab.locator(".approval-call[data-call=r0] button.approve").click()
        await tab.locator(".approval-call[data-call=r1] button.approve").click()
        await tab.locator("#timeline .type", has_text="run_completed").wait_for()
    assert [json.loads(p) for p in posted] == [
        {"decisions": {"r0": {"decision": "approve"}, "r1": {"decision": "approve"}}}
    ]


async def test_the_token_from_the_url_fragment_is_sent_and_hidden(
    live: type[Live], tab: Any
) -> None:
    from helikon.cli.serve_cmd import BearerToken  # what `helikon serve --token` installs

    server = AgentServer([calc_agent()], auth=BearerToken("s3cret"), config=ServerConfig(ui=True))
    prompts: list[str] = []
    tab.on("dialog", lambda d: prompts.append(d.message))
    sent: list[tuple[str, str | None]] = []
    tab.on("request", lambda r: sent.append((r.url, r.headers.get("authorization"))))
    async with live(server) as srv:
        await tab.goto(srv.url + "/ui/#token=s3cret")
        await tab.locator("#agent option[value=calc]").wait_for(state="attached")
        assert tab.url == srv.url + "/ui/"  # the token left the address bar
        await tab.fill("#message", "sum")
        await tab.click("#send-button")
        await tab.locator(".msg.assistant").filter(has_text="3").wait_for()
    assert prompts == []
    data_calls = [auth for url, auth in sent if "/ui/api/" in url or "/agents/" in url]
    assert len(data_calls) >= 4  # agents, runs, the POST, the events stream
    assert set(data_calls) == {"Bearer s3cret"}


class _CutFirstStream:
    """An ASGI wrapper that ends the first event stream right after frame ``last`` (the
    client sees the stream end without a terminal event: a dropped connection)."""

    def __init__(self, app: Any, last: int) -> None:
        self.app = app
        self.mark = f"id: {last}\n".encode()
        self.cut = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].endswith("/events") or self.cut:
            await self.app(scope, receive, send)
            return
        self.cut = True
        ended = False

        async def cutting(message: Any) -> None:
            nonlocal ended
            if ended:
                return
            await send(message)
            if message["type"] == "http.response.body" and self.mark in message.get("body", b""):
                ended = True
                await send({"type": "http.response.body", "body": b"", "more_body": False})

        await self.app(scope, receive, cutting)


class _CuttingServer(AgentServer):
    @property
    def app(self) -> Any:
        if getattr(self, "_cutter", None) is None:
            self._cutter = _CutFirstStream(super().app, last=3)
        return self._cutter


async def test_a_dropped_stream_resumes_after_the_last_event(live: type[Live], tab: Any) -> None:
    release = asyncio.Event()

    @tool
    async def hold() -> str:
        """Wait until the test releases the run."""
        await release.wait()
        return "released"

    model = MockModel([[Call("h1", "hold", {})], [Text("back")]])
    server = _CuttingServer(
        [Agent(name="slow", model=model, tools=[hold])], config=ServerConfig(ui=True)
    )
    asked: list[str | None] = []
    tab.on(
        "request",
        lambda r: (
            asked.append(r.headers.get("last-event-id")) if r.url.endswith("/events") else None
        ),
    )
    async with live(server) as srv:
        await tab.goto(srv.url + "/ui/")
        await tab.locator("#agent option[value=slow]").wait_for(state="attached")
        await tab.fill("#message", "wait")
        await tab.click("#send-button")
        await tab.locator("#timeline .type", has_text="tool_call_item").wait_for()
        async with asyncio.timeout(BOUND):
            while len(asked) < 2:  # the page noticed the drop and asked again
                await asyncio.sleep(0.05)
        release.set()
        await tab.locator("#timeline .type", has_text="run_completed").wait_for()
        ids = [int(i) for i, _ in await _timeline(tab)]
        assert await tab.locator(".msg.assistant").text_content() == "back"
    assert asked[:2] == [None, "3"]
    assert ids == list(range(9)), ids


async def test_the_runs_list_narrows_to_the_chats_session(live: type[Live], tab: Any) -> None:
    server = AgentServer([calc_agent(runs=3)], config=ServerConfig(ui=True))
    async with live(server) as srv:
        import httpx

        async with httpx.AsyncClient(base_url=srv.url) as client:
            other = (await client.post("/agents/calc/runs", json={"input": "x"})).json()
        await tab.goto(srv.url + "/ui/")
        await tab.locator("#agent option[value=calc]").wait_for(state="attached")
        for text in ("one", "two"):
            await tab.fill("#message", text)
            await tab.click("#send-button")
            await tab.locator("#status", has_text="done").wait_for()
            await tab.locator("#send-button:enabled").wait_for()
        mine = [r.id for r in server.runs.listed() if r.session_id is not None]
        assert len(mine) == 2
        await tab.check("#session-only")
        await tab.locator("#runs button").nth(1).wait_for()
        await tab.locator(f"#runs button[data-run='{other['run_id']}']").wait_for(state="detached")
        shown = await tab.eval_on_selector_all("#runs button", "bs => bs.map(b => b.dataset.run)")
        assert shown == mine[::-1]
        await tab.uncheck("#session-only")
        await tab.locator(f"#runs button[data-run='{other['run_id']}']").wait_for()


async def test_a_handoff_and_the_runs_usage_are_in_the_timeline(live: type[Live], tab: Any) -> None:
    specialist = Agent(name="specialist", model=MockModel([[Text("hi from specialist")]]))
    triage = Agent(
        name="triage",
        model=MockModel([[Call("t1", "transfer_to_specialist", {}), Usage(7, 2)]]),
        handoffs=[specialist],
    )
    server = AgentServer([triage], config=ServerConfig(ui=True))
    async with live(server) as srv:
        await tab.goto(srv.url + "/ui/")
        await tab.locator("#agent option[value=triage]").wait_for(state="attached")
        await tab.fill("#message", "help")
        await tab.click("#send-button")
        await tab.locator("#timeline .type", has_text="run_completed").wait_for()
        rows = tab.locator("#timeline li[data-id] summary")
        texts = await rows.all_text_contents()
        assert "handoff_item triage → specialist" in texts
        assert "agent_updated specialist" in texts
        assert texts[-1].startswith("run_completed input tokens 7, output tokens 2, requests 2")
        assert (await tab.locator("#usage").text_content() or "").startswith("input tokens 7")
        assert await tab.locator(".msg.assistant").text_content() == "hi from specialist"
        await _shot(tab, "handoff")


async def test_a_permission_denial_shows_its_reason(live: type[Live], tab: Any) -> None:
    from helikon import RunContext
    from helikon.core.permissions import PermissionMode

    agent = Agent(
        name="support",
        model=MockModel([[Call("r0", "refund", {"order": "A7", "amount": 5})], [Text("No.")]]),
        tools=[refund],
    )
    server = AgentServer(
        [agent],
        context_factory=lambda conn, session, cancel: RunContext.ephemeral(
            None
        ).with_permission_mode(PermissionMode.DONT_ASK),
        config=ServerConfig(ui=True),
    )
    async with live(server) as srv:
        await tab.goto(srv.url + "/ui/")
        await tab.locator("#agent option[value=support]").wait_for(state="attached")
        await tab.fill("#message", "refund A7")
        await tab.click("#send-button")
        await tab.locator("#timeline .type", has_text="run_completed").wait_for()
        events = [e.data for e in server.runs.listed()[0].events]
        (denied,) = [e for e in events if e["type"] == "permission_denied"]
        row = tab.locator("#timeline li", has=tab.locator(".type", has_text="permission_denied"))
        summary = await row.locator("summary").text_content()
        assert summary == f"permission_denied refund: {denied['reason']}"
        assert denied["reason"]
        await _shot(tab, "permission-denied")
