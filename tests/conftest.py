"""Shared test configuration.

* ``shared_dir``: the project's shared folder (spec, conformance vectors, wire recordings),
  from ``HELIKON_SHARED`` or ``../shared`` beside the repository.
* Real model calls are blocked: provider keys are removed from the environment and
  ``OPENAI_BASE_URL`` points at a closed local port, so a test that forgets its replay
  server fails fast instead of reaching a provider.
* ``require_service(name, probe)``: skip when a local service is absent, fail instead when
  ``HELIKON_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("HELIKON_SHARED", REPO.parent / "shared")).resolve()


def load_shared_json(rel: str) -> Any:
    """Load a JSON file from the shared folder (fails clearly when it is missing)."""
    path = SHARED / rel
    if not path.exists():
        pytest.fail(f"shared file {path} is missing; set HELIKON_SHARED to the shared folder")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return SHARED


@pytest.fixture(autouse=True)
def _block_real_model_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/blocked-by-helikon-tests")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/blocked-by-helikon-tests")


def require_service(name: str, probe: Callable[[], bool]) -> None:
    """Skip (or fail under ``HELIKON_REQUIRE_SERVICES=1``) when ``probe()`` is false."""
    if probe():
        return
    if os.environ.get("HELIKON_REQUIRE_SERVICES") == "1":
        pytest.fail(f"required service {name} is not available (HELIKON_REQUIRE_SERVICES=1)")
    pytest.skip(f"service {name} is not available")
