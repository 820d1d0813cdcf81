"""``helikon resume STATE``: continue a run that paused for approval, and the terminal side of
approvals for ``helikon run``.

:func:`run_with_approvals` runs an agent with ``approval="defer"``. When a call asks:

* on a terminal, each waiting call is shown and answered ``y`` (approve), ``n`` (deny, with
  a reason) or ``e`` (edit: new JSON arguments), and the run goes on;
* headless (stdin is not a terminal), the :class:`~helikon.RunState` is written to a file,
  its path is printed on stdout, and the command exits 3; ``helikon resume PATH`` continues
  (``--approve ID``, ``--deny ID=REASON``, ``--edit ID=JSON``, or prompts on a terminal).

A state file resumes once: the first resume creates ``PATH.claimed`` (atomically) and a
later one is refused, so no tool runs twice from the same file.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from helikon.cli.common import AGENT_OPTION, AGENTS_OPTION, consoles, drive, fail, load_or_exit
from helikon.cli.render import render_events
from helikon.core.agent import Agent
from helikon.core.context import RunContext
from helikon.core.decisions import Approve, Decision, Deny, Edit, check_decisions
from helikon.core.events import AgentEvent, RunInterrupted
from helikon.core.run_state import PROCESS_ID, RunState
from helikon.errors import ConfigError, ResumeRefused, RunStateError
from helikon.runtimes.runner import Runner
from helikon.sessions.protocol import Session

__all__ = ["EXIT_PAUSED", "resume", "run_with_approvals", "terminal_ask"]

EXIT_PAUSED = 3
"""Exit code of a headless run that paused for approval (its state file is on stdout)."""

Ask = Callable[[str], str]
AskAsync = Callable[[str], Awaitable[str]]
"""An answer read without blocking the event loop (the REPL reads its input on a thread)."""


async def run_with_approvals(
    agent: Agent,
    input: str | None,
    out: Console,
    err: Console,
    *,
    state: RunState | None = None,
    decisions: dict[str, Decision] | None = None,
    ask: Ask | AskAsync | None = None,
    state_dir: Path | None = None,
    context: Callable[[], RunContext[Any]] | None = None,
    session: Session | None = None,
) -> int:
    """Run ``agent`` on ``input`` (or resume ``state`` with ``decisions``), answering pauses
    with ``ask`` (a terminal prompt) or, without one, saving the state and returning
    :data:`EXIT_PAUSED`.

    ``context`` makes a fresh :class:`~helikon.RunContext` for each leg of the run (the first
    run and every resume): the sidecar passes its ``[permissions]`` this way, so a resumed run
    is checked by the same rules as the run that paused. ``session`` (the sidecar's
    ``[session]``) is loaded before the run and records it (and its resumes). ``ask``
    may be a coroutine function (the REPL's).

    Returns:
        0 when the run completed, 1 when it failed, :data:`EXIT_PAUSED` when it paused
        headless (the state file's path printed on ``out``).
    """
    config = replace(agent.run_config, approval="defer")
    runner = Runner()
    while True:
        last: list[AgentEvent] = []
        ctx = context() if context is not None else None
        stream: AsyncIterator[AgentEvent]
        if state is None:
            stream = runner.run_streamed(
                agent, input or "", ctx=ctx, run_config=config, session=session
            )
        else:
            stream = runner.resume_streamed(
                agent,
                state,
                decisions=decisions or {},
                ctx=ctx,
                run_config=config,
                session=session,
            )
        code = await render_events(_keep_last(stream, last), out, err)
        if not last or not isinstance(last[0], RunInterrupted):
            return code
        state = last[0].state
        if ask is None:
            path = _save(state, state_dir)
            err.print(
                f"[yellow]paused: {len(state.pending)} tool call(s) wait for approval; "
                f"continue with: helikon resume {escape(str(path))} --approve ID | "
                "--deny ID=REASON | --edit ID=JSON[/yellow]"
            )
            out.print(str(path), markup=False, highlight=False)
            return EXIT_PAUSED
        decisions = await ask_decisions(state, ask, err)


async def _keep_last(
    stream: AsyncIterator[AgentEvent], last: list[AgentEvent]
) -> AsyncIterator[AgentEvent]:
    async for ev in stream:
        last[:] = [ev]
        yield ev


def _save(state: RunState, state_dir: Path | None) -> Path:
    folder = state_dir if state_dir is not None else Path.cwd()
    path = folder / f"helikon-paused-{state.run_id}.json"
    path.write_text(state.to_json(), encoding="utf-8")
    return path.resolve()


def prompt_decisions(state: RunState, ask: Ask, err: Console) -> dict[str, Decision]:
    """Ask about each waiting call: ``y`` approve, ``n`` deny (then a reason), ``e`` edit
    (then the new arguments as JSON). Anything else asks again; end of input denies."""
    coro = ask_decisions(state, ask, err)
    try:
        coro.send(None)  # a plain ask never suspends: the coroutine finishes at once
    except StopIteration as done:
        result: dict[str, Decision] = done.value
        return result
    coro.close()
    raise RuntimeError("prompt_decisions takes a plain function; await ask_decisions instead")


async def ask_decisions(state: RunState, ask: Ask | AskAsync, err: Console) -> dict[str, Decision]:
    """:func:`prompt_decisions` with ``ask`` a plain or a coroutine function."""

    async def answer(prompt: str) -> str:
        got = ask(prompt)
        return await got if not isinstance(got, str) else got

    out: dict[str, Decision] = {}
    for p in state.pending:
        err.print(
            f"[bold]approval needed[/bold] {escape(p.tool)}({escape(json.dumps(p.args))})"
            f" — {escape(p.reason)}"
        )
        while True:
            reply = (await answer("allow? [y]es / [n]o / [e]dit: ")).strip().lower()
            if reply in ("y", "yes"):
                out[p.call_id] = Approve()
                break
            if reply in ("n", "no", ""):
                reason = (await answer("reason (for the model): ")).strip()
                reason = reason or "denied at the terminal"
                out[p.call_id] = Deny(reason)
                break
            if reply in ("e", "edit"):
                try:
                    args = json.loads(await answer("new arguments (JSON object): "))
                    out[p.call_id] = Edit(args)
                    break
                except (ValueError, ResumeRefused) as exc:
                    err.print(f"[red]not a JSON object: {escape(str(exc))}[/red]")
    return out


def terminal_ask(prompt: str) -> str:
    """One answer read from the terminal; end of input is ``n`` (never approve by default)."""
    try:
        return input(prompt)
    except EOFError:  # no more answers: deny (never approve by default)
        return "n"


def _flag_decisions(
    err: Console, approve: list[str], deny: list[str], edit: list[str]
) -> dict[str, Decision]:
    out: dict[str, Decision] = {}
    for call_id in approve:
        out[call_id] = Approve()
    for spec in deny:
        call_id, sep, reason = spec.partition("=")
        if not sep or not reason.strip():
            fail(err, f"--deny {spec!r}: write ID=REASON, e.g. --deny call_1='not this account'")
        out[call_id] = Deny(reason)
    for spec in edit:
        call_id, sep, text = spec.partition("=")
        try:
            args = json.loads(text) if sep else None
            out[call_id] = Edit(args)  # type: ignore[arg-type]
        except (ValueError, ResumeRefused):
            fail(err, f"--edit {spec!r}: write ID=JSON with a JSON object, e.g. --edit c1='{{}}'")
    return out


def _claim(err: Console, path: Path) -> None:
    """Create ``PATH.claimed`` atomically, or refuse: the state file was resumed before."""
    marker = path.with_name(path.name + ".claimed")
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        fail(
            err,
            f"{path} was already resumed ({marker} exists); a paused run resumes once, "
            "so nothing ran again",
            1,
        )
    os.close(fd)


def resume(
    state_file: Annotated[
        Path, typer.Argument(metavar="STATE", help="The state file a paused run wrote.")
    ],
    agents: AGENTS_OPTION = None,
    agent: AGENT_OPTION = None,
    approve: Annotated[
        list[str], typer.Option("--approve", metavar="ID", help="Approve call ID (repeat).")
    ] = [],  # noqa: B006 - typer reads the default
    deny: Annotated[
        list[str],
        typer.Option("--deny", metavar="ID=REASON", help="Deny call ID; the model reads REASON."),
    ] = [],  # noqa: B006
    edit: Annotated[
        list[str],
        typer.Option("--edit", metavar="ID=JSON", help="Run call ID with these arguments."),
    ] = [],  # noqa: B006
) -> None:
    """Continue a run that paused for approval (see ``helikon run`` headless)."""
    out, err = consoles()
    try:
        state = RunState.from_json(state_file.read_bytes())
    except OSError as exc:
        fail(err, f"cannot read {state_file}: {exc.strerror or exc}")
    except RunStateError as exc:
        fail(err, f"{state_file}: {exc}")
    sidecar = load_or_exit(err, agents if agents is not None else Path("agents.toml"))
    try:
        built = sidecar.build(agent or state.agent)
    except ConfigError as exc:
        fail(err, str(exc))
    decisions = _flag_decisions(err, approve, deny, edit)
    interactive = sys.stdin.isatty()
    if not decisions:
        if not interactive:
            waiting = ", ".join(f"{p.call_id} ({p.tool})" for p in state.pending)
            fail(
                err,
                f"no decisions given for the waiting calls {waiting}; pass --approve ID, "
                "--deny ID=REASON or --edit ID=JSON for each",
            )
        decisions = prompt_decisions(state, terminal_ask, err)
    try:
        check_decisions(state.pending, decisions)
    except ResumeRefused as exc:
        fail(err, str(exc))
    _claim(err, state_file)
    # STATE.claimed (created atomically) is the resume-once claim of a state file: this
    # process holds it, as the process that paused holds the claim of a run without a session
    state = state.model_copy(update={"paused_in": PROCESS_ID})
    ask = terminal_ask if interactive else None
    # a run paused under the sidecar's [session] finishes in that conversation
    session = (
        sidecar.session.open(state.session_id)
        if sidecar.session is not None and state.session_id
        else None
    )

    async def _resume() -> int:
        async with sidecar.mcp_connector() as mcp:
            try:
                await mcp.attach(built)
            except ConfigError as exc:
                err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
                return 2
            return await run_with_approvals(
                built,
                None,
                out,
                err,
                state=state,
                decisions=decisions,
                ask=ask,
                state_dir=state_file.parent,
                context=sidecar.context,
                session=session,
            )

    try:
        code = drive(_resume())
    except ResumeRefused as exc:
        fail(err, str(exc), 1)
    raise typer.Exit(code)
