"""``helikon`` command: ``helikon run AGENTS_TOML [--agent NAME] [--model PROVIDER:ID] INPUT``."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any

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


@app.callback()
def _root() -> None:
    """Run helikon agents declared in an agents.toml sidecar."""


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def _stream(agent: Agent, prompt: str, out: Console, err: Console) -> int:
    mid_line = False
    names: dict[str, str] = {}  # call id -> tool name, so parallel results are labelled
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
            out.print(f"[cyan]→ {escape(ev.item.name)}[/cyan]({escape(_short(ev.item.args))})")
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
    return 1


@app.command()
def run(
    agents_toml: Annotated[Path, typer.Argument(help="The agents.toml sidecar.")],
    input: Annotated[str, typer.Argument(help="The user message.")],
    agent: Annotated[
        str | None, typer.Option("--agent", help="Agent to run (default: alphabetically first).")
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Override the model: PROVIDER:ID (openai:gpt-5-mini)."),
    ] = None,
) -> None:
    """Run one agent on INPUT, streaming its answer and tool calls."""
    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        built = load_sidecar(agents_toml).build(agent, model_override=model)
    except ConfigError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from None
    code = asyncio.run(_stream(built, input, out, err))
    raise typer.Exit(code)


def main() -> None:
    """Console-script entry point."""
    sys.exit(app())
