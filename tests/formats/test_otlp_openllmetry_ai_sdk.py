"""Spans of OpenLLMetry's decorators and of the Vercel AI SDK (spec H-4), on traces their real
tools wrote.

Neither tool installs here as a test dependency (the Traceloop SDK's forty-odd instrumentations
do not resolve from the registry mirror; the AI SDK is a Node package), so the fixtures are
committed with the scripts that made them beside them:
``tests/fixtures/traces/otlp/openllmetry-decorators_recipe.py`` (``traceloop-sdk`` 0.62.4 and
its OpenAI instrumentation on the real ``openai`` client against a scripted server on
127.0.0.1) and ``vercel-ai-sdk_recipe.mjs`` (``ai`` 6.0.333's ``generateText`` on its own
``MockLanguageModelV3``). A few shapes the runs do not hold are hand-made below, from the
attributes the SDK's source writes (traceloop/sdk/decorators/base.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import turnfold
from tests.formats.test_otlp import FIXTURES, _chat_span, _request, _span, outline
from turnfold.formats.traces.messages import span_usage
from turnfold.model import AssistantText, Thinking, ToolCall, UserMessage
from turnfold.usage import transcript_tokens

OPENLLMETRY = FIXTURES / "openllmetry-decorators_support-flow.jsonl"
AI_SDK = {
    "generateText": FIXTURES / "vercel-ai-sdk_v6_generate-text_two-steps.json",
    "streamText": FIXTURES / "vercel-ai-sdk_v6_stream-text_two-steps.json",
}

QUESTION = "TF-SUPPORT: where is order A-1187, and refund it?"
BILLING = "TF-BILLING: may order A-1187 be refunded?"
ANSWER = "TF-ANSWER: in transit; no refund yet."
#: ``lookup_order`` returned normally; what it returned says ``"status": "error"``.
LOOKUP = json.dumps(
    {"status": "error", "detail": "carrier API down for A-1187", "last_seen": "Lyon"}, indent=2
)


# --- OpenLLMetry's decorators ---------------------------------------------------------------


def test_H4_openllmetry_decorator_spans_are_the_run_its_tools_and_its_agents() -> None:
    """The ``@workflow`` is the session's run (its function's argument the prompt, its return
    value the reply); the ``@agent`` in it a sub-agent with its own conversation; each ``@tool``
    span the model asked for settles that call (one call, not two: matched by name and
    arguments, the spans carry no call id), its result the function's return value, a raised
    exception a failed call; an ``@agent`` run inside a ``@tool`` nests in that call; a
    ``@tool`` the user's own code called is a call of its own; the ``@task`` is a step whose
    spans are its run's. Before, every decorator span was left out: the tool run by the
    user's code was lost and the billing agent's model call was read as the session's own."""
    transcript = turnfold.load(OPENLLMETRY)
    billing = [("user", BILLING), ("text", "TF-NO-REFUND: not before delivery.")]
    agent = [
        ("user", QUESTION),
        ("text", "TF-LOOKING: checking the order."),
        ("call", "lookup_order", {"order_id": "A-1187"}, "success", LOOKUP, None),
        ("call", "refund", {"order_id": "A-1187"}, "error",
         "refunds of A-1187 need a billing approval", None),
        ("call", "ask_billing", {"question": BILLING}, "success",
         "TF-NO-REFUND: not before delivery.", billing),
        ("text", ANSWER),
    ]  # fmt: skip
    assert outline(transcript) == [
        ("user", QUESTION),
        ("call", "invoke_agent", {"agent": "support_agent", "prompt": QUESTION}, "success",
         ANSWER, agent),
        ("call", "send_receipt", {"args": ["user@example.com", ANSWER]}, "success",
         '{\n  "sent": true,\n  "to": "user@example.com"\n}', None),
        ("text", ANSWER),
    ]  # fmt: skip
    assert transcript.metadata["agent"] == "support_flow"
    assert transcript.metadata["model"] == "gpt-4o-mini-2024-07-18"
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {
        "span/invoke_agent": {"mapped": 3},
        "span/execute_tool": {"mapped": 4},
        "span/chat": {"mapped": 4},
        "span/task": {"ignored": 1},
    }

    run, receipt = transcript.tool_calls()
    assert run.subagent is not None
    assert run.subagent.name == "support_agent"
    assert run.subagent.task == QUESTION
    inner = run.subagent.transcript
    assert inner.metadata["system"] == "You are a support agent."
    lookup, refund, ask = inner.tool_calls()
    # The model's call ids, the tool spans' times.
    assert [c.call_id for c in (lookup, refund, ask)] == ["call_lookup", "call_refund",
                                                         "call_billing"]  # fmt: skip
    assert lookup.batch_id == refund.batch_id != ask.batch_id
    assert (lookup.started_at, lookup.ended_at) == (
        "2026-12-05T10:16:38.791777Z",
        "2026-12-05T10:16:38.791854Z",
    )
    assert ask.subagent is not None
    assert ask.subagent.name == "billing_agent"
    assert ask.subagent.transcript.metadata["system"] == "You are the billing agent."
    assert receipt.call_id.startswith("span-")
    assert (receipt.started_at, receipt.ended_at) == (
        "2026-12-05T10:16:38.805554Z",
        "2026-12-05T10:16:38.805616Z",
    )
    # Every model call is the support agent's or the billing agent's: counted under its call.
    tokens = transcript_tokens(transcript)
    assert tokens.own == {}
    assert tokens.subagents == {"input_tokens": 20 + 50 + 20 + 70, "output_tokens": 28}


def test_H4_an_openllmetry_tool_whose_output_says_error_is_as_its_span_says() -> None:
    """``lookup_order`` returned ``{"status": "error", …}`` normally: its span's status is OK,
    so the call succeeded; the loader does not second-guess the span from what the tool's
    value says (a value's own ``status`` field is data, not the run's outcome)."""
    transcript = turnfold.load(OPENLLMETRY)
    run = transcript.tool_calls()[0]
    assert run.subagent is not None
    lookup = run.subagent.transcript.tool_calls()[0]
    assert lookup.name == "lookup_order"
    assert lookup.status == "success"
    assert lookup.result is not None
    assert lookup.result.text == LOOKUP


def _entity(kind: str, name: str, *, given: Any = None, returned: Any = None,
            **more: Any) -> dict[str, Any]:  # fmt: skip
    attributes = {"traceloop.span.kind": kind, "traceloop.entity.name": name, **more}
    if given is not None:
        attributes["traceloop.entity.input"] = given
    if returned is not None:
        attributes["traceloop.entity.output"] = returned
    return attributes


def test_H4_an_openllmetry_tool_no_model_asked_for_is_a_call_of_its_own() -> None:
    """A ``@tool`` the user's code ran, with no model span at all: a call, its arguments its
    keyword arguments, its error status a failed call whose result is the exception; one
    whose input was cut at the attribute length limit (no longer JSON) keeps it as written,
    one named only by ``traceloop.entity.name`` (the SDK before it wrote ``gen_ai.tool.name``)
    by that name."""
    failing = _entity("tool", "charge", given=json.dumps({"args": [], "kwargs": {"cents": 5}}),
                      **{"gen_ai.tool.name": "charge"})  # fmt: skip
    cut = _entity("tool", "notify", given='{"args": ["a very long te', returned='"sent"')
    flow = _entity("workflow", "flow", given='{"args": ["go"], "kwargs": {}}', returned='"done"')
    raised = {"name": "exception", "attributes": [
        {"key": "exception.type", "value": {"stringValue": "ValueError"}},
        {"key": "exception.message", "value": {"stringValue": "card declined"}},
    ]}  # fmt: skip
    transcript = turnfold.load(
        _request(
            _span("flow.workflow", "1" * 16, flow, start=1),
            _span(
                "charge.tool",
                "2" * 16,
                failing,
                parent="1" * 16,
                start=2,
                status={"code": "STATUS_CODE_ERROR", "message": "card declined"},
                events=[raised],
            ),
            _span("notify.tool", "3" * 16, cut, parent="1" * 16, start=3),
        )
    )
    assert outline(transcript) == [
        ("user", "go"),
        ("call", "charge", {"cents": 5}, "error", "card declined", None),
        ("call", "notify", '{"args": ["a very long te', "success", "sent", None),
        ("text", "done"),
    ]


def test_H4_an_openllmetry_task_s_model_call_is_its_run_s() -> None:
    """A ``@task`` is a step (no entry kind is one): the model call inside it is read as its
    agent's, in order, and the task itself is accounted as left out; an ``@agent`` with no
    ``@workflow`` around it is the session's run, named by its own entity name (every span in
    an agent carries ``gen_ai.agent.name``: a workflow it runs would too)."""
    asked = [{"role": "user", "parts": [{"type": "text", "content": "TF-Q"}]}]
    said = [{"role": "assistant", "parts": [{"type": "text", "content": "TF-A"}]}]
    agent = _entity("agent", "planner", given='{"args": [], "kwargs": {"goal": "TF-Q"}}',
                    returned='"TF-A"', **{"gen_ai.agent.name": "planner"})  # fmt: skip
    inner = _entity("workflow", "drafting", given='{"args": [], "kwargs": {"goal": "TF-D"}}',
                    returned='{"draft": 1}', **{"gen_ai.agent.name": "planner"})  # fmt: skip
    step = _entity("task", "think", **{"gen_ai.agent.name": "planner"})
    transcript = turnfold.load(
        _request(
            _span("planner.agent", "1" * 16, agent, start=1),
            _span("think.task", "2" * 16, step, parent="1" * 16, start=2),
            {**_chat_span("3" * 16, 3, asked, said), "parentSpanId": "2" * 16},
            _span("drafting.workflow", "4" * 16, inner, parent="1" * 16, start=4),
        )
    )
    assert outline(transcript) == [
        ("user", "TF-Q"),
        ("text", "TF-A"),
        ("call", "invoke_agent", {"agent": "drafting", "prompt": "TF-D"}, "success",
         '{"draft": 1}', [("user", "TF-D"), ("text", '{"draft": 1}')]),
    ]  # fmt: skip
    assert transcript.metadata["agent"] == "planner"
    assert transcript.accounting is not None
    assert transcript.accounting.counts["span/task"] == {"ignored": 1}


# --- the Vercel AI SDK ------------------------------------------------------------------------


@pytest.mark.parametrize("run", AI_SDK)
def test_H4_the_vercel_ai_sdk_s_real_spans_read_as_its_steps(run: str) -> None:
    """``generateText`` and ``streamText`` with two steps: each ``doGenerate`` / ``doStream``
    span a response (reasoning, text, two calls in one response), each ``ai.toolCall`` span
    the run of its call (id, arguments, result; the tool that threw an error status; in a
    stream the tools run before the response's span ends), the second step's answer; usage
    per response with its cached and reasoning tokens, the response's model. ``generateText``
    writes a response's call input as JSON text (``streamText`` as an object) and the next
    step's prompt holds it parsed: before, that first response was not known again and was
    shown twice."""
    transcript = turnfold.load(AI_SDK[run])
    assert outline(transcript) == [
        ("user", "TF-SUPPORT: where is order A-1187? Refund it."),
        ("thinking", "TF-THINK: look the order up, then try the refund."),
        ("text", "TF-LOOKING: checking order A-1187."),
        ("call", "lookup_order", {"orderId": "A-1187"}, "success",
         '{\n  "orderId": "A-1187",\n  "status": "in_transit",\n  "city": "Lyon"\n}', None),
        ("call", "refund", {"orderId": "A-1187", "amount": 42}, "error",
         "refunds of A-1187 need a billing approval", None),
        ("text", "TF-ANSWER: A-1187 is in transit; the refund was refused."),
    ]  # fmt: skip
    assert transcript.metadata["system"] == "You are a support agent."
    assert transcript.metadata["model"] == "mock-model-v3-2026"
    assert transcript.warnings == []
    lookup, refund = transcript.tool_calls()
    assert (lookup.call_id, refund.call_id) == ("call_lookup", "call_refund")
    assert lookup.batch_id == refund.batch_id is not None
    assert lookup.started_at is not None
    assert lookup.ended_at is not None
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert [t.model for t in texts] == ["mock-model-v3-2026"] * 2
    assert [t.usage and (t.usage.input_tokens, t.usage.output_tokens, t.usage.cache_read_tokens,
                         t.usage.reasoning_tokens, t.usage.response_id) for t in texts] == [
        (120, 30, 100, 12, "resp-1"),
        (180, 14, 120, 0, "resp-2"),
    ]  # fmt: skip
    assert transcript_tokens(transcript).own == {
        "input_tokens": 300, "output_tokens": 44, "cache_read_tokens": 220,
        "reasoning_tokens": 12,
    }  # fmt: skip
    assert [type(e) for e in transcript.entries[:3]] == [UserMessage, Thinking, AssistantText]
    assert all(isinstance(c, ToolCall) for c in transcript.tool_calls())
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {
        "span/chat": {"mapped": 2},
        "span/execute_tool": {"mapped": 2},
        "span/(other)": {"ignored": 1},  # ai.generateText: its steps' spans again
    }


def test_H4_the_ai_sdk_s_token_details_of_6_0_are_read() -> None:
    """6.0 writes the input tokens written to the cache only as ``inputTokenDetails``."""
    usage = span_usage({
        "ai.usage.inputTokens": 300, "ai.usage.outputTokens": 20,
        "ai.usage.inputTokenDetails.cacheReadTokens": 100,
        "ai.usage.inputTokenDetails.cacheWriteTokens": 150,
        "ai.usage.outputTokenDetails.reasoningTokens": 8,
    })  # fmt: skip
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
            usage.cache_write_tokens, usage.reasoning_tokens) == (300, 20, 100, 150, 8)  # fmt: skip


def test_H4_openllmetry_s_older_langchain_spans_of_the_same_kinds_add_no_prompt() -> None:
    """OpenLLMetry's LangChain instrumentation before ``gen_ai.operation.name`` wrote the same
    ``traceloop.span.kind`` and ``traceloop.entity.*`` attributes, with its callbacks'
    arguments (hand-made in that shape): the chain's ``workflow`` span is the run, but its
    input is no decorated function's, so the prompt is the model span's alone; its tool's
    input is the callback's (``input_str``, ``inputs``), its output the serialized
    ``ToolMessage`` whose content is the result."""
    chain_input = json.dumps({"inputs": {"messages": [["user", "TF-Q"]]}, "tags": [],
                              "metadata": {}, "kwargs": {"name": "LangGraph"}})  # fmt: skip
    fields = {"content": "TF-3", "tool_call_id": "c1", "status": "success"}
    kind = ["langchain", "schema", "messages", "ToolMessage"]
    message = {"lc": 1, "type": "constructor", "id": kind, "kwargs": fields}
    tool = _entity("tool", "add", given=json.dumps({"input_str": "{'a': 1, 'b': 2}",
                   "tags": [], "metadata": {}, "inputs": {"a": 1, "b": 2}, "kwargs": {}}),
                   returned=json.dumps({"output": message, "kwargs": {}}))  # fmt: skip
    model = {
        "llm.request.type": "chat",
        "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "TF-Q",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.tool_calls.0.id": "c1",
        "gen_ai.completion.0.tool_calls.0.name": "add",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"a": 1, "b": 2}',
    }  # fmt: skip
    transcript = turnfold.load(
        _request(
            _span("LangGraph.workflow", "1" * 16, _entity("workflow", "LangGraph",
                  given=chain_input, returned='{"outputs": {}, "kwargs": {}}'), start=1),
            _span("agent.task", "2" * 16, _entity("task", "agent", given=chain_input),
                  parent="1" * 16, start=2),
            _span("ChatOpenAI.chat", "3" * 16, model, parent="2" * 16, start=3),
            _span("add.tool", "4" * 16, tool, parent="1" * 16, start=4),
        )
    )  # fmt: skip
    assert outline(transcript) == [
        ("user", "TF-Q"),
        ("call", "add", {"a": 1, "b": 2}, "success", "TF-3", None),
    ]
    (call,) = transcript.tool_calls()
    assert call.call_id == "c1"
