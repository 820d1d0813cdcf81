"""Every guide's runnable examples work from what the guide says to install.

For each page under ``docs/`` with runnable samples (``<!-- test -->``, see
``tests/test_docs_examples.py``), a venv is built holding only the built wheel plus what the
page's own ``pip install ...`` lines name (extras of helikon and any other package), and the
page's samples run there, offline, exactly as the docs test runs them. A guide that uses a
package it never tells the reader to install fails here, not on a reader's machine.

Needs the wheel: ``HELIKON_WHEEL`` (scripts/test sets it to the wheel it built). Without it
the test skips. Venvs are shared between pages that name the same packages; pip's cache keeps
them quick.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import pytest

from tests.test_docs_examples import _PROVIDER_KEYS, _RUNNER, DOCS, REPO, RUNNABLE, Block

_WORD = r"(?:'[^']*'|\"[^\"]*\"|[\w.\[\],<>=-]+)"
_PIP = re.compile(rf"pip install ({_WORD}(?:[ \t]+{_WORD})*)")
_HELIKON = re.compile(r"^(?:helikon|\.)\[([\w,-]+)\]$")


def page_requirements(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(helikon extras, other packages) named by the page's ``pip install`` commands.

    ``.`` (a checkout) counts as helikon; options (``-e``, ``-U``) are ignored.
    """
    extras: set[str] = set()
    others: set[str] = set()
    for match in _PIP.finditer(text):
        for word in match.group(1).split():
            word = word.strip("'\"")
            if not word or word.startswith("-"):
                continue
            named = _HELIKON.match(word)
            if named:
                extras.update(e for e in named.group(1).split(",") if e)
            elif word not in ("helikon", "."):
                others.add(word)
    return frozenset(extras), frozenset(others)


def test_page_requirements_are_read_from_the_text() -> None:
    text = (
        "install the `server` extra (`pip install 'helikon[server]'`); the client needs "
        "`pip install 'helikon[server]' httpx`, from a checkout `pip install '.[cli,openai]'`, "
        'or `pip install -U "helikon[otel]"`. Just `pip install helikon`.'
    )
    assert page_requirements(text) == (
        frozenset({"server", "cli", "openai", "otel"}),
        frozenset({"httpx"}),
    )


_WHEEL = os.environ.get("HELIKON_WHEEL")
_BY_PAGE: dict[Path, list[Block]] = defaultdict(list)
for _block in RUNNABLE:
    if _block.page.parent.name == "guides" or _block.page.name == "quickstart.md":
        _BY_PAGE[_block.page].append(_block)
PAGES = sorted(_BY_PAGE)


@pytest.fixture(scope="module")
def venvs() -> dict[tuple[frozenset[str], ...], Path]:
    """The venvs built so far, by what they hold (shared by pages naming the same)."""
    return {}


def _venv(
    cache: dict[tuple[frozenset[str], ...], Path],
    base: Path,
    extras: frozenset[str],
    others: frozenset[str],
) -> Path:
    key = (extras, others)
    if key in cache:
        return cache[key]
    venv = Path(tempfile.mkdtemp(prefix="venv-", dir=base))
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    wheel = f"{_WHEEL}[{','.join(sorted(extras))}]" if extras else str(_WHEEL)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "--only-binary=helikon", wheel, *sorted(others)],
        check=True, timeout=600,
    )
    cache[key] = python
    return python


@pytest.mark.skipif(not _WHEEL, reason="set HELIKON_WHEEL to a built wheel (scripts/test does)")
@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(DOCS).as_posix() for p in PAGES])
def test_guide_runs_from_what_it_says_to_install(
    page: Path,
    venvs: dict[tuple[frozenset[str], ...], Path],
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
) -> None:
    extras, others = page_requirements(page.read_text(encoding="utf-8"))
    python = _venv(venvs, tmp_path_factory.getbasetemp(), extras, others)
    runner = tmp_path / "run_block.py"
    runner.write_text(_RUNNER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in (*_PROVIDER_KEYS, "PYTHONPATH")}
    env.update(
        OPENAI_BASE_URL="http://127.0.0.1:9/blocked-by-helikon-docs-tests",
        ANTHROPIC_BASE_URL="http://127.0.0.1:9/blocked-by-helikon-docs-tests",
        PYTHONDONTWRITEBYTECODE="1",
        NO_COLOR="1",
    )
    failures = []
    for block in _BY_PAGE[page]:
        cwd = REPO / block.cwd if block.cwd else tmp_path
        source = tmp_path / f"block{block.line}.py"
        source.write_text(block.code, encoding="utf-8")
        proc = subprocess.run(
            [str(python), str(runner), str(source), f"docs/{block.id.rsplit(':', 1)[0]}",
             str(block.line), str(cwd)],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
        )
        if proc.returncode != 0:
            failures.append(f"{block.id} (exit {proc.returncode}):\n{proc.stderr[-1500:]}")
    installed = sorted(extras) or ["(no extra)"]
    assert not failures, f"with only the wheel + {installed} + {sorted(others)}:\n" + "\n".join(
        failures
    )
