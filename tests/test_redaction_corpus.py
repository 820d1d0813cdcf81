"""The generated redaction corpora (benches/redaction_corpus.py), asserted, not timed.

Every planted secret of every kind is gone after redaction, decoys survive, and the
benign corpus of realistic tool output (build logs, ``git log``, JSON APIs, minified JS,
base64 blobs, UUIDs and hashes) comes back unchanged: zero false positives.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benches"))

from redaction_corpus import KINDS, benign, generate

from helikon import _native
from helikon.core.context import _unusable_reason
from helikon.redaction import Redactor

SEEDS = (7, 11)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_planted_secret_of_every_kind_is_removed(seed: int) -> None:
    docs = generate(seed, 1500)
    seen: dict[str, int] = {}
    leaks: list[str] = []
    for doc in docs:
        out = Redactor(env=doc.env).redact(doc.text)
        for secret, kind in zip(doc.secrets, doc.kinds, strict=True):
            seen[kind] = seen.get(kind, 0) + 1
            if secret in out:
                # Name the kind and the document template; never print the secret.
                leaks.append(f"{kind} in a {doc.kind} document")
        damaged = [d for d in doc.decoys if d not in out]
        assert not damaged, f"a decoy was masked in a {doc.kind} document"
    assert not leaks, f"{len(leaks)} leaks: {sorted(set(leaks))}"
    assert set(seen) == set(KINDS), f"kinds never planted: {set(KINDS) - set(seen)}"


@pytest.mark.parametrize("seed", SEEDS)
def test_benign_tool_output_has_no_false_positive(seed: int) -> None:
    r = Redactor(env={})
    bad = []
    for doc in benign(seed, 1500):
        for f in r.findings(doc.text):
            line_start = doc.text.rfind("\n", 0, f.start) + 1
            line_end = doc.text.find("\n", f.end)
            bad.append(f"{f.kind}: {doc.text[line_start:line_end][:120]!r}")
    assert not bad, f"{len(bad)} false positives, e.g. {bad[:5]}"


def test_corpora_are_deterministic() -> None:
    assert [d.text for d in generate(3, 50)] == [d.text for d in generate(3, 50)]
    assert [d.text for d in benign(3, 50)] == [d.text for d in benign(3, 50)]


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("hunter2hunter2", None),
        ("short", "shorter than 8 bytes"),
        ("12345678", "all digits"),
        ("Production", "a common word"),
        ("          ", "blank"),
    ],
)
def test_unusable_reason_comes_from_the_scanner(value: str, reason: str | None) -> None:
    assert _native.unusable_secret_reason(value) == reason
    # RunContext's warning uses the scanner's own reasons: ignored only when the value as
    # given and trimmed both are, and then the trimmed form's reason is reported.
    expected = None if reason is None else _native.unusable_secret_reason(value.strip())
    assert _unusable_reason(value) == expected
