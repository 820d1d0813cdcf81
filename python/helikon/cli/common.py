"""What every ``helikon`` subcommand shares: consoles, error lines, the event loop driver."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from helikon.cli.sidecar import Sidecar, load_sidecar
from helikon.errors import ConfigError

__all__ = [
    "AGENTS_OPTION",
    "AGENT_OPTION",
    "DEFAULT_AGENTS",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "OLD_SIDECAR_ARGUMENT",
    "consoles",
    "drive",
    "fail",
    "load_or_exit",
    "sidecar_path",
]

DEFAULT_AGENTS = Path("agents.toml")
"""``--agents`` when not given: ``./agents.toml``."""

AGENTS_OPTION = Annotated[
    Path | None,
    typer.Option(
        "--agents",
        "-a",
        metavar="AGENTS_TOML",
        help="The agents.toml sidecar (default: ./agents.toml).",
    ),
]
"""The sidecar, given the same way to every command."""

OLD_SIDECAR_ARGUMENT = Annotated[
    Path | None,
    typer.Argument(metavar="[AGENTS_TOML]", help="Deprecated: use --agents.", hidden=True),
]
"""The old positional sidecar path of ``repl`` and ``mcp serve`` (see :func:`sidecar_path`)."""

AGENT_OPTION = Annotated[
    str | None,
    typer.Option("--agent", help="The sidecar agent (default: the alphabetically first)."),
]
"""The agent, defaulting the same way in every command."""

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def consoles() -> tuple[Console, Console]:
    """The stdout and stderr consoles (no highlighting, no hard wrapping)."""
    return (
        Console(highlight=False, soft_wrap=True),
        Console(stderr=True, highlight=False, soft_wrap=True),
    )


def fail(err: Console, message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``error: message`` on stderr and exit with ``code``."""
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    raise typer.Exit(code)


def sidecar_path(err: Console, agents: Path | None, positional: Path | None, command: str) -> Path:
    """The sidecar to load: ``--agents``, else a deprecated positional path, else the default.

    A positional sidecar path (``helikon repl agents.toml``, the old ``helikon run
    agents.toml INPUT``) still works, with a note on stderr naming the new spelling; given
    together with ``--agents`` it is an error (exit 2).
    """
    if positional is None:
        return agents if agents is not None else DEFAULT_AGENTS
    if agents is not None:
        fail(
            err,
            f"the sidecar is given twice ({positional} and --agents {agents}). "
            f"Fix: helikon {command} --agents {agents} ...",
        )
    err.print(
        f"note: a positional sidecar path is deprecated; use helikon {command} "
        f"--agents {positional} ...",
        markup=False,
        highlight=False,
    )
    return positional


def load_or_exit(err: Console, path: Path) -> Sidecar:
    """Load the sidecar, or print its error and exit 2."""
    try:
        return load_sidecar(path)
    except ConfigError as exc:
        fail(err, str(exc))


def _exit_interrupted() -> NoReturn:
    """Flush the output and leave with 130 (SIGINT), not waiting for worker threads."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(EXIT_INTERRUPTED)


def drive(main: Coroutine[Any, Any, int]) -> int:
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
