"""The user documentation cannot rot: its code samples run, its imports and links resolve.

Convention (see ``docs/``): a fenced ```` ```python ```` block directly preceded by the HTML
comment ``<!-- test -->`` is *runnable*. It must be a complete program that works offline
(``MockModel`` or ``ReplayServer`` only) and it is executed here, each block in its own
Python process, with the network blocked except for loopback. ``<!-- test: cwd=DIR -->`` runs
the block with ``DIR`` (relative to the repository) as its working directory and first on
``sys.path``, e.g. to import an example's ``tools.py``.

Every other ``python`` block is checked too, more lightly: it must parse (top-level
``await`` allowed, for fragments) and every ``from helikon... import name`` in it must
resolve, so a renamed API breaks this test rather than a reader's copy-paste. Relative
Markdown links, the ``mkdocs.yml`` nav and the ``::: module`` directives of the API reference
must point at things that exist.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"

_MARKER = re.compile(r"^<!--\s*test(?::\s*(?P<opts>.*?))?\s*-->\s*$")
_FENCE = re.compile(r"^(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")
_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
_DIRECTIVE = re.compile(r"^:::\s+(?P<ident>[\w.]+)\s*$", re.MULTILINE)

_PROVIDER_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "BRAVE_API_KEY",
    "TAVILY_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)

# Runs in the child before the block: loopback only, then the block as ``__main__`` with its
# line numbers equal to the Markdown file's, so a traceback points into the page.
_RUNNER = r"""
import socket, sys

_LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_connect, _connect_ex, _getaddrinfo = (
    socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo)

def _check(sock, address):
    if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in _LOOPBACK:
        raise OSError(f"docs examples run offline: connection to {address[0]!r} refused")

def connect(self, address):
    _check(self, address)
    return _connect(self, address)

def connect_ex(self, address):
    _check(self, address)
    return _connect_ex(self, address)

def getaddrinfo(host, *args, **kwargs):
    if host not in _LOOPBACK and host is not None:
        raise socket.gaierror(f"docs examples run offline: no lookup of {host!r}")
    return _getaddrinfo(host, *args, **kwargs)

socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = (
    connect, connect_ex, getaddrinfo)

source_path, doc_name, first_line, cwd = sys.argv[1:5]
sys.path.insert(0, cwd)
with open(source_path, encoding="utf-8") as fh:
    code = "\n" * (int(first_line) - 1) + fh.read()
exec(compile(code, doc_name, "exec"), {"__name__": "__main__"})
"""


@dataclass(frozen=True)
class Block:
    """One fenced ``python`` block of a Markdown page."""

    page: Path
    line: int  # 1-based line of the first code line
    code: str
    runnable: bool
    cwd: str | None = None

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(DOCS).as_posix()}:{self.line}"


def _pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "dev" not in p.relative_to(DOCS).parts)


def _parse_options(text: str | None, where: str) -> str | None:
    if not text:
        return None
    key, sep, value = text.partition("=")
    if key.strip() != "cwd" or not sep or not value.strip():
        raise ValueError(f"{where}: unknown test marker option {text!r}; use cwd=DIR")
    return value.strip()


def _blocks(page: Path, text: str | None = None) -> list[Block]:
    if text is None:
        text = page.read_text(encoding="utf-8")
    lines = text.splitlines()
    out: list[Block] = []
    pending: tuple[int, str | None] | None = None  # (marker line, cwd)
    i = 0
    while i < len(lines):
        line = lines[i]
        where = f"{page.relative_to(DOCS)}:{i + 1}"
        marker = _MARKER.match(line)
        if marker:
            if pending is not None:
                raise ValueError(f"{where}: two test markers without a python block between")
            pending = (i + 1, _parse_options(marker.group("opts"), where))
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            closing = fence.group("fence")
            j = i + 1
            while j < len(lines) and not lines[j].startswith(closing):
                j += 1
            if j == len(lines):
                raise ValueError(f"{where}: unclosed code fence")
            lang = fence.group("lang")
            if pending is not None and lang != "python":
                raise ValueError(f"{where}: a test marker must precede a python block")
            if lang == "python":
                out.append(
                    Block(
                        page,
                        i + 2,
                        "\n".join(lines[i + 1 : j]) + "\n",
                        runnable=pending is not None,
                        cwd=pending[1] if pending is not None else None,
                    )
                )
            pending = None
            i = j + 1
            continue
        if pending is not None and line.strip():
            raise ValueError(f"{where}: a test marker must directly precede a python block")
        i += 1
    if pending is not None:
        raise ValueError(f"{page.relative_to(DOCS)}:{pending[0]}: test marker at end of page")
    return out


def _all_blocks() -> list[Block]:
    return [b for page in _pages() for b in _blocks(page)]


BLOCKS = _all_blocks()
RUNNABLE = [b for b in BLOCKS if b.runnable]


def test_the_docs_have_runnable_samples() -> None:
    # Guards the extraction itself: if the marker convention broke, nothing would run.
    pages = {b.page.relative_to(DOCS).as_posix() for b in RUNNABLE}
    assert len(RUNNABLE) >= 30, f"only {len(RUNNABLE)} runnable blocks found"
    for page in ("index.md", "quickstart.md", "concepts/agent-loop.md", "guides/tools.md"):
        assert page in pages, f"{page} has no runnable sample"


def test_marker_parsing() -> None:
    page = DOCS / "x.md"
    parsed = [
        (b.line, b.runnable, b.cwd, b.code)
        for b in _blocks(
            page,
            "# t\n<!-- test -->\n```python\na = 1\n```\n\n```python\nb = 2\n```\n"
            "<!-- test: cwd=examples -->\n```python\nc = 3\n```\n```text\n<!-- test -->\n```\n",
        )
    ]
    assert parsed == [
        (4, True, None, "a = 1\n"),
        (8, False, None, "b = 2\n"),
        (12, True, "examples", "c = 3\n"),
    ]
    for bad in (
        "<!-- test -->\n```bash\nls\n```\n",
        "<!-- test -->\nsome prose\n```python\nx = 1\n```\n",
        "<!-- test: cwd -->\n```python\nx = 1\n```\n",
        "<!-- test -->\n",
    ):
        with pytest.raises(ValueError, match="test marker"):
            _blocks(page, bad)


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.id for b in RUNNABLE])
def test_runnable_sample(block: Block, tmp_path: Path) -> None:
    cwd = REPO / block.cwd if block.cwd else tmp_path
    assert cwd.is_dir(), f"{block.id}: cwd {cwd} does not exist"
    source = tmp_path / "block.py"
    source.write_text(block.code, encoding="utf-8")
    runner = tmp_path / "run_block.py"
    runner.write_text(_RUNNER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in _PROVIDER_KEYS}
    env.update(
        OPENAI_BASE_URL="http://127.0.0.1:9/blocked-by-helikon-docs-tests",
        ANTHROPIC_BASE_URL="http://127.0.0.1:9/blocked-by-helikon-docs-tests",
        PYTHONDONTWRITEBYTECODE="1",
        NO_COLOR="1",
    )
    proc = subprocess.run(
        [
            sys.executable,
            str(runner),
            str(source),
            f"docs/{block.id.rsplit(':', 1)[0]}",
            str(block.line),
            str(cwd),
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, (
        f"{block.id} failed (exit {proc.returncode})\n--- stdout\n{proc.stdout}\n"
        f"--- stderr\n{proc.stderr}"
    )


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_every_sample_parses_and_its_imports_resolve(block: Block) -> None:
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = compile(block.code, block.id, "exec", flags=flags)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("helikon"):
            module = importlib.import_module(str(node.module))
            for alias in node.names:
                if alias.name == "*":
                    continue
                if not hasattr(module, alias.name):
                    # a submodule imported by name (``from helikon.tools import web``)
                    importlib.import_module(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("helikon"):
                    importlib.import_module(alias.name)


def _links() -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # links inside code are code
        found.extend((page, m.group("target")) for m in _LINK.finditer(text))
    return found


def test_relative_links_resolve() -> None:
    broken = []
    for page, target in _links():
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        if not (page.parent / path).exists():
            broken.append(f"{page.relative_to(DOCS)} -> {target}")
    assert not broken, "broken links:\n" + "\n".join(broken)


def _nav_pages(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [p for item in node for p in _nav_pages(item)]
    if isinstance(node, dict):
        return [p for value in node.values() for p in _nav_pages(value)]
    return []


def test_mkdocs_nav_lists_every_page_and_only_existing_ones() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["docs_dir"] == "docs"
    nav = _nav_pages(config["nav"])
    missing = [p for p in nav if not (DOCS / p).is_file()]
    assert not missing, f"nav entries without a page: {missing}"
    unlisted = [p.relative_to(DOCS).as_posix() for p in _pages()]
    unlisted = [p for p in unlisted if p not in nav]
    assert not unlisted, f"pages missing from the nav: {unlisted}"


def test_api_reference_directives_name_importable_modules() -> None:
    idents = [
        m.group("ident")
        for page in (DOCS / "reference").glob("*.md")
        for m in _DIRECTIVE.finditer(page.read_text(encoding="utf-8"))
    ]
    assert idents, "the API reference has no ::: directives"
    for ident in idents:
        importlib.import_module(ident)
