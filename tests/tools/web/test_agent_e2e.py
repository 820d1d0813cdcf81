"""An agent end to end: a scripted model searches, fetches an article and is refused the
cloud metadata endpoint; each result reaches the model as a tool output."""

from __future__ import annotations

import json
from typing import Any

from helikon import Agent, Tool
from helikon.testing import Call, MockModel, Text
from helikon.tools.web import TavilyBackend, WebFetchTool, WebSearchTool

from .conftest import LocalServer, Reply


def _outputs(events: list[Any]) -> dict[str, tuple[str, bool]]:
    out = {}
    for e in events:
        if e.type == "tool_output_item":
            text = "".join(getattr(p, "text", "") for p in e.item.content)
            out[e.item.call_id] = (text, e.item.is_error)
    return out


async def test_agent_searches_fetches_and_is_refused(
    server: LocalServer, article_html: str
) -> None:
    article = server.url("/news/tidal")
    server.page("/news/tidal", article_html)
    server.redirect("/meta", "http://169.254.169.254/latest/meta-data/")
    hit = {"title": "Tidal turbines", "url": article, "content": "Orkney trial results."}
    server.reply(
        "/search",
        Reply(200, {"content-type": "application/json"}, json.dumps({"results": [hit]}).encode()),
    )
    fetch = WebFetchTool(allow_private_networks=["127.0.0.1/32"])
    search = WebSearchTool(TavilyBackend(api_key="tvly-test", base_url=server.url("")))
    assert isinstance(fetch, Tool) and isinstance(search, Tool)
    model = MockModel(
        [
            [Call("s", "WebSearch", {"query": "tidal turbines orkney", "max_results": 3})],
            [Call("f", "WebFetch", {"url": article})],
            [Call("m", "WebFetch", {"url": server.url("/meta")})],
            [Text("read it")],
        ]
    )
    agent = Agent(name="reader", model=model, instructions="Research.", tools=[search, fetch])
    result = await agent.run("What happened with the Orkney tidal turbines?")
    model.assert_exhausted()
    assert result.final_output == "read it"
    out = _outputs(result.events)
    assert out["s"] == (f"1. Tidal turbines\n   {article}\n   Orkney trial results.", False)
    text, is_error = out["f"]
    assert not is_error
    assert "# Tidal turbines pass their first winter in the North Sea" in text
    text, is_error = out["m"]
    assert is_error
    assert "169.254.169.254" in text and "cloud metadata endpoint" in text
