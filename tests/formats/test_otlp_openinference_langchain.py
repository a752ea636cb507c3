"""Raw OTLP traces of OpenInference's LangChain instrumentor (spec H-4).

The fixtures were written by the real instrumentor (``openinference-instrumentation-langchain``
0.1.80) on the scripted ``create_agent`` run of tests/formats/langchain_runs.py, as
``tests/fixtures/traces/otlp/openinference-langchain_recipe.py`` says: once with its defaults
(each ``LLM`` span's messages flattened, ``llm.input_messages.N.*``), once with
``TraceConfig(hide_input_messages=True, hide_output_messages=True)``, which keeps only the
run's inputs and outputs as JSON (``input.value``: ``{"messages": [[<dumpd>…]]}``,
``output.value``: the ``LLMResult``). The expected values are the scripted run's
(:mod:`tests.formats.langchain_runs`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import turnfold
from tests.formats.langchain_runs import ANSWER, MODEL, PROMPT
from tests.formats.test_otlp import FIXTURES, outline
from turnfold.formats.traces.langchain_messages import run_input_messages, run_output_messages
from turnfold.model import AssistantText, Thinking
from turnfold.usage import transcript_tokens


def fixture(variant: str) -> Path:
    return FIXTURES / f"openinference-langchain_calc-agent_{variant}.jsonl"


#: The run as the LangChain reader shows it: the calls settled by their ToolMessage (the
#: exploding tool's of ``status="error"``), the thinking of every response.
EXPECTED = [
    ("user", PROMPT),
    ("thinking", "I add first."),
    ("call", "add", {"a": 1, "b": 2}, "success", "3", None),
    ("thinking", "Now the failing one."),
    ("text", "Trying it."),
    ("call", "explode", {"x": "y"}, "error", "boom: y", None),
    ("thinking", "Both calls are done."),
    ("text", ANSWER),
]
#: The scripted responses' usage (langchain_runs._usage): 101 + 102 + 130 in, 11 + 12 + 20 out.
TOKENS = {"input_tokens": 333, "output_tokens": 43, "cache_read_tokens": 12,
          "cache_write_tokens": 3, "reasoning_tokens": 9}  # fmt: skip


def test_H4_hidden_messages_are_read_from_the_run_s_serialized_messages() -> None:
    """Without the flattened messages, each ``LLM`` span's ``input.value`` (LangChain's
    ``dumpd`` of each message of the call's batch) and ``output.value`` (the ``LLMResult``'s
    generation) are its messages, read as the LangChain readers read messages: the prompt,
    the thinking blocks, the calls, the texts; the graph's own input (a ``("user", text)``
    tuple) is not shown again as JSON. Each tool span's output is its ``ToolMessage``
    (``message_to_dict``'s ``{"type": "tool", "data"}``): the call's result and status."""
    transcript = turnfold.load(fixture("hidden-messages"))
    assert outline(transcript) == EXPECTED
    assert transcript.warnings == []
    assert transcript.metadata["system"] == "You are terse."
    assert [c.call_id for c in transcript.tool_calls()] == ["call_1", "call_2"]
    assert transcript_tokens(transcript).own == TOKENS
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_H4_flattened_messages_read_as_the_hidden_ones_but_for_thinking() -> None:
    """The instrumentor's defaults: the same run, each call once (the history repeats the
    agent's reply with its name, which the response had not yet), settled by its
    ``ToolMessage`` with its status. The flattened messages keep only a message's text
    blocks, so the thinking is not there."""
    transcript = turnfold.load(fixture("messages"))
    assert outline(transcript) == [row for row in EXPECTED if row[0] != "thinking"]
    assert not any(isinstance(e, Thinking) for e in transcript.entries)
    assert transcript.warnings == []
    assert transcript_tokens(transcript).own == TOKENS


def _span_value(variant: str, span_name: str, key: str) -> Any:
    line = fixture(variant).read_text("utf-8").splitlines()[0]
    for resource in json.loads(line)["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for attribute in span["attributes"]:
                    if span["name"] == span_name and attribute["key"] == key:
                        return attribute["value"]["stringValue"]
    raise AssertionError(f"no {key} on {span_name}")


def test_H4_only_langchain_run_values_are_read_as_its_messages() -> None:
    """The instrumentor's own rule (``_input_messages``): the first element of ``messages``,
    a batch of messages, one message or a ``(role, content)`` tuple. A value holding
    anything else (another client's request of Chat messages) is no LangChain run's: its
    own readers' to read, not guessed at here."""
    graph_input = _span_value("hidden-messages", "calculator", "input.value")
    assert run_input_messages(graph_input) == [{"role": "user", "content": PROMPT}]
    llm_input = _span_value("hidden-messages", "FakeToolModel", "input.value")
    assert [m["role"] for m in run_input_messages(llm_input) or []] == ["system", "user"]
    chat_request = '{"messages": [{"role": "user", "content": "hi"}], "model": "gpt-5"}'
    assert run_input_messages(chat_request) is None
    assert run_output_messages('{"choices": [{"message": {"role": "assistant"}}]}') is None
    completion = '{"generations": [[{"text": "Once upon", "type": "Generation"}]]}'
    assert run_output_messages(completion) == [{"role": "assistant", "content": "Once upon"}]


def _with_model_span(variant: str, edit: Any) -> Path:
    """The fixture ``variant``'s OTLP request, each model span's attributes (as a dict of their
    OTLP values, by key) changed by ``edit``."""
    request = json.loads(fixture(variant).read_text("utf-8").splitlines()[0])
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                if span["name"] == "FakeToolModel":
                    values = {a["key"]: a["value"] for a in span["attributes"]}
                    edit(values)
                    span["attributes"] = [{"key": k, "value": v} for k, v in values.items()]
    return request


def test_H6_a_model_span_without_llm_model_name_has_the_model_of_its_response() -> None:
    """The instrumentor writes ``llm.model_name`` only from the run's ``llm_output``, its
    ``ls_model_name`` metadata or its invocation parameters, none of which the chat model
    filled: no span names the model. Each response's ``response_metadata`` (``model_name``)
    does, in ``output.value``: the transcript's model, and each reply's."""
    for variant in ("messages", "hidden-messages"):
        assert "llm.model_name" not in fixture(variant).read_text("utf-8")  # the premise
        transcript = turnfold.load(fixture(variant))
        assert transcript.metadata["model"] == MODEL
        texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
        assert texts
        assert {e.model for e in texts} == {MODEL}


def test_H6_a_model_span_without_a_response_model_has_its_invocation_parameters_one(
    tmp_path: Path,
) -> None:
    """A response that names no model (its ``response_metadata`` empty): the model the
    request's parameters name, ``model_name`` as LangChain's OpenAI and Gemini chat models
    write it, or ``model`` as its Anthropic one does; neither, no model (never a guess)."""

    def unnamed(parameters: dict[str, Any] | None) -> Any:
        def edit(attributes: dict[str, Any]) -> None:
            output = json.loads(attributes["output.value"]["stringValue"])
            for generation in output["generations"][0]:
                generation["message"]["kwargs"]["response_metadata"] = {}
            attributes["output.value"] = {"stringValue": json.dumps(output)}
            if parameters is None:
                del attributes["llm.invocation_parameters"]
            else:
                attributes["llm.invocation_parameters"] = {"stringValue": json.dumps(parameters)}

        return edit

    for parameters, model in (({"model_name": "gpt-4.1-mini", "temperature": 0}, "gpt-4.1-mini"),
                              ({"model": "claude-sonnet-4-5"}, "claude-sonnet-4-5"),
                              (None, None)):  # fmt: skip
        path = tmp_path / "trace.json"
        path.write_text(json.dumps(_with_model_span("hidden-messages", unnamed(parameters))))
        transcript = turnfold.load(path)
        assert transcript.metadata.get("model") == model, parameters
        assert outline(transcript) == EXPECTED  # the rest read as before
