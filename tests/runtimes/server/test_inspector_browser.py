"""The inspector page in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

Skips with a reason when Playwright or the browser is missing; fails instead under
``HELIKON_REQUIRE_SERVICES=1``. Each test saves a screenshot of what it checked under
``HELIKON_TEST_ARTIFACTS`` (default ``test-artifacts/inspector``); the docs page about the
inspector uses them (copied to ``docs/guides/inspector/``).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from helikon import Agent, tool
from helikon.runtimes.server import AgentServer, AuthRejection, ServerConfig
from helikon.testing import Call, MockModel, Text
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
