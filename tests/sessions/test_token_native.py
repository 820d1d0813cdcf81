"""The native token-count walk against the Python reference walk, the vectors and by hand."""

from __future__ import annotations

import collections
import datetime
import decimal
import enum
import json
import math
import random
import struct
import types
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from helikon._native import heuristic_token_chars
from helikon.core.items import (
    AssistantMessage,
    AudioPart,
    ImagePart,
    MediaSource,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolUsePart,
    UserMessage,
    items_adapter,
)
from helikon.sessions import HeuristicTokenCounter
from helikon.sessions.tokens import compact_json
from tests.conftest import load_shared_json
from tests.sessions._token_reference import reference_chars, reference_count

CASES = load_shared_json("conformance/token_counter.json")["cases"]


def args_len(value: Any) -> int:
    """The native compact-JSON length of ``value`` (a tool call with an empty name)."""
    return heuristic_token_chars([{"type": "tool_call", "name": "", "args": value}])


# --- conformance vectors: native and reference agree with the expected counts ---


@pytest.mark.parametrize("case", CASES, ids=[f"case-{i}" for i in range(len(CASES))])
def test_vector_native_and_reference(case: dict[str, Any]) -> None:
    assert HeuristicTokenCounter().count(case["items"]) == case["expect"]
    assert reference_count(case["items"]) == case["expect"]
    assert heuristic_token_chars(case["items"]) == reference_chars(case["items"])


# --- hand-computed values ---


def test_hand_computed_items() -> None:
    items: list[Any] = [
        UserMessage.text("héllo 😀"),  # 7 code points
        AssistantMessage(content=[ReasoningPart(text="ab"), TextPart(text="c")], agent="long"),
        ToolCall(call_id="ignored", name="f", args={"k": 'a"b\n'}),  # 1 + {"k":"a\"b\n"} = 15
        ToolResult(call_id="c", content=[TextPart(text="xyz")]),
        SystemMessage(content=[TextPart(text="sum")]),
        UserMessage(
            content=[
                ImagePart(source=MediaSource(type="url", url="http://x/" + "a" * 100)),
                AudioPart(source=MediaSource(type="base64", data="QUJD", mime_type="a/b")),
                ToolUsePart(call_id="u", name="gg", args=[1, 2.5, None, True]),  # 2 + 17
            ]
        ),
    ]
    assert heuristic_token_chars(items) == reference_chars(items) == 7 + 3 + 15 + 3 + 3 + 19
    assert HeuristicTokenCounter().count(items) == math.ceil(50 / 4) == 13


def test_dict_form_reads_like_the_rule() -> None:
    items = [
        {"type": "tool_call", "name": 12, "args": None},  # "12" + "null"
        {"type": "tool_call", "name": None},  # "" + missing args -> "null"
        {"type": "user_message", "content": None},
        {"type": "user_message"},
        {
            "type": "assistant_message",
            "content": [
                {"type": "text", "text": None},
                {"type": "text", "text": 0},
                {"type": "reasoning", "text": 3.5},  # str(3.5)
                {"type": "tool_use", "name": "n", "args": {"x": []}},  # 1 + {"x":[]}
                {"type": "image", "text": "not counted"},
                {"type": "unknown", "text": "not counted"},
                {
                    "type": "tool_result",
                    "content": [
                        {"type": "tool_result", "content": [{"type": "text", "text": "é"}]},
                    ],
                },
            ],
        },
    ]
    assert heuristic_token_chars(items) == reference_chars(items) == 6 + 4 + 3 + 9 + 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (-7, "-7"),
        (2**63 - 1, str(2**63 - 1)),
        (-(2**63), str(-(2**63))),
        (2**200, str(2**200)),
        (1.0, "1.0"),
        (1e16, "1e+16"),
        (1e-5, "1e-05"),
        (-0.0, "-0.0"),
        (0.1, "0.1"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        ("", '""'),
        ("\x00\x1f\x7f", '"\\u0000\\u001f\x7f"'),
        ("\b\f\n\r\t", '"\\b\\f\\n\\r\\t"'),
        ('"\\/', '"\\"\\\\/"'),
        ("日本😀", '"日本😀"'),
        ("\ud800x", '"\ud800x"'),  # a lone surrogate is one code point
        ({}, "{}"),
        ([], "[]"),
        ((1, "a"), '[1,"a"]'),
        ({"a": [1, {"b": None}]}, '{"a":[1,{"b":null}]}'),
    ],
)
def test_args_length_matches_json_dumps(value: Any, expected: str) -> None:
    assert len(compact_json(value)) == len(expected)
    assert args_len(value) == len(expected)


class Colour(enum.IntEnum):
    RED = 1


class Mode(enum.StrEnum):
    FAST = "fast\n"


class Point(BaseModel):
    x: float


class Weird:
    def __str__(self) -> str:
        return "wéird\n"


@pytest.mark.parametrize(
    "value",
    [
        {1: "a", None: 2, False: 3, 1.5: 4, 2**70: 5},  # non-str keys: json converts them
        {"a": 1, 2: "b"},
        {Mode.FAST: 1},
        Colour.RED,
        Mode.FAST,
        [Colour.RED, Mode.FAST],
        datetime.datetime(2024, 1, 2, 3, 4, 5),
        decimal.Decimal("1.10"),
        {1, 2},
        Point(x=1.5),
        Weird(),
        collections.OrderedDict(b=1, a="é"),
        collections.UserList([1, 2]),
        b"bytes",
        [[[[[[[[[[["deep"]]]]]]]]]]],
    ],
)
def test_args_fallback_values_match_json_dumps(value: Any) -> None:
    assert args_len(value) == len(compact_json(value))


def test_deep_args_fall_back_to_json_and_keep_its_errors() -> None:
    deep: Any = "x"
    for _ in range(400):
        deep = {"k": [deep]}
    assert args_len(deep) == len(compact_json(deep))
    circular: list[Any] = []
    circular.append(circular)
    with pytest.raises(ValueError, match="Circular reference"):
        args_len(circular)
    with pytest.raises(ValueError, match="Circular reference"):
        compact_json(circular)


def test_random_floats_measure_like_repr() -> None:
    rng = random.Random(7)
    values = [struct.unpack("<d", rng.randbytes(8))[0] for _ in range(3000)]
    values += [rng.uniform(-1e6, 1e6) for _ in range(1000)]
    values += [float(rng.randint(-(10**20), 10**20)) for _ in range(500)]
    values += [rng.random() * 10.0 ** rng.randint(-320, 308) for _ in range(1000)]
    assert args_len(values) == len(compact_json(values))


# --- property: native == reference on seeded random conversations ---

ALPHABET = [
    *"abcxyz ABC 019.,;:!?",
    '"',
    "\\",
    "/",
    *"\x00\x01\x08\x09\x0a\x0b\x0c\x0d\x1b\x1f\x7f",
    *"éüßçñ",
    "日",
    "本",
    "语",
    "😀",
    "🚀",
    "👨‍👩‍👧",
    "\u200b",
    "\ufeff",
    "\U0001f3fd",
]


def rand_text(rng: random.Random, limit: int = 30) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, limit)))


def rand_scalar(rng: random.Random) -> Any:
    kind = rng.randrange(9)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.randint(-(10**6), 10**6)
    if kind == 3:
        return rng.randint(-(2**100), 2**100)
    if kind == 4:
        return struct.unpack("<d", rng.randbytes(8))[0]
    if kind == 5:
        return rng.uniform(-1000, 1000)
    if kind == 6:
        return rng.choice([float("nan"), float("inf"), -0.0, 1e-7, 1e22])
    return rand_text(rng)


def rand_args(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(4) if depth < 4 else 3
    if kind == 0:
        return {rand_text(rng, 8): rand_args(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    if kind == 1:
        return [rand_args(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if kind == 2:
        return tuple(rand_args(rng, depth + 1) for _ in range(rng.randint(0, 3)))
    return rand_scalar(rng)


def rand_model_part(rng: random.Random) -> Any:
    kind = rng.randrange(5)
    if kind == 0:
        return TextPart(text=rand_text(rng))
    if kind == 1:
        return ReasoningPart(text=rand_text(rng), signature=rand_text(rng))
    if kind == 2:
        return ImagePart(source=MediaSource(type="url", url="https://e/" + rand_text(rng)))
    if kind == 3:
        return AudioPart(source=MediaSource(type="base64", data="QUJD", mime_type="audio/wav"))
    return ToolUsePart(call_id=rand_text(rng, 5), name=rand_text(rng, 8), args=rand_args(rng))


def rand_dict_part(rng: random.Random, depth: int) -> dict[str, Any]:
    if depth < 3 and rng.random() < 0.2:
        return {
            "type": "tool_result",
            "call_id": "n",
            "content": [rand_dict_part(rng, depth + 1) for _ in range(rng.randint(0, 3))],
        }
    part: dict[str, Any] = rand_model_part(rng).model_dump()
    if rng.random() < 0.1:
        part.pop("text", None)  # a missing text counts zero
    return part


def rand_content(rng: random.Random, as_dict: bool) -> list[Any]:
    n = rng.randint(0, 4)
    if as_dict:
        return [rand_dict_part(rng, 0) for _ in range(n)]
    return [rand_model_part(rng) for _ in range(n)]


def rand_item(rng: random.Random) -> Any:
    kind = rng.randrange(5)
    as_dict = rng.random() < 0.4
    item: Any
    if kind == 0:
        item = UserMessage(content=rand_content(rng, False))
    elif kind == 1:
        item = AssistantMessage(content=rand_content(rng, False), agent=rand_text(rng, 6))
    elif kind == 2:
        item = SystemMessage(content=rand_content(rng, False))
    elif kind == 3:
        item = ToolCall(call_id=rand_text(rng, 5), name=rand_text(rng, 10), args=rand_args(rng))
    else:
        item = ToolResult(call_id="c", content=rand_content(rng, False), is_error=True)
    if not as_dict:
        return item
    data: dict[str, Any] = item.model_dump()
    if "content" in data:
        data["content"] = rand_content(rng, True)  # dict parts, nested tool results
    return data


def conversations(seed: int, count: int) -> Iterator[list[Any]]:
    rng = random.Random(seed)
    for _ in range(count):
        yield [rand_item(rng) for _ in range(rng.randint(0, 12))]


@pytest.mark.parametrize("seed", range(8))
def test_native_equals_reference_on_random_conversations(seed: int) -> None:
    for items in conversations(seed, 60):
        expected = reference_chars(items)
        assert heuristic_token_chars(items) == expected, items
        assert heuristic_token_chars(tuple(items)) == expected
        assert HeuristicTokenCounter().count(items) == reference_count(items)


def test_random_conversations_are_rich() -> None:
    """The generator reaches every shape the property test is meant to cover."""
    kinds: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, BaseModel):
            node = node.model_dump()
        if isinstance(node, dict):
            kinds.add(str(node.get("type")))
            for value in node.values():
                walk(value)
        elif isinstance(node, list | tuple):
            for value in node:
                walk(value)
        elif isinstance(node, float):
            kinds.add("float")
        elif isinstance(node, str) and any(c in node for c in "😀\n\x00"):
            kinds.add("special-text")

    for items in conversations(0, 60):
        walk(items)
    assert {"tool_use", "tool_result", "tool_call", "float", "special-text"} <= kinds


def test_models_and_their_validated_dicts_agree() -> None:
    for items in conversations(99, 40):
        models = [i for i in items if isinstance(i, BaseModel)]
        as_json = json.loads(json.dumps([m.model_dump(mode="json") for m in models]))
        revalidated = items_adapter.validate_python(as_json)
        assert heuristic_token_chars(as_json) == reference_chars(as_json)
        assert heuristic_token_chars(revalidated) == heuristic_token_chars(as_json)


# --- accepted containers and errors ---


def test_other_sequences_and_mappings_are_accepted() -> None:
    item = {"type": "user_message", "content": [{"type": "text", "text": "abcd"}]}
    proxy = types.MappingProxyType(
        {"type": "user_message", "content": [types.MappingProxyType({"type": "text", "text": "x"})]}
    )
    assert heuristic_token_chars(collections.UserList([item, item])) == 8
    assert heuristic_token_chars(collections.deque([item])) == 4
    assert heuristic_token_chars([proxy]) == reference_chars([proxy]) == 1


@pytest.mark.parametrize(
    ("value", "kind"),
    [(5, "int"), (None, "NoneType"), ("text", "str"), (b"x", "bytes"), ({}, "dict")],
)
def test_non_sequence_raises_type_error(value: Any, kind: str) -> None:
    with pytest.raises(TypeError, match=f"takes a sequence of items .*, not {kind}$"):
        heuristic_token_chars(value)
    with pytest.raises(TypeError, match="takes a sequence of items"):
        HeuristicTokenCounter().count(value)


def test_generator_is_not_a_sequence() -> None:
    gen = (i for i in [UserMessage.text("a")])
    with pytest.raises(TypeError, match="not generator"):
        heuristic_token_chars(gen)  # type: ignore[arg-type]


def test_deep_tool_result_nesting_raises_value_error() -> None:
    def nested(depth: int) -> list[dict[str, Any]]:
        part: dict[str, Any] = {"type": "text", "text": "x"}
        for _ in range(depth):
            part = {"type": "tool_result", "content": [part]}
        return [{"type": "user_message", "content": [part]}]

    assert heuristic_token_chars(nested(255)) == 1
    with pytest.raises(ValueError, match="nested deeper than 256 levels"):
        heuristic_token_chars(nested(300))
    loop: dict[str, Any] = {"type": "tool_result", "content": []}
    loop["content"].append(loop)
    with pytest.raises(ValueError, match="nested deeper"):
        heuristic_token_chars([{"type": "user_message", "content": [loop]}])


def test_errors_from_items_propagate() -> None:
    class Broken(Sequence[Any]):
        def __len__(self) -> int:
            return 1

        def __getitem__(self, index: Any) -> Any:
            raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        heuristic_token_chars(Broken())
    with pytest.raises(TypeError):
        heuristic_token_chars([{"type": "user_message", "content": 5}])
