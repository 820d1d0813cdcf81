"""Export an agent run's spans over OTLP/HTTP.

    pip install 'helikon[otel]' opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
    python main.py --endpoint http://127.0.0.1:4318/v1/traces

helikon only emits spans through ``opentelemetry-api``; this file installs the SDK's tracer
provider with an OTLP/HTTP exporter (point it at any collector: Jaeger, Langfuse, Honeycomb,
an OpenTelemetry Collector). The agent runs offline on a scripted model.
"""

from __future__ import annotations

import argparse

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from helikon import Agent, RunContext, TracerHandle, tool
from helikon.testing import Call, MockModel, Text, Usage


@tool
def get_capital(country: str) -> str:
    """Return the capital of a country."""
    return {"UK": "London", "France": "Paris"}.get(country, "unknown")


def main() -> None:
    parser = argparse.ArgumentParser(description="Export a run's spans over OTLP/HTTP.")
    parser.add_argument("--endpoint", default="http://127.0.0.1:4318/v1/traces")
    args = parser.parse_args()

    provider = TracerProvider(resource=Resource.create({"service.name": "helikon-example"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=args.endpoint)))
    trace.set_tracer_provider(provider)

    model = MockModel(
        [
            [Call("c1", "get_capital", {"country": "UK"}), Usage(53, 15)],
            [Text("The capital of the UK is London."), Usage(78, 9)],
        ],
        model="scripted",
    )
    agent = Agent(name="capitals", model=model, tools=[get_capital])
    ctx = RunContext.ephemeral(None).with_tracer(
        TracerHandle().with_session_id("demo-session").with_user_id("demo-user")
    )
    print(agent.run_sync("What is the capital of the UK?", ctx).final_output)
    provider.shutdown()  # flush the batch to the collector


if __name__ == "__main__":
    main()
