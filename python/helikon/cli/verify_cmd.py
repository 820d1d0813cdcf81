"""``helikon verify SESSION_URL``: check the hash chain of stored session logs.

For each session the URL names (every session of the store, or ``#ID`` for one): how many
records verify, which are unchained (written before the chain), and the first record that
does not match, if any. Exit 0 when no log is tampered, 1 when one is, 2 on a bad URL.
``--format json`` prints one object per session (``records``, ``chained``, ``unchained``,
``first_bad``, ``reason``, ``head``). The store is only read (an old SQLite file gains the
hash column on first use).
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import typer

from helikon.cli.common import EXIT_FAILED, consoles, fail
from helikon.cli.policy_sessions import read_stores
from helikon.errors import ConfigError, SessionError
from helikon.sessions.chain import ChainReport, verify

__all__ = ["verify_logs"]


def _line(sid: str, r: ChainReport) -> str:
    if r.first_bad is not None:
        return f"{sid}: TAMPERED at record {r.first_bad}: {r.reason} ({r.records} records)"
    text = f"{sid}: ok, {r.chained} of {r.records} records chained"
    if r.unchained:
        text += f", {len(r.unchained)} unchained (written before the chain)"
    return text + (f", head {r.head}" if r.head else "")


def verify_logs(
    url: Annotated[str, typer.Argument(metavar="SESSION_URL", help="Sessions to check (#ID).")],
    format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Verify the hash chain of every session SESSION_URL names; name the first bad record."""
    out, err = consoles()
    if format not in ("text", "json"):
        fail(err, f"--format {format!r} is not supported. Fix: --format text or --format json")
    try:
        reports = asyncio.run(read_stores(url, verify))
    except (ConfigError, SessionError) as exc:
        fail(err, str(exc))
    if format == "json":
        doc = {
            sid: {
                "records": r.records,
                "chained": r.chained,
                "unchained": list(r.unchained),
                "first_bad": r.first_bad,
                "reason": r.reason,
                "head": r.head,
            }
            for sid, r in reports.items()
        }
        out.print(json.dumps(doc, indent=2), markup=False, highlight=False)
    else:
        for sid, r in reports.items():
            out.print(_line(sid, r), markup=False, highlight=False)
    if any(not r.ok for r in reports.values()):
        raise typer.Exit(EXIT_FAILED)
