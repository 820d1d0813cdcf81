"""Model provider adapters, one subpackage per provider (each needs its SDK extra)."""

from helikon.providers.retry import RetryingModel, RetryPolicy

__all__ = ["RetryPolicy", "RetryingModel"]
