"""The stdio client transport: a child process speaking newline-delimited JSON-RPC.

helikon runs its own instead of ``mcp.client.stdio.stdio_client`` because a server is
untrusted code and the package's transport trusts it in ways that hang or flood the client:

* a line that is not UTF-8 ends the package's reader (every pending and later call then
  waits for its timeout, forever without one); here the line is logged and skipped, and the
  reply that follows it is delivered. A line that is UTF-8 but not a JSON-RPC message is
  skipped the same way (logged, at most :data:`_LOGGED_BAD_LINES` times per server);
* a line without an end grows without bound there; here a line longer than
  ``max_message_bytes`` ends the connection with an error naming the limit (pending calls
  fail at once, the server is stopped);
* the server's stderr is not written to the client's stderr (a flooding server would flood
  it) but drained into a bounded tail that the exit error quotes.

The shutdown order is the protocol's (lifecycle, "Shutdown", stdio): close the server's
stdin, wait, SIGTERM its process group, SIGKILL it, reap; every wait bounded, and shielded
from the caller's cancellation so that no server outlives its handle. Parsing uses the
``mcp`` package's own JSON-RPC message model, and the process-group kill its POSIX helper.
"""

from __future__ import annotations

import logging
import subprocess
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import anyio
import anyio.abc
import anyio.lowlevel
import mcp_types as types
from mcp.client._transport import TransportStreams
from mcp.client.stdio import get_default_environment
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "StdioState", "open_stdio"]

logger = logging.getLogger("helikon.mcp")

DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024
"""The longest line (one JSON-RPC message) a stdio server may send: 32 MiB."""

_LOGGED_BAD_LINES = 10  # per server; later bad lines are only counted
_PREVIEW = 120  # characters of a bad line quoted in the log
_STDERR_TAIL = 4096  # bytes of the server's stderr kept for the exit error
_STDIN_GRACE = 2.0  # after stdin closes, before SIGTERM
_TERM_GRACE = 2.0  # after SIGTERM, before SIGKILL
_REAP_WAIT = 2.0
_FLUSH_WAIT = 0.5
_POLL = 0.01


class StdioState:
    """What the transport learned about its server: process, faults, stderr tail.

    Attributes:
        process: the child once spawned.
        fault: why the transport ended the connection itself (a line over the limit), or
            ``None``.
        bad_lines: how many lines were skipped (not UTF-8, or not a JSON-RPC message).
    """

    def __init__(self, label: str, max_message_bytes: int) -> None:
        self.label = label
        self.max_message_bytes = max_message_bytes
        self.process: anyio.abc.Process | None = None
        self.fault: str | None = None
        self.bad_lines = 0
        self._stderr: deque[bytes] = deque()
        self._stderr_len = 0

    def stderr_tail(self, limit: int = 300) -> str:
        """The last non-empty lines of the server's stderr, at most ``limit`` characters."""
        text = b"".join(self._stderr).decode("utf-8", "replace")
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        tail = " | ".join(lines[-3:])
        return tail if len(tail) <= limit else "..." + tail[-(limit - 3) :]

    def _keep_stderr(self, chunk: bytes) -> None:
        self._stderr.append(chunk)
        self._stderr_len += len(chunk)
        while self._stderr_len - len(self._stderr[0]) >= _STDERR_TAIL:
            self._stderr_len -= len(self._stderr.popleft())

    def _bad_line(self, line: bytes, why: str) -> None:
        self.bad_lines += 1
        if self.bad_lines <= _LOGGED_BAD_LINES:
            preview = line[:_PREVIEW].decode("utf-8", "replace")
            more = "" if self.bad_lines < _LOGGED_BAD_LINES else " (further bad lines not logged)"
            logger.warning(
                "MCP server %s: skipped a stdout line that is %s: %r%s",
                self.label,
                why,
                preview,
                more,
            )


def _message(state: StdioState, line: bytes) -> SessionMessage | None:
    if not line.strip():
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        state._bad_line(line, "not UTF-8")
        return None
    try:
        message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValueError:
        state._bad_line(line, "not a JSON-RPC message")
        return None
    return SessionMessage(message)


@asynccontextmanager
async def open_stdio(
    state: StdioState,
    command: str,
    args: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: str | Path | None,
) -> AsyncIterator[TransportStreams]:
    """Start ``command args`` and yield the session's (read, write) streams.

    ``env`` is merged over the ``mcp`` package's safe default environment (``PATH``,
    ``HOME``, ...); the parent's full environment is not inherited.

    Raises:
        OSError: the command could not be started.
    """
    process = await anyio.open_process(
        [command, *args],
        env=get_default_environment() | dict(env or {}),
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    state.process = process
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()
    cap = state.max_message_bytes

    async def read_stdout() -> None:
        assert process.stdout is not None
        buf = bytearray()
        try:
            async with to_session:
                async for chunk in process.stdout:
                    start = 0
                    while (end := chunk.find(b"\n", start)) != -1:
                        buf += chunk[start:end]
                        start = end + 1
                        if len(buf) > cap:
                            break
                        message = _message(state, bytes(buf))
                        buf.clear()
                        if message is not None:
                            await to_session.send(message)
                    else:
                        buf += chunk[start:]
                    if len(buf) > cap:
                        state.fault = (
                            f"MCP server {state.label} sent a message over the "
                            f"{cap}-byte limit (max_message_bytes); the connection was closed"
                        )
                        logger.warning("%s", state.fault)
                        return
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            await _drain(process.stdout)

    async def read_stderr() -> None:
        assert process.stderr is not None
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for chunk in process.stderr:
                state._keep_stderr(chunk)

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for session_message in from_session:
                    data = session_message.message.model_dump_json(
                        by_alias=True, exclude_unset=True
                    )
                    await process.stdin.send(data.encode("utf-8") + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await to_session.aclose()  # the session sees the end instead of waiting
        finally:
            writer_done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_stdout)
        tg.start_soon(read_stderr)
        tg.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()
                write_stream.close()
                with anyio.move_on_after(_FLUSH_WAIT):
                    await writer_done.wait()
                await stop_process(process)
                for stream in (read_stream, write_stream, to_session, from_session):
                    await stream.aclose()
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()


async def _drain(stdout: anyio.abc.ByteReceiveStream) -> None:
    """Read and drop what is left, so a server blocked on a full pipe can exit."""
    with (
        anyio.CancelScope(shield=True),
        suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError),
    ):
        while True:
            await stdout.receive()


async def _exited(process: anyio.abc.Process, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        while process.returncode is None:
            await anyio.sleep(_POLL)
    return process.returncode is not None


async def stop_process(process: anyio.abc.Process) -> None:
    """Close stdin, wait, SIGTERM the group, SIGKILL it, reap; bounded (about 6 s)."""
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        if process.stdin is not None:
            await process.stdin.aclose()
    if not await _exited(process, _STDIN_GRACE):
        await terminate_posix_process_tree(process, _TERM_GRACE)
        if not await _exited(process, _REAP_WAIT):
            logger.warning("MCP server process %d survived SIGKILL; abandoning it", process.pid)
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await pipe.aclose()
