"""Bedrock Converse behind the helikon :class:`~helikon.core.model.Model` protocol.

:class:`BedrockModel` drives ``Converse`` / ``ConverseStream`` through AWS's own SDK: a boto3
``bedrock-runtime`` client does credentials (the standard chain: environment, ``~/.aws``,
SSO, IMDS, container roles), SigV4 signing and the binary event-stream decoding. boto3 is
blocking, so each call runs in a worker thread and a streamed answer is pumped from that
thread into the async iterator (``helikon.providers.bedrock._thread``).

How a request is built is documented in ``helikon.providers.bedrock._request``, how the
answer is read in ``helikon.providers.bedrock._response``, how errors map in
``helikon.providers.bedrock._errors``. In short: system items go to ``system``, tool results
are never sent empty (field case BR-04), reasoning goes back with its signature, tool
schemas pass :func:`helikon.schema.bedrock`, and structured output is a forced reserved tool
on Anthropic, Amazon Nova and Mistral models and plain text on the others.

Model families (:func:`~helikon.providers.bedrock.detect_family`): the id's provider segment
after any inference-profile prefix (``us.``, ``eu.``, ``ap.``, ``apac.``, ``global.``...)
decides the family, which decides structured output, ``toolResult.status`` and the
capability flags.

Cancellation: the token is checked between events; the wait for the response and for each
next event races ``cancel.wait()``. When it fires, the event stream's socket is shut down and
the stream closed (ending the worker's read at once) and the iterator ends without a
``Finish``. A call cancelled before its response arrived closes that response when it does.

Limitations:
    * Audio input, documents and video are not mapped; image URLs must be ``s3://``.
    * ``JsonObjectFormat`` sends nothing special; ``parallel_tool_calls`` has no Converse
      field; ``ToolChoice("none")`` cannot be expressed (see ``_request``).
    * Guardrail traces, citations and ``additionalModelResponseFields`` are not surfaced.
"""

from __future__ import annotations

import os
from contextlib import suppress
from typing import Any, ClassVar

from helikon.core.model import ModelCapabilities, ModelRequest
from helikon.errors import ConfigError, ModelError
from helikon.providers._base import BuildsOwner, Call, ProviderModel, Pull, require_retries
from helikon.providers._stream import Cancelled
from helikon.providers.bedrock._errors import map_bedrock_error
from helikon.providers.bedrock._family import FORCED_TOOL_FAMILIES, ModelFamily, detect_family
from helikon.providers.bedrock._request import ConverseParams, build_converse_params
from helikon.providers.bedrock._response import ConverseTurn
from helikon.providers.bedrock._sdk import boto3, botocore_config, botocore_exceptions
from helikon.providers.bedrock._thread import BlockingCall, EventPump, close_event_stream
from helikon.providers.bedrock.settings import CachePoints

__all__ = ["DEFAULT_READ_TIMEOUT", "BedrockModel"]

DEFAULT_READ_TIMEOUT = 300.0
"""Socket read timeout (seconds) of a client the model creates; botocore's own 60 s is short
for a long answer that is not streamed."""

_VISION = frozenset({ModelFamily.ANTHROPIC, ModelFamily.AMAZON_NOVA})
_REASONING = frozenset({ModelFamily.ANTHROPIC, ModelFamily.AMAZON_NOVA, ModelFamily.UNKNOWN})


def _close_response(response: Any) -> None:
    stream = response.get("stream") if isinstance(response, dict) else None
    if stream is not None:
        close_event_stream(stream)


class BedrockModel(ProviderModel):
    """A model on Amazon Bedrock's Converse API. Build it with ``BedrockModel.converse`` (the
    constructor under the API's name) or :meth:`from_env`.

    Args:
        model_id: a model id, inference profile id or ARN, e.g.
            ``"us.anthropic.claude-sonnet-4-5-20250929-v1:0"`` or ``"amazon.nova-pro-v1:0"``.
        region: the AWS region; defaults to the session's, else ``AWS_REGION``,
            ``AWS_DEFAULT_REGION`` or the profile's.
        client: a ready boto3 ``bedrock-runtime`` client to use instead (then ``region``,
            ``session`` and ``endpoint_url`` must be left out, and ``max_retries`` /
            ``timeout`` are the client's business).
        session: a ``boto3.Session`` (profile, credentials) to build the client from.
        endpoint_url: another endpoint (a VPC endpoint, a local replay server).
        stream: use ConverseStream (``True``) or Converse; the events are the same.
        max_tokens: ``inferenceConfig.maxTokens`` unless
            ``ModelSettings.max_output_tokens`` is set; ``None`` keeps the model default.
        cache: prompt-cache points, e.g. ``CachePoints()``; ``None`` sends none.
        max_retries: SDK-level retries; 0 by default because retrying is a composition
            concern (wrap the model in a retrying model).
        timeout: socket read timeout in seconds (default :data:`DEFAULT_READ_TIMEOUT`).

    Credentials are resolved lazily: a credential problem surfaces from :meth:`invoke` as
    :class:`~helikon.errors.ModelOther`.

    Raises:
        ConfigError: no region can be found, conflicting arguments, or a bad value.

    Example:
        >>> model = BedrockModel.converse("us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        ...                               region="us-east-1")
        >>> (model.provider, model.family.value, model.capabilities().structured_output)
        ('aws.bedrock', 'anthropic', True)
    """

    #: the structured-output mode a typed run with tools uses by default
    #: (``Agent(output_mode=None)``, see helikon.core.retries): Converse has no response format;
    #: structured output is a tool there anyway
    output_mode: ClassVar[str] = "tool"

    converse = BuildsOwner()
    """A model on the Converse API: ``BedrockModel.converse(model_id, ...)`` takes the
    constructor's arguments (see the class)."""

    def __init__(
        self,
        model_id: str,
        *,
        region: str | None = None,
        client: Any = None,
        session: Any = None,
        endpoint_url: str | None = None,
        stream: bool = True,
        max_tokens: int | None = None,
        cache: CachePoints | None = None,
        max_retries: int = 0,
        timeout: float | None = None,
    ) -> None:
        label = "BedrockModel.converse"
        super().__init__(model_id, label=label, stream=stream)
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
        ):
            raise ConfigError("BedrockModel.converse: max_tokens must be a positive int or None")
        require_retries(label, max_retries)
        if client is not None and (
            region is not None or session is not None or endpoint_url is not None
        ):
            raise ConfigError(
                "BedrockModel.converse: pass either client= or region=/session=/endpoint_url=, "
                "not both (a ready client already has its region and endpoint)"
            )
        self._family = detect_family(model_id)
        self._max_tokens = max_tokens
        self._cache = cache
        self._owns_client = client is None
        self._client: Any = client
        if client is None:
            self._client = self._make_client(region, session, endpoint_url, max_retries, timeout)

    @staticmethod
    def _make_client(
        region: str | None,
        session: Any,
        endpoint_url: str | None,
        max_retries: int,
        timeout: float | None,
    ) -> Any:
        config = botocore_config.Config(
            retries={"total_max_attempts": max_retries + 1, "mode": "standard"},
            read_timeout=DEFAULT_READ_TIMEOUT if timeout is None else timeout,
            user_agent_extra="helikon",
        )
        source = session if session is not None else boto3.session.Session()
        if region is None and session is None:
            region = os.environ.get("AWS_REGION") or None  # the AWS SDKs' name; boto3 reads
            # only AWS_DEFAULT_REGION and the profile, which stay the fallback
        try:
            return source.client(
                "bedrock-runtime", region_name=region, endpoint_url=endpoint_url, config=config
            )
        except botocore_exceptions.NoRegionError as exc:
            raise ConfigError(
                "BedrockModel: no AWS region. Pass region=... or set AWS_REGION (or "
                "AWS_DEFAULT_REGION, or a region in the AWS profile)."
            ) from exc

    @classmethod
    def from_env(
        cls,
        model_id: str,
        *,
        stream: bool = True,
        max_tokens: int | None = None,
        cache: CachePoints | None = None,
    ) -> BedrockModel:
        """A model configured entirely by the standard AWS chain.

        Region from ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` / the profile, credentials from
        the environment, ``AWS_PROFILE`` and ``~/.aws``, SSO, container or instance roles;
        ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME`` (botocore's own variable) overrides the endpoint.

        Raises:
            ConfigError: no region is configured.
        """
        return cls(model_id, stream=stream, max_tokens=max_tokens, cache=cache)

    # ------------------------------------------------------------------ Model protocol

    @property
    def provider(self) -> str:
        """``"aws.bedrock"`` (the GenAI semantic-conventions name)."""
        return "aws.bedrock"

    @property
    def family(self) -> ModelFamily:
        """The model family detected from the id."""
        return self._family

    @property
    def client(self) -> Any:
        """The boto3 ``bedrock-runtime`` client in use."""
        return self._client

    def capabilities(self) -> ModelCapabilities:
        """Per family: tools (not Titan), structured output (Anthropic, Nova, Mistral),
        vision and prompt caching (Anthropic, Nova), reasoning (Anthropic, Nova, others that
        may send it); streaming as configured; no server-managed state, no audio."""
        family = self._family
        tools = family is not ModelFamily.AMAZON_TITAN
        return ModelCapabilities(
            streaming=self._stream,
            tools=tools,
            parallel_tool_calls=tools,
            structured_output=family in FORCED_TOOL_FAMILIES,
            reasoning=family in _REASONING,
            vision=family in _VISION,
            prompt_caching=family in _VISION,
        )

    def converse_params(self, request: ModelRequest) -> ConverseParams:
        """The Converse parameters (without ``modelId``) this model sends for ``request``."""
        return build_converse_params(
            request, family=self._family, max_tokens=self._max_tokens, cache=self._cache
        )

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments passed to boto3's ``converse`` / ``converse_stream``.

        Example:
            >>> from helikon.core.items import SystemMessage, TextPart, UserMessage
            >>> model = BedrockModel.converse("amazon.nova-micro-v1:0", region="us-east-1")
            >>> model.request_params(ModelRequest(messages=[
            ...     SystemMessage(content=[TextPart(text="Be brief.")]), UserMessage.text("hi")]))
            {'modelId': 'amazon.nova-micro-v1:0', 'messages': [{'role': 'user', 'content': [{'text': 'hi'}]}], 'system': [{'text': 'Be brief.'}]}
        """  # noqa: E501
        return {"modelId": self._model_id, **self.converse_params(request).params}

    async def aclose(self) -> None:
        """Close the HTTP connections of a client this model created (a client passed in is
        left open)."""
        if self._owns_client:
            with suppress(Exception):
                self._client.close()

    # ------------------------------------------------------------------ skeleton hooks
    # boto3 is blocking: the call runs in a worker thread (BlockingCall), a streamed answer is
    # pumped from another (EventPump); one boto3 client serves every event loop.

    def _build_body(self, request: ModelRequest) -> ConverseParams:
        return self.converse_params(request)

    async def _send(self, body: ConverseParams, call: Call) -> Any:
        kwargs = {"modelId": self._model_id, **body.params}
        method = self._client.converse_stream if self._stream else self._client.converse
        blocking: BlockingCall[Any] = BlockingCall(lambda: method(**kwargs), _close_response)
        taken = False

        def release() -> None:
            if not taken:
                blocking.abandon()

        call.on_close(release)
        response = await call.step(blocking.future)
        taken = not isinstance(response, Cancelled)
        return response

    def _new_turn(self, body: ConverseParams, sent: Any) -> ConverseTurn:
        turn = ConverseTurn(body.structured, model=self._model_id)
        turn.metadata(sent)
        return turn

    def _pull(self, sent: Any, call: Call) -> Pull:
        pump = EventPump(sent["stream"])
        call.on_close(pump.close)
        return pump.next

    def _map_error(self, exc: BaseException) -> ModelError:
        # SDK errors, raised in the worker thread
        return map_bedrock_error(exc)
