"""Amazon Bedrock provider: :class:`BedrockModel` over AWS's own SDK (boto3).

Install with ``pip install "helikon[bedrock]"``. ``BedrockModel.converse(model_id)`` speaks the
Converse / ConverseStream API to any Bedrock model; ``BedrockModel.from_env(model_id)`` takes
region and credentials from the standard AWS chain. :func:`detect_family` names the model
family behind an id (inference-profile prefixes and ARNs included), which decides how
structured output is done, and :class:`CachePoints` places prompt-cache points.

Example:
    >>> from helikon.providers.bedrock import BedrockModel, ModelFamily, detect_family
    >>> detect_family("eu.mistral.pixtral-large-2502-v1:0") is ModelFamily.MISTRAL
    True
    >>> BedrockModel.converse("meta.llama3-1-70b-instruct-v1:0", region="us-west-2").family
    <ModelFamily.LLAMA: 'llama'>
"""

from helikon.providers.bedrock._family import ModelFamily, detect_family
from helikon.providers.bedrock._request import STRUCTURED_OUTPUT_TOOL
from helikon.providers.bedrock.converse import BedrockModel
from helikon.providers.bedrock.settings import CachePoints

__all__ = ["STRUCTURED_OUTPUT_TOOL", "BedrockModel", "CachePoints", "ModelFamily", "detect_family"]
