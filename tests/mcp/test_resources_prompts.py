"""Resources and prompts through the handle, as agent tools, and as run context."""

from __future__ import annotations

import asyncio

import pytest

from helikon import Agent
from helikon.core.events import ToolOutputItem
from helikon.core.items import AssistantMessage, ImagePart, MediaSource, TextPart, UserMessage
from helikon.core.tool import ToolEffect
from helikon.errors import ConfigError, InvalidArgs, McpOther, McpServiceError, ToolOther
from helikon.mcp import expand_template
from helikon.testing import Call, MockModel, Text
from tests.mcp._support import bounded, by_name, stdio_handle, tool_ctx


async def test_list_and_read_resources_and_templates() -> None:
    async with stdio_handle("context") as h:
        resources = await bounded(h.list_resources())  # two pages
        assert [(r.uri, r.name) for r in resources] == [
            ("note://readme", "readme"),
            ("img://logo", "logo"),
            ("bin://blob", "blob"),
        ]
        templates = await bounded(h.list_resource_templates())
        assert [t.uri_template for t in templates] == ["note://{name}"]
        assert await bounded(h.read_resource("note://readme")) == [
            TextPart(text="hello from the readme")
        ]
        assert await bounded(h.read_resource("img://logo")) == [
            ImagePart(source=MediaSource(type="base64", mime_type="image/png", data="aGk="))
        ]
        assert await bounded(h.read_resource("bin://blob")) == [
            TextPart(text="[binary resource bin://blob (application/x-y, 4 bytes) not shown]")
        ]
        uri = expand_template(templates[0].uri_template, {"name": "to do"})
        assert uri == "note://to%20do"
        assert await bounded(h.read_resource(uri)) == [TextPart(text="note named to%20do")]
        with pytest.raises(McpServiceError) as info:
            await bounded(h.read_resource("note:/missing"))
        # the server's label is its command line cut to 60 characters, so how much of the
        # script's path shows depends on where the checkout lives
        assert str(info.value).startswith("MCP server 'python")
        assert str(info.value).endswith(
            "': resources/read failed: no resource note:/missing (MCP error -32002)"
        )


def test_expand_template_errors_name_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"needs the variable\(s\) name; got none"):
        expand_template("note://{name}", {})
    with pytest.raises(ConfigError, match="is invalid"):
        expand_template("note://{name", {"name": "x"})


async def test_prompts_become_conversation_items() -> None:
    async with stdio_handle("context") as h:
        prompts = await bounded(h.list_prompts())
        assert [(p.name, [a.name for a in p.arguments or []]) for p in prompts] == [
            ("review", ["code", "style"])
        ]
        items = await bounded(h.get_prompt("review", {"code": "x = 1"}))
        assert items == [
            UserMessage(content=[TextPart(text="Review (plain): x = 1")]),
            AssistantMessage(content=[TextPart(text="Sure, send it.")]),
        ]
        with pytest.raises(
            McpServiceError, match=r"prompts/get failed: review needs the argument code"
        ):
            await bounded(h.get_prompt("review"))


async def test_resources_and_prompts_as_agent_tools() -> None:
    async with stdio_handle("context", tool_prefix="ctx_") as h:
        tools = await bounded(h.context_tools())
        read, prompt = tools
        assert (read.name, prompt.name) == ("ctx_read_resource", "ctx_get_prompt")
        assert read.effect is ToolEffect.READ_ONLY and prompt.effect is ToolEffect.READ_ONLY
        assert read.description.endswith(
            "Resources:\n- note://readme (readme: The readme.)\n- img://logo (logo)\n"
            "- bin://blob (blob)\nTemplates:\n- note://{name} (note)"
        )
        assert prompt.description.endswith("Prompts:\n- review(code, style?): Review some code.")
        model = MockModel(
            [
                [
                    Call("c1", "ctx_read_resource", {"uri": "note://readme"}),
                    Call(
                        "c2",
                        "ctx_read_resource",
                        {"template": "note://{name}", "variables": {"name": "a"}},
                    ),
                    Call(
                        "c3",
                        "ctx_get_prompt",
                        {"name": "review", "arguments": {"code": "y", "style": "terse"}},
                    ),
                    Call("c4", "ctx_read_resource", {"uri": "note:/missing"}),
                ],
                [Text("read")],
            ]
        )
        agent = Agent(name="reader", model=model, tools=[*h.tools(), *tools])
        result = await bounded(agent.run("go"))
    assert result.final_output == "read"
    outs = {e.item.call_id: e.item for e in result.events if isinstance(e, ToolOutputItem)}
    text = {k: "".join(getattr(p, "text", "") for p in v.content) for k, v in outs.items()}
    assert text["c1"] == "hello from the readme"
    assert text["c2"] == "note named a"
    assert text["c3"] == "user: Review (terse): y\nassistant: Sure, send it."
    assert outs["c4"].is_error
    assert text["c4"].startswith("MCP tool 'ctx_read_resource' failed: MCP server ")
    assert text["c4"].endswith(
        "resources/read failed: no resource note:/missing (MCP error -32002)"
    )


async def test_read_resource_tool_argument_errors() -> None:
    async with stdio_handle("context") as h:
        read, _ = await bounded(h.context_tools())
        for bad in ({}, {"uri": "a", "template": "b"}, {"template": "note://{name}"}):
            with pytest.raises(InvalidArgs):
                await read.invoke(tool_ctx(), bad)


async def test_a_resource_attached_as_context() -> None:
    async with stdio_handle("context") as h:
        message = await bounded(h.resource_message("note://readme"))
        model = MockModel([[Text("seen")]])
        agent = Agent(name="a", model=model)
        result = await bounded(agent.run([message, UserMessage.text("summarize it")]))
    assert result.final_output == "seen"
    assert message == UserMessage(content=[TextPart(text="hello from the readme")])
    sent = model.requests[0].messages  # type: ignore[attr-defined]
    assert message in sent


async def test_a_server_without_resources_or_prompts_gets_no_context_tools() -> None:
    async with stdio_handle("tools") as h:
        assert await bounded(h.context_tools()) == []
        with pytest.raises(McpServiceError, match="resources/list failed"):
            await bounded(h.list_resources())


async def test_before_connect() -> None:
    with pytest.raises(McpOther, match="connect before resources/list"):
        await stdio_handle("context").list_resources()


async def test_context_tool_descriptions_follow_list_changed() -> None:
    async with stdio_handle("context") as h:
        read, prompt = await bounded(h.context_tools())
        assert "note://new" not in read.description
        await bounded(by_name(h)["add_more"].invoke(tool_ctx(), {}))
        for _ in range(500):
            if "note://new (new)" in read.description and "summarize()" in prompt.description:
                break
            await asyncio.sleep(0.01)
        assert read.description.endswith(
            "- bin://blob (blob)\n- note://new (new)\nTemplates:\n- note://{name} (note)"
        )
        assert prompt.description.endswith(
            "- review(code, style?): Review some code.\n- summarize(): Summarize."
        )


async def test_structured_content_is_checked_against_the_output_schema() -> None:
    async with stdio_handle("context") as h:
        shaped = by_name(h)["shaped"]
        assert shaped.output_schema is not None and shaped.output_schema["required"] == ["n"]
        good = await bounded(shaped.invoke(tool_ctx(), {"text": "7"}))
        assert (good.value, good.content[0].text) == ({"n": 7}, "7")
        with pytest.raises(ToolOther) as info:
            await bounded(shaped.invoke(tool_ctx(), {"text": "seven"}))
    assert str(info.value).startswith(
        "MCP tool 'shaped' failed: RuntimeError: Invalid structured content returned by tool "
        "shaped: 'seven' is not of type 'integer'"
    )
