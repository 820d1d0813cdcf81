"""Attack R9: output cut before redaction leaked the secret at the cut. Every place that cuts
(the Bash capture on each backend, stdout and stderr; WebFetch pages; MCP results; Read
pages and long lines) now redacts with the context around the cut first. Each test slides
several spellings of a secret across the cut and asserts no 8-character piece survives."""

from __future__ import annotations

from pathlib import Path

import pytest

from helikon.mcp._tool import truncate
from helikon.redaction import CUT_GUARD, Redactor
from helikon.tools import BashTool, ReadTool, Sandbox

from .conftest import tool_ctx
from .test_backends import BACKENDS, Factory

KNOWN = "Kn0wnV4lue-zq8Rr2T"

# (text holding the secret, the secret value)
SPELLINGS = [
    ("API_KEY=Qw3rTy8UiOp1AsDfGhJk", "Qw3rTy8UiOp1AsDfGhJk"),
    ('{"password": "correct horse battery staple zx9"}', "correct horse battery staple zx9"),
    ("ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
    ("Authorization: Bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5"),
    (f"login with {KNOWN} now", KNOWN),
    ("git clone https://deploy:S3cr3tPassw0rdX@git.example.com/r.git", "S3cr3tPassw0rdX"),
]

LINE = "compiling crate number 0042 of the build (ok)\n"


def _filler(n: int) -> str:
    return (LINE * (n // len(LINE) + 1))[:n]


def _assert_no_piece(out: str, value: str, what: str) -> None:
    for i in range(len(value) - 7):
        assert value[i : i + 8] not in out, f"{what}: {value[i : i + 8]!r} leaked"


@pytest.fixture
def known_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", KNOWN)


def _cases(cap: int) -> list[tuple[str, str, str]]:
    """(name, stream text, value): each spelling across the head cut, across the tail cut,
    and with its key in the dropped middle and its value on one long line into the tail."""
    half = cap // 2
    out = []
    for secret, value in SPELLINGS:
        for k in (3, len(secret) // 2, len(secret) - 4):
            out.append(("head", _filler(half - k) + secret + "\n" + _filler(3 * CUT_GUARD), value))
            out.append(("tail", _filler(3 * CUT_GUARD) + secret + "\n" + _filler(half - k), value))
    out.append(
        (
            "middle key",
            _filler(3 * CUT_GUARD) + "x" * 9000 + " password: Qw3rTy8UiOp1AsDfGhJkLz " + "y" * 2030,
            "Qw3rTy8UiOp1AsDfGhJkLz",
        )
    )
    return out


@pytest.mark.parametrize("make", BACKENDS)
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
async def test_bash_capture_never_shows_a_piece_of_a_secret_at_its_cut(
    make: Factory, stream: str, ws: dict[str, Path], known_env: None
) -> None:
    cap = 4096
    tool = BashTool(make(ws["root"], output_cap_bytes=cap))
    redirect = " >&2" if stream == "stderr" else ""
    for i, (where, text, value) in enumerate(_cases(cap)):
        (ws["root"] / f"out{i}.txt").write_text(text)
        out = await tool.invoke(tool_ctx(), {"command": f"cat out{i}.txt{redirect}"})
        shown = out.content[0].text  # type: ignore[union-attr]
        assert "[... output truncated: " in shown
        _assert_no_piece(shown, value, f"{where} #{i} on {stream}")


@pytest.mark.parametrize("make", BACKENDS)
async def test_ten_megabytes_of_output_with_secrets_throughout(
    make: Factory, ws: dict[str, Path], known_env: None
) -> None:
    parts = []
    size = 0
    i = 0
    while size < 10 << 20:
        secret, _ = SPELLINGS[i % len(SPELLINGS)]
        piece = _filler(97 + i % 301) + " " + secret + "\n"
        parts.append(piece)
        size += len(piece)
        i += 1
    (ws["root"] / "big.txt").write_text("".join(parts))
    tool = BashTool(make(ws["root"], output_cap_bytes=30_000))
    out = await tool.invoke(tool_ctx(), {"command": "cat big.txt; cat big.txt >&2"})
    shown = out.content[0].text  # type: ignore[union-attr]
    assert shown.count("[... output truncated: ") == 2
    for _, value in SPELLINGS:
        _assert_no_piece(shown, value, "10 MB")


@pytest.mark.parametrize(("secret", "value"), SPELLINGS)
def test_mcp_result_is_redacted_before_its_cut(secret: str, value: str, known_env: None) -> None:
    for k in (3, len(secret) // 2, len(secret) - 2):
        text = _filler(1000 - k) + secret + " " + _filler(5000)
        out = truncate(text, 1000)
        assert "[truncated: the MCP server returned" in out
        _assert_no_piece(out, value, f"mcp at {k}")


def test_read_pages_and_long_lines_are_redacted_with_the_whole_file(
    ws: dict[str, Path], known_env: None
) -> None:
    body = "\n".join(["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"] * 30)
    (ws["root"] / "key.pem").write_text(
        f"intro\n-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\nend\n"
    )
    tool = ReadTool(Sandbox.open(ws["root"]))
    page = tool.read_text("key.pem", offset=10, limit=5)  # inside the key, BEGIN not shown
    assert "MIIEvQIB" not in page
    assert page.splitlines()[0] == "    10\t***"
    # A line cut at max_line_chars: the secret straddles the cut.
    (ws["root"] / "long.txt").write_text(
        "a" * 95 + " ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 " + "b" * 200 + "\n"
    )
    short = ReadTool(Sandbox.open(ws["root"]), max_line_chars=110)
    out = short.read_text("long.txt")
    assert "ghp_A1b2" not in out and "[line cut:" in out, out
    yaml = "key: |\n" + "".join(f"  x{i}\n" for i in range(4))
    (ws["root"] / "c.yaml").write_text(f"db_password: |\n  {KNOWN}-line-one\n  more\n{yaml}")
    second = tool.read_text("c.yaml", offset=2, limit=1)
    assert KNOWN not in second and "***" in second, second


def test_redact_head_and_tail_from_python() -> None:
    r = Redactor(env={})
    assert r.redact_head("ok\nAPI_KEY=abcdefghijklmnop more", 14) == "ok\n"
    assert r.redact_tail("x API_KEY=abcdefghijklmnop\nrest\n", 12) == "rest\n"
    # Context before the tail: the key is outside what is shown, its value is not.
    tail = r.redact_tail("API_KEY=abcdefghijklmnopqrstuvwxyz0123", 10)
    assert "qrstuv" not in tail and "z0123" not in tail
    assert CUT_GUARD == 16 * 1024
