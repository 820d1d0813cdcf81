"""``helikon policy check``: a candidate permission configuration against recorded sessions.

``helikon policy check --policy POLICY.toml --sessions SESSION_URL [--format text|json]``
loads the ``[permissions]`` table of ``POLICY.toml`` (the loader and shape of
``agents.toml``'s, so an ``agents.toml`` works as it is), reads every session of
``SESSION_URL`` (:mod:`.policy_sessions`) and prints the calls whose outcome the candidate
flips (see :mod:`helikon.audit`).

Exit codes: 0 nothing changes, 1 some call changes, 2 a bad policy file, session URL or
unreachable store.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from helikon.audit import Change, dry_run
from helikon.cli.common import EXIT_FAILED, consoles, drive, fail
from helikon.cli.policy_sessions import read_sessions
from helikon.cli.sidecar_file import SidecarFile
from helikon.cli.sidecar_policy import PermissionSettings, check_permissions
from helikon.core.tool import ToolEffect
from helikon.errors import ConfigError, SessionError

__all__ = ["EXIT_CHANGED", "load_policy", "parse_effects", "policy_app", "table_lines"]

EXIT_CHANGED = EXIT_FAILED
"""Exit code when the candidate configuration changes the outcome of some recorded call."""

_SESSIONS_HELP = (
    "sqlite:///PATH.db, redis://HOST:PORT/DB or postgresql://USER@HOST/DB; #ID for one session."
)

policy_app = typer.Typer(
    name="policy",
    help="Check a permission configuration against recorded sessions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def load_policy(path: Path) -> PermissionSettings:
    """The checked ``[permissions]`` table of ``path`` (other tables are ignored).

    Raises:
        SidecarError: the file cannot be read, is not TOML, has no ``[permissions]`` table,
            or the table is invalid (the message names the key and the fix).
    """
    sc = SidecarFile(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise sc.err("file", f"cannot read it ({exc.strerror})", "check the path") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise sc.err("file", f"not valid TOML ({exc})", "fix the syntax") from None
    if "permissions" not in doc:
        raise sc.err(
            "permissions",
            "the file has no [permissions] table",
            'add [permissions] with mode, deny, allow or guards (e.g. mode = "default")',
        )
    return check_permissions(sc, doc["permissions"])


def _args(args: Any) -> str:
    text = json.dumps(args, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


_HEADER = ("SESSION", "SEQ", "TOOL", "ARGS", "WAS", "NOW", "WHY")


def _was(change: Change) -> str:
    """``allowed``, or ``allowed (human)`` when a person, the approval handler or a hook
    decided it when it was recorded."""
    if change.recorded_by in (None, "policy"):
        return change.before
    return f"{change.before} ({change.recorded_by})"


def table_lines(changes: list[Change]) -> list[str]:
    """The changes as a plain table: a header and one line per change, columns padded to
    their widest cell and separated by two spaces (the last column is not padded)."""
    rows = [_HEADER] + [
        (
            c.session_id,
            str(c.sequence),
            c.tool,
            _args(c.args),
            _was(c),
            c.after,
            f"{c.stage}: {c.reason}" if c.reason else c.stage,
        )
        for c in changes
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADER) - 1)]
    return [
        "  ".join([*(cell.ljust(w) for cell, w in zip(r, widths, strict=False)), r[-1]])
        for r in rows
    ]


def parse_effects(values: list[str]) -> dict[str, ToolEffect]:
    """``--effect TOOL=EFFECT`` options as a mapping (``EFFECT``: read_only, write, side_effect).

    Raises:
        ConfigError: a value that is not ``TOOL=EFFECT`` or names an unknown effect.
    """
    out: dict[str, ToolEffect] = {}
    choices = [e.value for e in ToolEffect]
    for value in values:
        name, sep, effect = value.partition("=")
        if not sep or not name.strip() or effect not in choices:
            raise ConfigError(
                f"--effect {value!r} is not TOOL=EFFECT with EFFECT one of {choices}. "
                "Fix: e.g. --effect search=read_only"
            )
        out[name.strip()] = ToolEffect(effect)
    return out


async def _check(
    policy: PermissionSettings, url: str, effects: dict[str, ToolEffect]
) -> tuple[list[Change], int, int]:
    from helikon.audit import recorded_calls

    logs = await read_sessions(url)
    changes: list[Change] = []
    calls = 0
    for sid, events in logs.items():
        calls += sum(1 for c in recorded_calls(events) if c.outcome in ("allowed", "denied"))
        changes += await dry_run(policy.context(), events, session_id=sid, effects=effects)
    return changes, calls, len(logs)


@policy_app.command("check")
def check(
    policy: Annotated[
        Path, typer.Option("--policy", help="A TOML file with a \\[permissions] table.")
    ],
    sessions: Annotated[
        str,
        typer.Option(
            "--sessions",
            help="sqlite:///PATH.db, redis://HOST:PORT/DB or postgresql://USER@HOST/DB; "
            "#ID for one session.",
        ),
    ],
    format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    effect: Annotated[
        list[str] | None,
        typer.Option(
            "--effect",
            help="TOOL=read_only|write|side_effect for a tool the modes should not treat as "
            "a side effect (repeatable).",
        ),
    ] = None,
) -> None:
    """Re-decide every recorded tool call under POLICY and list the calls that change.

    Exit 0 when nothing changes, 1 when some call changes, 2 on a bad file or URL.
    """
    out, err = consoles()
    if format not in ("text", "json"):
        fail(err, f"--format {format!r} is not supported. Fix: --format text or --format json")
    try:
        settings = load_policy(policy)
        effects = parse_effects(effect or [])
    except ConfigError as exc:
        fail(err, str(exc))

    async def main() -> tuple[list[Change], int, int]:
        return await _check(settings, sessions, effects)

    try:
        changes, calls, n_sessions = _run(main)
    except (ConfigError, SessionError) as exc:
        fail(err, str(exc))
    if format == "json":
        doc = {
            "sessions": n_sessions,
            "calls": calls,
            "changes": [c.to_json() for c in changes],
        }
        out.print(json.dumps(doc, ensure_ascii=False, indent=2), markup=False, highlight=False)
    else:
        _print_text(out, changes, calls, n_sessions)
    raise typer.Exit(EXIT_CHANGED if changes else 0)


def _run(main: Any) -> tuple[list[Change], int, int]:
    box: list[tuple[list[Change], int, int]] = []

    async def wrapped() -> int:
        box.append(await main())
        return 0

    drive(wrapped())
    return box[0]


def _print_text(out: Console, changes: list[Change], calls: int, sessions: int) -> None:
    if not changes:
        out.print(
            f"no changes: {calls} recorded calls in {sessions} sessions decide the same",
            markup=False,
            highlight=False,
        )
        return
    out.print(
        f"{len(changes)} of {calls} recorded calls change ({sessions} sessions):",
        markup=False,
        highlight=False,
    )
    for line in table_lines(changes):
        out.print(line, markup=False, highlight=False)
