"""Runtimes: where a run executes. :class:`Runner` is the default asyncio runner."""

from helikon.runtimes.runner import Runner

__all__ = ["Runner"]
