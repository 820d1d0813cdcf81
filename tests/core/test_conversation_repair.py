"""The loop repairs the conversation before every model call (issue 6, beyond the spec).

Whatever the conversation holds when a model call is due — an input with an interrupted
tool call, a blank message the model produced, truncated argument JSON — the request the
provider gets is valid, each fix is a ``ConversationRepaired`` event, and a session that
recorded the run replays the same fixes.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from helikon import Agent, ConversationRepaired, tool
from helikon.core.items import (
    AssistantMessage,
    Item,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from helikon.core.repair import (
    INTERRUPTED_RESULT,
    ConversationCheck,
    find_repairs,
    repair_conversation,
)
from helikon.runtimes import Runner
from helikon.sessions import MemorySession, load_conversation, project
from helikon.testing import Call, MockModel, Text


def _kinds(items: list[Item]) -> list[str]:
    return [
        f"{i.type}:{i.call_id}" if isinstance(i, ToolCall | ToolResult) else i.type for i in items
    ]


@tool
def lookup(city: str) -> str:
    """Look a city up.

    Args:
        city: the city's name.
    """
    return f"{city}: sunny"


# ------------------------------------------------------------------ the incremental check


def _random_item(rng: random.Random) -> Item:
    cid = rng.choice(["c0", "c1", "c2", "c3"])
    roll = rng.random()
    if roll < 0.3:
        return ToolCall(call_id=cid, name="t", args=rng.choice([{}, {"a": 1}, '{"x', "[1]"]))
    if roll < 0.6:
        text = rng.choice(["r", " ", ""])
        return ToolResult(call_id=cid, content=[TextPart(text=text)] if text else [])
    if roll < 0.8:
        return UserMessage(content=[TextPart(text=rng.choice(["u", "", "\n"]))])
    if roll < 0.95:
        return AssistantMessage(content=[TextPart(text=rng.choice(["a", " "]))])
    return AssistantMessage(content=[], provider_data={"id": "resp_1"})


@pytest.mark.parametrize("seed", range(200))
def test_incremental_check_equals_a_full_repair_of_the_same_list(seed: int) -> None:
    rng = random.Random(seed)
    check = ConversationCheck()
    convo: list[Item] = []
    for _ in range(rng.randint(1, 8)):
        convo.extend(_random_item(rng) for _ in range(rng.randint(0, 5)))
        before = list(convo)
        repairs = check.repair(convo)
        expect_items, expect_repairs = repair_conversation(before)
        assert convo == expect_items
        assert repairs == expect_repairs
        assert find_repairs(convo) == [], "a checked conversation needs no repair"
        assert check.checked == len(convo)


def test_checked_items_are_not_looked_at_again() -> None:
    """Each check reads only the items added since the last one (O(new items) per turn)."""

    class Exploding(UserMessage):
        @property
        def content(self) -> Any:  # type: ignore[override]
            raise AssertionError("an item checked before was read again")

    check = ConversationCheck()
    head: list[Item] = [UserMessage.text("hi"), ToolCall(call_id="c1", name="t")]
    convo = [*head, ToolResult(call_id="c1", content=[TextPart(text="ok")])]
    assert check.repair(convo) == []
    convo[0] = Exploding.model_construct(type="user_message")
    convo += [ToolCall(call_id="c2", name="t")]
    assert [r.call_id for r in check.repair(convo)] == ["c2"]
    assert _kinds(convo[1:]) == [
        "tool_call:c1",
        "tool_result:c1",
        "tool_call:c2",
        "tool_result:c2",
    ]


# ------------------------------------------------------------------ in a run


async def test_an_input_with_an_interrupted_call_is_repaired_before_the_first_call() -> None:
    """BR-12 without a session: the history a caller passes is made valid too."""
    model = MockModel([[Text("done")]])
    agent = Agent(name="a", model=model, instructions="be brief")
    history: list[Item] = [
        UserMessage.text("clean up"),
        ToolCall(call_id="tu_9", name="Bash", args={"command": "sleep 600"}),
        UserMessage.text("still there?"),
    ]
    events = [ev async for ev in agent.stream(history)]
    assert [e.type for e in events] == [
        "run_started",
        "turn_started",
        "conversation_repaired",
        "token_delta",
        "message_output",
        "run_completed",
    ]
    repair = events[2]
    assert isinstance(repair, ConversationRepaired)
    assert (repair.repair, repair.call_id) == ("tool_result_synthesized", "tu_9")
    assert repair.detail == "tool call 'Bash' has no result"
    sent = model.requests[0].messages
    assert _kinds(sent) == [
        "system",
        "user_message",
        "tool_call:tu_9",
        "tool_result:tu_9",
        "user_message",
    ]
    synthesized = sent[3]
    assert isinstance(synthesized, ToolResult) and synthesized.is_error
    assert synthesized.content == [TextPart(text=INTERRUPTED_RESULT)]
    assert len(history) == 3, "the caller's list is not modified"


async def test_a_blank_message_from_the_model_is_dropped_before_the_next_call() -> None:
    model = MockModel([[Text("  \n"), Call("c1", "lookup", {"city": "Oslo"})], [Text("Sunny.")]])
    agent = Agent(name="a", model=model, tools=[lookup])
    events = [ev async for ev in agent.stream("weather in Oslo?")]
    types = [e.type for e in events]
    at = types.index("conversation_repaired")
    assert types[at - 1] == "turn_started" and types.index("tool_output_item") < at
    repair = events[at]
    assert isinstance(repair, ConversationRepaired)
    assert repair.repair == "empty_text_dropped"
    second = model.requests[1].messages
    assert _kinds(second) == ["user_message", "tool_call:c1", "tool_result:c1"]
    assert events[-1].type == "run_completed"


async def test_truncated_call_arguments_are_replaced_before_the_next_call() -> None:
    model = MockModel([[Call("c1", "lookup", '{"city": "Os')], [Text("Sorry.")]])
    agent = Agent(name="a", model=model, tools=[lookup])
    result = await agent.run("weather?")
    repairs = [e for e in result.events if isinstance(e, ConversationRepaired)]
    assert [(r.repair, r.call_id, r.args) for r in repairs] == [("tool_args_replaced", "c1", {})]
    assert repairs[0].detail.startswith("arguments were not valid JSON (truncated?)")
    call, answer = model.requests[1].messages[1:3]
    assert isinstance(call, ToolCall) and call.args == {}
    assert isinstance(answer, ToolResult) and answer.is_error, "the tool still reported it"
    assert result.final_output == "Sorry."


class _Inject:
    def __init__(self, text: str) -> None:
        self.text = text

    async def on_event(self, ctx: Any, event: Any) -> Any:
        from helikon.core.hooks import Allow, InjectSystemMessage, OnTurnStart

        return InjectSystemMessage(self.text) if isinstance(event, OnTurnStart) else Allow()


async def test_a_valid_run_emits_no_repair_and_blank_injections_are_skipped() -> None:
    model = MockModel([[Call("c1", "lookup", {"city": "Rome"})], [Text("Sunny.")]])
    hooks = [_Inject("   "), _Inject("stay polite")]
    agent = Agent(name="a", model=model, tools=[lookup], instructions=" ", hooks=hooks)
    result = await agent.run("weather in Rome?")
    assert not any(isinstance(e, ConversationRepaired) for e in result.events)
    first = model.requests[0].messages
    assert _kinds(first) == ["user_message", "system"], "blank instructions add no system item"
    assert first[1] == SystemMessage(content=[TextPart(text="stay polite")])


# ------------------------------------------------------------------ with a session


async def test_repairs_made_in_a_run_are_recorded_and_replay_on_load() -> None:
    session = MemorySession()
    model = MockModel(
        [[Text(" "), Call("c1", "lookup", '{"city": ')], [Text("I could not look it up.")]]
    )
    agent = Agent(name="a", model=model, tools=[lookup])
    history: list[Item] = [UserMessage.text("go"), ToolCall(call_id="old", name="lookup")]
    await Runner().run(agent, history, session=session)
    log = await session.events()
    repaired = [(e.repair, e.call_id) for e in log if e.type == "conversation_repaired"]
    assert repaired == [
        ("tool_result_synthesized", "old"),
        ("empty_text_dropped", None),
        ("tool_args_replaced", "c1"),
    ]
    assert not any(e.type == "tool_returned" and e.call_id == "old" for e in log), (
        "the recorder must not answer a call the repair already answered"
    )
    last_request = model.requests[-1].messages
    projected = project(log)
    assert projected[: len(last_request)] == last_request
    assert _kinds(projected[len(last_request) :]) == ["assistant_message"]
    before = len(log)
    assert await load_conversation(session) == projected
    assert len(await session.events()) == before, "recorded repairs hold: nothing to repair"


async def test_a_tool_call_instead_of_a_final_answer_is_answered_before_the_repair_turn() -> None:
    from pydantic import BaseModel

    class Verdict(BaseModel):
        ok: bool

    model = MockModel([[Call("x", "nope", {})], [Text('{"ok": true}')]])
    agent = Agent(name="a", model=model, output_type=Verdict)
    result = await agent.run("judge")
    assert result.final_output == Verdict(ok=True)
    repair_request = model.requests[1].messages
    assert _kinds(repair_request) == [
        "user_message",
        "tool_call:x",
        "tool_result:x",
        "user_message",
    ], "the repair request answers the call, or providers reject it"


@pytest.mark.parametrize("given", ["", "  \n", [UserMessage.text(" ")]])
async def test_an_empty_input_fails_the_run_instead_of_sending_nothing(given: Any) -> None:
    from helikon import RunError

    model = MockModel([[Text("never")]])
    agent = Agent(name="a", model=model, instructions="be brief")
    with pytest.raises(RunError) as exc:
        await agent.run(given)
    assert str(exc.value.error) == (
        "nothing to send to the model: the conversation holds no message (the input was empty "
        "or blank and there is no history); pass the user's message as the input"
    )
    assert model.requests == [], "no request without messages reaches the provider"


async def test_resuming_an_empty_session_fails_clearly() -> None:
    from helikon import RunError

    model = MockModel([[Text("never")]])
    with pytest.raises(RunError, match="nothing to send to the model"):
        await Runner().resume(Agent(name="a", model=model), session=MemorySession())
    assert model.requests == []
