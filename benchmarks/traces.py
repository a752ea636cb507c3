"""OpenTelemetry OTLP JSON traces: loading a large trace file against parsing it (issue 13).

Writes a trace file of at least ``--mb`` megabytes, for each style the loader reads: the real
``openai`` client driven against a loopback fake Chat Completions server and instrumented by
the real instrumentor (``genai``: ``opentelemetry-instrumentation-openai-v2``, GenAI semantic
conventions with message content on the span; ``openinference``: the OpenInference one), with
the agent and tool spans made by the real ``opentelemetry-sdk`` as agent frameworks make them
(as ``tests/formats/test_otlp.py`` writes its fixtures). One conversation of many turns, a
trace each, one OTLP export request per line as the file exporters write it (encoded by the OTLP
exporter's own encoder, ids in hex): every model span repeats its run's history, tool outputs
of a few hundred to 12,000 characters, parallel calls, failing tools, a sub-agent now and then.
Then measures in the same run:

  baseline  ``json.loads`` of every line of the file
  measured  ``turnfold.load(path)``: the conversation rebuilt from its span tree

Bar (issue 13): load <= 3x ``json.loads`` of the same data, for each style. Times are best of
``--runs`` alternating runs in this process (each side warmed up once first); the figures are
printed as the last line.

    python benchmarks/traces.py [--mb 40] [--runs 3] [--style genai] [--keep DIR]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for benchmarks.load

from benchmarks.load import WORDS, best_of, parse_lines

BAR = 3.0
STYLES = ("genai", "openinference")
SESSION = "tf-benchmark-conversation"
SYSTEM = "You are a coding agent. Use the tools to inspect and change the repository."
#: Tool output sizes in characters, one picked per call (as benchmarks/load.py's sessions).
OUTPUT_SIZES = (200, 800, 3_000, 12_000)
TOOLS = ("read_file", "run_tests", "search", "ask_expert")
_TOOL_SCHEMAS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in TOOLS
]
#: The OTLP JSON encoding writes trace and span ids in hex, a protobuf JSON mapping in base64.
_ID_KEYS = ("traceId", "spanId", "parentSpanId")
_GENAI_ENV = {
    "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
}


def _prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


# --- the scripted model ----------------------------------------------------------------------


def _plan(prompt: str) -> list[list[str]]:
    """The tool calls of each step of the run a prompt starts: what the model will ask for
    follows from the prompt alone, so every request of the run agrees on it."""
    rng = random.Random(prompt)
    expert = prompt.startswith("Task") and rng.random() < 0.15
    steps = [
        [rng.choice(TOOLS[:3]) for _ in range(rng.choice((1, 1, 2, 3)))]
        for _ in range(rng.randrange(1, 6))
    ]
    if expert:  # a sub-agent: a run of its own, under the call that asked for it
        steps[rng.randrange(len(steps))].append("ask_expert")
    return steps


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    """The next step of the run the last user message started, from the history it holds."""
    messages = body["messages"]
    start = max(i for i, m in enumerate(messages) if m["role"] == "user")
    prompt = messages[start]["content"]
    step = sum(1 for m in messages[start:] if m["role"] == "assistant")
    plan = _plan(prompt)
    rng = random.Random(f"{prompt}/{step}")
    # "Task 12" or "Expert Task 12": ids unique across the conversation, as a model's are.
    label = prompt.split(":", 1)[0].replace(" ", "_").lower()
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if step < len(plan):
        if rng.random() < 0.5:
            message["content"] = _prose(rng, 30)
        message["tool_calls"] = [
            {"id": f"call_{label}_{step}_{index}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(_arguments(name, prompt, rng))}}
            for index, name in enumerate(plan[step])
        ]  # fmt: skip
    else:
        message["content"] = _prose(rng, 60)
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": f"chatcmpl-{step}", "object": "chat.completion", "created": 1767225600 + step,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 40 * len(messages), "completion_tokens": rng.randrange(9, 900)},
    }  # fmt: skip


def _arguments(name: str, prompt: str, rng: random.Random) -> dict[str, Any]:
    if name == "read_file":
        return {"path": f"src/module_{rng.randrange(400)}.py"}
    if name == "run_tests":
        return {"command": rng.choice(["pytest -q", "pytest -q tests/unit", "npm test"])}
    if name == "search":
        return {"pattern": f"def handler_{rng.randrange(90)}"}
    return {"question": f"Expert {prompt.split(':', 1)[0]}: {_prose(rng, 12)}"}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # one kept-alive connection for the whole run
    disable_nagle_algorithm = True  # else each small reply waits for a delayed ACK (40 ms)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        data = json.dumps(_reply(body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def _fake_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()


# --- the instrumented agent ------------------------------------------------------------------


@contextmanager
def _instrumented(style: str) -> Iterator[tuple[Any, Any]]:
    """A tracer provider with an in-memory exporter, the style's instrumentor on openai."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    saved = {k: os.environ.get(k) for k in _GENAI_ENV}
    instrumentor: Any
    if style == "genai":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        os.environ.update(_GENAI_ENV)  # read when instrumenting: content on the span
        instrumentor = OpenAIInstrumentor()
    else:
        from openinference.instrumentation.openai import OpenAIInstrumentor as OIInstrumentor

        instrumentor = OIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield provider.get_tracer("turnfold.benchmarks.agent"), exporter
    finally:
        instrumentor.uninstrument()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _tool_output(call_id: str) -> tuple[str, bool]:
    """A tool's output and whether it failed, from its call id."""
    rng = random.Random(call_id)
    size = rng.choice(OUTPUT_SIZES)
    lines: list[str] = []
    while sum(map(len, lines)) < size:
        lines.append(f"{rng.randrange(10_000):>5}  {_prose(rng, 10)}")
    failed = rng.random() < 0.05
    return ("Error: exit code 1\n" if failed else "") + "\n".join(lines), failed


def _run_agent(style: str, tracer: Any, client: Any, prompt: str, name: str) -> str:
    """One agent run as frameworks trace it: an agent span holding only the prompt and the
    final reply, the model calls (instrumented) and a tool span per call."""
    from opentelemetry.trace import Status, StatusCode

    if style == "genai":
        first = [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
                      "gen_ai.conversation.id": SESSION,
                      "gen_ai.input.messages": json.dumps(first)}  # fmt: skip
        span_name = f"invoke_agent {name}"
    else:
        attributes = {"openinference.span.kind": "AGENT", "agent.name": name,
                      "session.id": SESSION, "input.value": prompt}  # fmt: skip
        span_name = name
    with tracer.start_as_current_span(span_name, attributes=attributes) as agent:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": prompt},
        ]
        while True:
            reply = client.chat.completions.create(
                model="gpt-4o-mini", messages=messages, tools=_TOOL_SCHEMAS
            )
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                break
            for call in message.tool_calls:
                arguments = call.function.arguments
                tool_attributes = (
                    {"gen_ai.operation.name": "execute_tool",
                     "gen_ai.tool.name": call.function.name, "gen_ai.tool.call.id": call.id,
                     "gen_ai.tool.call.arguments": arguments}
                    if style == "genai"
                    else {"openinference.span.kind": "TOOL", "tool.name": call.function.name,
                          "input.value": arguments}
                )  # fmt: skip
                tool_name = (
                    f"execute_tool {call.function.name}" if style == "genai" else call.function.name
                )
                with tracer.start_as_current_span(tool_name, attributes=tool_attributes) as tool:
                    if call.function.name == "ask_expert":
                        question = json.loads(arguments)["question"]
                        result = _run_agent(style, tracer, client, question, "expert")
                    else:
                        result, failed = _tool_output(call.id)
                        if failed:
                            tool.record_exception(RuntimeError("exit code 1"))
                            tool.set_status(Status(StatusCode.ERROR, "exit code 1"))
                    key = "gen_ai.tool.call.result" if style == "genai" else "output.value"
                    tool.set_attribute(key, result)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        answer = message.content or ""
        if style == "genai":
            final = [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
            agent.set_attribute("gen_ai.output.messages", json.dumps(final))
        else:
            agent.set_attribute("output.value", answer)
        return answer


def _hex_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex() if k in _ID_KEYS else _hex_ids(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def generate(path: Path, style: str, megabytes: float) -> tuple[int, int, int]:
    """Write turns of the conversation, one export request (trace) per line, until the file
    holds ``megabytes`` MB; (its size, turns, spans)."""
    import openai
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    target = megabytes * 1024 * 1024
    written = turns = spans = 0
    with (
        _fake_server() as base_url,
        _instrumented(style) as (tracer, exporter),
        path.open("w", encoding="utf-8") as out,
    ):
        client = openai.OpenAI(base_url=base_url, api_key="sk-fake", max_retries=0)
        while written < target:
            rng = random.Random(turns)
            _run_agent(style, tracer, client, f"Task {turns}: {_prose(rng, 25)}", "coding-agent")
            finished = exporter.get_finished_spans()
            request = _hex_ids(MessageToDict(encode_spans(finished)))
            line = json.dumps(request, ensure_ascii=False) + "\n"
            out.write(line)
            written += len(line.encode("utf-8"))
            spans += len(finished)
            turns += 1
            exporter.clear()
    return written, turns, spans


def _count_calls(transcript: Any) -> int:
    """Tool calls, sub-agents' included."""
    return sum(
        1 + (_count_calls(call.subagent.transcript) if call.subagent else 0)
        for call in transcript.tool_calls()
    )


def load(path: Path) -> Any:
    import turnfold

    return turnfold.load(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--style", choices=STYLES, action="append", help="default: both")
    parser.add_argument("--keep", type=Path, help="write the trace files in this folder")
    options = parser.parse_args()
    # The progress bar a large load shows in a terminal is not what is measured.
    os.environ.setdefault("TQDM_DISABLE", "1")

    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = options.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for style in options.style or STYLES:
            path = folder / f"{style}_trace.jsonl"
            size, turns, spans = generate(path, style, options.mb)
            transcript = load(path)  # the warm-up of both sides: imports, caches
            parse_lines(path)
            parse, loading = best_of(
                options.runs, lambda p=path: parse_lines(p), lambda p=path: load(p)
            )
            calls = _count_calls(transcript)
            print(
                f"{style}: {size / 2**20:.1f} MB, {turns} traces, {spans} spans; "
                f"{len(transcript.entries)} entries, {calls} tool calls, "
                f"{len(transcript.warnings)} warnings"
            )
            print(f"{style}: json.loads of every line {parse:.2f}s, turnfold.load {loading:.2f}s")
            ratios.append(f"{loading / parse:.2f}x {style}")
    print(f"traces: load/parse = {', '.join(ratios)} (bar {BAR}x)")


if __name__ == "__main__":
    main()
