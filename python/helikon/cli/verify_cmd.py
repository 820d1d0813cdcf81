"""``helikon verify SESSION_URL``: check the hash chain of stored session logs.

For each session the URL names (every session of the store, or ``#ID`` for one): how many
records verify, which are unchained (written before the chain), and the first record that
does not match, if any. A log that holds records but not one chained record proves
nothing (its hashes may have been removed): it is reported ``not verified: no record is
chained``. ``--strict`` fails on any unchained record.

Exit codes: 0 every log verifies; 1 a log is tampered (or, with ``--strict``, holds an
unchained record); 2 a bad URL or option; 3 no log is tampered but a log is not verified
(records, none chained). ``--format json`` prints one object per session (``status``:
``ok``, ``tampered``, ``unverified`` or ``partly_chained``; ``records``, ``chained``,
``unchained``, ``first_bad``, ``reason``, ``head``). The store is only read (an old SQLite
file gains the hash column on first use).
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


EXIT_UNVERIFIED = 3
"""No log is tampered, but a log with records has none chained."""


def _status(r: ChainReport) -> str:
    if r.first_bad is not None:
        return "tampered"
    if r.records and not r.chained:
        return "unverified"
    return "partly_chained" if r.unchained else "ok"


def _line(sid: str, r: ChainReport) -> str:
    status = _status(r)
    if status == "tampered":
        return f"{sid}: TAMPERED at record {r.first_bad}: {r.reason} ({r.records} records)"
    if status == "unverified":
        return (
            f"{sid}: not verified: no record is chained ({r.records} records, none with a "
            "hash: written before the chain, or their hashes were removed)"
        )
    text = f"{sid}: ok, {r.chained} of {r.records} records chained"
    if r.unchained:
        text += f", {len(r.unchained)} unchained (written before the chain)"
    return text + (f", head {r.head}" if r.head else "")


def verify_logs(
    url: Annotated[str, typer.Argument(metavar="SESSION_URL", help="Sessions to check (#ID).")],
    format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 when any record is unchained.")
    ] = False,
) -> None:
    """Verify the hash chain of every session SESSION_URL names; name the first bad record.

    Exit codes: 0 verified; 1 tampered (with --strict: also any unchained record); 2 bad
    URL or option; 3 not verified (a log with records, none of them chained).
    """
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
                "status": _status(r),
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
    statuses = {_status(r) for r in reports.values()}
    if "tampered" in statuses or (strict and statuses & {"unverified", "partly_chained"}):
        raise typer.Exit(EXIT_FAILED)
    if "unverified" in statuses:
        raise typer.Exit(EXIT_UNVERIFIED)
