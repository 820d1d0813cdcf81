"""Tool results with other content than text: images and audio reach a model that takes
them as media parts (else a text note), resource links and embedded resources as text, and
the result's ``_meta`` stays on the tool result item (redacted, never sent to the model)."""

from __future__ import annotations

from typing import Any

from helikon import Agent
from helikon.core.events import ToolOutputItem
from helikon.core.items import AudioPart, ImagePart, MediaSource, TextPart, ToolResult
from helikon.core.model import ModelCapabilities
from helikon.testing import Call, MockModel, Text
from tests.mcp._support import bounded, by_name, stdio_handle, tool_ctx

PNG = ImagePart(source=MediaSource(type="base64", mime_type="image/png", data="iVBORw0KGgo="))
WAV = AudioPart(source=MediaSource(type="base64", mime_type="audio/wav", data="UklGRg=="))


class _Seeing(MockModel):
    """A scripted model that takes images and audio."""

    def capabilities(self) -> ModelCapabilities:
        return ModelCapabilities(streaming=True, tools=True, vision=True, audio=True)


async def _result(tool: str, model: MockModel, **handle: Any) -> tuple[ToolResult, MockModel]:
    model.push([Call("c1", tool, {})])
    model.push([Text("ok")])
    async with stdio_handle("media", **handle) as h:
        agent = Agent(name="a", model=model, tools=h.tools())
        result = await bounded(agent.run("go"))
    (out,) = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
    return out, model


async def test_an_image_reaches_a_model_that_takes_images_as_an_image_part() -> None:
    out, model = await _result("picture", _Seeing())
    assert out.content == [TextPart(text="a picture:"), PNG]
    sent = model.requests[1].messages[-1]
    assert isinstance(sent, ToolResult) and sent.content == [TextPart(text="a picture:"), PNG]


async def test_an_image_for_a_text_only_model_is_a_note() -> None:
    out, _ = await _result("picture", MockModel())
    assert out.content == [
        TextPart(text="a picture:"),
        TextPart(
            text="[image (image/png, 8 bytes) from the MCP tool; not shown: this model does "
            "not take image input]"
        ),
    ]


async def test_audio_is_an_audio_part_or_a_note() -> None:
    out, _ = await _result("sound", _Seeing())
    assert out.content == [WAV]
    out, _ = await _result("sound", MockModel())
    assert out.content == [
        TextPart(
            text="[audio (audio/wav, 4 bytes) from the MCP tool; not shown: this model does "
            "not take audio input]"
        )
    ]


async def test_resource_links_and_embedded_resources_are_text() -> None:
    out, _ = await _result("links", _Seeing())
    assert out.content == [
        TextPart(text="[resource file:///srv/report.pdf: The quarterly report.]"),
        TextPart(text="embedded note"),
    ]


async def test_meta_is_kept_on_the_tool_result_item_with_secrets_redacted() -> None:
    secret = "sk-proj-9Qm2Lr8Tz4Wx6Yv1Bn3Kc5Hd7Jf0Gs"
    model = MockModel()
    out, _ = await _result("picture", model, env={"MEDIA_SECRET": secret})
    assert out.meta is not None
    assert out.meta["trace"] == "t-1"
    assert secret not in str(out.meta)
    out, model = await _result("tagged", MockModel())
    assert out.meta == {"trace": "t-2"}
    assert out.content == [TextPart(text="tagged")]
    dumped = model.requests[1].messages[-1]
    assert isinstance(dumped, ToolResult) and dumped.meta == {"trace": "t-2"}


async def test_outside_a_run_media_are_notes_and_the_value_lists_the_blocks() -> None:
    async with stdio_handle("media") as h:
        out = await bounded(by_name(h)["picture"].invoke(tool_ctx(), {}))
    assert out.value == [
        {"type": "text", "text": "a picture:"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
    ]
    assert out.meta == {"trace": "t-1", "token": ""}
    assert isinstance(out.content[1], TextPart)
