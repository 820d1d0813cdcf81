"""``helikon repl [--agents agents.toml] [--agent NAME]``: chat with a sidecar agent.

The conversation lives in one session run by :class:`~helikon.runtimes.Runner`, so every turn
sees the turns before it: the sidecar's ``[session]`` (a stored conversation continues across
REPLs and ``helikon run``), else a :class:`~helikon.sessions.MemorySession`. The sidecar's
folder is watched (``watchfiles``, debounced 300 ms): saving the sidecar, a file it
references or a Python file next to it rebuilds the agent for the next turn and says so on
stderr; a reload that fails prints why and keeps the previous agent. Ctrl-C cancels the
turn in progress (the REPL goes on), Ctrl-D or ``/exit`` quits.

Lines are read by a thread (``input()`` on a terminal, for line editing; plain lines from a
pipe) that reads the next line only once the previous one is handled, so the prompt never
cuts into an answer.

A tool call that asks for approval pauses the turn and asks, like ``helikon run``: ``y``
approve, ``n`` deny (then a reason), ``e`` edit (then the new arguments as JSON); the turn
goes on with the answer. End of input denies, then quits.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from helikon.cli.common import (
    AGENT_OPTION,
    AGENTS_OPTION,
    EXIT_INTERRUPTED,
    OLD_SIDECAR_ARGUMENT,
    consoles,
    fail,
    sidecar_path,
)
from helikon.cli.reload import Loaded, load_agent, watched
from helikon.cli.resume_cmd import AskAsync, run_with_approvals
from helikon.cli.sidecar import load_sidecar
from helikon.cli.sidecar_mcp import McpConnector
from helikon.core.items import text_of
from helikon.errors import ConfigError
from helikon.runtimes import Runner
from helikon.sessions import MemorySession, Session

__all__ = ["repl"]

HELP = """\
/help            this list
/agent [NAME]    show the agent, or switch to NAME (the conversation is kept)
/history         the conversation so far
/reset           start a new conversation
/reload          reload the sidecar now (saving a file reloads it too)
/exit            quit (also Ctrl-D)"""


class _Repl:
    def __init__(self, path: Path, loaded: Loaded, out: Console, err: Console) -> None:
        self.path = path
        self.loaded = loaded
        self.out = out
        self.err = err
        self.session = self._session()
        self.runner = Runner()
        self.turn: asyncio.Task[int] | None = None
        self.mcp: McpConnector | None = None
        self.ask: AskAsync = _deny
        """Reads an approval answer like the next line (set by :func:`_loop`)."""
        """The MCP servers, from the sidecar as it was at start (a reload keeps them)."""

    def _session(self) -> Session:
        """The sidecar's ``[session]`` (its stored conversation continues), else memory."""
        settings = self.loaded.sidecar.session
        return settings.open() if settings is not None else MemorySession()

    # ---------------------------------------------------------------- reload

    def reload(self, reason: str, name: str | None = None) -> None:
        """Rebuild the agent (``name``, default the current one); keep the old one on error."""
        target = name or self.loaded.name
        try:
            self.loaded = load_agent(self.path, target, fresh_modules=True)
        except ConfigError as exc:
            self.err.print(
                f"[red]reload failed ({escape(reason)}), keeping the previous agent:[/red] "
                f"{escape(str(exc))}",
                highlight=False,
            )
            return
        self.err.print(
            f"[green]reloaded {escape(self.path.name)} ({escape(reason)}): "
            f"agent {escape(self.loaded.name)}[/green]",
            highlight=False,
        )

    def switch(self, name: str) -> None:
        """``/agent NAME``: rebuild as ``NAME``; an unknown name says so and changes nothing."""
        try:
            names = sorted(load_sidecar(self.path).agents)
        except ConfigError:
            names = sorted(self.loaded.sidecar.agents)  # the reload below reports the error
        if name not in names:
            self.err.print(
                f"no agent {name!r} in {self.path.name} (agents: {', '.join(names)}); "
                f"still agent {self.loaded.name}",
                markup=False,
                highlight=False,
            )
            return
        self.reload(f"/agent {name}", name)

    async def watch(self, stop: asyncio.Event) -> None:
        from watchfiles import awatch

        folder = self.path.parent.resolve()
        async for changes in awatch(folder, debounce=300, stop_event=stop):
            hits = watched(self.loaded.sidecar, {p for _, p in changes})
            if hits:
                self.reload("changed: " + ", ".join(hits))

    # ---------------------------------------------------------------- turns

    async def run_turn(self, text: str) -> int:
        if self.mcp is not None:
            try:
                await self.mcp.attach(self.loaded.agent)
            except ConfigError as exc:
                self.err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
                return 1
        return await run_with_approvals(
            self.loaded.agent,
            text,
            self.out,
            self.err,
            ask=self.ask,
            context=self.loaded.sidecar.context,
            session=self.session,
        )

    def interrupt(self) -> None:
        """Ctrl-C: cancel the turn in progress, or explain how to quit."""
        if self.turn is not None and not self.turn.done():
            self.turn.cancel()
        else:
            self.err.print("(Ctrl-D or /exit quits)", markup=False)

    async def turn_on(self, text: str) -> None:
        self.turn = asyncio.create_task(self.run_turn(text))
        await asyncio.wait({self.turn})
        self.turn = None

    # ---------------------------------------------------------------- commands

    async def command(self, line: str) -> bool:
        """Handle a slash command; False means quit."""
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        if name in ("/exit", "/quit"):
            return False
        if name == "/help":
            self.out.print(HELP, markup=False)
        elif name == "/agent":
            if not arg:
                names = ", ".join(sorted(self.loaded.sidecar.agents))
                self.out.print(f"agent {self.loaded.name} (agents: {names})", markup=False)
            else:
                self.switch(arg)
        elif name == "/history":
            for item in await self.session.snapshot():
                self.out.print(_describe(item), markup=False)
        elif name == "/reset":
            self.session = MemorySession()
            stored = self.loaded.sidecar.session is not None
            note = " (in memory: the stored [session] is left as it was)" if stored else ""
            self.err.print(f"new conversation{note}", markup=False)
        elif name == "/reload":
            self.reload("/reload")
        else:
            self.err.print(f"unknown command {name!r}; /help lists the commands", markup=False)
        return True


async def _deny(prompt: str) -> str:
    return "n"  # no input source: deny (never approve by default)


def _describe(item: Any) -> str:
    kind = item.type
    if kind == "tool_call":
        return f"tool call: {item.name}({_short(item.args)})"
    if kind == "tool_result":
        label = "tool error" if item.is_error else "tool result"
        return f"{label}: {_short(text_of(item.content))}"
    label = {"user_message": "user", "assistant_message": "assistant"}.get(kind, kind)
    return f"{label}: {_short(text_of(item.content))}"


def _short(value: Any, limit: int = 120) -> str:
    import json

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _reader(
    loop: asyncio.AbstractEventLoop,
    lines: asyncio.Queue[str | None],
    ready: threading.Event,
    prompt: Callable[[], str] | None,
) -> None:
    """Read one line each time ``ready`` is set; ``None`` at end of input."""
    while True:
        ready.wait()
        ready.clear()
        line: str | None
        if prompt is not None:
            try:
                line = input(prompt())
            except EOFError:
                line = None
        else:
            raw = sys.stdin.readline()
            line = raw.rstrip("\r\n") if raw else None
        try:
            loop.call_soon_threadsafe(lines.put_nowait, line)
        except RuntimeError:  # the loop is closed: the REPL has ended
            return
        if line is None:
            return


async def _main(repl: _Repl, interactive: bool) -> int:
    async with contextlib.AsyncExitStack() as stack:
        return await _loop(repl, interactive, stack)


async def _loop(repl: _Repl, interactive: bool, stack: contextlib.AsyncExitStack) -> int:
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str | None] = asyncio.Queue()
    ready = threading.Event()
    asking: list[str] = []  # the approval question being asked, if any

    async def ask(question: str) -> str:
        """An approval answer: the next input line (end of input denies, then quits)."""
        if not interactive:
            repl.err.print(question, markup=False, highlight=False)
        asking[:] = [question]
        ready.set()
        line = await lines.get()
        asking.clear()
        if line is None:
            lines.put_nowait(None)  # the REPL ends after this turn
            return "n"
        return line

    repl.ask = ask
    prompt = (lambda: asking[0] if asking else f"{repl.loaded.name}> ") if interactive else None
    threading.Thread(
        target=_reader, args=(loop, lines, ready, prompt), name="helikon-repl-input", daemon=True
    ).start()
    stop = asyncio.Event()
    watcher = None
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        repl.err.print("hot reload off: pip install watchfiles (use /reload)", markup=False)
    else:
        watcher = asyncio.create_task(repl.watch(stop))
    repl.mcp = await stack.enter_async_context(repl.loaded.sidecar.mcp_connector())
    loop.add_signal_handler(signal.SIGINT, repl.interrupt)
    repl.err.print(
        f"agent {repl.loaded.name} from {repl.path}; /help lists the commands, "
        "Ctrl-D or /exit quits",
        markup=False,
    )
    try:
        while True:
            ready.set()
            line = await lines.get()
            if line is None:
                break
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                if not await repl.command(text):
                    break
                continue
            await repl.turn_on(text)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        stop.set()
        if watcher is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(watcher, 5)
    return 0


def repl(
    positional: OLD_SIDECAR_ARGUMENT = None,
    agents: AGENTS_OPTION = None,
    agent: AGENT_OPTION = None,
) -> None:
    """Chat with a sidecar agent; reloads when the sidecar or its tools change.

    Ctrl-C cancels the current turn, Ctrl-D or /exit quits. Exit code: 0 on quit, 2 when the
    sidecar is invalid at start.
    """
    out, err = consoles()
    path = sidecar_path(err, agents, positional, "repl")
    # compile tool modules from source on every reload: a cached .pyc can look current when
    # a file is saved twice within one second with the same size
    sys.dont_write_bytecode = True
    with tempfile.TemporaryDirectory(prefix="helikon-repl-") as empty:
        sys.pycache_prefix = empty
        try:
            loaded = load_agent(path, agent)
        except ConfigError as exc:
            fail(err, str(exc))
        runner = asyncio.Runner()
        try:
            code = runner.run(_main(_Repl(path, loaded, out, err), sys.stdin.isatty()))
        except KeyboardInterrupt:  # a Ctrl-C before the REPL's own handler is installed
            code = EXIT_INTERRUPTED
        if _tool_threads_running():
            # a cancelled turn left a synchronous tool running in a worker thread: closing
            # the loop, and interpreter exit, would wait for it
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(code)
        runner.close()
    raise typer.Exit(code)


def _tool_threads_running() -> bool:
    main = threading.main_thread()
    return any(t is not main and t.is_alive() and not t.daemon for t in threading.enumerate())
