"""``helikon eval run DATASET [--agents agents.toml] [--agent NAME]``: score an agent.

Every case of a JSONL dataset runs on a fresh agent built from the sidecar.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from helikon.cli.common import (
    AGENT_OPTION,
    AGENTS_OPTION,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    consoles,
    drive,
    fail,
    load_or_exit,
    sidecar_path,
)
from helikon.cli.eval_config import build_evaluators
from helikon.cli.eval_progress import CaseProgress
from helikon.cli.sidecar_mcp import McpConnector
from helikon.core.agent import Agent
from helikon.errors import ConfigError
from helikon.evals import DatasetError, EvalCase, EvalDataset, EvalRun, TraceSinkError
from helikon.evals.evaluator import Evaluator
from helikon.evals.report import CaseResult, EvalReport
from helikon.evals.sinks.base import TraceSink

__all__ = ["EXIT_TRACE", "eval_app"]

EXIT_TRACE = 3
"""The run finished (the report is printed) but ``--trace`` could not record it."""

eval_app = typer.Typer(
    name="eval",
    help="Evaluate a sidecar agent on a JSONL dataset.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _trace_sink(err: Console, trace: str) -> TraceSink:
    kind, sep, target = trace.partition(":")
    where = f"--trace {trace!r}"
    if not sep or not target or kind not in ("sqlite", "parquet"):
        fail(
            err, f"{where}: expected sqlite:PATH or parquet:DIR. Fix: e.g. --trace sqlite:evals.db"
        )
    path = Path(target)
    if kind == "sqlite":
        from helikon.evals import SqliteTraceSink

        if not path.parent.is_dir():
            fail(err, f"{where}: no directory {path.parent}. Fix: create it or pick another path")
        return SqliteTraceSink(path)
    from helikon.evals import ParquetTraceSink

    try:
        return ParquetTraceSink(path)
    except ImportError as exc:
        fail(err, f"{where}: {exc}")


async def _run(
    run: EvalRun,
    finished: list[CaseResult],
    mcp: McpConnector,
    *,
    as_json: bool,
    fail_under: float | None,
    trace: str | None,
    err: Console,
) -> int:
    async with mcp:
        return await _run_cases(
            run, finished, as_json=as_json, fail_under=fail_under, trace=trace, err=err
        )


async def _run_cases(
    run: EvalRun,
    finished: list[CaseResult],
    *,
    as_json: bool,
    fail_under: float | None,
    trace: str | None,
    err: Console,
) -> int:
    loop = asyncio.get_running_loop()
    started = datetime.now(UTC)
    task = asyncio.ensure_future(run.run())
    loop.add_signal_handler(signal.SIGINT, task.cancel)
    sink_error = None
    interrupted = False
    try:
        report = await task
    except TraceSinkError as exc:
        report, sink_error = exc.report, str(exc)
    except asyncio.CancelledError:
        interrupted = True
        report = EvalReport(
            run_id=run.run_id,
            started_at=started,
            finished_at=datetime.now(UTC),
            evaluators=[ev.name for ev in run.evaluators],
            cases=sorted(finished, key=lambda r: r.index),
        )
    finally:
        loop.remove_signal_handler(signal.SIGINT)  # a second Ctrl-C exits at once
    if interrupted:
        err.print(
            f"interrupted: {len(report.cases)} of {len(run.dataset)} cases finished; "
            "the report below holds those",
            markup=False,
        )
        sink_error = await _record(run, report)
    sys.stdout.write((report.model_dump_json() if as_json else report.render_table()) + "\n")
    sys.stdout.flush()
    code = 0 if report.passed() else EXIT_FAILED
    if fail_under is not None:
        mean = report.mean_score()
        if mean is None:
            err.print(f"no score to compare with --fail-under {fail_under:g}", markup=False)
            code = EXIT_FAILED
        elif mean < fail_under:
            err.print(f"mean score {mean:.3f} is under --fail-under {fail_under:g}", markup=False)
            code = EXIT_FAILED
    if sink_error is not None:
        message = f"--trace {trace!r}: {sink_error}"
        err.print(f"[red]error:[/red] {escape(message)}", highlight=False)
        code = EXIT_TRACE
    return EXIT_INTERRUPTED if interrupted else code


async def _record(run: EvalRun, report: EvalReport) -> str | None:
    """Record a partial report in the run's sinks; the first failure's text, if any."""
    for sink in run.sinks:
        try:
            await sink.record(report)
        except Exception as exc:
            return f"could not record run {run.run_id}: {type(exc).__name__}: {exc}"
    return None


@eval_app.command("run")
def eval_run(
    dataset: Annotated[
        Path, typer.Argument(metavar="DATASET", help="The JSONL dataset, one case per line.")
    ],
    agents: AGENTS_OPTION = None,
    agent: AGENT_OPTION = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON instead of a table.")
    ] = False,
    fail_under: Annotated[
        float | None,
        typer.Option(
            "--fail-under", help="Also fail when the mean score is under F (0 to 1).", metavar="F"
        ),
    ] = None,
    trace: Annotated[
        str | None,
        typer.Option(
            "--trace",
            help="Record the run: sqlite:PATH (or parquet:DIR, needs pyarrow).",
            metavar="sqlite:PATH",
        ),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option("--concurrency", metavar="N", help="Run up to N cases at once (default 1)."),
    ] = 1,
) -> None:
    """Run every case on a fresh agent, score it with the sidecar's evaluators, print the report.

    Exit code: 0 every case passed, 1 a case failed or the mean is under --fail-under,
    2 bad arguments, sidecar or dataset, 3 --trace could not record the run.
    """
    _, err = consoles()
    if concurrency < 1:
        fail(err, f"--concurrency {concurrency}: must be >= 1. Fix: e.g. --concurrency 4")
    if fail_under is not None and not 0.0 <= fail_under <= 1.0:
        fail(err, f"--fail-under {fail_under:g}: must be in [0, 1]. Fix: e.g. --fail-under 0.8")
    sinks = [_trace_sink(err, trace)] if trace is not None else []
    sidecar = load_or_exit(err, sidecar_path(err, agents, None, "eval run"))
    try:
        sidecar.build(agent)  # the whole file is checked and the agent can be built
        evaluators: list[Evaluator] = build_evaluators(sidecar, sidecar.eval)
    except ConfigError as exc:
        fail(err, str(exc))
    try:
        cases = EvalDataset.from_jsonl_path(dataset)
    except DatasetError as exc:
        fail(err, str(exc))
    if not len(cases):
        fail(
            err,
            f"{dataset}: no cases. Fix: add one JSON object per line, e.g. "
            '{"input": "What is 2+2?", "expected": "4"}',
        )
    finished: list[CaseResult] = []
    mcp = sidecar.mcp_connector()

    async def make(case: EvalCase) -> Agent:
        built = sidecar.build(agent, case=case.id)
        await mcp.attach(built)  # a server that cannot start is that case's error
        return built

    with CaseProgress(err, len(cases)) as progress:

        def on_case(result: CaseResult) -> None:
            finished.append(result)
            progress.case_done(result)

        run = EvalRun(
            dataset=cases,
            evaluators=evaluators,
            agent_factory=make,
            ctx_factory=lambda case: sidecar.context(),
            sinks=sinks,
            concurrency=concurrency,
            on_case=on_case,
        )
        code = drive(
            _run(run, finished, mcp, as_json=as_json, fail_under=fail_under, trace=trace, err=err)
        )
    raise typer.Exit(code)
