"""``import helikon`` stays light: no provider SDK, no web server, no OpenTelemetry SDK.

Those load when the feature that needs them is used (``helikon.providers.openai``,
``helikon.runtimes.server``, ...). Checked in a fresh interpreter, with every extra installed
(the test environment has them all), so an eager import anywhere in the package shows up
here. The OpenTelemetry *API* (``opentelemetry.trace``) may load when installed: it is a
no-op until an SDK is configured, and helikon's spans go through it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Top-level modules (or dotted prefixes) that must not be in sys.modules after the import.
HEAVY = (
    "openai",
    "anthropic",
    "boto3",
    "botocore",
    "google",
    "httpx",
    "starlette",
    "uvicorn",
    "opentelemetry.sdk",
    "opentelemetry.exporter",
    "temporalio",
    "mcp",
    "redis",
    "asyncpg",
    "aiosqlite",
    "pyarrow",
    "jsonschema",
    "typer",
    "rich",
    "lxml",
    "yaml",
)

_PROBE = """
import json, sys
{setup}
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(setup: str) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE.format(setup=setup)],
        capture_output=True, text=True, timeout=120, check=True,
    )
    modules: list[str] = json.loads(proc.stdout)
    return modules


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


@pytest.mark.parametrize(
    "setup",
    [
        "import helikon",
        "import helikon\nfrom helikon.testing import MockModel, Text\n"
        "helikon.Agent(name='a', model=MockModel([[Text('hi')]]), instructions='x')",
        # the sandboxed toolset works from the bare wheel (the web tools load httpx lazily)
        "from helikon.tools import BashTool, OsSandboxBackend, ReadTool, Sandbox",
    ],
    ids=["import", "agent", "tools"],
)
def test_import_loads_no_heavy_dependency(setup: str) -> None:
    modules = _loaded(setup)
    assert "helikon" in modules
    assert _heavy(modules) == []


def test_the_probe_sees_a_heavy_import() -> None:
    """The check above can fail: importing a provider module does load its SDK."""
    pytest.importorskip("openai")
    modules = _loaded("import helikon.providers.openai")
    assert "openai" in _heavy(modules)
