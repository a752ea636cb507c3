"""Trace formats (spec H-4): what tracing instrumentation records of an agent run.

An agent framework or an instrumentor (OpenInference, the OpenTelemetry GenAI instrumentations,
Logfire, MLflow, Langfuse) records each model call, tool run and agent invocation as a span; a
file exporter writes the spans as OTLP JSON. A module here rebuilds the conversation from the
span tree: it is one transcript per conversation, never one per span.
"""
