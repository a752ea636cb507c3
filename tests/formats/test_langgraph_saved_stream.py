"""A LangGraph stream saved to a file reads as the run (spec A-1, A-2, L-4, X-2).

Users save ``list(graph.stream(inputs, stream_mode=...))`` (or a line per event) with
``langchain_core.load.dumps`` or ``json.dumps(default=...)``: tuples become lists, messages
dicts. The runs are real (``create_agent`` on the scripted offline model of
``tests/formats/langchain_runs.py``), saved by ``tests/formats/langgraph_saved_streams.py``,
which also wrote the fixtures with langgraph 1.2.24 / langchain-core 1.8.3.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")
pytest.importorskip("langchain")

import turnfold
from tests.formats import langchain_runs as runs
from tests.formats import langgraph_saved_streams as saved
from turnfold.formats import which_format
from turnfold.formats.source import open_source
from turnfold.model import AssistantText, Thinking, ToolCall, Transcript, UserMessage

FIXTURES = runs.FIXTURES
UPDATES_MESSAGES = FIXTURES / saved.fixture_name("stream-dumps_updates-messages_tool-error.json")
UPDATES_JSONL = FIXTURES / saved.fixture_name("stream-model-dump_updates_tool-error.jsonl")
SUBGRAPHS = FIXTURES / saved.fixture_name("stream-dumps_subgraphs-values-messages_agent-tool.json")
#: The final messages of the same scripted run, saved with ``messages_to_dict``.
FINAL_MESSAGES = FIXTURES / "langchain_v1.8.3_messages-to-dict_tool-error.json"


def shown(transcript: Transcript) -> list[Any]:
    """What a transcript shows, entry by entry: kind and text, a call's id, name, arguments,
    status and result, a sub-agent's name and what its transcript shows."""
    out: list[Any] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            sub = entry.subagent
            out.append((
                "call", entry.call_id, entry.name, entry.args, entry.status,
                entry.result.text if entry.result else None,
                (sub.name, shown(sub.transcript)) if sub and sub.transcript else None,
            ))  # fmt: skip
        else:
            usage = getattr(entry, "usage", None)
            tokens = (usage.input_tokens, usage.output_tokens) if usage else None
            out.append((type(entry).__name__, getattr(entry, "text", None), tokens))
    return out


#: What the scripted calculator run shows after its prompt (each call once, in order).
CALCULATOR = [
    ("Thinking", "I add first.", (101, 11)),
    ("call", "call_1", "add", {"a": 1, "b": 2}, "success", "3", None),
    ("Thinking", "Now the failing one.", None),
    ("AssistantText", "Trying it.", (102, 12)),
    ("call", "call_2", "explode", {"x": "y"}, "error", "boom: y", None),
    ("Thinking", "Both calls are done.", None),
    ("AssistantText", runs.ANSWER, (130, 20)),
]
#: What a saved stream whose events hold no prompt shows in its place: a prompt not recorded,
#: whose note says why (tests/test_langgraph_streams_more.py).
UNPROMPTED = ("UserMessage", "", None)


@pytest.mark.parametrize("path", [UPDATES_MESSAGES, UPDATES_JSONL], ids=lambda p: p.suffix)
def test_A1_a_saved_stream_reads_each_call_once_as_the_saved_final_messages_do(
    path: Path,
) -> None:
    """``updates`` (with or without ``messages`` chunks of the same messages): every message
    once, in order; the prompt is in no event of these modes, so it is the final messages'
    transcript with a note in place of its prompt."""
    opened, stream = open_source(path)
    try:
        assert which_format(opened) == "langchain"
    finally:
        if stream is not None:
            stream.close()
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    assert shown(transcript) == [UNPROMPTED, *CALCULATOR]
    final = turnfold.load(FINAL_MESSAGES)
    assert isinstance(final.entries[0], UserMessage)
    assert shown(transcript)[1:] == shown(final)[1:]
    assert transcript.metadata["model"] == runs.MODEL
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts["updates event"] == {"mapped": 5}
    if path == UPDATES_MESSAGES:  # 16 chunks of the three AI messages, 2 tool messages
        assert accounting.counts["messages event"] == {"mapped": 18}


def test_A1_a_saved_subgraphs_stream_nests_the_child_agent_under_its_call() -> None:
    """``[namespace, mode, chunk]`` triples (``subgraphs=True``) of ``values`` and
    ``messages``: the prompt from the state, the child agent's run (namespace
    ``tools:<task id>``) as the sub-agent of the ``ask_helper`` call."""
    transcript = turnfold.load(SUBGRAPHS)
    assert transcript.warnings == []
    assert shown(transcript) == [
        ("UserMessage", "What is 2+3? Ask the helper.", None),
        ("Thinking", "Ask the helper.", (107, 17)),
        ("call", "p1", "ask_helper", {"question": "2+3?"}, "success", runs.CHILD_ANSWER, (
            "helper", [
                ("UserMessage", "2+3?", None),
                ("Thinking", "Child adds.", (105, 15)),
                ("call", "child_call_1", "add", {"a": 2, "b": 3}, "success", "5", None),
                ("AssistantText", runs.CHILD_ANSWER, (50, 5)),
            ],
        )),
        ("AssistantText", runs.PARENT_ANSWER, (60, 6)),
    ]  # fmt: skip
    # Its task is what it was asked: its run's prompt (as the checkpoint reader names it).
    (call,) = transcript.tool_calls()
    assert call.subagent is not None
    assert (call.subagent.name, call.subagent.task) == ("helper", "2+3?")


MODES = [["updates", "messages"], "updates", "values", "messages", ["values", "messages", "tasks"]]


@pytest.mark.parametrize("saver", sorted(saved.SAVERS))
@pytest.mark.parametrize("mode", MODES, ids=str)
def test_A2_a_stream_saved_any_way_loads_as_its_finished_state(mode: Any, saver: str) -> None:
    """Every mode and every way of saving: the transcript of the finished state (less the
    prompt where the modes omit it), merged chunks included (``messages`` alone)."""
    events, final = runs.stream_run(mode)
    transcript = turnfold.load(saved.SAVERS[saver](events))
    loaded = turnfold.load(final)
    assert transcript.warnings == []
    assert transcript.metadata["source_format"] == "langchain"
    assert shown(transcript) == (
        shown(loaded) if "values" in mode else [UNPROMPTED, *shown(loaded)[1:]]
    )
    assert shown(transcript)[-7:] == CALCULATOR
    if mode == "values":
        assert transcript == loaded  # ids, metadata and all


@pytest.mark.parametrize("subgraphs", [False, True], ids=["", "subgraphs"])
def test_A2_saved_version_2_parts_load_as_the_version_1_stream(subgraphs: bool) -> None:
    """``stream(..., version="v2")``'s ``{"type", "ns", "data"}`` parts, saved with
    ``dumps``: as the same run in the default form."""
    parts, _ = runs.stream_run(["updates", "messages"], subgraphs=subgraphs, version="v2")
    events, _ = runs.stream_run(["updates", "messages"], subgraphs=subgraphs)
    from_parts = turnfold.load(saved.SAVERS["dumps"](parts))
    assert from_parts.warnings == []
    assert shown(from_parts) == shown(turnfold.load(saved.SAVERS["dumps"](events)))
    assert shown(from_parts) == [UNPROMPTED, *CALCULATOR]


def test_L4_a_bad_line_of_a_saved_stream_is_a_warning_naming_it_and_the_rest_is_shown(
    tmp_path: Path,
) -> None:
    lines = UPDATES_JSONL.read_text(encoding="utf-8").splitlines()
    lines[1:1] = ["{not json", json.dumps(["updates", "no chunk"]), json.dumps({"x": 1})]
    path = tmp_path / "stream.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    transcript = turnfold.load(path)
    assert shown(transcript) == [UNPROMPTED, *CALCULATOR]
    warned = {w.line: w.reason for w in transcript.warnings}
    assert set(warned) == {2, 3, 4}
    assert "JSON" in warned[2]
    assert warned[3] == "not a LangGraph stream event ('(list)'), skipped"
    assert warned[4] == "not a LangGraph stream event ('(object)'), skipped"
    assert all(w.source == str(path) for w in transcript.warnings)
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts["updates event"] == {"mapped": 5}
    assert accounting.counts["(list)"] == {"warned": 1}


def test_L4_chunks_that_cannot_be_merged_are_said_and_the_updates_still_show_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without langchain-core (a saved file read where LangChain is not installed) the
    chunks cannot be merged by its rules: said once, each counted as warned, and the
    complete messages of the ``updates`` events still show the whole run."""
    text = UPDATES_MESSAGES.read_text(encoding="utf-8")
    monkeypatch.setitem(sys.modules, "langchain_core.messages", None)
    transcript = turnfold.load(text)
    assert shown(transcript) == [UNPROMPTED, *CALCULATOR]
    (warning,) = transcript.warnings
    assert warning.reason == "message chunks skipped: merging them needs langchain-core"
    accounting = transcript.accounting
    assert accounting is not None
    # The two tool messages of the messages mode are complete: read.
    assert accounting.counts["messages event"] == {"warned": 16, "mapped": 2}


def test_L4_a_saved_stream_with_no_message_is_a_format_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "custom.json"
    path.write_text(json.dumps([["custom", {"progress": 1}], ["updates", {"agent": None}]]))
    with pytest.raises(turnfold.formats.TranscriptFormatError) as error:
        turnfold.load(path, format="langchain")
    assert str(path) in str(error.value)
    assert "no LangChain messages" in str(error.value)


def test_A1_a_saved_stream_s_messages_are_its_entries_not_a_copy_of_the_file() -> None:
    """The thinking and the answer are the model's, not text of the saved JSON."""
    transcript = turnfold.load(UPDATES_MESSAGES)
    thinking = [e for e in transcript.entries if isinstance(e, Thinking)]
    assert [t.streaming for t in thinking] == [False, False, False]
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.model == runs.MODEL
    assert answer.usage is not None
    assert answer.usage.cache_read_tokens == 4
