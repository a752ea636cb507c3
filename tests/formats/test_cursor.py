"""Cursor agent transcripts (issue 11.3; spec L-3 honest unknowns, L-4 never silently empty)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold import (
    AbortMarker,
    AssistantError,
    AssistantText,
    SystemNotice,
    Thinking,
    Transcript,
    UserMessage,
)
from turnfold.formats import cursor, which_format
from turnfold.formats.source import from_object

FIXTURES = Path(__file__).parents[1] / "fixtures" / "cursor"
PLAIN = FIXTURES / "cursor_issue-11-3_no-results.jsonl"
SESSION_ID = "3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13"
SESSION = FIXTURES / SESSION_ID / f"{SESSION_ID}.jsonl"


def line(role: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "message": {"content": list(blocks)}}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def of(transcript: Transcript, cls: type[Any]) -> list[Any]:
    return [e for e in transcript if isinstance(e, cls)]


def test_L4_issue11_3_cursor_transcript_is_detected_and_shows_its_steps() -> None:
    # Was read as OpenAI Chat: 0 entries and 0 warnings.
    transcript = turnfold.load(PLAIN)
    assert transcript.metadata["source_format"] == "cursor"
    [prompt] = of(transcript, UserMessage)
    assert prompt.text == "rename the helper `fmt` to `format_price` everywhere"  # no tags
    calls = transcript.tool_calls()
    assert [(c.name, c.description) for c in calls] == [
        ("Grep", "\\bfmt\\("),
        ("Read", "src/price.py"),
        ("Read", "src/cart.py"),
        ("Edit", "src/price.py"),
        ("Edit", "src/cart.py"),
    ]
    assert calls[1].batch_id == calls[2].batch_id  # one line's calls are one batch
    assert transcript.warnings == []


def test_C2_cursor_transcript_row_names_its_agent() -> None:
    # The agent column held nothing for a Cursor transcript (its stream-json said "cursor"):
    # filtering a corpus by agent lost every Cursor session.
    transcript = turnfold.load(SESSION)
    assert transcript.metadata["agent"] == "cursor"
    [row] = turnfold.scan(PLAIN, cache=False).to_pandas().to_dict("records")
    assert row["agent"] == "cursor"


def test_L3_issue11_3_calls_without_results_are_unknown_and_say_so() -> None:
    transcript = turnfold.load(PLAIN)
    assert {c.status for c in transcript.tool_calls()} == {"unknown"}
    assert all(c.result is None for c in transcript.tool_calls())
    assert transcript.metadata["tool_results"] == "not recorded"
    assert isinstance(transcript.entries[-1], SystemNotice)
    assert transcript.entries[-1].text == cursor.NO_RESULTS


def test_X2_cursor_session_maps_every_record_kind() -> None:
    transcript = turnfold.load(SESSION)
    first, second = of(transcript, UserMessage)
    assert (first.text, first.timestamp) == (
        "Why does `make test` fail on a clean checkout?",
        "2026-08-02T03:51:00-07:00",
    )
    assert (
        second.meta["context"] == '<attached_files>\n<file path="README.md" />\n</attached_files>'
    )
    assert [t.form for t in of(transcript, Thinking)] == ["text", "redacted"]
    assert of(transcript, AbortMarker)[0].reason == "User aborted request."
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert transcript.accounting.counts["turn_ended/success"] == {
        "ignored": 2
    }  # one is the child's


def test_F7_cursor_sub_agent_file_is_the_transcript_of_its_task_call() -> None:
    transcript = turnfold.load(SESSION)
    [task] = [c for c in transcript.tool_calls() if c.name == "Task"]
    assert task.subagent is not None
    assert task.subagent.transcript is not None
    child = task.subagent.transcript
    assert task.subagent.agent_id == "b7e2d4f0-5c1a-4e93-8f60-2a9d1c3e4b57"
    assert [c.name for c in child.tool_calls()] == ["Grep"]
    assert of(child, AssistantText)[0].text == "Only tests/conftest.py reads it."


def test_L4_cursor_sub_agent_file_no_call_matches_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "s1"
    (folder / "subagents").mkdir(parents=True)
    (folder / "s1.jsonl").write_text(jsonl(line("user", text("<user_query>hi</user_query>"))))
    (folder / "subagents" / "x.jsonl").write_text(jsonl(line("user", text("stray task"))))
    transcript = turnfold.load(folder / "s1.jsonl")
    assert [w.reason for w in transcript.warnings] == [
        "sub-agent transcript x.jsonl matches no call's prompt; not shown"
    ]


@pytest.mark.parametrize(
    ("status", "error", "kind", "message"),
    [
        ("error", "User aborted request.", AbortMarker, "User aborted request."),
        ("error", "Model overloaded", AssistantError, "Model overloaded"),
        ("error", None, AssistantError, "The turn ended with an error."),
    ],
)
def test_P7_cursor_turn_ended_errors(
    status: str, error: str | None, kind: type[Any], message: str
) -> None:
    record: dict[str, Any] = {"type": "turn_ended", "status": status}
    if error is not None:
        record["error"] = error
    transcript = turnfold.load(jsonl(line("user", text("go")), record))
    [entry] = of(transcript, kind)
    assert (entry.reason if kind is AbortMarker else entry.message) == message


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("Sunday, Aug 2, 2026, 3:51 AM (UTC-7)", "2026-08-02T03:51:00-07:00"),
        ("Friday, December 5, 2025, 11:04 PM (UTC+5:30)", "2025-12-05T23:04:00+05:30"),
        ("2026-01-03T10:00:00Z", "2026-01-03T10:00:00Z"),
        ("Sunday, Aug 2, 2026, 3:51 AM", None),  # no offset: the moment is unknown (L-3)
        ("yesterday", None),
    ],
)
def test_L3_cursor_prompt_timestamp(tag: str, expected: str | None) -> None:
    assert cursor.parse_timestamp(tag) == expected


def test_L3_cursor_unreadable_timestamp_is_kept_as_text() -> None:
    value = "<timestamp>yesterday</timestamp><user_query>hi</user_query>"
    [prompt] = of(turnfold.load(jsonl(line("user", text(value)))), UserMessage)
    assert (prompt.text, prompt.timestamp, prompt.meta) == (
        "hi",
        None,
        {"timestamp_text": "yesterday"},
    )


def test_L2_cursor_tool_result_block_settles_its_call_when_present() -> None:
    records = [
        line("user", text("list")),
        line(
            "assistant",
            {"type": "tool_use", "id": "t1", "name": "Shell", "input": {"command": "ls"}},
        ),
        line("user", {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}),
    ]
    transcript = turnfold.load(jsonl(*records))
    [call] = transcript.tool_calls()
    assert (call.call_id, call.status, call.result and call.result.text) == (
        "t1",
        "success",
        "a.txt",
    )
    assert "tool_results" not in transcript.metadata


def test_L4_cursor_odd_lines_are_warnings_and_accounted() -> None:
    records = [
        line("user", text("go")),
        line("assistant", {"type": "mystery"}, {"type": "mystery"}),
        {"type": "turn_ended", "status": "later"},
        {"role": "assistant", "message": {"content": [text("ok")]}},
    ]
    transcript = turnfold.load(jsonl(*records) + "{broken\n")
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (2, "unknown content block type 'mystery' skipped"),
        (3, "turn_ended with an unknown status 'later'"),
        (5, "invalid JSON: Expecting property name enclosed in double quotes (column 2)"),
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert transcript.accounting.counts == {
        "user": {"mapped": 1},
        "assistant": {"warned": 1, "mapped": 1},
        "turn_ended/later": {"warned": 1},
        "(invalid JSON)": {"warned": 1},
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([line("user", text("hi")), line("assistant", text("yo"))], "cursor"),
        ([{"role": "user", "content": "hi"}], "openai"),
        ([{"type": "user", "message": {"role": "user", "content": "hi"}, "uuid": "u1"}], None),
    ],
    ids=["cursor", "chat", "claude-code-shaped"],
)
def test_L2_cursor_detection(value: Any, expected: str | None) -> None:
    found = which_format(from_object(value))
    assert (found == "cursor") is (expected == "cursor")
    if expected is not None:
        assert found == expected


def test_L4_cursor_empty_sub_agent_file_is_never_attached(tmp_path: Path) -> None:
    folder = tmp_path / "s2"
    (folder / "subagents").mkdir(parents=True)
    task = {"type": "tool_use", "name": "Task", "input": {"prompt": ""}}
    (folder / "s2.jsonl").write_text(jsonl(line("user", text("go")), line("assistant", task)))
    (folder / "subagents" / "empty.jsonl").write_text("")
    transcript = turnfold.load(folder / "s2.jsonl")
    [call] = transcript.tool_calls()
    assert call.subagent is None
    assert "sub-agent transcript empty.jsonl matches no call's prompt; not shown" in [
        w.reason for w in transcript.warnings
    ]
