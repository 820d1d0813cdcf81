"""The pytest face of the conformance checks."""

from __future__ import annotations

import pytest

from helikon.sessions.testkit import checks
from helikon.sessions.testkit.checks import Backend

__all__ = ["SessionConformance"]


class SessionConformance:
    """Every conformance check as a pytest test; subclass it as ``Test...``.

    The subclass provides a ``backend`` fixture returning a :class:`Backend`. Tests are
    marked ``asyncio`` (pytest-asyncio runs them).
    """

    @pytest.mark.asyncio
    async def test_empty_session(self, backend: Backend) -> None:
        await checks.check_empty_session(backend)

    @pytest.mark.asyncio
    async def test_empty_append(self, backend: Backend) -> None:
        await checks.check_empty_append(backend)

    @pytest.mark.asyncio
    async def test_ordering(self, backend: Backend) -> None:
        await checks.check_ordering(backend)

    @pytest.mark.asyncio
    async def test_since_exclusive(self, backend: Backend) -> None:
        await checks.check_since_exclusive(backend)

    @pytest.mark.asyncio
    async def test_round_trip(self, backend: Backend) -> None:
        await checks.check_round_trip(backend)

    @pytest.mark.asyncio
    async def test_snapshot_is_projection(self, backend: Backend) -> None:
        await checks.check_snapshot_is_projection(backend)

    @pytest.mark.asyncio
    async def test_isolation(self, backend: Backend) -> None:
        await checks.check_isolation(backend)

    @pytest.mark.asyncio
    async def test_concurrent_writers(self, backend: Backend) -> None:
        await checks.check_concurrent_writers(backend)

    @pytest.mark.asyncio
    async def test_failed_append(self, backend: Backend) -> None:
        await checks.check_failed_append(backend)

    @pytest.mark.asyncio
    async def test_cancelled_append(self, backend: Backend) -> None:
        await checks.check_cancelled_append(backend)

    @pytest.mark.asyncio
    async def test_reopen(self, backend: Backend) -> None:
        if not backend.durable:
            pytest.skip("the backend is not durable")
        await checks.check_reopen(backend)

    @pytest.mark.asyncio
    async def test_process_restart(self, backend: Backend) -> None:
        if backend.subprocess_open is None:
            pytest.skip("no subprocess_open given")
        await checks.check_process_restart(backend)
