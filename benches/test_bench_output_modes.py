"""pytest-benchmark view of the output modes (``pytest benches/ --benchmark-only``): one group,
one entry per mode, ``extra_info["model_calls_per_run"]`` the calls each made on the same
script (``output_modes.py``); each entry checks that count exactly."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from output_modes import EXPECTED_CALLS, MODES, build, run_once


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    lp = asyncio.new_event_loop()
    yield lp
    lp.close()


@pytest.mark.parametrize("with_tools", [True, False], ids=["tools", "no-tools"])
@pytest.mark.parametrize("mode", MODES)
def test_output_mode_model_calls(
    benchmark: Any, loop: asyncio.AbstractEventLoop, mode: str, with_tools: bool
) -> None:
    agent, model = build(mode, with_tools)
    benchmark.group = f"structured output, {'one tool round' if with_tools else 'no tools'}"
    calls: list[int] = []

    def once() -> None:
        calls.append(loop.run_until_complete(run_once(agent, model)))

    benchmark(once)
    expected = EXPECTED_CALLS[(mode, with_tools)]
    benchmark.extra_info["model_calls_per_run"] = expected
    assert set(calls) == {expected}
