"""TurnAccumulator: streamed model events become the turn's items."""

from __future__ import annotations

from helikon import (
    AssistantMessage,
    Finish,
    FinishReason,
    ProviderMetadata,
    ReasoningDelta,
    ReasoningPart,
    TextPart,
    TokenDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    UsageReported,
)
from helikon.core.turn import TurnAccumulator


def test_fragments_join_in_order() -> None:
    acc = TurnAccumulator()
    for ev in [
        ReasoningDelta(text="plan", signature=None),
        ReasoningDelta(text="", signature="SIG1"),
        TokenDelta(text="Look"),
        TokenDelta(text="ing."),
        ToolCallDelta(call_id="b", name="fx", args_delta='{"pair":'),
        ToolCallDelta(call_id="a", name="gx", args_delta="{}"),
        ToolCallDelta(call_id="b", args_delta='"EURUSD"}'),
        UsageReported(usage=Usage(input_tokens=5, output_tokens=2, total_tokens=7)),
        Finish(reason=FinishReason.TOOL_CALLS, raw="tool_use"),
    ]:
        acc.add(ev)
    assert acc.items("agent") == [
        AssistantMessage(
            content=[ReasoningPart(text="plan", signature="SIG1"), TextPart(text="Looking.")],
            agent="agent",
        ),
        ToolCall(call_id="b", name="fx", args={"pair": "EURUSD"}),
        ToolCall(call_id="a", name="gx", args={}),
    ]
    assert acc.usage.total_tokens == 7
    assert acc.finish is FinishReason.TOOL_CALLS and acc.finish_raw == "tool_use"


def test_truncated_arguments_stay_raw() -> None:
    acc = TurnAccumulator()
    acc.add(ToolCallDelta(call_id="c", name="f", args_delta='{"a": 1'))
    (call,) = acc.items("x")
    assert isinstance(call, ToolCall) and call.args == '{"a": 1'


def test_provider_metadata_attaches_to_message_or_call() -> None:
    acc = TurnAccumulator()
    acc.add(TokenDelta(text="hi"))
    acc.add(ProviderMetadata(data={"id": "resp_1"}))
    acc.add(ProviderMetadata(data={"n": 2}))
    acc.add(ToolCallDelta(call_id="c", name="f", args_delta="{}"))
    acc.add(ProviderMetadata(data={"sig": "S"}, call_id="c"))
    msg, call = acc.items("x")
    assert isinstance(msg, AssistantMessage) and msg.provider_data == {"id": "resp_1", "n": 2}
    assert isinstance(call, ToolCall) and call.provider_data == {"sig": "S"}
    only_calls = TurnAccumulator()
    only_calls.add(ProviderMetadata(data={"id": "resp_2"}))
    only_calls.add(ToolCallDelta(call_id="c", name="f", args_delta="{}"))
    (c,) = only_calls.items("x")
    assert isinstance(c, ToolCall) and c.provider_data == {"id": "resp_2"}
