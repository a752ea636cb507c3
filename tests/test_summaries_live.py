"""Live labelling through the real SDKs against fake endpoints on loopback (spec S-2, S-6 … S-8).

A small OpenAI-compatible server (``POST /v1/chat/completions``) and a fake of Anthropic's Messages
endpoint (``POST /v1/messages``) run in a thread on 127.0.0.1; each test scripts their replies:
canned labels, slow replies past the timeout, HTTP 500, malformed JSON, refusals, decorated
labels. The labeller talks to them through the official ``openai`` and ``anthropic`` SDKs.
Every wait is bounded; no test runs much over a second or two.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from turnfold.model import ToolUseSummary, Transcript
from turnfold.recording import Recorder
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.settings import DisplaySettings
from turnfold.summaries import (
    PURPOSE,
    SYSTEM_PROMPT,
    AnthropicModel,
    OpenAIModel,
    TranscriptLabeller,
    UsageTracker,
    label_batches,
    resolve_model,
)

openai = pytest.importorskip("openai")

SETTINGS = DisplaySettings()  # built-in defaults: the feature on, no fast model of its own
NO_ENV: dict[str, str] = {}  # no TURNFOLD_EMIT_TOOL_USE_SUMMARIES: the setting decides


def clock() -> str:
    return "2026-01-01T00:00:00Z"


# --- the fake endpoints --------------------------------------------------------------------------


@dataclass
class Reply:
    """What the fake server answers to one request."""

    text: str | None = "Read a.ts"
    status: int = 200
    delay: float = 0.0
    raw: bytes | None = None  # sent as the body instead of a well-formed completion
    refusal: str | None = None
    input_tokens: int = 120
    output_tokens: int = 5


class FakeLLM(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.headers_seen: list[dict[str, str]] = []
        self.reply: Callable[[dict[str, Any]], Reply] = lambda body: Reply()
        self.stopping = threading.Event()
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def prompts(self) -> list[str]:
        with self.lock:
            return [_user_prompt(body) for body in self.requests]

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (timeout) closes the socket under a sleeping handler


def _user_prompt(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    return str(next((m["content"] for m in messages if m.get("role") == "user"), ""))


class _Handler(BaseHTTPRequestHandler):
    server: FakeLLM

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with self.server.lock:
            self.server.requests.append(body)
            self.server.headers_seen.append({k.lower(): v for k, v in self.headers.items()})
        reply = self.server.reply(body)
        if reply.delay and self.server.stopping.wait(reply.delay):
            return
        if reply.raw is not None:
            payload = reply.raw
        elif reply.status != 200:
            payload = json.dumps({"error": {"message": "boom", "type": "server_error"}}).encode()
        elif self.path.endswith("/messages"):
            payload = json.dumps(_anthropic_message(body, reply)).encode()
        else:
            payload = json.dumps(_chat_completion(body, reply)).encode()
        try:
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            pass


def _chat_completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1767225600,
        "model": body.get("model", "fast"),
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": reply.text, "refusal": reply.refusal},
            }
        ],
        "usage": {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
        },
    }


def _anthropic_message(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-fast"),
        "content": [{"type": "text", "text": reply.text or ""}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
    }


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLM]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    fake = FakeLLM()
    thread = threading.Thread(target=fake.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    yield fake
    fake.stopping.set()
    fake.shutdown()
    fake.server_close()
    thread.join(2)


def by_marker(replies: dict[str, Reply], default: Reply | None = None) -> Callable[..., Reply]:
    """Answer by the first marker found in the user prompt."""

    def reply(body: dict[str, Any]) -> Reply:
        prompt = _user_prompt(body)
        for marker, answer in replies.items():
            if marker in prompt:
                return answer
        return default or Reply()

    return reply


def openai_model(server: FakeLLM, **options: Any) -> OpenAIModel:
    return OpenAIModel("fast-model", base_url=f"{server.url}/v1", api_key="test-key", **options)


def labeller_for(
    transcript: Transcript, model: Any, *, timeout: float = 2.0, **options: Any
) -> TranscriptLabeller:
    options.setdefault("settings", SETTINGS)
    options.setdefault("environ", NO_ENV)
    return TranscriptLabeller(transcript, model, timeout=timeout, clock=clock, **options)


def batch_labels(transcript: Transcript) -> list[str | None]:
    """The ``● label`` line of every batch, in transcript order, as the widget shows it."""
    view = build_view_model(transcript, SETTINGS)
    return [node["label"] for node in iter_nodes(view) if node["kind"] == "batch"]


def wait_until(condition: Callable[[], bool], timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def labels(transcript: Transcript) -> list[ToolUseSummary]:
    return [e for e in transcript if isinstance(e, ToolUseSummary)]


# --- S-6: a label through the openai SDK ---------------------------------------------------------


def test_S6_a_closed_batch_is_labelled_through_the_openai_sdk(server: FakeLLM) -> None:
    server.reply = lambda body: Reply(text="Read a.ts and b.ts")
    with labeller_for(Transcript(), openai_model(server)) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.user("Compare the two modules")
        rec.assistant("Let me read both files.")
        a = rec.start_tool("Read", {"file_path": "a.ts"}, call_id="toolu_a")
        b = rec.start_tool("Read", {"file_path": "b.ts"}, call_id="toolu_b")
        rec.finish_tool(a, "export const a = 1")
        rec.finish_tool(b, "export const b = 2")
        rec.assistant("They differ in one constant.")
        assert labeller.wait(5)
    (label,) = labels(rec.transcript)
    assert (label.label, label.call_ids, label.timestamp) == (
        "Read a.ts and b.ts",
        ["toolu_a", "toolu_b"],
        clock(),
    )
    assert batch_labels(rec.transcript) == ["● Read a.ts and b.ts"]
    (body,) = server.requests
    assert body["model"] == "fast-model"
    assert body["max_tokens"] == 64  # S-4: a small output budget
    assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert body["messages"][1]["content"] == (
        "Intent (from the assistant's last message): Let me read both files.\n\n"
        "Tools completed:\n\n"
        'Tool: Read\nInput: {"file_path":"a.ts"}\nOutput: "export const a = 1"\n\n'
        'Tool: Read\nInput: {"file_path":"b.ts"}\nOutput: "export const b = 2"\n\n'
        "Label:"
    )
    assert server.headers_seen[0]["authorization"] == "Bearer test-key"
    assert server.headers_seen[0].get("x-stainless-retry-count", "0") == "0"


def test_S6_labels_attach_by_call_ids_when_later_batches_arrived_first(server: FakeLLM) -> None:
    # Batch 1's label is slow; batches 2 and 3 are recorded and labelled meanwhile.
    server.reply = by_marker(
        {
            "first.ts": Reply(text="Read first.ts", delay=0.6),
            "TODO": Reply(text="Searched for TODO"),
            "pytest": Reply(text="Ran tests"),
        }
    )
    with labeller_for(Transcript(), openai_model(server), max_workers=2) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.user("Clean up")
        rec.finish_tool(rec.start_tool("Read", {"file_path": "first.ts"}), "1")
        rec.end_batch()
        rec.finish_tool(rec.start_tool("Grep", {"pattern": "TODO"}), "src/x.ts:1")
        rec.end_batch()
        rec.finish_tool(rec.start_tool("Bash", {"command": "pytest -q"}), "3 passed")
        rec.end_batch()
        assert labeller.wait(5)
    assert [s.label for s in labels(rec.transcript)] == [
        "Searched for TODO",
        "Ran tests",
        "Read first.ts",
    ]  # arrival order: the slow one came last...
    # ...and each still sits under its own batch.
    assert batch_labels(rec.transcript) == ["● Read first.ts", "● Searched for TODO", "● Ran tests"]


def test_S6_appending_never_waits_for_the_model(server: FakeLLM) -> None:
    sleep = 1.0
    server.reply = lambda body: Reply(text="Read a.ts", delay=sleep)
    with labeller_for(Transcript(), openai_model(server), timeout=3) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.user("Go")
        rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
        started = time.monotonic()
        rec.assistant("Reading done; now the tests.")  # closes the batch: the request starts
        call = rec.start_tool("Bash", {"command": "pytest"})
        rec.finish_tool(call, "ok")
        spent = time.monotonic() - started
        assert labeller.pending == 1  # the model is still sleeping...
        assert spent < sleep / 4  # ...and none of that time was spent by the appends
        assert labeller.wait(5)
    assert batch_labels(rec.transcript)[0] == "● Read a.ts"


def test_S2_an_aborted_turn_gets_no_label(server: FakeLLM) -> None:
    server.reply = lambda body: Reply(text="Read a.ts", delay=0.4)
    usage = UsageTracker()
    with labeller_for(Transcript(), openai_model(server), usage=usage) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.user("Go")
        rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
        rec.end_batch()
        wait_until(lambda: len(server.requests) == 1)  # the request is in flight...
        rec.start_tool("Bash", {"command": "sleep 100"})
        rec.abort("interrupted")  # ...when the user stops the turn
        assert labeller.wait(5)
        assert labels(rec.transcript) == []
        assert usage.get(PURPOSE).dropped == 1
        # The next turn is labelled again.
        rec.user("Try again")
        rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
        rec.end_batch()
        assert labeller.wait(5)
    assert [s.label for s in labels(rec.transcript)] == ["Read a.ts"]
    assert len(server.requests) == 2  # the aborted open batch (the Bash call) never asked


def test_S2_a_batch_still_running_when_aborted_is_never_sent(server: FakeLLM) -> None:
    with labeller_for(Transcript(), openai_model(server)) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.user("Go")
        rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
        rec.start_tool("Bash", {"command": "make"})
        rec.end_batch()  # closed, but the Bash call still runs: labelled when it finishes
        rec.abort()  # it never does
        assert labeller.wait(5)
    assert server.requests == []
    assert labels(rec.transcript) == []


def test_S6_a_batch_closed_while_running_is_labelled_when_its_last_call_finishes(
    server: FakeLLM,
) -> None:
    with labeller_for(Transcript(), openai_model(server)) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.user("Go")
        read = rec.start_tool("Read", {"file_path": "a.ts"})
        bash = rec.start_tool("Bash", {"command": "make"})
        rec.end_batch()
        rec.finish_tool(read, "a")
        assert labeller.pending == 0
        assert server.requests == []
        rec.finish_tool(bash, "built")
        assert labeller.wait(5)
    assert len(server.requests) == 1
    assert labels(rec.transcript)[0].call_ids == [read.call_id, bash.call_id]


def test_S2_subagent_batches_never_trigger_a_request(server: FakeLLM) -> None:
    server.reply = lambda body: Reply(text="Delegated file search")
    with labeller_for(Transcript(), openai_model(server)) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.user("Find the config loader")
        task = rec.start_tool("Task", {"description": "find config loader"}, call_id="toolu_t")
        child = Transcript()
        rec.attach_subagent(task, child, name="explorer")
        # The sub-agent records its own batches, even with the same labeller attached.
        sub = Recorder(child, labeller=labeller, clock=clock)
        sub.finish_tool(sub.start_tool("Grep", {"pattern": "load_config"}), "config.py:3")
        sub.end_batch()
        sub.finish_tool(sub.start_tool("Read", {"file_path": "config.py"}), "def load_config")
        sub.assistant("It is in config.py.")
        rec.finish_tool(task, "It is in config.py.")
        rec.assistant("Found it.")
        assert labeller.wait(5)
        # Labelling the sub-agent's transcript explicitly does nothing either.
        assert label_batches(child, lambda request: "Searched", settings=SETTINGS) == []
    (body,) = server.requests  # only the parent batch, the one holding the Task call
    assert "Tool: Task" in _user_prompt(body)
    assert "load_config" not in json.dumps(body["messages"][1]["content"].split("Output:")[0])
    assert [s.call_ids for s in labels(rec.transcript)] == [["toolu_t"]]
    assert labels(child) == []


def test_S2_failed_tools_are_not_sent(server: FakeLLM) -> None:
    with labeller_for(Transcript(), openai_model(server)) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.user("Go")
        ok = rec.start_tool("Read", {"file_path": "ok.ts"})
        bad = rec.start_tool("Read", {"file_path": "missing.ts"})
        rec.finish_tool(ok, "fine")
        rec.finish_tool(bad, "ENOENT secret-ish detail", status="error")
        rec.end_batch()
        only_failed = rec.start_tool("Bash", {"command": "false"})
        rec.finish_tool(only_failed, "exit 1", status="error")
        rec.end_batch()  # nothing succeeded: no request at all
        assert labeller.wait(5)
    (body,) = server.requests
    prompt = _user_prompt(body)
    assert "ok.ts" in prompt
    assert "missing.ts" not in prompt
    assert "ENOENT" not in prompt
    # The label still covers the whole batch.
    assert labels(rec.transcript)[0].call_ids == [ok.call_id, bad.call_id]


# --- S-6: failures are swallowed -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "failed", "rejected"),
    [
        pytest.param(Reply(delay=1.0), 1, 0, id="slow-past-timeout"),
        pytest.param(Reply(status=500), 1, 0, id="http-500"),
        pytest.param(Reply(raw=b"{not json"), 1, 0, id="malformed-json"),
        pytest.param(Reply(text=None, refusal="I can't help with that."), 0, 1, id="refusal"),
        pytest.param(Reply(text="I cannot summarize these tools."), 0, 1, id="refusal-text"),
        pytest.param(Reply(text="Error: upstream unavailable"), 0, 1, id="error-text"),
        pytest.param(Reply(text="   "), 0, 1, id="empty"),
    ],
)
def test_S6_failures_are_swallowed_and_leave_the_view_as_it_was(
    server: FakeLLM,
    caplog: pytest.LogCaptureFixture,
    reply: Reply,
    failed: int,
    rejected: int,
) -> None:
    server.reply = lambda body: reply
    usage = UsageTracker()
    transcript = Transcript()
    with labeller_for(transcript, openai_model(server), timeout=0.4, usage=usage) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.user("Go")
        rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
        before = build_view_model(transcript, SETTINGS)
        started = time.monotonic()
        rec.end_batch()
        assert labeller.wait(5)
        assert time.monotonic() - started < 2  # one attempt, bounded by the timeout
    assert labels(transcript) == []
    assert build_view_model(transcript, SETTINGS) == before
    assert len(server.requests) == 1  # one attempt: no retry
    counter = usage.get(PURPOSE)
    assert (counter.calls, counter.failures, counter.rejected) == (1, failed, rejected)
    if failed:
        assert "gave no label" in caplog.text


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        ("- Read config.json", "Read config.json"),
        ('"Fixed NPE in UserService"', "Fixed NPE in UserService"),
        ("**Searched in auth/**", "Searched in auth/"),
        ("Label: Created signup endpoint", "Created signup endpoint"),
        ("• 「读取配置文件」", "读取配置文件"),
        ("Ran failing tests\nI ran the tests because…", "Ran failing tests"),
    ],
)
def test_S5_decorated_labels_are_cleaned(server: FakeLLM, raw: str, label: str) -> None:
    server.reply = lambda body: Reply(text=raw)
    with labeller_for(Transcript(), openai_model(server)) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
        rec.end_batch()
        assert labeller.wait(5)
    assert [s.label for s in labels(rec.transcript)] == [label]


# --- S-8: usage and privacy ----------------------------------------------------------------------


def test_S8_usage_counters(server: FakeLLM) -> None:
    server.reply = by_marker(
        {
            "a.ts": Reply(text="Read a.ts", input_tokens=300, output_tokens=4),
            "b.ts": Reply(text="Read b.ts", input_tokens=200, output_tokens=6),
            "c.ts": Reply(status=500),
        }
    )
    transcript = Transcript()
    with labeller_for(transcript, openai_model(server)) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        for name in ("a.ts", "b.ts", "c.ts"):
            rec.finish_tool(rec.start_tool("Read", {"file_path": name}), name)
            rec.end_batch()
        assert labeller.wait(5)
    counter = labeller.usage.get(PURPOSE)
    assert (counter.calls, counter.input_tokens, counter.output_tokens, counter.failures) == (
        3,
        500,
        10,
        1,
    )
    assert labeller.usage.snapshot()[PURPOSE]["calls"] == 3
    # The transcript's tracker also reported to the process-wide one.
    from turnfold.summaries import usage, usage_for

    assert usage_for(transcript) is labeller.usage
    assert usage().get(PURPOSE).calls >= 3


def test_S8_secrets_are_redacted_in_the_request_body(server: FakeLLM) -> None:
    openai_key = "sk-proj-" + "A1b2C3d4" * 4
    github = "ghp_" + "x" * 36
    with labeller_for(Transcript(), openai_model(server)) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.user("Deploy")
        rec.assistant(f"Using token {github} to push.")
        call = rec.start_tool(
            "Bash",
            {"command": f"curl -H 'Authorization: Bearer {openai_key}' https://api.example"},
        )
        rec.finish_tool(
            call,
            "OPENAI_API_KEY=hunter2hunter2\n"
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"
            "db: postgres://app:s3cretpass@db.internal/prod",
        )
        rec.end_batch()
        assert labeller.wait(5)
    raw = json.dumps(server.requests)
    for secret in (openai_key, github, "hunter2hunter2", "MIIEowIBAAKCAQEA", "s3cretpass"):
        assert secret not in raw
    assert "[REDACTED]" in raw
    assert "postgres://app:[REDACTED]@db.internal/prod" in _user_prompt(server.requests[0])


def test_S8_the_widget_footer_shows_usage_when_non_zero(server: FakeLLM) -> None:
    from turnfold.widget import USAGE_KEY, TranscriptWidget

    transcript = Transcript()
    widget = TranscriptWidget(transcript, DisplaySettings())
    try:
        with labeller_for(transcript, openai_model(server)) as labeller:
            rec = Recorder(labeller=labeller, clock=clock)
            rec.user("Go")
            widget.flush()
            assert USAGE_KEY not in [n["key"] for n in widget.view["nodes"]]  # zero: no footer
            rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
            rec.end_batch()
            assert labeller.wait(5)
        widget.flush()
        footer = widget.view["nodes"][-1]
        assert footer["key"] == USAGE_KEY
        assert footer["html"] == (
            "Fast model, tool-use labels: 1 call · 120 input tokens · 5 output tokens"
        )
        batch = next(n for n in iter_nodes(widget.view) if n["kind"] == "batch")
        assert batch["label"] == "● Read a.ts"
        data, _ = widget._repr_mimebundle_() or ({}, {})
        assert data["text/plain"].endswith(
            "ℹ Fast model, tool-use labels: 1 call · 120 input tokens · 5 output tokens"
        )
        assert "1 call · 120 input tokens" in data["text/html"]
        assert widget.search("input tokens") == ([], 0)  # not transcript text
    finally:
        widget.close()


# --- S-7: settings, environment, Anthropic -------------------------------------------------------


def test_S7_openai_compatible_endpoint_from_the_environment(server: FakeLLM) -> None:
    env = {
        "TURNFOLD_FAST_MODEL_BASE_URL": f"{server.url}/v1",
        "TURNFOLD_FAST_MODEL_API_KEY": "local-key",
    }
    settings = DisplaySettings(fast_model="qwen2.5:0.5b")  # an Ollama-style name, colon and all
    transcript = Transcript()
    with TranscriptLabeller(transcript, settings=settings, environ=env, clock=clock) as labeller:
        assert isinstance(labeller.model, OpenAIModel)
        rec = Recorder(labeller=labeller, clock=clock)
        rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
        rec.end_batch()
        assert labeller.wait(5)
    assert server.requests[0]["model"] == "qwen2.5:0.5b"
    assert server.headers_seen[0]["authorization"] == "Bearer local-key"
    assert [s.label for s in labels(transcript)] == ["Read a.ts"]


def test_S7_endpoint_options_from_a_mapping(server: FakeLLM) -> None:
    env = {"MY_FAST_KEY": "mapped-key"}
    model = resolve_model(
        {
            "model": "qwen-turbo",
            "base_url": f"{server.url}/v1",
            "api_key_env": "MY_FAST_KEY",
            "max_tokens": 32,
            "extra_body": {"enable_thinking": False},
        },
        environ=env,
    )
    with labeller_for(Transcript(), model) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
        rec.end_batch()
        assert labeller.wait(5)
    body = server.requests[0]
    assert (body["model"], body["max_tokens"], body["enable_thinking"]) == ("qwen-turbo", 32, False)
    reasoning = OpenAIModel(
        "o-mini", base_url=f"{server.url}/v1", api_key="k", token_param="max_completion_tokens"
    )
    with labeller_for(Transcript(), reasoning) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
        rec.end_batch()
        assert labeller.wait(5)
    assert server.requests[1]["max_completion_tokens"] == 64
    assert "max_tokens" not in server.requests[1]
    assert server.headers_seen[0]["authorization"] == "Bearer mapped-key"


def test_S7_anthropic_through_the_anthropic_sdk(server: FakeLLM) -> None:
    pytest.importorskip("anthropic")
    server.reply = lambda body: Reply(text="Searched in auth/", input_tokens=90, output_tokens=7)
    model = resolve_model(
        "anthropic:claude-haiku-4-5",
        environ={"TURNFOLD_FAST_MODEL_BASE_URL": server.url, "ANTHROPIC_API_KEY": "ant-key"},
    )
    assert isinstance(model, AnthropicModel)
    with labeller_for(Transcript(), model) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.user("Where is auth handled?")
        rec.finish_tool(rec.start_tool("Grep", {"pattern": "auth", "path": "auth/"}), "auth/x.py")
        rec.end_batch()
        assert labeller.wait(5)
    (body,) = server.requests
    assert body["model"] == "claude-haiku-4-5"
    assert body["system"] == SYSTEM_PROMPT
    assert body["max_tokens"] == 64
    assert body["messages"][0]["role"] == "user"
    assert body["messages"][0]["content"].endswith("Label:")
    headers = server.headers_seen[0]
    assert "ant-key" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])
    assert headers["x-stainless-retry-count"] == "0"
    assert [s.label for s in labels(rec.transcript)] == ["Searched in auth/"]
    counter = labeller.usage.get(PURPOSE)
    assert (counter.input_tokens, counter.output_tokens) == (90, 7)


def test_S7_anthropic_failures_are_swallowed(server: FakeLLM) -> None:
    pytest.importorskip("anthropic")
    server.reply = lambda body: Reply(status=500)
    model = AnthropicModel("claude-haiku-4-5", base_url=server.url, api_key="ant-key")
    with labeller_for(Transcript(), model) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
        rec.end_batch()
        assert labeller.wait(5)
    assert labels(rec.transcript) == []
    assert len(server.requests) == 1  # retries are off
    assert labeller.usage.get(PURPOSE).failures == 1


# --- opt-in labelling of a loaded transcript, and persistence ------------------------------------


def test_S1_label_batches_labels_a_loaded_transcript_and_dump_keeps_the_labels(
    server: FakeLLM,
) -> None:
    import turnfold

    server.reply = by_marker({"a.ts": Reply(text="Read a.ts"), "pytest": Reply(text="Ran tests")})
    rec = Recorder(clock=clock)
    rec.user("Go")
    rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}, call_id="c1"), "a")
    rec.end_batch()
    rec.finish_tool(rec.start_tool("Bash", {"command": "pytest"}, call_id="c2"), "ok")
    rec.assistant("Done.")
    loaded = turnfold.load(rec.transcript.dump())
    assert labels(loaded) == []  # loading never labels anything
    added = label_batches(loaded, openai_model(server), settings=SETTINGS, environ=NO_ENV)
    assert sorted(s.label for s in added) == ["Ran tests", "Read a.ts"]
    again = turnfold.load(loaded.dump())
    assert again == loaded
    assert batch_labels(again) == ["● Read a.ts", "● Ran tests"]
    # A second pass finds every batch labelled: no request.
    count = len(server.requests)
    assert label_batches(again, openai_model(server), settings=SETTINGS, environ=NO_ENV) == []
    assert len(server.requests) == count
