"""``helikon`` command: the typer app and ``helikon run``.

Subcommands live in their own modules: ``eval run`` (:mod:`helikon.cli.eval_cmd`),
``mcp serve`` (:mod:`helikon.cli.mcp_cmd`), ``serve`` (:mod:`helikon.cli.serve_cmd`) and
``repl`` (:mod:`helikon.cli.repl`).
"""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated

try:
    import typer
    from rich.console import Console
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the helikon command needs the 'cli' extra: pip install 'helikon[cli]'"
    ) from exc

from rich.markup import escape

from helikon.cli.common import (
    AGENT_OPTION,
    AGENTS_OPTION,
    EXIT_USAGE,
    consoles,
    drive,
    fail,
    load_or_exit,
    sidecar_path,
)
from helikon.cli.doctor import doctor, native_build
from helikon.cli.eval_cmd import eval_app
from helikon.cli.mcp_cmd import mcp_app
from helikon.cli.policy_cmd import policy_app
from helikon.cli.repl import repl
from helikon.cli.replay_cmd import replay
from helikon.cli.resume_cmd import resume, run_with_approvals, terminal_ask
from helikon.cli.serve_cmd import serve
from helikon.cli.sidecar import Sidecar
from helikon.cli.verify_cmd import verify_logs
from helikon.core.agent import Agent
from helikon.errors import ConfigError
from helikon.sessions.protocol import Session

__all__ = ["app", "main"]

_drive = drive  # the loop driver (kept under its old name for callers of this module)

app = typer.Typer(
    name="helikon",
    help="Run helikon agents declared in an agents.toml sidecar.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(eval_app, name="eval")
app.add_typer(mcp_app, name="mcp")
app.add_typer(policy_app, name="policy")
app.command("repl")(repl)
app.command("resume")(resume)
app.command("replay")(replay)
app.command("verify")(verify_logs)
app.command("doctor")(doctor)
app.command("serve")(serve)


def _version() -> str:
    try:
        return version("helikon")
    except PackageNotFoundError:  # running from a source tree that is not installed
        from helikon import __version__

        return __version__


def _print_version(value: bool) -> None:
    if value:
        native = native_build()
        typer.echo(
            f"helikon {_version()} (native core {native['version']}, {native['profile']} build, "
            f"{native['target']})"
        )
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


async def _stream(
    sidecar: Sidecar,
    agent: Agent,
    prompt: str,
    out: Console,
    err: Console,
    session: Session | None = None,
) -> int:
    async with sidecar.mcp_connector() as mcp:
        try:
            await mcp.attach(agent)
        except ConfigError as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
            return EXIT_USAGE
        # an ask pauses the run: a terminal answers y/n/edit, headless the state is saved
        # for `helikon resume` (exit 3); the sidecar's [permissions] apply to every leg
        ask = terminal_ask if sys.stdin.isatty() else None
        return await run_with_approvals(
            agent, prompt, out, err, ask=ask, context=sidecar.context, session=session
        )


_EMPTY_INPUT = (
    "INPUT is empty: there is nothing to send to the agent. "
    'Fix: pass the user message, e.g. helikon run --agents agents.toml "Hello"'
)


@app.command()
def run(
    words: Annotated[
        list[str],
        typer.Argument(metavar="INPUT", help="The user message (quote it).", show_default=False),
    ],
    agents: AGENTS_OPTION = None,
    agent: AGENT_OPTION = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Override the model of every agent: PROVIDER:ID (openai:gpt-5-mini, "
            "openai-responses:ID, anthropic:ID, gemini:ID, bedrock:ID, mock:script.json).",
        ),
    ] = None,
    session_id: Annotated[
        str | None,
        typer.Option(
            "--session",
            help="The conversation to continue (the sidecar's [session] store; default: its id).",
        ),
    ] = None,
) -> None:
    """Run one agent on INPUT, streaming its answer and tool calls.

    With a ``[session]`` table the conversation is loaded before the run and the run is
    recorded into it, so the next ``helikon run`` continues it."""
    out, err = consoles()
    if len(words) == 2:  # the old spelling: helikon run AGENTS_TOML INPUT
        path = sidecar_path(err, agents, Path(words[0]), "run")
    elif len(words) == 1:
        path = sidecar_path(err, agents, None, "run")
    else:
        fail(
            err,
            f"expected one INPUT, got {len(words)} arguments. "
            'Fix: quote the message, e.g. helikon run "How am I doing?"',
        )
    input = words[-1]
    if not input.strip():
        fail(err, _EMPTY_INPUT)
    sidecar = load_or_exit(err, path)
    if session_id is not None and sidecar.session is None:
        fail(
            err,
            f"--session {session_id}: {path} has no [session] table to keep conversations in. "
            'Fix: add [session] with backend = "sqlite" and path = "chat.db"',
        )
    if session_id is not None and not session_id.strip():
        fail(err, "--session: the session id is empty. Fix: --session NAME, e.g. --session work")
    try:
        built = sidecar.build(agent, model_override=model)
    except ConfigError as exc:
        fail(err, str(exc))
    session = sidecar.session.open(session_id) if sidecar.session is not None else None
    raise typer.Exit(drive(_stream(sidecar, built, input, out, err, session)))


def main() -> None:
    """Console-script entry point."""
    sys.exit(app())
