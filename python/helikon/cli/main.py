"""``helikon`` command: ``helikon run AGENTS_TOML [--agent NAME] [--model PROVIDER:ID] INPUT``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Coroutine
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated, Any, NoReturn

try:
    import typer
    from rich.console import Console
    from rich.markup import escape
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the helikon command needs the 'cli' extra: pip install 'helikon[cli]'"
    ) from exc

from helikon.cli.sidecar import load_sidecar
from helikon.core.agent import Agent
from helikon.core.events import (
    ConversationRepaired,
    HandoffItem,
    ReasoningDelta,
    RunCompleted,
    RunFailed,
    TokenDelta,
    ToolCallDelta,
    ToolCallItem,
    ToolOutputItem,
)
from helikon.core.items import text_of
from helikon.errors import ConfigError

__all__ = ["app", "main"]

app = typer.Typer(
    name="helikon",
    help="Run helikon agents declared in an agents.toml sidecar.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version() -> str:
    try:
        return version("helikon")
    except PackageNotFoundError:  # running from a source tree that is not installed
        from helikon import __version__

        return __version__


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"helikon {_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """Run helikon agents declared in an agents.toml sidecar."""


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def _stream(agent: Agent, prompt: str, out: Console, err: Console) -> int:
    mid_line = False
    names: dict[str, str] = {}  # call id -> tool name, so parallel results are labelled
    try:
        async for ev in agent.stream(prompt):
            if isinstance(ev, TokenDelta):
                out.print(ev.text, end="", markup=False, highlight=False, soft_wrap=True)
                mid_line = True
                continue
            if mid_line and not isinstance(ev, ReasoningDelta | ToolCallDelta):
                out.print()
                mid_line = False
            if isinstance(ev, ToolCallItem):
                names[ev.item.call_id] = ev.item.name
                args = escape(_short(ev.item.args))
                out.print(f"[cyan]→ {escape(ev.item.name)}[/cyan]({args})")
            elif isinstance(ev, ToolOutputItem):
                text = text_of(ev.item.content)
                style = "red" if ev.item.is_error else "green"
                label = names.get(ev.item.call_id, ev.item.call_id)
                out.print(f"[{style}]← {escape(label)}: {escape(_short(text))}[/{style}]")
            elif isinstance(ev, HandoffItem):
                out.print(
                    f"[magenta]⇢ handoff {escape(ev.from_agent)} → {escape(ev.to_agent)}[/magenta]"
                )
            elif isinstance(ev, ConversationRepaired):
                note = f"! conversation repaired ({ev.repair}): {ev.detail}"
                err.print(f"[yellow]{escape(note)}[/yellow]")
            elif isinstance(ev, RunCompleted):
                u = ev.usage
                err.print(
                    f"[dim]usage: {u.input_tokens} input, {u.output_tokens} output, "
                    f"{u.total_tokens} total tokens[/dim]"
                )
                return 0
            elif isinstance(ev, RunFailed):
                err.print(f"[red]run failed: {escape(ev.message)}[/red]")
                return 1
    except asyncio.CancelledError:  # Ctrl-C: end the partial answer line, say why it stops
        if mid_line:
            out.print()
        err.print("[yellow]interrupted[/yellow]")
        raise
    return 1


def _exit_interrupted() -> NoReturn:
    """Flush the output and leave with 130 (SIGINT), not waiting for worker threads."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(130)


def _drive(main: Coroutine[Any, Any, int]) -> int:
    """Run ``main`` on a new event loop and return its exit code; Ctrl-C exits 130 promptly.

    On the first Ctrl-C asyncio cancels ``main`` and waits until it has finished (so the
    run's own cleanup, such as a session append, completes), then raises
    ``KeyboardInterrupt``. A synchronous tool may still be running in a worker thread that
    Python cannot stop; ``asyncio.run`` and interpreter exit would both wait for it, so the
    process flushes its output and ends with ``os._exit(130)`` instead. A second Ctrl-C
    during the cleanup exits the same way at once.
    """
    runner = asyncio.Runner()
    try:
        code = runner.run(main)
    except KeyboardInterrupt:
        _exit_interrupted()
    except BaseException:
        runner.close()
        raise
    try:
        runner.close()  # waits for worker threads, e.g. a tool a timeout left running
    except KeyboardInterrupt:
        _exit_interrupted()
    return code


_EMPTY_INPUT = (
    "INPUT is empty: there is nothing to send to the agent. "
    'Fix: pass the user message, e.g. helikon run agents.toml "Hello"'
)


@app.command()
def run(
    agents_toml: Annotated[
        Path, typer.Argument(metavar="AGENTS_TOML", help="The agents.toml sidecar.")
    ],
    input: Annotated[str, typer.Argument(metavar="INPUT", help="The user message.")],
    agent: Annotated[
        str | None, typer.Option("--agent", help="Agent to run (default: alphabetically first).")
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Override the model of every agent: PROVIDER:ID (openai:gpt-5-mini).",
        ),
    ] = None,
) -> None:
    """Run one agent on INPUT, streaming its answer and tool calls."""
    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    if not input.strip():
        err.print(f"[red]error:[/red] {escape(_EMPTY_INPUT)}", highlight=False)
        raise typer.Exit(2)
    try:
        built = load_sidecar(agents_toml).build(agent, model_override=model)
    except ConfigError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from None
    raise typer.Exit(_drive(_stream(built, input, out, err)))


def main() -> None:
    """Console-script entry point."""
    sys.exit(app())
