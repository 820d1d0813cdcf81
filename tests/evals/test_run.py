"""End-to-end: EvalRun over a helikon Agent on MockModel scripts, exact scores."""

from __future__ import annotations

import gc
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helikon import Agent
from helikon.agents import SequentialAgent
from helikon.core.items import text_of
from helikon.errors import ConfigError
from helikon.evals import (
    CaseOutcome,
    EvalCase,
    EvalDataset,
    EvalError,
    EvalReport,
    EvalRun,
    EvaluatorSummary,
    ExactMatch,
    Score,
    ToolUseTrajectory,
    TraceSinkError,
)
from helikon.testing import Delay, Fail, MockModel, Text, Usage

Factory = Callable[[EvalCase], Agent]


class CrashOnJson:
    """Raises on the case whose metadata asks for JSON, passes the rest."""

    name = "crashy"

    async def evaluate(self, case: EvalCase, outcome: CaseOutcome) -> Score:
        if case.metadata.get("format") == "json":
            raise EvalError("cannot grade JSON")
        return Score.passed(0.5)


def scores(report: EvalReport) -> list[tuple[str, str, list[Any]]]:
    out = []
    for c in report.cases:
        cells: list[Any] = []
        for r in c.results:
            if r.score is None:
                cells.append((r.evaluator, "error", r.error))
            else:
                cells.append((r.evaluator, r.score.outcome.value, r.score.value))
        out.append((c.case.id, "pass" if c.passed else f"fail:{c.error}", cells))
    return out


EXPECTED = [
    (
        "shipped",
        "pass",
        [
            ("exact_match", "passed", 1.0),
            ("tool_trajectory", "passed", 1.0),
            ("crashy", "passed", 0.5),
        ],
    ),
    (
        "wrong",
        "fail:None",
        [
            ("exact_match", "failed", 0.0),
            ("tool_trajectory", "failed", 0.0),
            ("crashy", "passed", 0.5),
        ],
    ),
    (
        "case-3",
        "pass",
        [
            ("exact_match", "skipped", 0.0),
            ("tool_trajectory", "skipped", 0.0),
            ("crashy", "passed", 0.5),
        ],
    ),
    ("crash", "fail:model error (Unavailable): model down", []),
    (
        "json",
        "fail:None",
        [
            ("exact_match", "passed", 1.0),
            ("tool_trajectory", "passed", 1.0),
            ("crashy", "error", "EvalError: cannot grade JSON"),
        ],
    ),
]


def evaluators() -> list[Any]:
    return [ExactMatch(), ToolUseTrajectory.exact(), CrashOnJson()]


async def test_end_to_end_exact_scores(dataset: EvalDataset, factory: Factory) -> None:
    report = await EvalRun(
        dataset=dataset, evaluators=evaluators(), agent_factory=factory, run_id="r1"
    ).run()
    assert scores(report) == EXPECTED
    assert not report.passed()
    assert [c.case.id for c in report.failed_cases] == ["wrong", "crash", "json"]
    assert report.summary() == [
        EvaluatorSummary(evaluator="exact_match", passed=2, failed=1, skipped=1, mean=2 / 3),
        EvaluatorSummary(evaluator="tool_trajectory", passed=2, failed=1, skipped=1, mean=2 / 3),
        EvaluatorSummary(evaluator="crashy", passed=3, errors=1, mean=0.5),
    ]
    assert report.mean_score() == pytest.approx((1 + 1 + 0 + 0 + 0.5 * 3 + 1 + 1) / 9)
    shipped = report.cases[0].outcome
    assert shipped is not None
    assert shipped.final_response == "Order A-17 has shipped."
    assert shipped.tool_names == ["lookup_order"]
    assert (shipped.agent, shipped.usage.input_tokens, shipped.usage.output_tokens) == (
        "support",
        30,
        8,
    )
    assert [e.type for e in report.cases[0].session_events] == [
        "user_message",
        "tool_called",
        "permission_decided",
        "tool_returned",
        "assistant_message",
    ]
    # the failed run is still recorded as the session saw it
    assert [e.type for e in report.cases[3].session_events] == ["user_message"]
    assert "detail" in report.cases[1].results[0].score.model_dump()  # type: ignore[union-attr]
    assert report.cases[1].results[0].score.detail == (  # type: ignore[union-attr]
        "expected 'Order B-2 was cancelled.', got 'Order B-2 has shipped.'"
    )


async def test_results_keep_dataset_order_under_concurrency() -> None:
    delays = {"a": 0.06, "b": 0.0, "c": 0.03, "d": 0.01}
    ds = EvalDataset([EvalCase(id=k, input="go", expected=k) for k in delays])
    finished: list[str] = []

    def build(case: EvalCase) -> Agent:
        model = MockModel([[Delay(delays[case.id]), Text(case.id)]])
        return Agent(name="a", model=model, hooks=[_Done(case.id, finished)])

    report = await EvalRun(
        dataset=ds, evaluators=[ExactMatch()], agent_factory=build, concurrency=4
    ).run()
    assert [c.case.id for c in report.cases] == ["a", "b", "c", "d"]
    assert [c.index for c in report.cases] == [0, 1, 2, 3]
    assert all(c.passed for c in report.cases)
    assert finished == ["b", "d", "c", "a"]  # they really ran at once


class _Done:
    def __init__(self, name: str, sink: list[str]) -> None:
        self.name, self.sink = name, sink

    async def on_event(self, ctx: Any, event: Any) -> None:
        if type(event).__name__ == "OnRunComplete":
            self.sink.append(self.name)


async def test_concurrency_gives_the_same_scores(dataset: EvalDataset, factory: Factory) -> None:
    report = await EvalRun(
        dataset=dataset, evaluators=evaluators(), agent_factory=factory, concurrency=3
    ).run()
    assert scores(report) == EXPECTED


async def test_shared_agent_and_async_factory() -> None:
    ds = EvalDataset([EvalCase(id="1", input="a", expected="x"), EvalCase(id="2", input="b")])
    agent = Agent(name="a", model=MockModel([[Text("x")], [Text("y")]]))
    report = await EvalRun(dataset=ds, evaluators=[ExactMatch()], agent=agent).run()
    assert [c.outcome.final_response for c in report.cases if c.outcome] == ["x", "y"]

    async def build(case: EvalCase) -> Agent:
        return Agent(name="a", model=MockModel([[Text("x")]]))

    report = await EvalRun(dataset=ds, evaluators=[ExactMatch()], agent_factory=build).run()
    assert report.passed()


async def test_factory_failures_stay_with_their_case() -> None:
    ds = EvalDataset(
        [EvalCase(id="ok", input="a"), EvalCase(id="bad", input="b"), EvalCase(id="odd", input="c")]
    )

    def build(case: EvalCase) -> Any:
        if case.id == "bad":
            raise RuntimeError("no agent for you")
        if case.id == "odd":
            return "not an agent"
        return Agent(name="a", model=MockModel([[Text("fine")]]))

    report = await EvalRun(dataset=ds, evaluators=[ExactMatch()], agent_factory=build).run()
    assert [(c.case.id, c.error) for c in report.cases] == [
        ("ok", None),
        ("bad", "RuntimeError: no agent for you"),
        (
            "odd",
            "ConfigError: EvalRun(agent_factory=...) returned str: 'not an agent' is not an "
            "agent; pass an Agent or a pattern from helikon.agents (anything with a name and "
            "stream(input, ctx, run_config=...))",
        ),
    ]


async def test_evaluator_returning_a_non_score_is_its_error() -> None:
    class Bad:
        name = "bad"

        async def evaluate(self, case: EvalCase, outcome: CaseOutcome) -> Any:
            return 1.0

    ds = EvalDataset([EvalCase(id="1", input="a")])
    agent = Agent(name="a", model=MockModel([[Text("x")]]))
    report = await EvalRun(dataset=ds, evaluators=[Bad()], agent=agent).run()
    (result,) = report.cases[0].results
    assert result.error == "evaluate() returned float, not a Score"
    assert not report.passed()


def test_render_table_and_json(dataset: EvalDataset, factory: Factory) -> None:
    report = EvalRun(
        dataset=dataset, evaluators=evaluators(), agent_factory=factory, run_id="r1"
    ).run_sync()
    err = "model error (Unavailable): model down"
    assert report.render_table().splitlines() == [
        "case     result                                        exact_match  tool_trajectory"
        "  crashy",
        "-------  --------------------------------------------  -----------  ---------------"
        "  -----------",
        "shipped  PASS                                          passed 1.00  passed 1.00"
        "      passed 0.50",
        "wrong    FAIL                                          failed 0.00  failed 0.00"
        "      passed 0.50",
        "case-3   PASS                                          skip         skip"
        "             passed 0.50",
        f"crash    ERROR: {err}  -            -                -",
        "json     FAIL                                          passed 1.00  passed 1.00"
        "      error",
        "",
        "2/5 cases passed",
        "exact_match: 2 passed, 1 failed, 1 skipped, 0 errors, mean 0.667",
        "tool_trajectory: 2 passed, 1 failed, 1 skipped, 0 errors, mean 0.667",
        "crashy: 3 passed, 0 failed, 0 skipped, 1 errors, mean 0.500",
    ]
    doc = json.loads(report.model_dump_json())
    assert doc["run_id"] == "r1"
    assert doc["cases"][0]["outcome"] == {
        "final_response": "Order A-17 has shipped.",
        "tool_calls": [doc["cases"][0]["outcome"]["tool_calls"][0]],
        "agent": "support",
        "usage": doc["cases"][0]["outcome"]["usage"],
    }
    assert doc["cases"][0]["outcome"]["tool_calls"][0]["name"] == "lookup_order"
    assert "events" not in doc["cases"][0]["outcome"]
    assert "session_events" not in doc["cases"][0]
    assert doc["cases"][3]["error"] == "model error (Unavailable): model down"


async def test_sink_failure_keeps_the_report() -> None:
    class Broken:
        async def record(self, report: EvalReport) -> None:
            raise OSError("disk full")

    ds = EvalDataset([EvalCase(id="1", input="a", expected="x")])
    agent = Agent(name="a", model=MockModel([[Text("x")]]))
    with pytest.raises(
        TraceSinkError, match="Broken: could not record run r: OSError: disk full"
    ) as info:
        await EvalRun(
            dataset=ds, evaluators=[ExactMatch()], agent=agent, sinks=[Broken()], run_id="r"
        ).run()
    assert info.value.report.passed()
    assert len(info.value.report.cases) == 1


class SyncEvaluate:
    name = "sync"

    def evaluate(self, case: EvalCase, outcome: CaseOutcome) -> Score:
        return Score.passed()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of agent"),
        ({"agent": "x", "agent_factory": lambda c: c}, "exactly one of agent"),
        ({"agent": "x"}, r"^EvalRun\(agent=...\): 'x' is not an agent; pass an Agent or a pattern"),
        ({"agent_factory": "x"}, r"agent_factory=...\) must be a function .* got str$"),
        ({"agent_factory": lambda c: c, "ctx_factory": 3}, r"ctx_factory=...\) must be a func"),
        ({"agent_factory": lambda c: c, "runner": object()}, r"runner=...\) has no run_streamed"),
        ({"agent_factory": lambda c: c, "run_config": {}}, r"must be a RunConfig, got dict$"),
        ({"agent_factory": lambda c: c, "evaluators": [object()]}, r"evaluators\[0\] \(object\)"),
        (
            {"agent_factory": lambda c: c, "evaluators": ExactMatch()},
            r"^EvalRun\(evaluators=...\) must be a list, got ExactMatch; e.g. "
            r"evaluators=\[ExactMatch\(\)\]$",
        ),
        (
            {"agent_factory": lambda c: c, "evaluators": [ExactMatch]},
            r"evaluators\[0\] is the class ExactMatch, not an evaluator; pass an instance",
        ),
        (
            {"agent_factory": lambda c: c, "evaluators": [ExactMatch(), SyncEvaluate()]},
            r"^EvalRun\(evaluators=...\): evaluators\[1\] \(SyncEvaluate, name 'sync'\): "
            r"evaluate is a plain `def`; the run awaits it, so declare it `async def evaluate",
        ),
        (
            {"agent_factory": lambda c: c, "evaluators": [ExactMatch(), ExactMatch()]},
            "two evaluators are named 'exact_match'",
        ),
        ({"agent_factory": lambda c: c, "concurrency": 0}, "concurrency"),
        ({"agent_factory": lambda c: c, "run_id": "a/b"}, "run_id"),
        ({"agent_factory": lambda c: c, "sinks": [object()]}, r"sinks\[0\]"),
        ({"agent_factory": lambda c: c, "sinks": "x.db"}, r"sinks=...\) must be a list, got str"),
    ],
)
def test_bad_configuration(kwargs: dict[str, Any], message: str) -> None:
    kwargs.setdefault("evaluators", [ExactMatch()])
    with pytest.raises(ConfigError, match=message):
        EvalRun(dataset=[], **kwargs)


def _unused(case: EvalCase) -> Agent:
    raise AssertionError("no case should run")


@pytest.mark.parametrize(
    ("dataset", "message"),
    [
        (
            "support.jsonl",
            "EvalRun(dataset=...) got the path 'support.jsonl', not a dataset; load it first: "
            "dataset=EvalDataset.from_jsonl_path('support.jsonl')",
        ),
        (
            Path("d/support.jsonl"),
            "EvalRun(dataset=...) got the path 'd/support.jsonl', not a dataset; load it first: "
            "dataset=EvalDataset.from_jsonl_path('d/support.jsonl')",
        ),
        (
            5,
            "EvalRun(dataset=...) must be an EvalDataset (EvalDataset.from_jsonl_path(path)) or "
            "a list of EvalCase, got int",
        ),
        (
            {"input": "hi"},
            "EvalRun(dataset=...) must be an EvalDataset (EvalDataset.from_jsonl_path(path)) or "
            "a list of EvalCase, got dict",
        ),
        (
            [EvalCase(id="a", input="x"), {"input": "hi"}],
            "EvalRun(dataset=...): dataset[1] is a dict, not an EvalCase; pass "
            "EvalDataset.from_jsonl_path(path) or a list of EvalCase(id=..., input=...)",
        ),
    ],
)
def test_a_dataset_of_the_wrong_type_is_a_config_error(dataset: Any, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        EvalRun(dataset=dataset, evaluators=[ExactMatch()], agent_factory=_unused)
    assert str(info.value) == message


def test_a_generator_of_cases_is_a_dataset() -> None:
    run = EvalRun(
        dataset=(EvalCase(id=str(i), input="x") for i in range(2)),
        evaluators=[ExactMatch()],
        agent_factory=_unused,
    )
    assert [c.id for c in run.dataset] == ["0", "1"]


async def test_run_sync_inside_an_event_loop_is_a_clear_error() -> None:
    ds = EvalDataset([EvalCase(id="1", input="a", expected="x")])
    run = EvalRun(
        dataset=ds,
        evaluators=[ExactMatch()],
        agent_factory=lambda c: Agent(name="a", model=MockModel([[Text("x")]])),
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError) as info:
            run.run_sync()
        gc.collect()
    assert str(info.value) == (
        "EvalRun.run_sync() cannot run inside an event loop; use await EvalRun.run()"
    )
    assert info.value.__cause__ is None and info.value.__context__ is None
    assert [str(w.message) for w in caught] == []  # no "coroutine ... never awaited"
    assert (await run.run()).passed()


async def test_a_run_with_no_case_does_not_pass() -> None:
    report = await EvalRun(
        dataset=[], evaluators=[ExactMatch()], agent_factory=_unused, run_id="e"
    ).run()
    assert report.cases == []
    assert not report.passed()
    assert report.mean_score() is None
    assert report.render_table().splitlines()[-3:] == [
        "0/0 cases passed",
        "no cases were run, so the run does not pass",
        "exact_match: 0 passed, 0 failed, 0 skipped, 0 errors, mean -",
    ]


WRITER_MODELS: dict[str, MockModel] = {}


def _pipeline(case: EvalCase) -> SequentialAgent:
    """researcher -> writer; the writer's answer is scripted per case."""
    researcher = Agent(
        name="researcher",
        model=MockModel([[Text(f"notes on {case.input}"), Usage(10, 2)]]),
    )
    writer_model = MockModel([[Text(str(case.metadata["answer"])), Usage(7, 3)]])
    writer = Agent(
        name="writer",
        model=writer_model,
        instructions=lambda ctx: f"Brief from: {ctx.state['researcher']}",
    )
    WRITER_MODELS[case.id] = writer_model
    return SequentialAgent("pipe", "research, then write", steps=[researcher, writer])


async def test_a_sequential_pattern_is_evaluated_end_to_end() -> None:
    ds = EvalDataset(
        [
            EvalCase(
                id="ok",
                input="rates",
                expected="Rates are up.",
                metadata={"answer": "Rates are up."},
            ),
            EvalCase(
                id="bad", input="jobs", expected="Jobs are up.", metadata={"answer": "Jobs fell."}
            ),
            EvalCase(id="none", input="hi", metadata={"answer": "Hello."}),
        ]
    )
    report = await EvalRun(
        dataset=ds, evaluators=[ExactMatch(), CrashOnJson()], agent_factory=_pipeline
    ).run()
    assert scores(report) == [
        ("ok", "pass", [("exact_match", "passed", 1.0), ("crashy", "passed", 0.5)]),
        ("bad", "fail:None", [("exact_match", "failed", 0.0), ("crashy", "passed", 0.5)]),
        ("none", "pass", [("exact_match", "skipped", 0.0), ("crashy", "passed", 0.5)]),
    ]
    assert report.cases[1].results[0].score.detail == (  # type: ignore[union-attr]
        "expected 'Jobs are up.', got 'Jobs fell.'"
    )
    assert not report.passed()
    assert report.mean_score() == pytest.approx((1.0 + 0.0 + 0.5 * 3) / 5)
    ok = report.cases[0].outcome
    assert ok is not None
    assert (ok.final_response, ok.agent, ok.tool_names) == ("Rates are up.", "writer", [])
    assert (ok.usage.input_tokens, ok.usage.output_tokens) == (17, 5)  # both steps summed
    assert [e.type for e in report.cases[0].session_events] == [
        "user_message",
        "assistant_message",
        "assistant_message",
    ]
    # the writer really saw the researcher's notes: the pattern ran, not just one agent
    writer_model = WRITER_MODELS["ok"]
    system = writer_model.requests[0].messages[0]
    assert text_of(system.content) == "Brief from: notes on rates"  # type: ignore[union-attr]


async def test_a_shared_pattern_agent_and_a_failing_step() -> None:
    ds = EvalDataset([EvalCase(id="1", input="a", expected="two")])
    a = Agent(name="a", model=MockModel([[Text("one")]]))
    b = Agent(name="b", model=MockModel([[Text("two")]]))
    report = await EvalRun(
        dataset=ds, evaluators=[ExactMatch()], agent=SequentialAgent("p", steps=[a, b])
    ).run()
    assert scores(report) == [("1", "pass", [("exact_match", "passed", 1.0)])]
    assert report.passed()

    def broken(case: EvalCase) -> SequentialAgent:
        a = Agent(name="a", model=MockModel([[Text("one")]]))
        b = Agent(name="b", model=MockModel([[Fail("Unavailable", "model down")]]))
        return SequentialAgent("p", steps=[a, b])

    report = await EvalRun(dataset=ds, evaluators=[ExactMatch()], agent_factory=broken).run()
    assert scores(report) == [("1", "fail:model error (Unavailable): model down", [])]
    assert not report.passed()
