"""A small support dataset and script file driving a real helikon Agent on MockModel."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from helikon import Agent, tool
from helikon.evals import EvalCase, EvalDataset
from helikon.testing import MockModel

DATASET = "\n".join(
    json.dumps(c)
    for c in [
        {
            "id": "shipped",
            "input": "Where is A-17?",
            "expected": "Order A-17 has shipped.",
            "expected_tools": ["lookup_order"],
        },
        {
            "id": "wrong",
            "input": "Where is B-2?",
            "expected": "Order B-2 was cancelled.",
            "expected_tools": ["lookup_order", "refund"],
        },
        {"input": "Hello"},
        {"id": "crash", "input": "Boom", "expected": "x"},
        {
            "id": "json",
            "input": "Status of A-17 as JSON",
            "expected": {"status": "shipped"},
            "expected_tools": [],
            "metadata": {"format": "json"},
        },
    ]
)


def _call(call_id: str, order: str) -> dict[str, object]:
    return {"tool_call": {"call_id": call_id, "name": "lookup_order", "args": {"order_id": order}}}


SCRIPTS = {
    "default": [[{"token": "Hi! How can I help?"}, {"usage": [5, 4]}]],
    "cases": {
        "shipped": [
            [_call("c1", "A-17"), {"usage": [10, 3]}],
            [{"token": "Order A-17 has shipped."}, {"usage": [20, 5]}],
        ],
        "wrong": [
            [_call("c1", "B-2"), {"usage": [10, 3]}],
            [{"token": "Order B-2 has shipped."}, {"usage": [20, 5]}],
        ],
        "crash": [[{"error": {"kind": "Unavailable", "message": "model down"}}]],
        "json": [[{"token": '```json\n{"status": "shipped"}\n```'}, {"usage": [7, 6]}]],
    },
}


@tool
def lookup_order(order_id: str) -> dict[str, str]:
    """Find an order by id."""
    return {"id": order_id, "status": "shipped"}


@pytest.fixture
def dataset(tmp_path: Path) -> EvalDataset:
    path = tmp_path / "support.jsonl"
    path.write_text(DATASET + "\n", encoding="utf-8")
    return EvalDataset.from_jsonl_path(path)


@pytest.fixture
def factory(tmp_path: Path) -> Callable[[EvalCase], Agent]:
    path = tmp_path / "scripts.json"
    path.write_text(json.dumps(SCRIPTS), encoding="utf-8")

    def build(case: EvalCase) -> Agent:
        model = MockModel.from_script_file(path, case=case.id)
        return Agent(name="support", model=model, tools=[lookup_order])

    return build
