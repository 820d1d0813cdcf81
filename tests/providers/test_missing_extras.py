"""Importing a provider without its extra names the extra to install.

Each case runs in a child interpreter where the SDK is made unimportable (``sys.modules``
entry set to ``None``), so the test does not depend on what this environment has installed.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

_CHILD = """
import sys
sys.modules[{sdk!r}] = None
try:
    import {module}
except ImportError as exc:
    print(exc)
else:
    print("imported")
"""


@pytest.mark.parametrize(
    ("module", "sdk", "message"),
    [
        (
            "helikon.providers.openai",
            "openai",
            "helikon.providers.openai needs the 'openai' extra (the openai SDK is missing): "
            "pip install 'helikon[openai]'",
        ),
        (
            "helikon.providers.anthropic",
            "anthropic",
            "helikon.providers.anthropic needs the 'anthropic' extra (the anthropic SDK is "
            "missing): pip install 'helikon[anthropic]'",
        ),
        (
            "helikon.providers.gemini",
            "httpx",
            "helikon.providers.gemini needs the 'gemini' extra (httpx is missing): "
            "pip install 'helikon[gemini]'",
        ),
        (
            "helikon.providers.bedrock",
            "boto3",
            "helikon.providers.bedrock needs the 'bedrock' extra (AWS's SDK: boto3 is "
            "missing): pip install 'helikon[bedrock]'",
        ),
    ],
)
def test_missing_sdk_names_the_extra(module: str, sdk: str, message: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD.format(sdk=sdk, module=module)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == message


def test_mcp_names_its_extra() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD.format(sdk="mcp", module="helikon.mcp")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == (
        "helikon.mcp needs the 'mcp' extra (the mcp SDK is missing): pip install 'helikon[mcp]'"
    )
