"""LangChain's standard content blocks (langchain-core 1.x, ``output_version="v1"``) read alike
by every reader that meets LangChain messages (spec A-1, A-2, H-4, L-3, X-2): the LangChain /
LangGraph reader and its stream follower, the LangGraph checkpointer reader, and the MLflow
reader of ``mlflow.langchain.autolog()`` traces, all through one rule
(:mod:`turnfold.formats.langchain_blocks`).

The run is real: ``create_agent`` on a scripted model with ``output_version="v1"``, so that
langchain-core itself turned Anthropic's and OpenAI's blocks into standard ones
(``tests/fixtures/frameworks/langchain/v1_blocks_recipe.py``, which wrote the fixtures). The
records built by hand below are marked so, written from ``langchain_core.messages.content``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")
pytest.importorskip("langchain")

import turnfold
from tests.fixtures.frameworks.langchain import v1_blocks_recipe as recipe
from turnfold.formats.frameworks import langchain as adapter
from turnfold.formats.langchain_blocks import ai_content
from turnfold.model import AssistantText, Thinking, ToolCall, Transcript, UserMessage

#: What the run shows, in order (the prompt first): the Anthropic-shaped response's thinking
#: (a reasoning block with its signature), its web search (a server call, settled by its
#: result block, before its text), its text (citations not shown), its call of add (a
#: tool_call block that repeats tool_calls: one call); the OpenAI-shaped response's two summary
#: parts (two reasoning blocks of one id: one thought), its code interpreter run, its text, its
#: calls (explode fails; the garbled add never ran, create_agent answering it with an error);
#: the standard response's reasoning and answer, with its inline image, and the image by URL,
#: the file and the block nobody defines named on their lines.
SHOWN: list[Any] = [
    ("user", recipe.PROMPT),
    ("thinking", "text", "I search, then add."),
    ("call", "srvtoolu_1", "web_search", {"query": "1+2"}, "success",
     "Sums — https://math.example", True),
    ("text", "Sums are easy.", []),
    ("call", "call_1", "add", {"a": 1, "b": 2}, "success", "3", False),
    ("thinking", "text", "Now the failing one.\n\nIt will fail."),
    ("call", "ci_1", "code_interpreter", {"code": "print(1+2)"}, "success", "3", True),
    ("text", "Trying it.", []),
    ("call", "call_2", "explode", {"x": "y"}, "error", "boom: y", False),
    ("call", "call_3", "add", '{"a": 1}}', "error",
     "Tool call add with id call_3 could not be executed - arguments were malformed or "
     "truncated.", False),
    ("thinking", "text", "Both calls are done."),
    ("text", f"{recipe.ANSWER}\n\n[image: https://img.example/chart.png]\n\n"
     "[file: file-abc · application/pdf]\n\n[x_custom_block]", [("image/png", recipe.PIXEL)]),
]  # fmt: skip
#: The one thing not shown as itself, said.
WARNED = ["content block of type 'x_custom_block' is shown by its name only"]


def shown(transcript: Transcript) -> list[Any]:
    out: list[Any] = []
    for e in transcript.entries:
        if isinstance(e, UserMessage):
            out.append(("user", e.text))
        elif isinstance(e, Thinking):
            out.append(("thinking", e.form, e.text))
        elif isinstance(e, AssistantText):
            out.append(("text", e.text, [(i.media_type, i.data) for i in e.images]))
        elif isinstance(e, ToolCall):
            result = e.result.text if e.result else None
            server = bool(e.meta.get("server"))
            out.append(("call", e.call_id, e.name, e.args, e.status, result, server))
        else:
            out.append((type(e).__name__,))
    return out


def warned(transcript: Transcript) -> list[str]:
    return [w.reason for w in transcript.warnings]


def follow(events: list[Any]) -> Transcript:
    transcript = Transcript()
    follower = adapter.Follower(transcript)
    for event in events:
        follower.feed(event)
    follower.close()
    return transcript


# --- the LangChain reader (A-1) ----------------------------------------------------------------


def test_A1_standard_blocks_of_a_saved_run_show_thinking_calls_outcomes_and_media() -> None:
    transcript = turnfold.load(recipe.TO_DICT)
    assert shown(transcript) == SHOWN
    assert warned(transcript) == WARNED
    # The answer carries its usage; the garbled call is marked as never run.
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.usage is not None
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (130, 20)
    garbled = transcript.tool_calls()[-1]
    assert garbled.meta["invalid"] is True
    assert transcript.metadata["model"] == "claude-sonnet-4-5"


def test_A1_the_run_s_objects_read_as_their_saved_form() -> None:
    result = recipe.result()
    first = result["messages"][1]
    assert first.response_metadata["output_version"] == "v1"  # LangChain stored standard blocks
    assert [b["type"] for b in first.content] == [
        "reasoning", "server_tool_call", "server_tool_result", "text", "tool_call",
    ]  # fmt: skip
    transcript = turnfold.load(result)
    assert shown(transcript) == SHOWN
    assert warned(transcript) == WARNED


@pytest.mark.parametrize("mode", [["updates", "messages"], "updates", "values", "messages"])
def test_A2_following_a_stream_of_standard_blocks_ends_with_what_load_gives(mode: Any) -> None:
    """Every stream mode, live: the chunks (each translated by its provider's translator)
    grow the entries, the complete message takes them over; a history create_agent rewrote
    to answer the garbled call adds its answer, not the prompt again."""
    events, final = recipe.stream(mode)
    followed = follow(events)
    loaded = turnfold.load(final)
    assert shown(loaded) == SHOWN
    # Only a values stream carries the prompt (the graph's input); else, as saved, a prompt
    # not recorded stands in its place.
    expected = SHOWN if mode == "values" else [("user", ""), *SHOWN[1:]]
    assert shown(followed) == expected, mode
    assert warned(followed) == WARNED, mode
    assert not any(isinstance(e, Thinking) and e.streaming for e in followed.entries)


def test_A2_a_saved_stream_of_standard_blocks_loads_as_the_run() -> None:
    transcript = turnfold.load(recipe.STREAM)
    assert transcript.metadata["source_format"] == "langchain"
    # No event holds the prompt: a prompt not recorded in its place (its note says why).
    assert shown(transcript) == [("user", ""), *SHOWN[1:]]
    assert warned(transcript) == WARNED


# --- the checkpointer reader -------------------------------------------------------------------


def test_A1_a_checkpointer_database_of_standard_blocks_reads_as_the_run(tmp_path: Path) -> None:
    pytest.importorskip("langgraph.checkpoint.sqlite")
    transcript = turnfold.load(recipe.DATABASE)
    assert transcript.metadata["source_format"] == "langgraph-checkpoints"
    assert shown(transcript) == SHOWN
    assert warned(transcript) == WARNED
    live = tmp_path / "v1.sqlite"
    recipe.write_database(live)
    assert shown(turnfold.load(live)) == SHOWN


# --- the MLflow reader (H-4) -------------------------------------------------------------------

#: MLflow's spans say no ``server`` (the call is shown like any other), and the garbled call is
#: settled by its own error, the history's repair of it being a message of the next request.
MLFLOW_SHOWN = [
    (*item[:5], "Function add arguments are not valid JSON", False)
    if item[:2] == ("call", "call_3")
    else (*item[:6], False)
    if item[0] == "call"
    else item
    for item in SHOWN
]


def test_H4_an_autolog_trace_of_standard_blocks_reads_as_the_run() -> None:
    transcript = turnfold.load(recipe.TRACE)
    assert transcript.metadata["source_format"] == "mlflow"
    assert shown(transcript) == MLFLOW_SHOWN
    assert warned(transcript) == WARNED


def test_H4_live_langchain_autolog_of_standard_blocks(tmp_path: Path) -> None:
    pytest.importorskip("mlflow")
    assert shown(turnfold.load(recipe.trace(tmp_path))) == MLFLOW_SHOWN


def test_H4_a_generation_without_its_calls_reads_them_from_its_blocks() -> None:
    """Hand-made from the fixture: MLflow dumps a chat model span's generation as a
    ``BaseMessage``, without ``tool_calls``; with no graph state around it to give them, the
    ``tool_call`` blocks of its standard content are its calls, each once."""
    trace = json.loads(recipe.TRACE.read_text())
    model = next(s for s in trace["data"]["spans"]
                 if json.loads(s["attributes"]["mlflow.spanType"]) == "CHAT_MODEL")  # fmt: skip
    trace["data"]["spans"] = [model]
    transcript = turnfold.load(json.dumps(trace))
    calls = [(c.call_id, c.name, c.args) for c in transcript.tool_calls()]
    assert calls == [("srvtoolu_1", "web_search", {"query": "1+2"}),
                     ("call_1", "add", {"a": 1, "b": 2})]  # fmt: skip
    assert [e.text for e in transcript.entries if isinstance(e, Thinking)] == [
        "I search, then add."
    ]


# --- the shared rule ---------------------------------------------------------------------------

CALL = {"name": "add", "args": {"a": 1}, "id": "c1"}


@pytest.mark.parametrize(
    ("name", "message", "calls", "invalid"),
    [
        ("a tool_call block repeating tool_calls is that call",
         {"content": [{"type": "tool_call", **CALL}], "tool_calls": [CALL]}, ["c1"], []),
        ("a tool_call block alone is a call",
         {"content": [{"type": "tool_call", **CALL}]}, ["c1"], []),
        ("Anthropic's tool_use alone is a call",
         {"content": [{"type": "tool_use", "id": "c1", "name": "add", "input": {"a": 1}}]},
         ["c1"], []),
        ("a streamed fragment without an id adds none",
         {"content": [{"type": "tool_call_chunk", "id": None, "args": "}"}],
          "tool_calls": [CALL]}, ["c1"], []),
        ("an invalid_tool_call block repeating invalid_tool_calls is that one",
         {"content": [{"type": "invalid_tool_call", "id": "b1", "name": "f", "args": "{",
                       "error": "bad"}],
          "invalid_tool_calls": [{"id": "b1", "name": "f", "args": "{", "error": "bad"}]},
         [], ["b1"]),
        ("an invalid_tool_call block alone is a garbled call",
         {"content": [{"type": "invalid_tool_call", "id": "b1", "name": "f", "args": "{",
                       "error": "bad"}]}, [], ["b1"]),
    ],
)  # fmt: skip
def test_A1_call_blocks_agree_with_tool_calls(
    name: str, message: dict[str, Any], calls: list[str], invalid: list[str]
) -> None:
    read = ai_content(message)
    assert [c["id"] for c in read.calls] == calls, name
    assert [c["id"] for c in read.invalid] == invalid, name
    assert read.unshown == [], name


def test_A1_every_reader_shows_the_rule_s_reading_of_hand_made_blocks() -> None:
    """Hand-made, in ``langchain_core.messages.content``'s shapes: a refusal, reasoning of
    only a signature, a ``non_standard`` wrapping a block nobody defines, a bare string, a
    call only in the content; read by the LangChain reader and by MLflow's alike."""
    from langchain_core.messages import AIMessage, HumanMessage

    ai = AIMessage(
        content=[
            {"type": "reasoning", "reasoning": "", "extras": {"signature": "c2ln"}},
            "Plain. ",
            {"type": "text", "text": "Cited.", "annotations": [{"type": "citation", "url": "u"}]},
            {"type": "refusal", "refusal": "I will not do that."},
            {"type": "non_standard", "value": {"type": "x_widget", "a": 1}},
            {"type": "tool_call", "id": "c9", "name": "ls", "args": {"path": "/"}},
        ],
        id="ai-1",
        response_metadata={"output_version": "v1"},
    )  # fmt: skip
    transcript = turnfold.load([HumanMessage("go"), ai])
    assert [(e.form, e.data) for e in transcript.entries if isinstance(e, Thinking)] == [
        ("encrypted", "c2ln")
    ]
    texts = [(e.text, e.meta.get("refusal")) for e in transcript.entries
             if isinstance(e, AssistantText)]  # fmt: skip
    assert texts == [("Plain. Cited.\n\n[x_widget]", None), ("I will not do that.", True)]
    (call,) = transcript.tool_calls()
    assert (call.call_id, call.name, call.args) == ("c9", "ls", {"path": "/"})
    assert warned(transcript) == ["content block of type 'x_widget' is shown by its name only"]
    # The same message in an MLflow span (its to_dict form), read by the same rule.
    span_output = {"generations": [[{"type": "ChatGeneration", "message": ai.model_dump()}]]}
    trace = json.loads(recipe.TRACE.read_text())
    model = next(s for s in trace["data"]["spans"]
                 if json.loads(s["attributes"]["mlflow.spanType"]) == "CHAT_MODEL")  # fmt: skip
    model["attributes"]["mlflow.spanOutputs"] = json.dumps(span_output)
    trace["data"]["spans"] = [model]
    traced = turnfold.load(json.dumps(trace))
    assert [(c.call_id, c.name, c.args) for c in traced.tool_calls()] == [
        ("c9", "ls", {"path": "/"})
    ]
    assert [e.text for e in traced.entries if isinstance(e, AssistantText)][-2:] == [
        "Plain. Cited.\n\n[x_widget]",
        "I will not do that.",
    ]
    assert [(e.form, e.data) for e in traced.entries if isinstance(e, Thinking)] == [
        ("encrypted", "c2ln")
    ]
    assert "content block of type 'x_widget' is shown by its name only" in warned(traced)


def test_A1_a_prompt_s_inline_standard_image_is_shown_and_a_remote_one_counted() -> None:
    """Hand-made, ``content.ImageContentBlock``'s shapes: the inline image is the prompt's
    image (as the Anthropic and Chat readers show a pasted one), the one by URL counted."""
    from langchain_core.messages import HumanMessage

    prompt = HumanMessage(
        content=[
            {"type": "text", "text": "What is this?"},
            {"type": "image", "base64": recipe.PIXEL, "mime_type": "image/png"},
            {"type": "image", "url": "https://img.example/x.png"},
        ]
    )
    (message,) = turnfold.load([prompt]).entries
    assert isinstance(message, UserMessage)
    assert message.text == "What is this?"
    assert [(i.media_type, i.data) for i in message.images] == [("image/png", recipe.PIXEL)]
    assert message.meta == {"images": 2}


def test_H4_a_tool_message_s_standard_image_is_its_result_s_image() -> None:
    """Hand-made from the fixture: the ``add`` span's ``ToolMessage`` holding a standard text
    and inline image block; the call's result shows both, as the LangChain reader's would."""
    trace = json.loads(recipe.TRACE.read_text())
    tool = next(s for s in trace["data"]["spans"] if s["name"] == "add")
    output = json.loads(tool["attributes"]["mlflow.spanOutputs"])
    image = {"type": "image", "base64": recipe.PIXEL, "mime_type": "image/png"}
    output["content"] = [{"type": "text", "text": "3"}, image]
    tool["attributes"]["mlflow.spanOutputs"] = json.dumps(output)
    call = next(c for c in turnfold.load(json.dumps(trace)).tool_calls() if c.call_id == "call_1")
    assert call.status == "success"
    assert call.result is not None
    assert call.result.text == "3"
    assert [(i.media_type, i.data) for i in call.result.images] == [("image/png", recipe.PIXEL)]
