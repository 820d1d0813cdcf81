"""Read, Write and Edit: happy paths, exact error messages, schemas and cap-std confinement."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from helikon.core.tool import Tool, ToolEffect
from helikon.errors import ConfigError, InvalidArgs, ToolDenied, ToolOther
from helikon.tools import EditTool, ReadTool, Sandbox, WriteTool

from .conftest import tool_ctx


@pytest.fixture
def sb(ws: dict[str, Path]) -> Sandbox:
    return Sandbox.open(ws["root"])


async def _call(t: Tool, args: Any) -> str:
    out = await t.invoke(tool_ctx(), args)
    part = out.content[0]
    text: str = part.text  # type: ignore[union-attr]
    return text


# ------------------------------------------------------------------ Sandbox


def test_open_and_relative_paths(ws: dict[str, Path]) -> None:
    sb = Sandbox.open(ws["root"])
    assert sb.root == ws["root"].resolve()
    assert sb.relative("a/b.txt") == "a/b.txt"
    assert sb.relative(str(ws["root"] / "a" / "b.txt")) == "a/b.txt"
    assert sb.relative(str(ws["root"])) == ""
    # '..' after the root prefix is kept for the capability to refuse
    assert sb.relative(str(ws["root"]) + "/../outside") == "../outside"
    with pytest.raises(ToolDenied) as exc:
        sb.relative("/etc/passwd")
    assert str(exc.value) == (
        f"denied: /etc/passwd: absolute path outside the sandbox root {sb.root}"
    )
    # a sibling whose name starts with the root's name is outside
    with pytest.raises(ToolDenied):
        sb.relative(str(ws["root"]) + "x/file")


def test_open_missing_dir_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not an existing directory"):
        Sandbox.open(tmp_path / "nope")


def test_open_accepts_a_symlinked_root_and_its_absolute_paths(ws: dict[str, Path]) -> None:
    alias = ws["tmp"] / "alias"
    alias.symlink_to(ws["root"])
    sb = Sandbox.open(alias)
    assert sb.root == ws["root"].resolve()
    assert sb.relative(str(alias / "hello.txt")) == "hello.txt"
    assert sb.relative(str(ws["root"] / "hello.txt")) == "hello.txt"


# ------------------------------------------------------------------ schemas


@pytest.mark.parametrize(
    ("cls", "name", "effect", "props", "required"),
    [
        (ReadTool, "Read", ToolEffect.READ_ONLY, {"path", "offset", "limit"}, ["path"]),
        (WriteTool, "Write", ToolEffect.WRITE, {"path", "content"}, ["content", "path"]),
        (
            EditTool,
            "Edit",
            ToolEffect.WRITE,
            {"path", "old_string", "new_string", "replace_all"},
            ["new_string", "old_string", "path"],
        ),
    ],
)
def test_tool_metadata_and_schema(
    sb: Sandbox, cls: Any, name: str, effect: ToolEffect, props: set[str], required: list[str]
) -> None:
    t = cls(sb)
    assert isinstance(t, Tool)
    assert t.name == name
    assert t.effect is effect
    assert t.parameters["type"] == "object"
    assert set(t.parameters["properties"]) == props
    assert sorted(t.parameters["required"]) == required
    assert t.parameters["additionalProperties"] is False
    for prop in t.parameters["properties"].values():
        assert prop["description"], prop
        assert "title" not in prop
    assert t.description


def test_read_description_states_the_format(sb: Sandbox) -> None:
    d = ReadTool(sb).description
    assert "cat -n" in d
    assert "right-aligned in 6 columns, a tab" in d


# ------------------------------------------------------------------ Read


async def test_read_numbers_lines_like_cat_n(sb: Sandbox) -> None:
    assert await _call(ReadTool(sb), {"path": "hello.txt"}) == "     1\thello\n     2\tworld"


async def test_read_offset_limit_and_continuation_note(sb: Sandbox) -> None:
    sb.dir.write_text("many.txt", "".join(f"line {i}\n" for i in range(1, 11)))
    text = await _call(ReadTool(sb), {"path": "many.txt", "offset": 3, "limit": 2})
    assert text == (
        "     3\tline 3\n     4\tline 4\n[showing lines 3-4 of 10; continue with offset=5]"
    )
    tail = await _call(ReadTool(sb), {"path": "many.txt", "offset": 9})
    assert tail == "     9\tline 9\n    10\tline 10"


async def test_read_page_size_caps_the_limit(sb: Sandbox) -> None:
    sb.dir.write_text("many.txt", "x\n" * 10)
    text = await _call(ReadTool(sb, max_lines=3), {"path": "many.txt", "limit": 50})
    assert text.splitlines()[-1] == "[showing lines 1-3 of 10; continue with offset=4]"


async def test_read_cuts_long_lines_and_caps_output(sb: Sandbox) -> None:
    sb.dir.write_text("long.txt", "a" * 30 + "\n" + "b\n" * 100)
    t = ReadTool(sb, max_line_chars=10, max_output_chars=60)
    text = await _call(t, {"path": "long.txt"})
    lines = text.split("\n")
    assert lines[0] == "     1\taaaaaaaaaa… [line cut: 20 more characters]"
    assert lines[-1].startswith("[showing lines 1-")
    assert sum(len(x) + 1 for x in lines[:-1]) <= 60


async def test_read_absolute_path_inside_root(sb: Sandbox, ws: dict[str, Path]) -> None:
    text = await _call(ReadTool(sb), {"path": str(ws["root"] / "hello.txt")})
    assert text.startswith("     1\thello")


async def test_read_empty_file(sb: Sandbox) -> None:
    sb.dir.write_text("empty.txt", "")
    assert await _call(ReadTool(sb), {"path": "empty.txt"}) == "[empty.txt is empty]"


async def test_read_without_trailing_newline_and_crlf(sb: Sandbox) -> None:
    sb.dir.write_text("x.txt", "a\r\nb")
    assert await _call(ReadTool(sb), {"path": "x.txt"}) == "     1\ta\r\n     2\tb"


async def test_read_refuses_binary_files(sb: Sandbox) -> None:
    sb.dir.write_atomic("img.bin", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ToolOther) as exc:
        await _call(ReadTool(sb), {"path": "img.bin"})
    assert str(exc.value) == (
        "img.bin: binary file (16 bytes; it contains NUL bytes); Read shows text files only"
    )
    sb.dir.write_atomic("noise.bin", bytes(range(128, 256)) * 2)
    with pytest.raises(ToolOther) as exc:
        await _call(ReadTool(sb), {"path": "noise.bin"})
    assert str(exc.value) == (
        "noise.bin: binary file (256 bytes; 256 of its 256 bytes are not valid UTF-8); "
        "Read shows text files only"
    )


async def test_read_shows_a_few_invalid_bytes_as_replacement(sb: Sandbox) -> None:
    sb.dir.write_atomic("latin.txt", b"caf\xe9 au lait, tout le monde\n")
    text = await _call(ReadTool(sb), {"path": "latin.txt"})
    assert text == (
        "     1\tcaf\ufffd au lait, tout le monde\n[1 invalid UTF-8 bytes are shown as U+FFFD]"
    )


async def test_read_errors(sb: Sandbox) -> None:
    r = ReadTool(sb, max_file_bytes=8)
    with pytest.raises(ToolOther) as exc:
        await _call(r, {"path": "hello.txt"})
    assert str(exc.value) == (
        "hello.txt: file is 12 bytes, over Read's 8-byte limit; look at parts of it with Bash "
        "(head, tail, sed -n)"
    )
    sb.dir.write_text("d/x.txt", "x")
    with pytest.raises(ToolOther) as exc:
        await _call(r, {"path": "d"})
    assert str(exc.value) == "d: is a directory; use Bash (ls) to list it"
    with pytest.raises(ToolOther) as exc:
        await _call(ReadTool(sb), {"path": "hello.txt", "offset": 3})
    assert str(exc.value) == "hello.txt: offset 3 is past the end of the file (2 lines)"
    with pytest.raises(ToolOther) as exc:
        await _call(ReadTool(sb), {"path": "missing.txt"})
    assert str(exc.value) == "not found: missing.txt"


async def test_read_invalid_args(sb: Sandbox) -> None:
    with pytest.raises(InvalidArgs) as exc:
        await _call(ReadTool(sb), {"path": "", "offset": 0, "extra": 1})
    assert exc.value.schema_errors == [
        "path: String should have at least 1 character",
        "offset: Input should be greater than or equal to 1",
        "extra: Extra inputs are not permitted",
    ]
    with pytest.raises(InvalidArgs) as exc:
        await _call(ReadTool(sb), "{not json")
    assert exc.value.schema_errors[0].startswith("arguments are not valid JSON")
    # JSON text arguments work too
    assert (await _call(ReadTool(sb), '{"path": "hello.txt", "limit": 1}')).startswith(
        "     1\thello"
    )


def test_caps_must_be_positive(sb: Sandbox) -> None:
    with pytest.raises(ConfigError, match=r"ReadTool\.max_lines must be >= 1, got 0"):
        ReadTool(sb, max_lines=0)
    with pytest.raises(ConfigError, match=r"EditTool\.max_file_bytes must be >= 1, got 0"):
        EditTool(sb, max_file_bytes=0)


# ------------------------------------------------------------------ Write


async def test_write_creates_parents_and_replaces(sb: Sandbox, ws: dict[str, Path]) -> None:
    w = WriteTool(sb)
    assert await _call(w, {"path": "src/pkg/mod.py", "content": "x = 1\ny = 2\n"}) == (
        "Created src/pkg/mod.py (12 bytes, 2 lines)"
    )
    assert (ws["root"] / "src/pkg/mod.py").read_text() == "x = 1\ny = 2\n"
    (ws["root"] / "src/pkg/mod.py").chmod(0o640)
    assert await _call(w, {"path": "src/pkg/mod.py", "content": "é"}) == (
        "Replaced src/pkg/mod.py (2 bytes, 1 line)"
    )
    assert (ws["root"] / "src/pkg/mod.py").read_text() == "é"
    assert (ws["root"] / "src/pkg/mod.py").stat().st_mode & 0o777 == 0o640
    assert await _call(w, {"path": str(ws["root"] / "e.txt"), "content": ""}) == (
        f"Created {ws['root'] / 'e.txt'} (0 bytes, 0 lines)"
    )
    # no temp files left behind
    assert sorted(os.listdir(ws["root"] / "src/pkg")) == ["mod.py"]


async def test_write_errors(sb: Sandbox) -> None:
    sb.dir.write_text("d/x.txt", "x")
    with pytest.raises(ToolOther) as exc:
        await _call(WriteTool(sb), {"path": "d", "content": "x"})
    assert str(exc.value) == "d: a directory"
    with pytest.raises(InvalidArgs) as bad:
        await _call(WriteTool(sb), {"path": "a.txt"})
    assert bad.value.schema_errors == ["content: Field required"]


# ------------------------------------------------------------------ Edit


async def test_edit_unique_replacement(sb: Sandbox, ws: dict[str, Path]) -> None:
    sb.dir.write_text("a.py", "def f():\n    return 1\n\ndef g():\n    return 2\n")
    out = await _call(
        EditTool(sb), {"path": "a.py", "old_string": "return 2", "new_string": "return 3"}
    )
    assert out == "Edited a.py: replaced 1 occurrence (line 5)"
    assert (ws["root"] / "a.py").read_text() == (
        "def f():\n    return 1\n\ndef g():\n    return 3\n"
    )


async def test_edit_ambiguous_missing_and_replace_all(sb: Sandbox, ws: dict[str, Path]) -> None:
    sb.dir.write_text("b.txt", "x\nx\ny x\n")
    e = EditTool(sb)
    with pytest.raises(ToolOther) as exc:
        await _call(e, {"path": "b.txt", "old_string": "x", "new_string": "z"})
    assert str(exc.value) == (
        "b.txt: old_string occurs 3 times; include more surrounding text to make it unique, "
        "or set replace_all=true to replace every occurrence"
    )
    with pytest.raises(ToolOther) as exc:
        await _call(e, {"path": "b.txt", "old_string": "  x", "new_string": "z"})
    assert str(exc.value) == (
        "b.txt: old_string was not found (it must match the file exactly, whitespace and "
        "indentation included)"
    )
    assert (ws["root"] / "b.txt").read_text() == "x\nx\ny x\n"  # untouched
    out = await _call(
        e, {"path": "b.txt", "old_string": "x", "new_string": "z", "replace_all": True}
    )
    assert out == "Edited b.txt: replaced 3 occurrences (lines 1, 2, 3)"
    assert (ws["root"] / "b.txt").read_text() == "z\nz\ny z\n"


async def test_edit_errors(sb: Sandbox) -> None:
    e = EditTool(sb)
    with pytest.raises(ToolOther) as exc:
        await _call(e, {"path": "hello.txt", "old_string": "a", "new_string": "a"})
    assert str(exc.value) == "hello.txt: old_string and new_string are identical; nothing to change"
    sb.dir.write_atomic("bin.dat", b"ab\x00cd")
    with pytest.raises(ToolOther) as exc:
        await _call(e, {"path": "bin.dat", "old_string": "ab", "new_string": "x"})
    assert (
        str(exc.value)
        == "bin.dat: binary file (it contains NUL bytes); Edit changes text files only"
    )
    sb.dir.write_atomic("latin.txt", b"caf\xe9 au lait, tout le monde\n")
    with pytest.raises(ToolOther) as exc:
        await _call(e, {"path": "latin.txt", "old_string": "caf", "new_string": "x"})
    assert str(exc.value) == (
        "latin.txt: not valid UTF-8 text (invalid byte at offset 3); Edit changes UTF-8 text "
        "files only"
    )
    with pytest.raises(ToolOther) as exc:
        await _call(e, {"path": "nope.txt", "old_string": "a", "new_string": "b"})
    assert str(exc.value) == "not found: nope.txt"
    with pytest.raises(InvalidArgs) as bad:
        await _call(e, {"path": "hello.txt", "old_string": "", "new_string": "b"})
    assert bad.value.schema_errors == ["old_string: String should have at least 1 character"]


# ------------------------------------------------------------------ confinement


@pytest.fixture
def escapes(ws: dict[str, Path]) -> dict[str, Path]:
    root, outside = ws["root"], ws["outside"]
    (root / "out_link").symlink_to(outside)
    (root / "secret_link.txt").symlink_to(outside / "secret.txt")
    (root / "inside_link.txt").symlink_to("hello.txt")
    os.link(outside / "secret.txt", root / "hard.txt")
    return ws


ESCAPES = [
    (
        "../outside/secret.txt",
        "'..' components are not allowed (the path must stay inside the root)",
    ),
    ("out_link/secret.txt", "resolves outside the root (through a symbolic link or a magic link)"),
    ("secret_link.txt", "resolves outside the root (through a symbolic link or a magic link)"),
    ("hard.txt", "regular file has 2 hard links; it may be the same file as one outside the root"),
]


@pytest.mark.parametrize(("path", "reason"), ESCAPES)
async def test_read_refuses_escapes(escapes: dict[str, Path], path: str, reason: str) -> None:
    sb = Sandbox.open(escapes["root"])
    with pytest.raises(ToolDenied) as exc:
        await _call(ReadTool(sb), {"path": path})
    assert str(exc.value) == f"denied: {path}: {reason}"


@pytest.mark.parametrize(("path", "reason"), ESCAPES)
async def test_edit_refuses_escapes(escapes: dict[str, Path], path: str, reason: str) -> None:
    sb = Sandbox.open(escapes["root"])
    with pytest.raises(ToolDenied) as exc:
        await _call(EditTool(sb), {"path": path, "old_string": "OUTSIDE", "new_string": "PWNED"})
    assert str(exc.value) == f"denied: {path}: {reason}"
    assert (escapes["outside"] / "secret.txt").read_text() == "OUTSIDE-SECRET\n"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        (
            "../outside/new.txt",
            "'..' components are not allowed (the path must stay inside the root)",
        ),
        ("out_link/new.txt", "resolves outside the root (through a symbolic link or a magic link)"),
        ("secret_link.txt", "resolves outside the root (through a symbolic link or a magic link)"),
        ("inside_link.txt", "is a symbolic link; write to the file it points at instead"),
        (
            "hard.txt",
            "regular file has 2 hard links; it may be the same file as one outside the root",
        ),
    ],
)
async def test_write_refuses_escapes(escapes: dict[str, Path], path: str, reason: str) -> None:
    sb = Sandbox.open(escapes["root"])
    with pytest.raises(ToolDenied) as exc:
        await _call(WriteTool(sb), {"path": path, "content": "PWNED"})
    assert str(exc.value) == f"denied: {path}: {reason}"
    assert sorted(os.listdir(escapes["outside"])) == ["secret.txt"]
    assert (escapes["outside"] / "secret.txt").read_text() == "OUTSIDE-SECRET\n"


async def test_absolute_paths_outside_are_refused_by_every_file_tool(
    escapes: dict[str, Path],
) -> None:
    sb = Sandbox.open(escapes["root"])
    target = str(escapes["outside"] / "secret.txt")
    want = f"denied: {target}: absolute path outside the sandbox root {sb.root}"
    calls: list[tuple[Tool, dict[str, Any]]] = [
        (ReadTool(sb), {"path": target}),
        (WriteTool(sb), {"path": target, "content": "x"}),
        (EditTool(sb), {"path": target, "old_string": "O", "new_string": "P"}),
    ]
    for t, args in calls:
        with pytest.raises(ToolDenied) as exc:
            await _call(t, args)
        assert str(exc.value) == want
    # '..' smuggled after an absolute root prefix is still refused by the capability
    with pytest.raises(ToolDenied, match=r"'\.\.' components are not allowed"):
        await _call(ReadTool(sb), {"path": str(escapes["root"]) + "/../outside/secret.txt"})


async def test_symlinks_inside_the_root_are_followed(escapes: dict[str, Path]) -> None:
    sb = Sandbox.open(escapes["root"])
    assert await _call(ReadTool(sb), {"path": "inside_link.txt"}) == "     1\thello\n     2\tworld"


def _exchange(a: Path, b: Path) -> None:
    """Atomically swap two directory entries (renameat2 RENAME_EXCHANGE)."""
    libc = ctypes.CDLL(None, use_errno=True)
    at_fdcwd, rename_exchange = -100, 2
    if libc.renameat2(at_fdcwd, bytes(a), at_fdcwd, bytes(b), rename_exchange) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def test_race_swapping_a_directory_for_a_symlink_never_escapes(ws: dict[str, Path]) -> None:
    """A thread atomically swaps ``root/sub`` between a real directory and a symlink to
    ``outside`` while the tools read, write and edit ``sub/...``: nothing outside is ever
    read or written, and both states are seen."""
    root, outside = ws["root"], ws["outside"]
    sb = Sandbox.open(root)
    sub, alt = root / "sub", root / "alt"
    sub.mkdir()
    (sub / "secret.txt").write_text("INSIDE\n")
    alt.symlink_to(outside)
    stop = threading.Event()
    errors: list[BaseException] = []

    def flipper() -> None:
        try:
            while not stop.is_set():
                _exchange(sub, alt)
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    th = threading.Thread(target=flipper)
    th.start()
    read, write, edit = ReadTool(sb), WriteTool(sb), EditTool(sb)
    seen = {"inside": 0, "denied": 0}
    try:
        # At least 1500 rounds, then on until both states were seen (on a loaded machine the
        # flipper thread can miss whole stretches), bounded so a broken flipper still fails.
        i = 0
        while i < 1500 or (min(seen.values()) == 0 and i < 30000):
            i += 1
            if i % 50 == 0:
                time.sleep(0.001)  # hand the GIL to the flipper now and then
            try:
                assert read.read_text("sub/secret.txt") == "     1\tINSIDE"
                seen["inside"] += 1
            except ToolDenied:
                seen["denied"] += 1
            with contextlib.suppress(ToolDenied):
                write.write(f"sub/w{i % 7}.txt", "PWNED")
            with contextlib.suppress(ToolDenied, ToolOther):  # inside: "not found"
                edit.edit("sub/secret.txt", "SECRET", "PWNED")
    finally:
        stop.set()
        th.join()
    assert errors == []
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "OUTSIDE-SECRET\n"
    assert seen["inside"] > 0, seen
    assert seen["denied"] > 0, seen


def test_stat_kind_of_root(sb: Sandbox) -> None:
    assert json.loads(sb.dir.stat(""))["kind"] == "dir"
