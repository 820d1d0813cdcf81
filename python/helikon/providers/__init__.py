"""Model provider adapters, one subpackage per provider (each needs its SDK extra).

Importing this package registers :func:`helikon.providers.infer.infer_model` as the reader
of model strings (``Agent(model="openai:gpt-5-mini")``); no SDK is imported until a string
names its provider.
"""

from helikon.core.model_ref import register_model_resolver
from helikon.providers.infer import infer_model
from helikon.providers.retry import RetryingModel, RetryPolicy

register_model_resolver(infer_model)

__all__ = ["RetryPolicy", "RetryingModel", "infer_model"]
