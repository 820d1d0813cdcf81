"""helikon's program names against bashlex's on 500 realistic commands.

The corpus and every disagreement (with its reason) are in
``tests/data/bash_real_commands.json``; this test recomputes both analyses and asserts the
disagreements are exactly the listed ones, so a change in either analyser that adds, removes
or alters a disagreement fails until the list (and its reason) is updated.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.governance.bashlex_names import bashlex_names, helikon_names

DATA = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "bash_real_commands.json").read_text()
)


def observed() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for command in DATA["commands"]:
        theirs = bashlex_names(command)
        ours = helikon_names(command)
        if theirs is None:
            out.append({"command": command, "bashlex": "error"})
        elif theirs != ours:
            out.append(
                {
                    "command": command,
                    "helikon_only": sorted(ours - theirs),
                    "bashlex_only": sorted(theirs - ours),
                }
            )
    return out


def listed() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for d in DATA["disagreements"]:
        if "bashlex_error" in d:
            out.append({"command": d["command"], "bashlex": "error"})
        else:
            keys = ("command", "helikon_only", "bashlex_only")
            out.append({k: d[k] for k in keys})
    return out


def test_the_corpus_is_500_distinct_commands() -> None:
    assert len(DATA["commands"]) == 500
    assert len(set(DATA["commands"])) == 500


def test_every_disagreement_is_listed_with_a_reason() -> None:
    assert observed() == listed()
    for d in DATA["disagreements"]:
        assert d.get("reason") or d.get("bashlex_error"), d["command"]


def test_helikon_never_misses_a_name_bashlex_finds() -> None:
    assert all(not d.get("bashlex_only") for d in DATA["disagreements"])
    compared = len(DATA["commands"]) - sum("bashlex_error" in d for d in DATA["disagreements"])
    assert compared >= 480
