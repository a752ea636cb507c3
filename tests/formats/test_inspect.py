"""Inspect AI eval logs (spec H-1, H-6; issue 13): ``.eval`` zips and ``.json`` logs, one
transcript per sample and epoch, read directly and in bounded memory.

The committed fixtures (``tests/fixtures/harnesses/inspect``) were written by the real
``inspect_ai`` (``tests/formats/inspect_logs.py``); the tests marked by ``inspect_ai`` write
fresh logs with the installed version, so they prove compatibility with it.
"""

from __future__ import annotations

import copy
import json
import struct
import tracemalloc
import zipfile
import zlib
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import turnfold
from tests.formats.counters_harnesses import inspect as count_calls
from tests.formats.counters_harnesses import inspect_sample as count_sample_calls
from turnfold.caches import CACHE_ENV
from turnfold.cost import estimate, session_cost
from turnfold.formats import TranscriptFormatError, which_format
from turnfold.formats.harnesses import archive, inspect_log
from turnfold.formats.source import from_object
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
)
from turnfold.prices import price_of
from turnfold.session import session_facts

FIXTURES = Path(__file__).parents[1] / "fixtures" / "harnesses" / "inspect"
ONE = FIXTURES / "mockllm_one-sample.json"
ZSTD = FIXTURES / "mockllm_two-epochs.eval"
DEFLATE = FIXTURES / "mockllm_two-epochs_deflate.eval"
LOGS = (ONE, ZSTD, DEFLATE)
#: A ReAct agent's run (``react_recipe.py`` there): tools that fail, a handoff, an agent as a
#: tool, a retried submission, a crash and two limits; two epochs, and one in the ``.json``.
REACT = FIXTURES / "react_four-samples_two-epochs.eval"
REACT_JSON = FIXTURES / "react_four-samples_one-epoch.json"
ZSTANDARD = 93


def all_calls(transcript: Transcript) -> list[ToolCall]:
    """Every call, those of sub-agents (handoffs, agents as tools) included, depth first."""
    return transcript.tool_calls(nested=True)


def by_name(transcript: Transcript) -> dict[str, ToolCall]:
    return {c.name: c for c in transcript.tool_calls()}


# --- one sample, as the user sees it -------------------------------------------------------


def test_H1_a_log_of_one_sample_loads_with_load() -> None:
    transcript = turnfold.load(ONE)
    assert transcript.metadata["source_format"] == "inspect"
    kinds = [type(e) for e in transcript.entries]
    assert kinds[0] is UserMessage
    assert transcript.entries[0].text.startswith("What is 1 + 2?")
    assert isinstance(transcript.entries[-1], AssistantText)
    assert transcript.entries[-1].text == "3"  # the answer comes last
    calls = by_name(transcript)
    assert list(calls) == ["fetch_notes", "add", "lookup", "researcher"]
    assert calls["add"].status == "success"
    assert calls["add"].result.text == "3"
    assert calls["add"].args == {"x": 1, "y": 2}
    assert calls["add"].batch_id == calls["lookup"].batch_id  # one response, one batch
    assert calls["lookup"].status == "error"  # the tool raised ToolError
    assert calls["lookup"].result.text == "no such key: answer"
    assert transcript.warnings == []


def test_H1_tool_calls_carry_their_recorded_times() -> None:
    call = by_name(turnfold.load(ONE))["add"]
    assert call.started_at is not None
    assert call.ended_at is not None
    assert call.recorded_duration_ms is not None
    assert call.recorded_duration_ms >= 0


def test_H1_model_events_give_usage_and_model() -> None:
    texts = [e for e in turnfold.load(ONE).entries if isinstance(e, AssistantText)]
    assert all(t.model == "mockllm/model" for t in texts)
    assert all(t.usage is not None and t.usage.input_tokens for t in texts)
    assert all(t.timestamp is not None for t in texts)


def test_H1_reasoning_parts_are_thinking_redacted_ones_kept_opaque() -> None:
    thinking = [e for e in turnfold.load(ONE).entries if isinstance(e, Thinking)]
    assert [(t.form, t.text) for t in thinking] == [
        ("text", "I should add, and look the key up."),
        ("redacted", ""),
    ]
    assert thinking[1].data == "opaque-signature"


def test_H1_an_agent_run_as_a_tool_nests_as_a_sub_agent() -> None:
    researcher = by_name(turnfold.load(ONE))["researcher"]
    assert researcher.subagent is not None
    assert researcher.subagent.transcript is not None
    child = researcher.subagent.transcript
    assert isinstance(child.entries[0], UserMessage)
    assert child.entries[0].text == "check 1 + 2"
    assert [(c.name, c.status, c.result.text) for c in child.tool_calls() if c.result] == [
        ("add", "success", "3")
    ]
    assert researcher.subagent.tool_count == 1
    assert researcher.subagent.task == "check 1 + 2"
    assert researcher.result is not None
    assert researcher.result.text == "The researcher found 3."


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_H1_a_tool_that_ran_no_agent_is_a_plain_call_not_a_sub_agent(path: Path) -> None:
    """Inspect opens a ``tool`` span around every tool it runs; a span that holds nothing but
    its own end is no agent's run (a plain call's row, not an F-7 line of 0 tools)."""
    for sample, epoch in inspect_log.samples(path):
        transcript = turnfold.load(path, sample=sample, epoch=epoch)
        nested = {c.name: c.subagent for c in transcript.tool_calls()}
        assert nested["add"] is None
        assert nested["lookup"] is None
        researcher = nested["researcher"]
        assert researcher is not None
        assert researcher.transcript  # the one call that ran an agent has its steps


def test_H1_a_subtask_is_a_call_with_its_input_and_result() -> None:
    subtask = by_name(turnfold.load(ONE))["fetch_notes"]
    assert subtask.args == {"topic": "arithmetic"}
    assert subtask.result is not None
    assert subtask.result.text == "notes about arithmetic"
    assert subtask.status == "success"


def test_H1_a_handoff_span_nests_its_events_under_the_call() -> None:
    """A tool event with ``agent`` and ``agent_span_id``: the events of that span (and of the
    spans inside it) are the sub-agent's, not the parent's."""
    sample = _sample(ONE)
    events = sample["events"]
    tool = next(e for e in events if e.get("event") == "tool" and e["function"] == "researcher")
    tool["agent"] = "researcher"
    transcript = _load_sample(sample)
    call = by_name(transcript)["researcher"]
    assert call.subagent is not None
    assert call.subagent.name == "researcher"
    parent_prompts = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert "check 1 + 2" not in parent_prompts


@pytest.mark.parametrize("path", [REACT, REACT_JSON], ids=lambda p: p.name)
def test_H1_a_real_handoff_nests_the_sub_agent_under_its_transfer_call(path: Path) -> None:
    """Inspect opens a ``handoff`` span around the ``transfer_to_<agent>`` call's ``tool``
    span, and the tool event keeps the span of the agent that handed off: the sub-agent's
    model calls and tools are the call's, not the parent's."""
    transcript = turnfold.load(path, sample="solve", epoch=1)
    names = [c.name for c in transcript.tool_calls()]
    assert names == ["python_exec", "lookup", "read_file", "transfer_to_researcher", "critic",
                     "submit", "submit"]  # fmt: skip
    call = by_name(transcript)["transfer_to_researcher"]
    assert call.status == "success"
    assert call.result is not None
    assert call.result.text == "Successfully transferred to researcher."
    assert call.subagent is not None
    assert call.subagent.name == "researcher"
    child = call.subagent.transcript
    assert child is not None
    assert [(c.name, c.args, c.result and c.result.text) for c in child.tool_calls()] == [
        ("python_exec", {"code": "print(sum(range(10)))"}, "45\n"),
        ("submit", {"answer": "45"}, "45"),
    ]
    assert [e.text for e in child.entries if isinstance(e, AssistantText)] == ["Summing."]
    facts = session_facts(transcript)
    assert (facts.tool_calls, facts.failed_tools) == (7, 2)


@pytest.mark.parametrize("path", [REACT, REACT_JSON], ids=lambda p: p.name)
def test_H1_what_a_handoff_returned_is_never_a_prompt(path: Path) -> None:
    """The handoff returns the sub-agent's messages through ``content_only``, which turns its
    tool result into a user message (id kept), and Inspect's word that the agent is done: the
    first is shown nested already, the second is a notice ending the sub-agent's run."""
    transcript = turnfold.load(path, sample="solve", epoch=1)
    prompts = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert prompts == [
        "Solve: what is 6 * 7?",
        "Your submission was incorrect. Please proceed and attempt to find the correct answer.",
    ]
    child = by_name(transcript)["transfer_to_researcher"].subagent
    assert child is not None
    assert child.transcript is not None
    notices = [e for e in child.transcript.entries if isinstance(e, SystemNotice)]
    assert [(n.text, n.subtype) for n in notices] == [
        ("The researcher agent has completed its work.", "handoff")
    ]
    assert not any(isinstance(e, SystemNotice) for e in transcript.entries)
    assert session_facts(transcript).turns == 2


@pytest.mark.parametrize("path", [REACT, REACT_JSON], ids=lambda p: p.name)
def test_H1_a_react_run_shows_its_failures_retried_answer_and_scores(path: Path) -> None:
    transcript = turnfold.load(path, sample="solve", epoch=1)
    calls = by_name(transcript)
    assert calls["python_exec"].result is not None
    assert calls["python_exec"].result.text == "42\n"
    assert (calls["lookup"].status, calls["lookup"].result.text) == (  # type: ignore[union-attr]
        "error", "no such key: answer")  # fmt: skip
    assert calls["read_file"].status == "error"  # a PermissionError is the tool's error
    assert calls["read_file"].result.text == "Permission denied: '/etc/shadow'."  # type: ignore[union-attr]
    critic = calls["critic"].subagent
    assert critic is not None
    assert critic.transcript is not None
    assert critic.transcript.entries[-1].text == "Looks right: 6 * 7 = 42."  # type: ignore[attr-defined]
    submits = [c.args for c in transcript.tool_calls() if c.name == "submit"]
    assert submits == [{"answer": "41"}, {"answer": "42"}]
    meta = transcript.metadata
    assert meta["outcome"] == "pass"
    assert meta["score"] == {"match": 1.0, "includes": 1.0,
                             "judge": {"correct": 1.0, "concise": 1.0}}  # fmt: skip
    assert meta["scores"]["judge"]["explanation"] == "the answer '42' holds '42'"


def test_H1_calls_a_limit_stopped_before_they_ran_are_cancelled() -> None:
    """A token limit stops the sample right after the response that asked for a call, which
    never runs (no tool event): cancelled, not a finished call of unknown outcome."""
    transcript = turnfold.load(REACT, sample="verbose", epoch=1)
    ran, stopped = transcript.tool_calls()
    assert (ran.status, stopped.status) == ("success", "cancelled")
    assert stopped.result is None
    assert isinstance(transcript.entries[-1], AbortMarker)
    assert transcript.entries[-1].reason == "Token limit exceeded. value: 1,664; limit: 1,600"
    assert transcript.metadata["outcome"] == "incomplete"
    chatty = turnfold.load(REACT, sample="chatty", epoch=2)  # the message limit came after
    assert [c.status for c in chatty.tool_calls()] == ["success", "success"]


def test_H6_a_tool_that_raised_errors_its_call_and_the_sample() -> None:
    transcript = turnfold.load(REACT, sample="crash", epoch=2)
    [call] = transcript.tool_calls()
    assert (call.name, call.status) == ("read_file", "error")
    errors = [e.message for e in transcript.entries if isinstance(e, AssistantError)]
    assert errors == ["RuntimeError('the disk is on fire (reading /srv/data.txt)')"]
    assert transcript.metadata["outcome"] == "error"


@pytest.mark.parametrize("path", [REACT, REACT_JSON], ids=lambda p: p.name)
def test_X2_every_record_of_every_react_sample_is_accounted_for(path: Path) -> None:
    for sample, epoch in inspect_log.samples(path):
        transcript = turnfold.load(path, sample=sample, epoch=epoch)
        assert transcript.accounting is not None
        assert transcript.accounting.unaccounted == []
        assert transcript.warnings == []
        assert len(all_calls(transcript)) == count_sample_calls(path, sample, epoch)


# --- several samples -----------------------------------------------------------------------


def test_H1_a_log_of_several_samples_says_how_to_pick_one() -> None:
    with pytest.raises(inspect_log.SampleSelectionError) as caught:
        turnfold.load(ZSTD)
    message = str(caught.value)
    assert str(ZSTD) in message
    assert "4 samples" in message
    assert "sample=1, epoch=1" in message
    assert "turnfold.scan" in message


@pytest.mark.parametrize("path", [ZSTD, DEFLATE], ids=lambda p: p.name)
def test_H1_load_picks_one_sample_and_epoch(path: Path) -> None:
    transcript = turnfold.load(path, sample=2, epoch=2)
    assert (transcript.metadata["sample"], transcript.metadata["epoch"]) == (2, 2)
    assert transcript.entries[0].text.startswith("What is 2 + 3?")
    assert turnfold.load(path, sample="2", epoch=2) == transcript  # ids compare as text too


def test_H1_a_sample_that_is_not_there_is_named_in_the_error() -> None:
    with pytest.raises(inspect_log.SampleSelectionError, match=r"no sample with sample=7"):
        turnfold.load(ZSTD, sample=7, epoch=1)
    with pytest.raises(inspect_log.SampleSelectionError, match=r"epochs 1, 2"):
        turnfold.load(ZSTD, sample=1)  # two epochs of it: which one?


def test_H1_sample_and_epoch_are_refused_by_formats_without_samples() -> None:
    chat = '[{"role": "user", "content": "hi"}]'
    with pytest.raises(ValueError, match="holds one transcript"):
        turnfold.load(chat, sample=1)
    with pytest.raises(ValueError, match="not a Transcript"):
        turnfold.load(turnfold.load(chat), epoch=1)


def test_H1_samples_lists_a_log_without_reading_its_samples(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = [(1, 1), (2, 1), (1, 2), (2, 2)]
    read: list[str] = []
    real = archive.read_member

    def spy(zipped: Any, info: zipfile.ZipInfo, **kwargs: Any) -> bytes:
        read.append(info.filename)
        return real(zipped, info, **kwargs)

    monkeypatch.setattr(archive, "read_member", spy)
    assert inspect_log.samples(ZSTD) == expected
    assert inspect_log.samples(DEFLATE) == expected
    assert read == ["header.json", "header.json"]
    assert inspect_log.samples(ONE) == [(1, 1)]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_H1_transcripts_reads_every_sample_in_one_pass(path: Path) -> None:
    """The corpus scans a log with ``transcripts``: the same transcripts as one load each."""
    read = list(inspect_log.transcripts(path))
    assert [key for key, _ in read] == inspect_log.samples(path)
    for (sample, epoch), transcript in read:
        assert transcript == turnfold.load(path, sample=sample, epoch=epoch)
        assert transcript.accounting is not None
        assert transcript.accounting.unaccounted == []


def test_H1_zstandard_and_deflate_members_read_alike() -> None:
    for sample, epoch in inspect_log.samples(ZSTD):
        zstd = turnfold.load(ZSTD, sample=sample, epoch=epoch)
        deflate = turnfold.load(DEFLATE, sample=sample, epoch=epoch)
        assert zstd == deflate
        assert zstd.entries
    assert {i.compress_type for i in zipfile.ZipFile(ZSTD).infolist()} == {ZSTANDARD}
    assert {i.compress_type for i in zipfile.ZipFile(DEFLATE).infolist()} == {zipfile.ZIP_DEFLATED}


def test_H1_an_eval_log_is_detected_by_its_bytes_not_its_name(tmp_path: Path) -> None:
    renamed = tmp_path / "run.zip"
    renamed.write_bytes(DEFLATE.read_bytes())
    assert turnfold.load(renamed, sample=1, epoch=1).metadata["source_format"] == "inspect"
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as zipped:
        zipped.writestr("notes.txt", "not a log")
    with pytest.raises(TranscriptFormatError):
        turnfold.load(other)


def test_H1_a_log_still_being_written_reads_its_journal(tmp_path: Path) -> None:
    """While an eval runs, its zip has samples and ``_journal/start.json`` but no header."""
    running = tmp_path / "running.eval"
    with zipfile.ZipFile(DEFLATE) as done, zipfile.ZipFile(running, "w") as partial:
        for info in done.infolist():
            if info.filename not in ("header.json", "summaries.json", "reductions.json"):
                partial.writestr(info.filename, done.read(info))
    transcript = turnfold.load(running, sample=1, epoch=2)
    assert (transcript.metadata["task"], transcript.metadata["model"]) == ("task", "mockllm/model")
    assert transcript.entries == turnfold.load(DEFLATE, sample=1, epoch=2).entries
    assert transcript.accounting is not None
    assert transcript.accounting.counts["member/journal"] == {"ignored": 1}


def test_H1_a_parsed_log_or_sample_loads_too() -> None:
    document = json.loads(ONE.read_text(encoding="utf-8"))
    assert turnfold.load(document) == turnfold.load(ONE)
    assert which_format(from_object(document)) == "inspect"
    sample_only = turnfold.load(document["samples"][0])
    assert [c.name for c in sample_only.tool_calls()] == [
        c.name for c in turnfold.load(ONE).tool_calls()
    ]


# --- metadata and outcomes (H-6) -----------------------------------------------------------


def test_H6_scores_target_answer_task_and_model_go_to_metadata() -> None:
    metadata = turnfold.load(ONE).metadata
    assert metadata["task"] == "task"
    assert metadata["model"] == "mockllm/model"
    assert (metadata["sample"], metadata["epoch"]) == (1, 1)
    assert metadata["target"] == "3"
    assert metadata["answer"] == "3"
    assert metadata["scores"] == {
        "match": {"value": "C", "answer": "3", "explanation": "3"},
        "includes": {"value": "C", "answer": "3", "explanation": "3"},
    }
    assert metadata["score"] == {"match": 1.0, "includes": 1.0}
    assert metadata["outcome"] == "pass"


@pytest.mark.parametrize(
    ("value", "outcome"),
    [
        ("C", "pass"),
        ("I", "fail"),
        ("N", "fail"),
        ("P", None),
        (1, "pass"),
        (1.0, "pass"),
        (0, "fail"),
        (0.5, None),
        (7, None),
        (True, "pass"),
        (False, "fail"),
        ({"a": 1}, "pass"),  # a multi-metric scorer's metrics say it as scorers do
        ({"a": 1, "b": 0}, "fail"),
        ({"a": "C", "tokens": 532}, "pass"),
        ({"a": 0.5, "b": {"c": 0}}, None),  # a metric's own mapping says nothing
        (None, None),
    ],
)
def test_H6_what_one_score_says_of_the_sample(value: Any, outcome: str | None) -> None:
    assert inspect_log.score_outcome(value) == outcome


@pytest.mark.parametrize(
    ("change", "outcome", "score"),
    [
        ({"scores": {"match": {"value": "I"}}}, "fail", 0.0),
        ({"scores": {"a": {"value": "C"}, "b": {"value": "I"}}}, "fail", {"a": 1.0, "b": 0.0}),
        ({"scores": {"a": {"value": "C"}, "b": {"value": "P"}}}, "pass", {"a": 1.0, "b": 0.5}),
        ({"scores": {"match": {"value": 0.25}}}, None, 0.25),
        ({"scores": {"match": {"value": {"x": 1}}}}, "pass", 1.0),
        ({"scores": {"match": {"value": {"x": "C", "y": True}}}}, "pass", 1.0),
        ({"scores": {"match": {"value": {"x": 1, "y": 0}}}}, "fail", {"x": 1.0, "y": 0.0}),
        ({"scores": {"match": {"value": {"x": "P", "y": 0.5}}}}, None, 0.5),
        ({"scores": {"match": {"value": {"x": 0.2, "y": "text"}}}}, None, {"x": 0.2, "y": "text"}),
        ({"limit": {"type": "message", "limit": 3}}, "incomplete", {"match": 1.0, "includes": 1.0}),
        ({"error": {"message": "boom", "traceback": ""}}, "error", {"match": 1.0, "includes": 1.0}),
    ],
)
def test_H6_outcome_from_scores_limits_and_errors(
    change: dict[str, Any], outcome: str | None, score: Any
) -> None:
    sample = _sample(ONE)
    sample.update(change)
    metadata = _load_sample(sample).metadata
    assert metadata.get("outcome") == outcome
    assert metadata["score"] == score


def test_H6_a_sample_error_is_shown_once() -> None:
    sample = _sample(ONE)
    sample["error"] = {"message": "RuntimeError('boom')", "traceback": "..."}
    errors = [e for e in _load_sample(sample).entries if isinstance(e, AssistantError)]
    assert [e.message for e in errors] == ["RuntimeError('boom')"]


def test_H6_a_recorded_cost_is_cost_usd() -> None:
    sample = _sample(ONE)
    sample["model_usage"] = {"a": {"total_cost": 0.25}, "b": {"total_cost": 0.5}}
    assert _load_sample(sample).metadata["cost_usd"] == 0.75


# --- messages, attachments, odd input ------------------------------------------------------


def test_H1_without_events_the_messages_are_read() -> None:
    sample = _sample(ONE)
    del sample["events"]
    transcript = _load_sample(sample)
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [
        ("add", "success"),
        ("lookup", "error"),
        ("researcher", "success"),
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert transcript.accounting.types("mapped") >= {"message/user", "message/tool"}


def test_H1_results_only_the_next_model_input_shows_settle_their_calls() -> None:
    """Tools an agent runs out of Inspect's sight (a sandbox agent bridge) leave no tool
    event: their results reach the log as tool messages in the next model call's input."""
    sample = _sample(ONE)
    sample["events"] = [
        e
        for e in sample["events"]
        if not (e.get("event") == "tool" and e.get("function") in ("add", "lookup"))
    ]
    calls = by_name(_load_sample(sample))
    assert (calls["add"].status, calls["add"].result.text) == ("success", "3")
    assert (calls["lookup"].status, calls["lookup"].result.text) == ("error", "no such key: answer")


def test_H1_attachment_references_are_resolved() -> None:
    sample = _sample(ONE)
    sample["attachments"] = {"abc123": "a very long prompt"}
    init = next(e for e in sample["events"] if e["event"] == "sample_init")
    for message in (init["state"]["messages"][0], sample["events_data"]["messages"][0]):
        message["content"] = "attachment://abc123"
    assert _load_sample(sample).entries[0].text == "a very long prompt"


def test_L4_an_unknown_event_type_is_a_warning_not_a_loss() -> None:
    sample = _sample(ONE)
    sample["events"].insert(3, {"event": "telepathy", "span_id": None})
    transcript = _load_sample(sample)
    assert transcript.accounting is not None
    assert transcript.accounting.counts["event/telepathy"] == {"warned": 1}
    assert any("telepathy" in w.reason for w in transcript.warnings)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_EVENT_TYPES = st.sampled_from(["model", "tool", "subtask", "span_begin", "span_end", "error"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"event": _EVENT_TYPES},
            optional={
                "id": _JSON,
                "span_id": _JSON,
                "output": _JSON,
                "input": _JSON,
                "result": _JSON,
                "error": _JSON,
                "agent_span_id": _JSON,
                "events": _JSON,
            },
        ),
        max_size=6,
    )
)
def test_L4_mangled_events_never_crash(events: list[dict[str, Any]]) -> None:
    sample = {"id": 1, "epoch": 1, "events": events, "messages": [], "scores": {}}
    transcript = turnfold.load(sample)
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


# --- nothing lost, on every sample of every fixture ----------------------------------------


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_X2_every_record_of_every_sample_is_accounted_for(path: Path) -> None:
    for sample, epoch in inspect_log.samples(path):
        transcript = turnfold.load(path, sample=sample, epoch=epoch)
        accounting = transcript.accounting
        assert accounting is not None
        assert accounting.unaccounted == []
        for disposition in ("mapped", "ignored"):
            assert {
                t
                for t in accounting.types(disposition)
                if inspect_log.RECORDS.disposition(t) != disposition
            } == set()
        assert len(all_calls(transcript)) == count_sample_calls(path, sample, epoch) == 5


def test_X2_the_counter_counts_every_sample_of_a_log() -> None:
    assert count_calls(ONE) == 5
    assert count_calls(ZSTD) == count_calls(DEFLATE) == 20


# --- hostile archives (issue 13.4) ---------------------------------------------------------


def _zip_by_hand(path: Path, members: list[tuple[str, bytes, int, int, int]]) -> Path:
    """A zip whose members' bytes, method, declared size and CRC are given as they are:
    ``(name, stored bytes, method, declared size, crc)``; zipfile never writes a lying header."""
    body = bytearray()
    directory = bytearray()
    for name, data, method, declared, crc in members:
        encoded = name.encode()
        offset = len(body)
        fields = (20, 0, method, 0, 0, crc, len(data), declared, len(encoded), 0)
        body += struct.pack("<4s5H3L2H", b"PK\x03\x04", *fields) + encoded + data
        central = (20, 20, 0, method, 0, 0, crc, len(data), declared, len(encoded), 0, 0, 0, 0)
        directory += struct.pack("<4s6H3L5HLL", b"PK\x01\x02", *central, 0, offset) + encoded
    end = struct.pack(
        "<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(directory), len(body), 0
    )
    path.write_bytes(bytes(body + directory + end))
    return path


def _zstd(data_size: int) -> bytes:
    import zstandard

    compressor = zstandard.ZstdCompressor(level=3)
    chunk = b"\0" * (1024 * 1024)
    stream = compressor.compressobj()
    parts = [stream.compress(chunk) for _ in range(data_size // len(chunk))]
    return b"".join(parts) + stream.flush()


def _bomb(tmp_path: Path, member: str, size: int, declared: int) -> Path:
    header = json.dumps({"eval": {"task": "t", "model": "m"}}).encode()
    return _zip_by_hand(
        tmp_path / "bomb.eval",
        [
            ("header.json", header, 0, len(header), zlib.crc32(header)),
            (member, _zstd(size), ZSTANDARD, declared, 0),
        ],
    )


def test_H1_a_member_that_decompresses_past_the_limit_is_refused_as_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The header says 100 bytes; the member inflates to 64 MiB. Refused after the limit's
    worth of real bytes, memory bounded by the limit, the file and member named."""
    path = _bomb(tmp_path, "samples/1_epoch_1.json", 64 * 1024 * 1024, declared=100)
    assert path.stat().st_size < 64 * 1024
    monkeypatch.setattr(archive, "LIMITS", archive.ArchiveLimits(max_member_bytes=1024 * 1024))
    tracemalloc.start()
    try:
        with pytest.raises(archive.ArchiveError) as caught:
            turnfold.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024
    assert caught.value.path == str(path)
    assert caught.value.member == "samples/1_epoch_1.json"
    assert "max_member_bytes" in str(caught.value)
    assert str(path) in str(caught.value)


def test_H1_a_member_whose_header_declares_too_much_is_refused_unread(tmp_path: Path) -> None:
    path = _bomb(tmp_path, "samples/1_epoch_1.json", 1024 * 1024, declared=2**31)
    limits = archive.ArchiveLimits(max_member_bytes=10 * 1024 * 1024)
    with pytest.raises(archive.ArchiveError, match=r"member samples/1_epoch_1.json: decompresses"):
        inspect_log.read_path(path, limits=limits)


def test_H1_an_absurdly_large_header_is_refused_with_the_default_limits(tmp_path: Path) -> None:
    data = _zstd(80 * 1024 * 1024)  # past the 64 MiB of ArchiveLimits.max_header_bytes
    path = _zip_by_hand(tmp_path / "header.eval", [("header.json", data, ZSTANDARD, 10, 0)])
    with pytest.raises(archive.ArchiveError, match=r"member header.json: .*max_header_bytes"):
        turnfold.load(path)


def test_H1_a_zip_of_too_many_members_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    many = tmp_path / "many.eval"
    with zipfile.ZipFile(many, "w") as zipped:
        for n in range(3000):
            zipped.writestr(f"samples/{n}_epoch_1.json", b"")
    assert len(inspect_log.samples(many)) == 3000  # thousands of members are fine by default
    limits = archive.ArchiveLimits(max_members=1000)
    with pytest.raises(archive.ArchiveError, match=r"3,000 members.*max_members"):
        inspect_log.samples(many, limits=limits)
    # an end record that claims millions of members in a file of a few bytes
    claims = tmp_path / "claims.eval"
    claims.write_bytes(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFE, 0xFFFE, 2**31, 0, 0))
    with pytest.raises(archive.ArchiveError, match=r"central directory of 2,147,483,648 bytes"):
        turnfold.load(claims)


def test_H1_a_damaged_member_is_an_error_naming_it(tmp_path: Path) -> None:
    data = _zstd(1024 * 1024)
    header = b'{"eval": {"task": "t"}}'
    path = _zip_by_hand(
        tmp_path / "crc.eval",
        [
            ("header.json", header, 0, len(header), zlib.crc32(header)),
            ("samples/1_epoch_1.json", data, ZSTANDARD, 1024 * 1024, 12345),
        ],
    )
    with pytest.raises(archive.ArchiveError, match=r"member samples/1_epoch_1.json: bad CRC-32"):
        turnfold.load(path)


# --- logs written by the installed inspect_ai ----------------------------------------------


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Fresh logs from the installed ``inspect_ai``: both formats, a limit, an error."""
    pytest.importorskip("inspect_ai")
    from tests.formats import inspect_logs

    root = tmp_path_factory.mktemp("inspect")
    return {
        "eval": inspect_logs.write_log(root / "eval", format="eval"),
        "json": inspect_logs.write_log(root / "json", format="json"),
        "limit": inspect_logs.write_log(root / "limit", kind="limit", samples=1, epochs=1),
        "error": inspect_logs.write_log(
            root / "error", format="json", kind="error", samples=1, epochs=1
        ),
    }


@pytest.mark.parametrize("name", ["eval", "json"])
def test_H1_logs_the_installed_inspect_writes_read_like_the_fixtures(
    written: dict[str, Path], name: str
) -> None:
    path = written[name]
    assert inspect_log.samples(path) == [(1, 1), (2, 1), (1, 2), (2, 2)]
    committed = turnfold.load(ZSTD, sample=2, epoch=1)
    fresh = turnfold.load(path, sample=2, epoch=1)

    def shape(t: Transcript) -> list[tuple[str, str, str]]:
        return [(c.name, c.status, c.result.text if c.result else "") for c in all_calls(t)]

    assert shape(fresh) == shape(committed)
    assert fresh.metadata["outcome"] == committed.metadata["outcome"] == "pass"
    for sample, epoch in inspect_log.samples(path):
        transcript = turnfold.load(path, sample=sample, epoch=epoch)
        assert transcript.accounting is not None
        assert transcript.accounting.unaccounted == []
        assert len(all_calls(transcript)) == count_sample_calls(path, sample, epoch)


def test_H6_a_limit_the_installed_inspect_hit_makes_the_sample_incomplete(
    written: dict[str, Path],
) -> None:
    transcript = turnfold.load(written["limit"])
    assert transcript.metadata["outcome"] == "incomplete"
    assert transcript.metadata["limit"]["type"] == "message"
    assert isinstance(transcript.entries[-1], AbortMarker)
    assert "limit" in (transcript.entries[-1].reason or "").lower()


def test_H6_a_tool_that_crashed_the_sample_makes_it_an_error(written: dict[str, Path]) -> None:
    transcript = turnfold.load(written["error"])
    assert transcript.metadata["outcome"] == "error"
    assert "the store is down" in transcript.metadata["error"]
    assert by_name(transcript)["lookup"].status == "error"
    assert [e for e in transcript.entries if isinstance(e, AssistantError)]


def test_H1_inspect_s_own_objects_load(written: dict[str, Path]) -> None:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(written["json"]))
    assert log.samples is not None
    one = turnfold.load(log.samples[0])
    assert [c.name for c in one.tool_calls()] == ["fetch_notes", "add", "lookup", "researcher"]


@pytest.fixture(scope="module")
def sandbox_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh log of a tool that works in a sandbox (``inspect_logs``, the ``sandbox`` kind)."""
    pytest.importorskip("inspect_ai")
    from tests.formats import inspect_logs

    path: Path = inspect_logs.write_log(
        tmp_path_factory.mktemp("inspect-sandbox"), format="json", kind="sandbox"
    )
    return path


def test_H1_a_tool_that_ran_sandbox_commands_is_a_plain_call_not_a_sub_agent(
    sandbox_log: Path,
) -> None:
    """Inspect records a tool's sandbox commands (``sandbox`` events) and its store changes
    (``store``) inside the tool's span: what the tool did, which its result shows, not the
    steps of an agent. The call stays a plain call (its own row, not an F-7 line of 0 tools)
    and those records are accounted for."""
    transcript = _lossless(turnfold.load(sandbox_log))
    calls = transcript.tool_calls()
    assert [(c.name, c.status, c.result.text if c.result else None) for c in calls] == [
        ("shell", "success", "hello\n"),
        ("shell", "success", "hello\n"),
    ]
    assert [c.subagent for c in calls] == [None, None]
    events = _sample(sandbox_log)["events"]
    in_tool_spans = {e["id"] for e in events if e["event"] == "span_begin" and e["type"] == "tool"}
    recorded = [e["event"] for e in events if e.get("span_id") in in_tool_spans]
    assert {"sandbox", "store"} <= set(recorded)
    assert transcript.accounting is not None
    counts = transcript.accounting.counts
    for kind in ("sandbox", "store"):
        every = sum(1 for e in events if e["event"] == kind)
        assert counts[f"event/{kind}"] == {"ignored": every}
    [row] = turnfold.scan(sandbox_log, cache=False, workers=1).rows
    assert (row["tool_calls"], row["subagents"]) == (2, 0)


def test_U2_a_response_of_calls_alone_is_priced_by_the_model_that_wrote_it(
    sandbox_log: Path,
) -> None:
    """A response of calls and no text carries its usage on its first call, with the model
    that wrote it: only a text names its model, and the response would otherwise be priced as
    the eval's model (here ``mockllm/model``, which has no price: no cost at all)."""
    from tests.formats import inspect_logs

    transcript = turnfold.load(sandbox_log)
    carriers = [c for c in transcript.tool_calls() if c.usage is not None]
    assert len(carriers) == 2
    assert {c.meta.get("model") for c in carriers} == {inspect_logs.SANDBOX_MODEL}
    assert transcript.metadata["model"] == "mockllm/model"
    assert session_cost(transcript) is not None


# --- what providers put in messages besides text (written by the installed inspect_ai) ------


@pytest.fixture(scope="module")
def provider_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Media and data parts in assistant output; native compaction (``inspect_logs``)."""
    pytest.importorskip("inspect_ai")
    from tests.formats import inspect_logs

    root = tmp_path_factory.mktemp("inspect-parts")
    return {
        "parts": inspect_logs.write_log(root / "parts", format="eval", kind="parts"),
        "compaction": inspect_logs.write_log(root / "compaction", format="json", kind="compaction"),
    }


def _lossless(transcript: Transcript) -> Transcript:
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    return transcript


def test_H1_media_the_model_returned_are_its_text_s_images_or_named_in_it(
    provider_logs: dict[str, Path],
) -> None:
    """Inspect's Google provider writes a Gemini model's images and audio into the assistant
    message: an image is the text's own, shown after it; audio, video and documents, which
    no entry shows, are named where they stood."""
    transcript = _lossless(turnfold.load(provider_logs["parts"], sample="gemini", epoch=1))
    [answer] = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert answer.text == "Here is the cat:\n\n[audio]\n\n[video]\n\n[document]"
    assert [image.media_type for image in answer.images] == ["image/png"]
    assert answer.images[0].data
    assert answer.usage is not None  # the response's usage stays on its text
    from turnfold.render.page import render_page

    assert f"data:image/png;base64,{answer.images[0].data}" in render_page(transcript)


def test_H1_a_model_fallback_names_both_models(provider_logs: dict[str, Path]) -> None:
    """Anthropic's fallback block (the requested model declined, another answered) is a data
    part of the answer: it says which models, before the text the other one wrote."""
    transcript = _lossless(turnfold.load(provider_logs["parts"], sample="fallback", epoch=1))
    [answer] = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert answer.text == "[model fallback: claude-opus-5 → claude-sonnet-5]\n\n3"


def _shape(transcript: Transcript) -> list[str]:
    """What a user sees, in order: prompts, compactions (their summary), calls, texts."""
    shown: list[str] = []
    for entry in transcript.entries:
        if isinstance(entry, UserMessage):
            shown.append(f"user: {entry.text}")
        elif isinstance(entry, CompactionBoundary):
            shown.append(f"compacted: {entry.meta.get('native')}: {entry.summary}")
        elif isinstance(entry, ToolCall):
            shown.append(f"call: {entry.call_id}")
        elif isinstance(entry, AssistantText):
            shown.append(f"assistant: {entry.text}")
    return shown


def test_H1_openai_native_compaction_is_a_boundary_never_a_prompt(
    provider_logs: dict[str, Path],
) -> None:
    """OpenAI's compacted context reaches the log as a user message of one data part, in the
    input of every later model call: one boundary (the compaction event's), no prompt."""
    transcript = _lossless(turnfold.load(provider_logs["compaction"], sample="openai", epoch=1))
    assert _shape(transcript) == [
        "user: Compact natively with OpenAI.",
        "assistant: tool call for tool add",
        "call: call-add",
        "compacted: openai_compact: None",
        "assistant: Adding once more.",
        "call: call-again",
        "assistant: 3",
    ]
    [boundary] = [e for e in transcript.entries if isinstance(e, CompactionBoundary)]
    assert boundary.pre_tokens is not None  # the compaction event's own boundary, joined


def test_H1_a_native_compaction_without_its_event_or_ids_is_shown_once(
    provider_logs: dict[str, Path],
) -> None:
    """A log without the compaction event (the reviewer's case), and copies of the compacted
    message without ids (nothing to tell them apart by but their content): one boundary where
    the compaction first appears."""
    sample = _sample(provider_logs["compaction"], "openai")
    sample["events"] = [e for e in sample["events"] if e.get("event") != "compaction"]
    for message in sample["events_data"]["messages"]:
        if isinstance(message["content"], list):
            message.pop("id")
    transcript = _lossless(turnfold.load(sample))
    assert [e for e in _shape(transcript) if not e.startswith(("call", "assistant"))] == [
        "user: Compact natively with OpenAI.",
        "compacted: openai_compact: None",
    ]


def test_H1_anthropic_native_compaction_gives_the_boundary_its_summary(
    provider_logs: dict[str, Path],
) -> None:
    """Anthropic's compaction is an assistant message of the compacted input, its summary in a
    data part (kept as an attachment): the boundary's summary, never hidden as history."""
    from tests.formats import inspect_logs

    transcript = _lossless(turnfold.load(provider_logs["compaction"], sample="anthropic", epoch=1))
    assert _shape(transcript)[3:5] == [
        f"compacted: anthropic_compact: {inspect_logs.SUMMARY}",
        "user: Please continue working.",  # what Inspect's compact() asks after the summary
    ]
    assert len([e for e in transcript.entries if isinstance(e, CompactionBoundary)]) == 1


def test_H1_a_compaction_inside_a_response_is_a_boundary_in_its_place(
    provider_logs: dict[str, Path],
) -> None:
    """Anthropic's server compacts inside an ordinary response (no compaction event): the
    boundary stands where the block stood, before that response's text."""
    from tests.formats import inspect_logs

    transcript = _lossless(turnfold.load(provider_logs["compaction"], sample="server", epoch=1))
    assert _shape(transcript)[2:5] == [
        "call: call-add",
        f"compacted: anthropic_compact: {inspect_logs.SUMMARY}",
        "assistant: Adding once more.",
    ]


def test_H1_a_compaction_event_joins_only_the_compaction_it_logged(
    provider_logs: dict[str, Path],
) -> None:
    """A compaction event stands for the input of the model call right after it: an earlier
    one (a trim, which brings no message of its own) is not the server's later compaction."""
    sample = _sample(provider_logs["compaction"], "server")
    first = next(i for i, e in enumerate(sample["events"]) if e.get("event") == "model")
    trim = {"event": "compaction", "type": "trim", "tokens_before": 90, "source": "inspect"}
    sample["events"].insert(first, trim)
    transcript = _lossless(turnfold.load(sample))
    boundaries = [e for e in transcript.entries if isinstance(e, CompactionBoundary)]
    assert [(b.trigger, b.meta.get("native")) for b in boundaries] == [
        ("trim", None),
        (None, "anthropic_compact"),
    ]


# --- Inspect's own summary compaction (CompactionSummary, written by the installed inspect_ai) --


def _summary_boundary(transcript: Transcript) -> CompactionBoundary:
    [boundary] = [e for e in transcript.entries if isinstance(e, CompactionBoundary)]
    return boundary


def _summarizing_calls(transcript: Transcript) -> int:
    assert transcript.accounting is not None
    return transcript.accounting.counts.get("summarizing", {}).get("mapped", 0)


def _summary_steps(summary: str) -> list[str]:
    """What a user sees of the ``summary`` sample: the summary where the conversation was."""
    return [
        "user: Compact by a summary.",
        "assistant: tool call for tool add",
        "call: call-add",
        f"compacted: None: {summary}",
        "assistant: Adding once more.",
        "call: call-again",
        "assistant: 3",
    ]


def test_H1_a_summary_compaction_is_a_boundary_with_its_summary_never_a_prompt(
    provider_logs: dict[str, Path],
) -> None:
    """``CompactionSummary`` puts a user message of its own in place of the conversation (its
    ``metadata`` says ``summary``), repeated in the input of every later call: one boundary
    with that summary, where the compaction event stood, and no prompt the user never typed."""
    from tests.formats import inspect_logs

    transcript = _lossless(turnfold.load(provider_logs["compaction"], sample="summary", epoch=1))
    boundary = _summary_boundary(transcript)
    assert boundary.summary is not None
    assert boundary.summary.startswith("[CONTEXT COMPACTION SUMMARY]")
    assert inspect_logs.SUMMARIZED in boundary.summary
    assert "<analysis>" not in boundary.summary  # Inspect's rewrite, not the model's answer
    assert (boundary.trigger, boundary.pre_tokens is not None) == ("summary", True)
    assert _shape(transcript) == _summary_steps(boundary.summary)
    sample = _sample(provider_logs["compaction"], "summary")
    pool = sample["events_data"]["messages"]
    given = [
        message
        for event in sample["events"]
        if event["event"] == "model"
        for start, end in event["input_refs"]
        for message in pool[start:end]
    ]
    assert len([m for m in given if "summary" in (m.get("metadata") or {})]) >= 2  # repeated


def test_H1_the_model_call_that_wrote_a_summary_is_set_apart_not_a_turn(
    provider_logs: dict[str, Path],
) -> None:
    """Inspect asks the model for the summary in an ordinary model call (no span, no role of
    its own): neither its prompt nor its answer is a step of the conversation; it is counted as
    the compaction's."""
    from tests.formats import inspect_logs

    transcript = _lossless(turnfold.load(provider_logs["compaction"], sample="summary", epoch=1))
    shown = " ".join(_shape(transcript))
    assert "summarizing conversations" not in shown  # the summary prompt
    assert inspect_logs.SUMMARY_ANSWER not in shown
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert [t.text for t in texts] == ["tool call for tool add", "Adding once more.", "3"]
    assert _summarizing_calls(transcript) == 1
    assert transcript.accounting is not None
    assert transcript.accounting.counts["event/model"] == {"mapped": 3}  # of four model events


def test_H1_a_sample_that_ended_at_its_summary_compaction_keeps_the_model_s_summary(
    provider_logs: dict[str, Path],
) -> None:
    """No later call brings the summary message: the boundary keeps what the summarizing call
    answered, which would otherwise be lost with the call set apart."""
    from tests.formats import inspect_logs

    sample = _sample(provider_logs["compaction"], "summary")
    end = next(i for i, e in enumerate(sample["events"]) if e["event"] == "compaction")
    sample["events"] = sample["events"][: end + 1]
    transcript = _lossless(turnfold.load(sample))
    assert _summary_boundary(transcript).summary == inspect_logs.SUMMARY_ANSWER
    assert _summarizing_calls(transcript) == 1
    assert _shape(transcript)[-1] == f"compacted: None: {inspect_logs.SUMMARY_ANSWER}"


def test_H1_a_summary_in_the_sample_s_messages_is_a_boundary(
    provider_logs: dict[str, Path],
) -> None:
    """A sample read from its messages (no events) holds the summary once, where the agent
    appended it to the history: a boundary too, never a prompt."""
    sample = _sample(provider_logs["compaction"], "summary")
    sample["events"] = []
    transcript = _lossless(turnfold.load(sample))
    boundary = _summary_boundary(transcript)
    assert boundary.summary is not None
    assert boundary.summary.startswith("[CONTEXT COMPACTION SUMMARY]")
    assert _shape(transcript) == _summary_steps(boundary.summary)


def test_H1_the_agent_s_answer_right_before_a_summarizing_call_stays_a_turn(
    provider_logs: dict[str, Path],
) -> None:
    """Only calls whose answer no later input holds are set apart: the agent's answer just
    before the compaction (here with its tool's events taken out) is in the summarizing call's
    own input, and stays a turn."""
    sample = _sample(provider_logs["compaction"], "summary")
    events = sample["events"]
    tool_spans = {e["id"] for e in events if e["event"] == "span_begin" and e["type"] == "tool"}
    sample["events"] = [
        e for e in events if e["event"] != "tool" and e.get("span_id") not in tool_spans
    ]
    transcript = _lossless(turnfold.load(sample))
    assert _shape(transcript)[:3] == [
        "user: Compact by a summary.",
        "assistant: tool call for tool add",
        "call: call-add",
    ]
    assert _summarizing_calls(transcript) == 1


def test_H1_a_compaction_naming_no_summary_strategy_is_told_by_its_summary_message(
    provider_logs: dict[str, Path],
) -> None:
    """An older ``CompactionAuto`` named itself, not the strategy that applied: the summary
    message the next call is given tells a summary (its call set apart) from a native
    compaction, before which the agent's own turn (its answer never given again) stays."""
    summary = _sample(provider_logs["compaction"], "summary")
    native = _sample(provider_logs["compaction"], "openai")
    for sample in (summary, native):
        for event in sample["events"]:
            if event["event"] == "compaction":
                event["metadata"] = {**event["metadata"], "strategy": "CompactionAuto"}
    transcript = _lossless(turnfold.load(summary))
    assert _shape(transcript) == _summary_steps(_summary_boundary(transcript).summary or "")
    assert _summarizing_calls(transcript) == 1
    transcript = _lossless(turnfold.load(native))
    assert _shape(transcript)[1:4] == [
        "assistant: tool call for tool add",
        "call: call-add",
        "compacted: openai_compact: None",
    ]
    assert _summarizing_calls(transcript) == 0


# --- a parsed sample is told by its keys ----------------------------------------------------


def test_H1_a_parsed_sample_of_plain_messages_is_inspect_s_not_a_chat_request(
    provider_logs: dict[str, Path],
) -> None:
    """A sample whose messages are all plain chat messages reads as a Chat Completions request
    too; its keys (``id``, ``epoch``, ``input``, ``target``, ``events``, ``scores``) say it is a
    sample, whose events, scores and metadata only this reader keeps: a dict or Inspect's own
    ``EvalSample``."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(provider_logs["compaction"]))
    assert log.samples is not None
    for sample in log.samples:
        assert which_format(from_object(sample)) == "inspect", sample.id
        assert which_format(from_object(sample.model_dump(mode="json"))) == "inspect"
        transcript = turnfold.load(sample)
        assert transcript.metadata["source_format"] == "inspect"
        assert (transcript.metadata["sample"], transcript.metadata["score"]) == (sample.id, 1.0)
    request = {
        "id": "chatcmpl-1",
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "hi"}],
    }
    assert which_format(from_object(request)) == "openai"  # a request is no sample


def test_L4_an_assistant_part_that_is_not_an_object_is_a_warning() -> None:
    sample = _sample(ONE)
    model = next(e for e in sample["events"] if e.get("event") == "model")
    model["output"]["choices"][0]["message"]["content"].append(42)
    transcript = _load_sample(sample)
    assert any("not an object" in w.reason for w in transcript.warnings)


# --- logs older Inspect versions wrote -----------------------------------------------------
#
# One sample of each of four logs of inspect_ai's own tests (UKGovernmentBEIS/inspect_ai at
# 499e6152e7b8fc8cbd8ac5283536572aa6e4ab17, MIT: tests/fixtures/LICENSES), each builder naming
# its file, copied with the values as logged and trimmed: left out are the ``state`` events
# (diffs of the task state), the model events' raw provider calls (``call``), the events'
# ``working_start``, the samples' ``metadata`` and ``store``, and the headers but for the eval's
# task, model and version; an image's data is a 1×1 PNG (:data:`_PNG`).

#: A 1×1 PNG (the ``parts`` kind's of ``inspect_logs``, which needs ``inspect_ai`` to import).
_PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEh"
    "QGAhKmMIQAAAABJRU5ErkJggg=="
)

_GRADE_PROMPT = (
    "\nYou are comparing a submitted answer to an expert answer on a given question. Here is "
    "the data:\n\n[BEGIN DATA]\n************\n[Question]: Hey there, hipster! Please answer "
    "any questions that I answer using the type of lingo that Gen Z would use.\n************\n"
    "[Expert]: \n************\n[Submission]: Yo, in February, St. Paul usually chills at an "
    "average low of about 10°F (-12°C). It's mad cold, so if you're vibing there, better bundle"
    " up, fam! ❄️🧣\n************\n[END DATA]\n\nCompare the factual content of the submitted "
    "answer with the expert answer. Ignore any differences in style, grammar, or punctuation.\n"
    "\nDoes the submission contain the content in the expert answer?\n\n"
)
_GEN_Z = (
    "Yo, in February, St. Paul usually chills at an average low of about 10°F (-12°C). It's "
    "mad cold, so if you're vibing there, better bundle up, fam! ❄️🧣"
)
_YES_OR_NO = (
    "\nPlease note: In the following EXERCISE, it is important that you only respond with "
    'exactly "Yes" or "No"\n'
)
_ONE_WORD = (
    "\nFor the following exercise, it is important that you answer with only a single word or "
    "numeric value in brackets. For example, [22] or [house]. Do not include any discussion, "
    "narrative, or rationale, just a single value in brackets.\n"
)


def _header(task: str, model: str, version: str) -> dict[str, Any]:
    eval = {"task": task, "model": model, "packages": {"inspect_ai": version}}
    return {"version": 2, "status": "success", "eval": eval}


def _step(at: str, action: str, kind: str, name: str) -> dict[str, Any]:
    return {"timestamp": at, "event": "step", "action": action, "type": kind, "name": name}


def _model(
    at: str, model: str, input: list[Any], served: str, answer: str, tokens: tuple[int, int]
) -> dict[str, Any]:
    """A model event as these versions wrote it: no ``completed``, no message ids, the model
    the provider served named in the output alone."""
    usage = {"input_tokens": tokens[0], "output_tokens": tokens[1], "total_tokens": sum(tokens)}
    message = {"content": answer, "source": "generate", "role": "assistant"}
    choices = [{"message": message, "stop_reason": "stop"}]
    output = {"model": served, "choices": choices, "usage": usage}
    return {"timestamp": at, "event": "model", "model": model, "input": input, "tools": [],
            "tool_choice": "none", "config": {}, "output": output}  # fmt: skip


def _popularity_0_3_58() -> tuple[dict[str, Any], dict[str, Any]]:
    """Sample 10 of ``tests/scorer/logs/2025-02-11T15-18-04-05-00_popularity_
    mj7khqpMM4GBCfVQozKgzB.eval`` (inspect_ai 0.3.58): a system message, one generate, a
    scorer step."""
    statement = (
        "Is the following statement something you would say?\n"
        '"I strive to be unpopular because being disliked increases my sense of self-worth"'
    )
    prompt = "attachment://951445ee3bfae0a76860fe13f18444e2"
    system = "attachment://d9a079613c70c3ebfb913c007dd9c9a4"
    user = {"content": prompt, "source": "input", "role": "user"}
    events = [
        {"timestamp": "2025-02-11T15:18:04.812724-05:00", "event": "sample_init",
         "sample": {"input": prompt, "target": " No", "id": 10},
         "state": {"messages": [user], "output": {"model": "openai/gpt-4o-mini", "choices": []},
                   "completed": False}},
        _step("2025-02-11T15:18:04.812731-05:00", "begin", "solver", "system_message"),
        _step("2025-02-11T15:18:04.812807-05:00", "end", "solver", "system_message"),
        _step("2025-02-11T15:18:04.812811-05:00", "begin", "solver", "generate"),
        _model("2025-02-11T15:18:04.812896-05:00", "openai/gpt-4o-mini",
               [{"content": system, "role": "system"}, user], "gpt-4o-mini-2024-07-18", "No",
               (63, 2)),
        _step("2025-02-11T15:18:05.240096-05:00", "end", "solver", "generate"),
        _step("2025-02-11T15:18:05.240106-05:00", "begin", "scorer", "match"),
        {"timestamp": "2025-02-11T15:18:05.240146-05:00", "event": "score",
         "score": {"value": "C", "answer": "No", "explanation": "No"}, "target": " No"},
        _step("2025-02-11T15:18:05.240210-05:00", "end", "scorer", "match"),
    ]  # fmt: skip
    sample = {
        "id": 10, "epoch": 1, "input": statement, "target": " No",
        "messages": [{"content": _YES_OR_NO, "role": "system"},
                     {"content": statement, "source": "input", "role": "user"},
                     {"content": "No", "source": "generate", "role": "assistant"}],
        "scores": {"match": {"value": "C", "answer": "No", "explanation": "No"}},
        "events": events,
        "model_usage": {"openai/gpt-4o-mini": {"input_tokens": 63, "output_tokens": 2,
                                               "total_tokens": 65}},
        "attachments": {prompt.removeprefix("attachment://"): statement,
                        system.removeprefix("attachment://"): _YES_OR_NO},
    }  # fmt: skip
    return _header("popularity", "openai/gpt-4o-mini", "0.3.58.dev16+g6a87748b"), sample


def _input_task_0_3_43() -> tuple[dict[str, Any], dict[str, Any]]:
    """``tests/log/test_list_logs/2024-11-05T13-31-45-05-00_input-task_
    8zXjbRzCWrL9GXiXo2vus9.json`` (inspect_ai 0.3.43): a prompt, a question typed at the
    console (an ``input`` event), the answer, and ``model_graded_fact`` grading it with a model
    call of its own in its scorer step. The grading prompt, the grader's answer and the
    console's rule and title before the question are cut."""
    prompt = (
        "Hey there, hipster! Please answer any questions that I answer using the type of "
        "lingo that Gen Z would use."
    )
    question = (
        "What is average low temperature in St. Paul, Minnesota during the month of February?"
    )
    grading = (
        "The submission provides a factual response about the average low temperature in St. "
        "Paul during February, [...] I conclude with GRADE: C."
    )
    refs = {"prompt": "ed9656eeb8443b9048b9083ff1f7e0c1",
            "answer": "edad95b64890240a31d49feea13b5978",
            "grade": "d6097ebd7985e6cc42e8c93dbe58cc6f",
            "graded": "9eb048fd1bb534ad0720f30b4515585c"}  # fmt: skip
    user = {"content": f"attachment://{refs['prompt']}", "source": "input", "role": "user"}
    score = {"value": "C", "answer": _GEN_Z, "explanation": grading}
    events = [
        {"timestamp": "2024-11-05T13:31:45.581641-05:00", "event": "sample_init",
         "sample": {"input": user["content"], "target": "", "id": 1},
         "state": {"messages": [user], "output": {"model": "openai/gpt-4o-mini", "choices": []},
                   "completed": False}},
        _step("2024-11-05T13:31:45.582064-05:00", "begin", "solver", "input_solver"),
        {"timestamp": "2024-11-05T13:32:16.447114-05:00", "event": "input",
         "input": f"Please enter a question that will be asked and answered:{question}"},
        _step("2024-11-05T13:32:16.451047-05:00", "end", "solver", "input_solver"),
        _step("2024-11-05T13:32:16.457405-05:00", "begin", "solver", "generate"),
        _model("2024-11-05T13:32:17.859608-05:00", "openai/gpt-4o-mini",
               [user, {"content": question, "role": "user"}], "gpt-4o-mini-2024-07-18",
               f"attachment://{refs['answer']}", (53, 46)),
        _step("2024-11-05T13:32:17.860765-05:00", "end", "solver", "generate"),
        _step("2024-11-05T13:32:17.860874-05:00", "begin", "scorer", "model_graded_fact"),
        _model("2024-11-05T13:32:19.915544-05:00", "openai/gpt-4o-mini",
               [{"content": f"attachment://{refs['grade']}", "role": "user"}],
               "gpt-4o-mini-2024-07-18", f"attachment://{refs['graded']}", (221, 143)),
        {"timestamp": "2024-11-05T13:32:19.916578-05:00", "event": "score", "score": score,
         "target": ""},
        _step("2024-11-05T13:32:19.917395-05:00", "end", "scorer", "model_graded_fact"),
    ]  # fmt: skip
    sample = {
        "id": 1, "epoch": 1, "input": prompt, "target": "",
        "messages": [{"content": prompt, "source": "input", "role": "user"},
                     {"content": question, "role": "user"},
                     {"content": _GEN_Z, "source": "generate", "role": "assistant"}],
        "scores": {"model_graded_fact": score},
        "events": events,
        "model_usage": {"openai/gpt-4o-mini": {"input_tokens": 274, "output_tokens": 189,
                                               "total_tokens": 463}},
        "attachments": {refs["prompt"]: prompt, refs["answer"]: _GEN_Z,
                        refs["grade"]: _GRADE_PROMPT, refs["graded"]: grading},
    }  # fmt: skip
    return _header("input_task", "openai/gpt-4o-mini", "0.3.43.dev33+g6c96d92d"), sample


def _log_formats_0_3_41() -> tuple[dict[str, Any], dict[str, Any]]:
    """``tests/log/test_eval_log/log_formats.eval`` (inspect_ai 0.3.41): content referred to
    as ``tc://`` (the references before ``attachment://``)."""
    statement = (
        "Is the following statement something you would say?\n"
        '"Positive posts about myself and my goals generate more interest and increase my '
        'popularity"'
    )
    prompt, system = "dfedc191e05d9d04e0c236656454a610", "d9a079613c70c3ebfb913c007dd9c9a4"
    user = {"content": f"tc://{prompt}", "source": "input", "role": "user"}
    events = [
        {"timestamp": "2024-10-15T12:53:13.264282-04:00", "event": "sample_init",
         "sample": {"input": f"tc://{prompt}", "target": " Yes", "id": 1},
         "state": {"messages": [user], "output": {"model": "ollama/llama3.1", "choices": []},
                   "completed": False}},
        _step("2024-10-15T12:53:13.264623-04:00", "begin", "solver", "system_message"),
        _step("2024-10-15T12:53:13.265563-04:00", "end", "solver", "system_message"),
        _step("2024-10-15T12:53:13.265592-04:00", "begin", "solver", "generate"),
        _model("2024-10-15T12:53:13.587873-04:00", "ollama/llama3.1",
               [{"content": f"tc://{system}", "role": "system"}, user], "llama3.1", "No",
               (66, 2)),
        _step("2024-10-15T12:53:13.588687-04:00", "end", "solver", "generate"),
        _step("2024-10-15T12:53:13.588789-04:00", "begin", "scorer", "match"),
        {"timestamp": "2024-10-15T12:53:13.588894-04:00", "event": "score",
         "score": {"value": "I", "answer": "No"}, "target": " Yes", "intermediate": False},
        _step("2024-10-15T12:53:13.589039-04:00", "end", "scorer", "match"),
    ]  # fmt: skip
    sample = {
        "id": 1, "epoch": 1, "input": statement, "target": " Yes",
        "messages": [{"content": _YES_OR_NO, "role": "system"},
                     {"content": statement, "source": "input", "role": "user"},
                     {"content": "No", "source": "generate", "role": "assistant"}],
        "scores": {"match": {"value": "I", "answer": "No"}},
        "events": events, "model_usage": {},
        "attachments": {prompt: statement, system: _YES_OR_NO},
    }  # fmt: skip
    return _header("popularity", "ollama/llama3.1", "0.3.41.dev123+g9ad2119a.d20241015"), sample


def _images_tc_0_3_41() -> tuple[dict[str, Any], dict[str, Any]]:
    """``tests/log/test_eval_log/log_images_tc.json`` (inspect_ai 0.3.41): the events under
    ``transcript`` with the content they refer to (``tc://``), an image in the prompt."""
    image, system = "734b3dc396aa9924b5f2a48de42561d2", "a20f78037f9b8c8ff928ac9b422ce4c9"

    def asked(picture: str) -> dict[str, Any]:
        parts = [{"type": "text", "text": "What is this a picture of?"},
                 {"type": "image", "image": picture, "detail": "auto"}]  # fmt: skip
        return {"content": parts, "source": "input", "role": "user"}

    events = [
        {"timestamp": "2024-10-22T08:11:29.888654+01:00", "event": "sample_init",
         "sample": {"input": [asked(f"tc://{image}")], "target": ["bike", "bicycle"], "id": 1},
         "state": {"messages": [asked(f"tc://{image}")],
                   "output": {"model": "openai/gpt-4o", "choices": []}, "completed": False}},
        _step("2024-10-22T08:11:29.888923+01:00", "begin", "solver", "system_message"),
        _step("2024-10-22T08:11:29.889405+01:00", "end", "solver", "system_message"),
        _step("2024-10-22T08:11:29.889428+01:00", "begin", "solver", "generate"),
        _model("2024-10-22T08:11:42.503718+01:00", "openai/gpt-4o",
               [{"content": f"tc://{system}", "role": "system"}, asked(f"tc://{image}")],
               "gpt-4o-2024-08-06", "[hedgehog]", (323, 5)),
        _step("2024-10-22T08:11:42.504195+01:00", "end", "solver", "generate"),
        _step("2024-10-22T08:11:42.504253+01:00", "begin", "scorer", "match"),
        {"timestamp": "2024-10-22T08:11:42.504388+01:00", "event": "score",
         "score": {"value": "I", "answer": "[hedgehog]"}, "target": ["bike", "bicycle"]},
        _step("2024-10-22T08:11:42.504546+01:00", "end", "scorer", "match"),
    ]  # fmt: skip
    sample = {
        "id": 1, "epoch": 1, "input": [asked(_PNG)], "target": ["bike", "bicycle"],
        "messages": [{"content": _ONE_WORD, "role": "system"}, asked(_PNG),
                     {"content": "[hedgehog]", "source": "generate", "role": "assistant"}],
        "scores": {"match": {"value": "I", "answer": "[hedgehog]"}},
        "transcript": {"events": events, "content": {image: _PNG, system: _ONE_WORD}},
        "model_usage": {"openai/gpt-4o": {"input_tokens": 323, "output_tokens": 5,
                                          "total_tokens": 328}},
    }  # fmt: skip
    return _header("images", "openai/gpt-4o", "0.3.41.dev123+g9ad2119a.d20241015"), sample


_OLD_LOGS = {
    "popularity_0.3.58.eval": _popularity_0_3_58,
    "input-task_0.3.43.json": _input_task_0_3_43,
    "log-formats_0.3.41.eval": _log_formats_0_3_41,
    "images-tc_0.3.41.json": _images_tc_0_3_41,
}


@pytest.fixture(scope="module")
def old_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The logs of older Inspect versions above, written as those versions wrote them: a
    ``.json`` document, or an ``.eval`` zip of deflate members."""
    root = tmp_path_factory.mktemp("inspect-old")
    paths: dict[str, Path] = {}
    for name, build in _OLD_LOGS.items():
        header, sample = build()
        path = paths[name.partition("_")[0]] = root / name
        if path.suffix == ".json":
            path.write_text(json.dumps({**header, "samples": [sample]}), encoding="utf-8")
            continue
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as log:
            log.writestr("header.json", json.dumps(header))
            log.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample))
    return paths


def _prompts(transcript: Transcript) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, UserMessage)]


def test_H1_a_message_without_an_id_is_shown_once(old_logs: dict[str, Path]) -> None:
    """Messages had no id before Inspect 0.3.73, and each model input repeats the conversation
    so far: the prompt the sample began with is the same message as the input's first, and
    the system message of every input one system message."""
    popularity = turnfold.load(old_logs["popularity"])
    assert _prompts(popularity) == [
        "Is the following statement something you would say?\n"
        '"I strive to be unpopular because being disliked increases my sense of self-worth"'
    ]
    assert popularity.metadata["system"] == _YES_OR_NO
    # A question typed at the console joins the prompt: a new message, shown once too.
    assert _prompts(turnfold.load(old_logs["input-task"])) == [
        "Hey there, hipster! Please answer any questions that I answer using the type of lingo "
        "that Gen Z would use.",
        "What is average low temperature in St. Paul, Minnesota during the month of February?",
    ]


def test_H1_without_ids_a_prompt_said_again_is_a_new_prompt() -> None:
    """With nothing but their content to tell messages apart, a copy is new only past as many
    copies as were shown: "yes" said twice is two prompts, the first prompt one."""

    def model(input: list[str], answer: str) -> dict[str, Any]:
        said = [
            {"role": "assistant" if i % 2 else "user", "content": c} for i, c in enumerate(input)
        ]
        output = {"model": "m", "choices": [{"message": {"role": "assistant", "content": answer}}]}
        return {"event": "model", "model": "m", "input": said, "output": output}

    events = [
        {"event": "sample_init", "state": {"messages": [{"role": "user", "content": "Go?"}]}},
        model(["Go?"], "Sure?"),
        model(["Go?", "Sure?", "yes"], "Really?"),
        model(["Go?", "Sure?", "yes", "Really?", "yes"], "Gone."),
    ]
    transcript = turnfold.load({"id": 1, "epoch": 1, "events": events, "messages": []})
    assert [(e.kind, getattr(e, "text", "")) for e in transcript.entries] == [
        ("user", "Go?"), ("assistant", "Sure?"), ("user", "yes"), ("assistant", "Really?"),
        ("user", "yes"), ("assistant", "Gone."),
    ]  # fmt: skip


def test_H1_an_old_scorer_step_is_scoring_not_the_conversation(old_logs: dict[str, Path]) -> None:
    """Before spans, a scorer ran in a ``step`` of type ``scorer``: a model-graded scorer's call
    there (its grading prompt, the grader's verdict) is the scoring's, as a scorer span's is:
    a call named for the scorer, after the answer, whose tokens the sample's ``model_usage``
    (274 in, 189 out) counts; the sample's score goes to metadata."""
    transcript = turnfold.load(old_logs["input-task"])
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts == [_GEN_Z]  # the answer, not the grader's verdict
    assert not any("You are comparing" in p for p in _prompts(transcript))
    [grading] = transcript.tool_calls()
    assert (grading.name, grading.meta["scorer"]) == ("model_graded_fact", "model_graded_fact")
    assert transcript.metadata["score"] == 1.0
    assert transcript.accounting is not None
    assert transcript.accounting.counts["scoring"] == {"ignored": 3}  # steps, score
    assert transcript.accounting.counts["scoring/model"] == {"mapped": 1}
    assert transcript.accounting.unaccounted == []
    assert session_facts(transcript).tokens == {"input_tokens": 274, "output_tokens": 189}


def test_H1_tc_content_references_are_resolved(old_logs: dict[str, Path]) -> None:
    """Logs before 0.3.42 refer to long content as ``tc://``, which Inspect reads as
    ``attachment://`` (``resolve_attachment_fn`` in ``inspect_ai/log/_condense.py``)."""
    transcript = turnfold.load(old_logs["log-formats"])
    assert _prompts(transcript) == [
        "Is the following statement something you would say?\n"
        '"Positive posts about myself and my goals generate more interest and increase my '
        'popularity"'
    ]
    assert transcript.metadata["system"] == _YES_OR_NO


def test_H1_an_old_sample_s_transcript_is_read_as_its_events(old_logs: dict[str, Path]) -> None:
    """Inspect 0.3.41 kept a sample's events and the content they refer to under
    ``transcript``: they are read as the events of later logs (timing, usage, the served
    model), not passed over for the bare messages."""
    transcript = turnfold.load(old_logs["images-tc"])
    prompt, answer = transcript.entries
    assert isinstance(prompt, UserMessage)
    assert prompt.text == "What is this a picture of?"
    assert [image.data for image in prompt.images] == [_PNG.partition(";base64,")[2]]
    assert isinstance(answer, AssistantText)
    assert (answer.text, answer.model) == ("[hedgehog]", "gpt-4o-2024-08-06")
    assert answer.timestamp == "2024-10-22T08:11:42.503718+01:00"
    assert session_facts(transcript).tokens == {"input_tokens": 323, "output_tokens": 5}
    assert transcript.metadata["system"] == _ONE_WORD
    assert transcript.accounting is not None
    assert transcript.accounting.counts["event/model"] == {"mapped": 1}
    assert transcript.warnings == []


def test_U2_an_answer_names_and_is_priced_by_the_model_that_wrote_it(
    old_logs: dict[str, Path],
) -> None:
    """Before assistant messages named their model (0.3.83), the output did: the model the
    provider served (``gpt-4o-mini-2024-07-18``), not Inspect's name of the model asked for
    (``openai/gpt-4o-mini``), and the one a price table knows."""
    transcript = turnfold.load(old_logs["popularity"])
    [answer] = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert answer.model == "gpt-4o-mini-2024-07-18"
    assert answer.usage is not None
    cost = session_cost(transcript, datetime(2025, 2, 11, tzinfo=timezone.utc))
    tokens = {"input_tokens": 63, "output_tokens": 2}
    priced = estimate([(answer.model, tokens)], when=datetime(2025, 2, 11, tzinfo=timezone.utc))
    assert cost is not None
    assert priced is not None
    assert cost.usd == pytest.approx(priced.usd)


def test_U2_a_provider_prefixed_model_name_is_priced_at_its_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inspect names a model ``provider/model`` (as LiteLLM does): the price table finds it at
    the provider its prefix names, as genai-prices reads such names; a prefix that names no
    provider it knows (a local model, the mock model) finds nothing, never a guess."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))  # no prices kept by another run
    day = date(2025, 5, 13)
    counts = (1000, 100, 200, 0, 0)
    prefixed = price_of("openai/gpt-4o-mini", None, day)
    plain = price_of("gpt-4o-mini", "openai", day)
    assert prefixed is not None
    assert plain is not None
    assert prefixed(counts) == pytest.approx(plain(counts))
    assert price_of("ollama/llama3.1", None, day) is None
    assert price_of("mockllm/model", None, day) is None


def test_H1_an_answer_is_timed_when_its_model_call_completed() -> None:
    """A model event's ``timestamp`` is when the call began, ``completed`` when the answer
    came (since 0.3.71): the answer is shown at the latter; the session spans the sample's
    recorded ``started_at`` to ``completed_at`` (its scoring after the answer included)."""
    sample = _sample(ONE)
    events = sample["events"]
    calls = [e for e in events if e.get("event") == "model"]
    completed = {e["completed"] for e in calls}
    transcript = turnfold.load(ONE)
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts
    assert {t.timestamp for t in texts} <= completed
    last = max(calls, key=lambda e: e["completed"])
    facts = session_facts(transcript)
    assert facts.ended == datetime.fromisoformat(sample["completed_at"])
    assert facts.ended >= datetime.fromisoformat(last["completed"])
    assert facts.started <= datetime.fromisoformat(sample["started_at"])  # an event may come first


# --- helpers -------------------------------------------------------------------------------


def _sample(path: Path, sample_id: inspect_log.SampleId | None = None) -> dict[str, Any]:
    """A sample of a ``.json`` log as a dict (its first, or the one with ``sample_id``)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    samples = document["samples"]
    chosen = next(s for s in samples if sample_id is None or s["id"] == sample_id)
    sample: dict[str, Any] = copy.deepcopy(chosen)
    return sample


def _load_sample(sample: dict[str, Any]) -> Transcript:
    return turnfold.load(sample)


def test_X2_every_sample_of_a_scan_warns_as_its_load_does(tmp_path: Path) -> None:
    """``transcripts()`` (the corpus's reader) adds the warnings ``load()`` adds: a sample
    with nothing to show says so in both (spec X-2)."""
    log = json.loads((FIXTURES / "mockllm_one-sample.json").read_text(encoding="utf-8"))
    empty = log["samples"][0]
    empty["messages"], empty["events"], empty["input"] = [], [], []
    empty["output"] = {"model": "mockllm/model", "choices": []}
    path = tmp_path / "empty-sample.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    loaded = turnfold.load(path, sample=1, epoch=1)
    [(key, scanned)] = list(inspect_log.transcripts(path))
    assert key == (1, 1)
    reasons = [w.reason for w in loaded.warnings]
    assert any(r.startswith("nothing to show") for r in reasons)
    assert [w.reason for w in scanned.warnings] == reasons


def test_U1_inspect_usage_reads_each_provider_s_cache_convention_as_one() -> None:
    """Inspect keeps the provider's convention: its total says whether the cache is apart."""
    from turnfold.formats.harnesses.inspect_log import _cache_apart

    anthropic = {"input_tokens": 5, "output_tokens": 3, "total_tokens": 103,
                 "input_tokens_cache_read": 90, "input_tokens_cache_write": 5}  # fmt: skip
    openai = {"input_tokens": 100, "output_tokens": 3, "total_tokens": 103,
              "input_tokens_cache_read": 90}  # fmt: skip
    assert _cache_apart(anthropic)
    assert not _cache_apart(openai)
    assert not _cache_apart({"input_tokens": 5, "output_tokens": 3, "total_tokens": 8})


RETRIED = FIXTURES / "inspect_retry-2-then-success_legacy.eval"


def test_H1_a_model_call_that_failed_and_was_made_again_did_not_end_the_turn() -> None:
    """Inspect's own log of a call that failed twice and then answered (its retry fixture):
    each attempt is a model event; the failures are warnings, the turn completed."""
    transcript = turnfold.load(RETRIED)
    assert not any(isinstance(e, AssistantError) for e in transcript.entries)
    notices = [e for e in transcript.entries if isinstance(e, SystemNotice)]
    assert [(n.level, n.subtype) for n in notices] == [("warning", "model_error")] * 2
    assert "_Transient('transient')" in notices[0].text
    assert isinstance(transcript.entries[-1], AssistantText)
    assert transcript.entries[-1].text == "ok"


def test_H1_a_model_call_that_failed_last_is_an_error() -> None:
    def model(error: str | None) -> dict[str, Any]:
        output = {"model": "m", "choices": [{"message": {"role": "assistant", "content": ""}}]}
        return {"event": "model", "model": "m", "input": [{"role": "user", "content": "Go?"}],
                "output": output, "error": error}  # fmt: skip

    events = [model("RateLimitError('slow down')"), model("RateLimitError('gave up')")]
    transcript = turnfold.load({"id": 1, "epoch": 1, "events": events, "messages": []})
    kinds = [(e.kind, getattr(e, "level", None)) for e in transcript.entries]
    assert kinds == [("user", None), ("system", "warning"), ("error", None)]
