"""The ``Bash`` tool: shell commands through an :class:`ExecutionBackend`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from helikon.core.context import ToolContext
from helikon.core.items import TextPart
from helikon.core.tool import ToolEffect, ToolOutput
from helikon.core.tool_args import schema_of, validate_args
from helikon.errors import ConfigError, InvalidArgs
from helikon.tools._command_rules import CommandRules
from helikon.tools._policy_backend import check_timeout
from helikon.tools._workspace_rules import kernel_note
from helikon.tools.backend import ExecResult, ExecutionBackend, Isolation

__all__ = ["BashTool", "format_result"]


def _section(name: str, text: str) -> str:
    if not text:
        return f"{name}: (empty)"
    return f"{name}:\n{text.rstrip(chr(10))}"


def format_result(r: ExecResult, timeout: float) -> str:
    """The text the model gets: status line, labelled stdout and stderr, notes."""
    if r.cancelled:
        head = "cancelled: the command was stopped and its processes were killed"
    elif r.killed_reason == "memory":
        head = (
            "killed for memory: the command's resident memory passed its ceiling "
            "(ResourceLimits.memory_bytes) and its processes were killed"
        )
    elif r.timed_out:
        head = f"timed out after {timeout:g}s: the command's processes were killed"
    elif r.exit_code is not None:
        head = f"exit code: {r.exit_code}"
    elif r.signal is not None:
        head = f"killed by signal {r.signal}"
    else:
        head = "exit status unknown"
    parts = [head, _section("stdout", r.stdout), _section("stderr", r.stderr)]
    if r.truncated:
        parts.append(
            "[output truncated: a stream over the cap keeps its first and last part; the "
            "cut is marked where it happened]"
        )
    parts.extend(f"[{n}]" for n in r.notes)
    return "\n".join(parts)


class BashTool:
    """Run shell commands through an :class:`ExecutionBackend` (``"Bash"``, ``SIDE_EFFECT``).

    The backend decides containment; its ``guarantees().label`` (and the per-axis summary)
    is part of the description the model reads. With ``allow_commands`` and/or
    ``deny_commands`` every call is first checked by the native command matcher (nested
    substitutions, wrappers, disguised program names); a refused command raises
    :class:`helikon.errors.ToolDenied` naming the rule and the sub-command, and never runs.
    The matcher models bash, which every built-in backend runs (``bash -c command``); with a
    backend built on another shell every command under the lists is refused as not
    analysable (see :attr:`unanalysed_shell`).
    These lists are a usability filter layered on the backend, not a substitute for
    containment.

    The model gets the exit code, stdout and stderr (labelled), and a note when output was
    cut or the command timed out or was cancelled. A non-zero exit is a normal result, not a
    tool error. The run's cancellation token is passed to the backend, which kills the
    command's processes when it fires.

    Args:
        backend: where commands run (:class:`HostBackend`, :class:`OsSandboxBackend`, ...).
        allow_commands: if given, every sub-command must run one of these programs.
        deny_commands: sub-commands running these programs are refused.
        timeout: default seconds per call (default: the backend's default).
        max_timeout: the most a call's ``timeout`` argument may ask for (default 600).

    Raises:
        ConfigError: an invalid option.
    """

    name = "Bash"
    effect = ToolEffect.SIDE_EFFECT

    def __init__(
        self,
        backend: ExecutionBackend,
        *,
        allow_commands: Sequence[str] | None = None,
        deny_commands: Sequence[str] | None = None,
        timeout: float | None = None,
        max_timeout: float = 600.0,
    ) -> None:
        if isinstance(backend, str | os.PathLike):
            raise ConfigError(
                f"BashTool needs an ExecutionBackend, not a path ({backend!r}): open the "
                "workspace and pick the strongest backend this machine enforces: "
                f"backend, reason = best_available_backend(Sandbox.open({str(backend)!r})); "
                "BashTool(backend) (from helikon.tools import BashTool, Sandbox, "
                "best_available_backend)"
            )
        if not isinstance(backend, ExecutionBackend):
            raise ConfigError(f"BashTool needs an ExecutionBackend, got {type(backend).__name__}")
        check_timeout("BashTool.max_timeout", max_timeout)
        if timeout is not None:
            check_timeout("BashTool.timeout", timeout)
            if timeout > max_timeout:
                raise ConfigError(
                    f"BashTool.timeout ({timeout:g}s) exceeds max_timeout ({max_timeout:g}s)"
                )
        self.backend = backend
        self.timeout = timeout
        self.max_timeout = float(max_timeout)
        self.rules = (
            CommandRules(allow_commands, deny_commands)
            if allow_commands is not None or deny_commands
            else None
        )
        self._args_model: type[BaseModel] = pydantic.create_model(
            "BashArgs",
            __config__=ConfigDict(extra="forbid"),
            command=(
                str,
                Field(
                    min_length=1,
                    description="The shell command, run with bash -c in the workspace root.",
                ),
            ),
            timeout=(
                float | None,
                Field(
                    default=None,
                    gt=0,
                    le=self.max_timeout,
                    description=f"Seconds before the command is killed (at most "
                    f"{self.max_timeout:g}; default {self._default_timeout_text()}).",
                ),
            ),
        )
        self.parameters: dict[str, Any] = schema_of(self._args_model)
        self.description = self._describe()

    def _default_timeout_text(self) -> str:
        if self.timeout is not None:
            return f"{self.timeout:g}"
        t = getattr(self.backend, "timeout", None)
        return f"{t:g}" if isinstance(t, int | float) else "the backend's"

    def _describe(self) -> str:
        g = self.backend.guarantees()
        text = (
            "Run a shell command with bash -c; the working directory is the workspace "
            "root and stdin is empty. The result has the exit code, then stdout and stderr, "
            "each labelled; long output keeps its beginning and end. "
            f"Containment: {g.label} (filesystem={g.filesystem.value}, "
            f"network={g.network.value}, syscalls={g.syscalls.value})."
        )
        if g.waived:
            text += f" Waived: {', '.join(g.waived)}."
        if g.contained:
            text += (
                " Only the workspace (and a private temp dir) is writable; access outside it "
                "fails with a permission error."
            )
            if g.network is Isolation.OS_KERNEL:
                text += " The network is unreachable."
            elif g.network is Isolation.PROXIED:
                text += _egress_text(getattr(self.backend, "network", None))
        if self.rules is not None and self.rules.allow is not None:
            text += f" Allowed programs: {', '.join(self.rules.allow)}."
        if self.rules is not None and self.rules.deny:
            text += f" Refused programs: {', '.join(self.rules.deny)}."
        return text

    def __repr__(self) -> str:
        return f"BashTool({self.backend!r})"

    @property
    def unanalysed_shell(self) -> str | None:
        """``None`` when the backend runs commands with bash (the shell the command matcher
        models, and the :class:`ExecutionBackend` contract), else the backend's reason why
        its commands cannot be analysed (``HostBackend(shell="/bin/sh")``). Then every call
        counts as not analysable under this tool's lists and under the run's deny/allow
        rules and guards: refused or asked, never allowed by an allow rule."""
        reason = getattr(self.backend, "unanalysed_shell", None)
        return reason if isinstance(reason, str) and reason else None

    def containment_notes(self, tool: str, args: Any) -> tuple[str, ...]:
        """What the backend enforces for this call whatever the permission decision (see
        :func:`helikon.permissions.explain`'s ``sandbox``); ``()`` for other tools."""
        if tool != self.name:
            return ()
        notes = getattr(self.backend, "containment_notes", None)
        if callable(notes):
            return tuple(notes(tool, args))
        if not self.backend.guarantees().contained:
            return (
                f"not contained ({type(self.backend).__name__}): the command can read, write "
                "and reach whatever this process can; only the permission rules stand in its way",
            )
        return ()

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        """Validate ``args``, check the command lists, run it, format the result.

        Raises:
            InvalidArgs: the arguments do not match the schema.
            ToolDenied: the command is refused by the allow/deny lists (it did not run).
            ToolOther: the backend could not run the command.
        """
        a = validate_args(self._args_model, args)
        command: str = a.command  # type: ignore[attr-defined]
        call_timeout: float | None = a.timeout  # type: ignore[attr-defined]
        if "\x00" in command:
            raise InvalidArgs(["command: must not contain NUL bytes"])
        if self.rules is not None:
            self.rules.check(
                command,
                note=lambda program: kernel_note(self.backend, [program]),
                unanalysed=self.unanalysed_shell,
            )
        timeout = call_timeout if call_timeout is not None else self.timeout
        result = await self.backend.run(command, timeout=timeout, cancel=ctx.cancel)
        shown = timeout if timeout is not None else _backend_timeout(self.backend)
        text = format_result(result, shown)
        return ToolOutput([TextPart(text=text)], result, events=result.network)


def _egress_text(policy: Any) -> str:
    text = (
        " Network access goes only through an egress proxy (HTTP_PROXY, HTTPS_PROXY and "
        "ALL_PROXY are set; names resolve at the proxy, not locally)"
    )
    domains = getattr(policy, "allow_domains", None)
    if domains:
        text += f"; reachable domains: {', '.join(domains)}"
    return text + ". Other destinations are refused."


def _backend_timeout(backend: ExecutionBackend) -> float:
    t = getattr(backend, "timeout", None)
    return float(t) if isinstance(t, int | float) else 0.0
