"""A record a reader warned about is tallied "warned", once, and every warning counts toward the
source's total, past the listed ones too (spec L-4, X-1, X-2): the leftovers.

- Claude Code's stream-json task events and CrewAI's log entries were tallied "mapped" before
  they were read, so one with a time that is no time (or a duration or status not known) stayed
  "mapped" though it warned.
- One record that raised more warnings than are listed (a stream-json event or an ADK event of
  1,005 tool results for calls no record holds) moved its builder's count of the unlisted ones
  to the source as one warning: the source's total was short by the count less one.
- Claude Code's queued command whose own time is no time was said with the lines "shown
  without a time", though it is shown at its line's time.
- The notice that a LangGraph stream holds none of a review's edits named the modes that hold
  them without ``tasks``, whose task results hold them too.

Each input is a committed fixture the tool itself wrote (tests/fixtures/SOURCES.md) with values
changed with ``json`` as the test says, or a run of the real framework (LangGraph, offline).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.changed_copies import document_copy
from tests.formats.adk_runs import dumped_event
from turnfold.formats.agents.claude_stream import StreamReader
from turnfold.formats.source import MAX_LISTED_WARNINGS, Source, UnlistedWarnings, warning_count
from turnfold.model import Transcript, UserMessage

FIXTURES = Path(__file__).parents[1] / "fixtures"
STREAM = FIXTURES / "agents" / "claude-stream-json"
STREAM_SUBAGENT = STREAM / "claude-code_v2.1.332_stream-json_subagent.jsonl"
STREAM_BACKGROUND = STREAM / "claude-code_v2.1.337_stream-json_background-agent-stopped.jsonl"
CREWAI = FIXTURES / "crewai"
QUEUED = FIXTURES / "claude-code" / "v2.1_queued-prompts-and-wrappers.jsonl"
#: More warnings than are listed, all of one record.
MANY = MAX_LISTED_WARNINGS + 5


def _records(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _said(transcript: Transcript) -> list[tuple[int | None, str]]:
    return [(w.line, w.reason) for w in transcript.warnings]


def _counts(transcript: Transcript) -> dict[str, dict[str, int]]:
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    return transcript.accounting.counts


def _streamed(records: list[Any], *, live: bool) -> tuple[Transcript, dict[str, dict[str, int]]]:
    """The stream-json events read from a file, or followed live (the Claude Agent SDK's
    follower: the source's warnings are the transcript's); and the source's tally."""
    if not live:
        transcript = turnfold.load("".join(json.dumps(r) + "\n" for r in records))
        return transcript, _counts(transcript)
    transcript = Transcript()
    source = Source("<stream>", iter(()), warnings=transcript.warnings)
    reader = StreamReader(source, live=True, transcript=transcript)
    for line, record in enumerate(records, start=1):
        reader.feed(record, line)
    reader.finish()
    return transcript, source.accounting.counts


# --- 1. Claude Code's stream-json task events ---------------------------------------------------


@pytest.mark.parametrize("live", [False, True], ids=["saved", "followed"])
def test_L4_a_stream_json_task_event_that_warned_is_tallied_warned_once(live: bool) -> None:
    """The background agent's ``task_updated`` with an end that is no time, and its
    ``task_notification`` with a duration that is no number and a status not known (two
    warnings): each event is tallied warned, once, not mapped. Old code: mapped."""
    records = _records(STREAM_BACKGROUND)
    updated, notified = records[8], records[9]
    assert (updated["subtype"], notified["subtype"]) == ("task_updated", "task_notification")
    updated["patch"]["end_time"] = "soon"
    notified["duration_ms"], notified["status"] = "slow", "exploded"
    transcript, counts = _streamed(records, live=live)
    task = updated["task_id"]
    assert _said(transcript) == [
        (9, f"task_updated of task {task}: its patch.end_time 'soon' is no time (ms since the "
            "epoch); left out"),
        (10, "task_notification: duration_ms is not a number of milliseconds: 'slow'"),
        (10, "task_notification: status 'exploded' is not one known: its call's outcome is "
             "unknown"),
    ]  # fmt: skip
    assert counts["system/task_updated"] == {"warned": 1}
    assert counts["system/task_notification"] == {"warned": 1}
    assert counts["system/task_started"] == {"mapped": 1}  # a good one is still mapped
    assert transcript.tool_calls()[0].status == "unknown"


# --- 2. CrewAI's log entries ----------------------------------------------------------------------


def test_L4_a_crewai_json_log_entry_with_a_time_that_is_no_time_is_tallied_warned(
    tmp_path: Path,
) -> None:
    """The crew's ``output_log_file`` as JSON, an entry's ``timestamp`` made text: that entry
    is tallied warned, the others mapped. Old code: all mapped."""
    source = CREWAI / "crewai_v1.15.30_output-log.json"
    whole = turnfold.load(source)
    assert _counts(whole) == {"log/started": {"mapped": 2}, "log/completed": {"mapped": 2}}

    def change(entries: Any) -> None:
        entries[1]["timestamp"] = "soon"

    transcript = turnfold.load(document_copy(source, tmp_path, change))
    assert [line for line, _ in _said(transcript)] == [2]
    assert _counts(transcript) == {
        "log/started": {"mapped": 2},
        "log/completed": {"mapped": 1, "warned": 1},
    }


def test_L4_a_crewai_text_log_entry_that_warned_is_tallied_warned_once(tmp_path: Path) -> None:
    """The crew's text log: a task whose text holds ``", agent="`` (its entries' split a
    guess), its start also dated in a month 13, and the next task's start dated in a month 13
    alone: each entry says what is wrong with it and is tallied warned, once. Old code:
    mapped, all."""
    text = (CREWAI / "crewai_v1.15.30_logs.txt").read_text()
    lines = text.splitlines(keepends=True)
    assert all(line.startswith("2026-12-06 ") for line in lines[:3])
    for at in (0, 1):
        lines[at] = lines[at].replace('task="Add 1 and 2', 'task="Add 1", agent="and 2')
    for at in (0, 2):
        lines[at] = "2026-13-06" + lines[at][10:]
    changed = tmp_path / "logs.txt"
    changed.write_text("".join(lines))
    whole = turnfold.load(CREWAI / "crewai_v1.15.30_logs.txt")
    transcript = turnfold.load(changed)
    said = _said(transcript)
    assert [line for line, _ in said] == [1, 1, 2, 3]
    guess = "a value of this entry holds"
    assert [reason.startswith(guess) for _, reason in said] == [True, False, True, False]
    assert all("is no time; left out" in said[at][1] for at in (1, 3))
    started, completed = (_counts(whole)[kind]["mapped"] for kind in ("log/started",
                                                                      "log/completed"))  # fmt: skip
    assert _counts(transcript) == {
        "log/started": {"mapped": started - 2, "warned": 2},
        "log/completed": {"mapped": completed - 1, "warned": 1},
    }


# --- 3. one record of more warnings than are listed ----------------------------------------------


def _unknown_results(records: list[Any]) -> tuple[list[Any], int]:
    """The sub-agent stream, its first tool result event holding :data:`MANY` results for
    calls no event made (one warning each); and that event's line."""
    at = 5
    event = records[at]
    assert event["type"] == "user"
    assert event["message"]["content"][0]["type"] == "tool_result"
    event["message"]["content"] = [
        {"tool_use_id": f"toolu_gone_{n}", "type": "tool_result", "content": "done"}
        for n in range(MANY)
    ]
    return records, at + 1


@pytest.mark.parametrize("live", [False, True], ids=["saved", "followed"])
def test_X1_a_stream_json_event_of_more_warnings_than_are_listed_counts_each(live: bool) -> None:
    """One tool result event of 1,005 results for calls never made: every warning counts
    toward the source's total (the last listed says how many more), the event is tallied
    warned once. Old code, saved: the builder's count of the unlisted five reached the source
    as one warning, "1 more problem(s)"."""
    whole, _ = _streamed(_records(STREAM_SUBAGENT), live=live)
    assert whole.warnings == []
    records, line = _unknown_results(_records(STREAM_SUBAGENT))
    transcript, counts = _streamed(records, live=live)
    assert warning_count(transcript.warnings) == MANY
    assert len(transcript.warnings) == MAX_LISTED_WARNINGS + 1
    unlisted = transcript.warnings[-1]
    assert isinstance(unlisted, UnlistedWarnings)
    assert (unlisted.line, unlisted.count) == (line, MANY - MAX_LISTED_WARNINGS)
    assert unlisted.reason == "5 more problem(s) like those above, not listed one by one"
    assert transcript.warnings[0].line == line
    assert transcript.warnings[0].reason.startswith("tool_result for an unknown tool_use_id")
    assert counts["user"]["warned"] == 1


def test_X1_a_followed_stream_json_event_past_the_listed_warnings_counts_each() -> None:
    """Followed, the source's warnings nearly all listed already (998 unknown events): the
    event's 1,005 warnings fill the list and the rest are counted, every one. Old code: the
    count of those the event's own list left unlisted reached the source as one warning."""
    records, _ = _unknown_results(_records(STREAM_SUBAGENT))
    earlier = MAX_LISTED_WARNINGS - 2
    others = [{"type": "later_event", "session_id": "s"} for _ in range(earlier)]
    transcript, counts = _streamed(others + records, live=True)
    assert warning_count(transcript.warnings) == earlier + MANY
    assert len(transcript.warnings) == MAX_LISTED_WARNINGS + 1
    assert counts["user"]["warned"] == 1
    assert counts["later_event"] == {"warned": earlier}


@pytest.mark.parametrize("as_lines", [False, True], ids=["events", "jsonl"])
def test_X1_an_adk_event_of_more_warnings_than_are_listed_counts_each(as_lines: bool) -> None:
    """One ADK event of 1,005 function responses for calls no event made: every warning
    counts toward the source's total, the event tallied warned once. Old code: the builder's
    count of the unlisted five reached the source as one warning."""
    answers = [{"id": f"call_gone_{n}", "name": "add", "response": {"result": 1}}
               for n in range(MANY)]  # fmt: skip
    events = [
        dumped_event("user", [{"text": "add them"}]),
        dumped_event("calc", [{"function_response": answer} for answer in answers]),
    ]
    given: Any = "".join(json.dumps(e) + "\n" for e in events) if as_lines else events
    transcript = turnfold.load(given, format="adk")
    assert warning_count(transcript.warnings) == MANY
    unlisted = transcript.warnings[-1]
    assert isinstance(unlisted, UnlistedWarnings)
    assert (unlisted.line, unlisted.count) == (2, MANY - MAX_LISTED_WARNINGS)
    assert _counts(transcript) == {"user": {"mapped": 1}, "function_response": {"warned": 1}}


# --- 4. Claude Code's queued command whose own time is no time -----------------------------------


def test_L4_a_queued_command_time_that_is_no_time_is_said_shown_at_its_lines_time(
    tmp_path: Path,
) -> None:
    """The queued_command attachment's own time made unreadable: its prompt is shown at its
    line's time, and the notice says so (old code said "shown without a time"). With its
    line's time unreadable too, or its line without one, it is shown without a time, and said
    so with the lines' own."""
    records = _records(QUEUED)
    at = next(
        n for n, r in enumerate(records)
        if r["type"] == "attachment" and r["attachment"]["type"] == "queued_command"
    )  # fmt: skip
    records[at]["attachment"]["timestamp"] = "soon"

    def queued(transcript: Transcript) -> list[tuple[str, str | None]]:
        shown = [e for e in transcript if isinstance(e, UserMessage) and e.meta.get("queued")]
        return [(e.text, e.timestamp) for e in shown]

    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    transcript = turnfold.load(path)
    assert _said(transcript) == [
        (at + 1, "1 queued command(s) have no readable time of their own; shown at their "
                 "line's time"),
    ]  # fmt: skip
    assert queued(transcript) == [("also run the linter", records[at]["timestamp"])]
    untimed = (at + 1, "1 line(s) have no readable timestamp; shown without a time")
    for line_time in ("later", None):
        if line_time is None:
            del records[at]["timestamp"]
        else:
            records[at]["timestamp"] = line_time
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        transcript = turnfold.load(path)
        assert _said(transcript) == [untimed]
        assert queued(transcript) == [("also run the linter", None)]


# --- 5. the notice that a LangGraph stream holds no review's edits -------------------------------


def test_A2_the_notice_of_review_edits_not_streamed_names_the_tasks_mode() -> None:
    """A resumed ``messages`` stream of a reviewed agent says it holds none of the review's
    edits and which modes do: ``tasks`` among them (in both languages), as a resumed
    ``tasks`` stream shows the edited call as it ran, with no such notice. Old code named
    only ``updates``, ``values`` and ``debug``."""
    pytest.importorskip("langchain")
    from langchain_core.load import dumps as lc_dumps

    from tests.formats.test_langgraph_leftovers import _resumed
    from turnfold.model import SystemNotice
    from turnfold.render.text import render_text
    from turnfold.render.viewmodel import build_view_model
    from turnfold.settings import DisplaySettings

    def notices(transcript: Transcript) -> list[str]:
        return [e.text for e in transcript.entries if isinstance(e, SystemNotice)]

    _, stream = _resumed("messages", "tallies-messages")
    transcript = turnfold.load(lc_dumps(list(stream)))
    (said,) = notices(transcript)
    assert '(only the "updates", "values", "tasks" and "debug" modes do)' in said
    zh = render_text(build_view_model(transcript, DisplaySettings(locale="zh")))
    zh = "".join(zh.split())  # the text renderer wraps the notice, at a space or none
    assert '（只有"updates"、"values"、"tasks"和"debug"模式含有）' in zh

    _, stream = _resumed("tasks", "tallies-tasks")
    tasks = turnfold.load(lc_dumps(list(stream)))
    assert [(c.call_id, c.args, c.status) for c in tasks.tool_calls()] == [
        ("r1", {"path": "/b"}, "success"), ("r2", {"path": "/c"}, "cancelled")]  # fmt: skip
    assert not any("holds none of its edits" in text for text in notices(tasks))
    assert tasks.warnings == []
