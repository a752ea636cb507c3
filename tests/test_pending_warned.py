"""Issue 11 (spec X-2, L-4): a warning on the record being read counts that record once, and
the source keeps that rule (``Source.warn``), not each reader.

A warning on the current record's line, before the loader said what it did with it, leaves the
record *pending warned*: what the loader then notes of it counts it (once, as the loader said);
a record the loader only warned about is counted warned under its generic type when the loader
asks for the next record, when the records end, or when it stops reading them. A warning that
names a ``record_type`` counts a record of that type warned at once. Before, the first warning
counted the record warned at once, and a loader that then mapped it counted it twice: readers
held their warnings back in a list of their own to say them after the record was counted.

The real readers are loaded from copies of committed fixtures the real tools wrote (see
tests/fixtures/SOURCES.md), changed with ``json`` as each test says.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import turnfold
from tests.changed_copies import lines_copy
from turnfold.formats.source import MAX_LISTED_WARNINGS, Source, UnlistedWarnings
from turnfold.model import LoadWarning

FIXTURES = Path(__file__).parent / "fixtures"
QWEN = FIXTURES / "qwen" / "qwen-code_v0.24.4_interrupted-command.jsonl"
KIMI_SESSION = FIXTURES / "kimi" / "work" / "session_60f3c294-da52-4c40-857c-c0696d973df5"
MINI_SWE_AGENT = (
    FIXTURES / "harnesses" / "mini-swe-agent"
    / "mini-swe-agent_v2.4.6_textbased_submitted.traj.json"
)  # fmt: skip
NO_TIME = "its timestamp 'soon' is no time; left out"


def _source(*types: str) -> Source:
    """A source of one record of each type, on lines 1, 2, …"""
    return Source("s.jsonl", iter([(line, {"type": t}) for line, t in enumerate(types, 1)]))


def _said(source: Source | turnfold.Transcript) -> list[tuple[int | None, str]]:
    return [(w.line, w.reason) for w in source.warnings]


# --- the rule, on a source --------------------------------------------------------------------


def test_X2_a_record_warned_about_then_mapped_counts_once_mapped() -> None:
    source = _source("user", "assistant")
    for line, value in source.records():
        source.warn(NO_TIME, line)  # found while converting it
        source.mapped(f"message/{value['type']}")
    assert source.accounting.counts == {
        "message/user": {"mapped": 1},
        "message/assistant": {"mapped": 1},
    }
    assert _said(source) == [(1, NO_TIME), (2, NO_TIME)]
    assert source.accounting.unaccounted == []


def test_X2_a_record_only_warned_about_counts_warned_once_the_next_record_is_read() -> None:
    source = _source("user", "assistant")
    records = source.records()
    line, _ = next(records)
    source.warn("a record this reader skips", line)
    source.warn("and a second thing wrong with it", line)
    assert next(records)[0] == 2
    assert source.accounting.counts == {"user": {"warned": 1}}
    source.mapped("assistant")
    assert next(records, None) is None
    assert source.accounting.counts == {"user": {"warned": 1}, "assistant": {"mapped": 1}}
    assert source.accounting.unaccounted == []


def test_X2_the_last_record_only_warned_about_counts_warned_when_the_records_end() -> None:
    source = _source("user", "assistant")
    for line, value in source.records():
        if value["type"] == "user":
            source.mapped("user")
        else:
            source.warn("a record this reader skips", line)
    assert source.accounting.counts == {"user": {"mapped": 1}, "assistant": {"warned": 1}}


def test_X2_a_record_warned_about_where_the_loader_stops_reading_counts_warned() -> None:
    source = _source("user", "assistant", "user")
    for line, _ in source.records():
        source.warn("the rest of the file is not read", line)
        break
    assert source.accounting.counts == {"user": {"warned": 1}}
    # Said again of the same line after the loop: the record is counted already.
    source.warn("still the same record", 1)
    assert source.accounting.counts == {"user": {"warned": 1}}


def test_X2_a_warning_naming_a_record_type_counts_it_warned_at_once() -> None:
    source = _source("request", "request")
    records = source.records()
    line, _ = next(records)
    source.warn("span without a traceId skipped", line, record_type="span")
    assert source.accounting.counts == {"span": {"warned": 1}}
    line, _ = next(records)
    # A warning of the line first, then one that names what the record is: counted once, as
    # the record type named, not also under the line's generic type.
    source.warn(NO_TIME, line)
    source.warn("span without a traceId skipped", line, record_type="span")
    assert next(records, None) is None
    assert source.accounting.counts == {"span": {"warned": 2}}


def test_X1_a_record_warned_about_past_the_listed_warnings_then_mapped_counts_once() -> None:
    """Past :data:`MAX_LISTED_WARNINGS` a warning is only counted (``counted_unlisted``): the
    record it is of is pending warned all the same."""
    count = MAX_LISTED_WARNINGS + 5
    source = _source(*["user"] * count)
    for line, _ in source.records():
        source.warn(NO_TIME, line)
        source.mapped("message/user")
    assert source.accounting.counts == {"message/user": {"mapped": count}}
    assert type(source.warnings[-1]) is UnlistedWarnings
    assert source.warnings[-1].count == 5


def test_X2_a_builder_s_warnings_taken_on_the_line_then_the_record_mapped_count_once() -> None:
    """``take_warnings`` without a record type: a builder's warnings of the record (listed, or
    only their count) moved to the source before the loader notes the record."""
    source = _source("message", "message")
    for line, _ in source.records():
        said: list[LoadWarning] = (
            [UnlistedWarnings(reason="", line=line, count=3)]
            if line == 1
            else [LoadWarning(reason="a block of no known type", line=line)]
        )
        source.take_warnings(said, line)
        source.mapped("message")
    assert source.accounting.counts == {"message": {"mapped": 2}}


# --- real readers -----------------------------------------------------------------------------


def test_X2_qwen_a_record_whose_time_is_no_time_counts_once_mapped(tmp_path: Path) -> None:
    """Qwen Code said such a time after counting the record, in a list of its own; now where
    it finds it, and the record still counts once."""
    uuid = json.loads(QWEN.read_text(encoding="utf-8").splitlines()[0])["uuid"]

    def change(records: list[Any]) -> None:
        assert records[0]["type"] == "user"
        records[0]["timestamp"] = "soon"

    whole, transcript = turnfold.load(QWEN), turnfold.load(lines_copy(QWEN, tmp_path, change))
    assert _said(transcript) == [(1, f"record {uuid}: {NO_TIME}")]
    assert transcript.accounting is not None
    assert whole.accounting is not None
    assert transcript.accounting.counts == whole.accounting.counts
    assert "warned" not in transcript.accounting.counts["user"]


def test_X2_kimi_a_sub_agent_without_its_journal_counts_once_mapped(tmp_path: Path) -> None:
    """Kimi Code said on the ``subagent.spawned`` record's line that the sub-agent's journal
    is not there, then mapped the record (its call gets the sub-agent, steps missing): it was
    counted warned and mapped, twice."""
    folder = tmp_path / KIMI_SESSION.name
    shutil.copytree(KIMI_SESSION, folder)
    shutil.rmtree(folder / "agents" / "agent-0")
    main = folder / "agents" / "main" / "wire.jsonl"
    lines = main.read_text(encoding="utf-8").splitlines()
    spawned = [n for n, text in enumerate(lines, 1) if '"type":"subagent.spawned"' in text]
    assert len(spawned) == 1

    transcript = turnfold.load(main)
    assert _said(transcript) == [
        (spawned[0], "sub-agent 'agent-0': no journal wire.jsonl beside this one")
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["subagent.spawned"] == {"mapped": 1}
    (call,) = [c for c in transcript.tool_calls() if c.subagent is not None]
    assert call.subagent is not None
    assert call.subagent.steps_missing


def test_X2_mini_swe_agent_lines_a_message_whose_time_is_no_time_counts_once_warned(
    tmp_path: Path,
) -> None:
    """A trajectory's messages as JSON lines (as data sets publish them), one assistant
    message's ``extra.timestamp`` a word: the reader counts a message it warned of warned, and
    said the warning on its line first, so the message was counted warned twice."""
    messages = json.loads(MINI_SWE_AGENT.read_text(encoding="utf-8"))["messages"]
    assert messages[2]["role"] == "assistant"
    path = tmp_path / "messages.jsonl"

    def write(changed: bool) -> turnfold.Transcript:
        if changed:
            messages[2]["extra"]["timestamp"] = "soon"
        path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
        return turnfold.load(path, format="mini-swe-agent")

    whole, transcript = write(False), write(True)
    assert [(w.line, "'soon'" in w.reason) for w in transcript.warnings] == [(3, True)]
    assert whole.accounting is not None
    assert transcript.accounting is not None
    before, after = whole.accounting.counts, transcript.accounting.counts
    assert "warned" not in before["assistant"]
    assert after["assistant"] == {
        "mapped": before["assistant"]["mapped"] - 1,
        "warned": 1,
    }
    assert {k: v for k, v in after.items() if k != "assistant"} == {
        k: v for k, v in before.items() if k != "assistant"
    }
