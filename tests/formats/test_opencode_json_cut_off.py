"""``opencode run --format json`` cut off before its run's end reads by the rule every agent's
headless stream shares (``common.stream_cut_off``; spec L-4, H-6, P-7): warned of once, the run
``incomplete``, its turn stopped, everything the stream holds still shown; never while its
events are fed one at a time, as a follower feeds them.

OpenCode 1.18.33 writes no record of its own at a run's end: the run ends with a step whose
``step_finish`` reason is neither ``tool-calls`` nor ``unknown`` (its loop goes on after those),
or with an ``error``. The streams are the real ones of ``tests/fixtures/opencode/`` (OpenCode
1.18.33 in the offline ``tests/agents`` harness), cut here in a temporary folder; the
interrupt scenario's stream is one SIGINT really cut (the step's start alone).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import turnfold
from turnfold.formats.agents.opencode_json import _Reader
from turnfold.formats.common import UNFINISHED
from turnfold.formats.source import open_source
from turnfold.model import AbortMarker, AssistantText, Transcript
from turnfold.process import Turn, project

HERE = Path(__file__).parents[1] / "fixtures" / "opencode"
WORK, INTERRUPT = HERE / "work", HERE / "interrupt"


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _cut(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "stdout.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _cut_off(line: int) -> str:
    return (
        f"the stream ends inside the run begun on line {line} (no closing step_finish, error "
        "or done): how that run ended is not recorded"
    )


def _statuses(transcript: Transcript) -> list[str]:
    return [item.header.status for item in project(transcript) if isinstance(item, Turn)]


def _types(path: Path) -> list[tuple[str, str | None]]:
    return [(e["type"], (e.get("part") or {}).get("reason")) for e in map(json.loads, _lines(path))]


def test_L4_P7_a_run_cut_off_between_two_steps_keeps_its_calls_and_reads_stopped(
    tmp_path: Path,
) -> None:
    lines = _lines(WORK / "stdout-0.jsonl")
    # Up to the second step's end: its step_finish says the loop goes on ("tool-calls").
    cut = lines[:8]
    assert [json.loads(line)["type"] for line in cut][-2:] == ["tool_use", "step_finish"]
    transcript = turnfold.load(_cut(tmp_path, cut))
    # In the order the session made them (their parts' ids), as the whole stream reads them.
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [
        ("read", "success"), ("grep", "success"), ("glob", "success"), ("bash", "success"),
    ]  # fmt: skip
    assert [w.reason for w in transcript.warnings] == [_cut_off(1)]
    assert transcript.metadata["outcome"] == "incomplete"
    last = transcript.entries[-1]
    assert isinstance(last, AbortMarker)
    assert last.reason == UNFINISHED
    assert _statuses(transcript) == ["stopped"]


def test_L4_P7_a_run_cut_off_inside_its_last_step_keeps_the_text_so_far(tmp_path: Path) -> None:
    lines = _lines(WORK / "stdout-1.jsonl")
    cut = lines[:-1]  # the last step's text, not its step_finish ("stop")
    transcript = turnfold.load(_cut(tmp_path, cut))
    texts = [e.text for e in transcript if isinstance(e, AssistantText)]
    assert texts == ["TF-DONE-2: still fine after the resume."]
    assert [w.reason for w in transcript.warnings] == [_cut_off(1)]
    assert isinstance(transcript.entries[-1], AbortMarker)


def test_L4_P7_a_run_sigint_killed_mid_call_is_a_stopped_run_not_nothing() -> None:
    assert _types(INTERRUPT / "stdout-0.jsonl") == [("step_start", None)]
    transcript = turnfold.load(INTERRUPT / "stdout-0.jsonl")
    assert [w.reason for w in transcript.warnings] == [_cut_off(1)]
    assert _statuses(transcript) == ["stopped"]


@pytest.mark.parametrize("name", ["stdout-0.jsonl", "stdout-1.jsonl"])
def test_L4_a_whole_run_s_stream_is_not_warned_of(name: str) -> None:
    assert _types(WORK / name)[-1] == ("step_finish", "stop")
    transcript = turnfold.load(WORK / name)
    assert transcript.warnings == []
    assert "outcome" not in transcript.metadata
    assert not any(isinstance(e, AbortMarker) for e in transcript)


def test_L4_a_run_ended_by_its_error_or_its_done_record_is_not_cut_off(tmp_path: Path) -> None:
    """A run that failed ends with its ``error`` (the session's error, printed before the
    session goes idle); OpenCode's source after 1.18.33 ends every run that went idle with
    ``{"type": "done", "reason": "idle", "rejected": [...]}`` (``src/cli/cmd/run.ts``).
    Appended by hand to the real stream cut between two steps (no run here wrote them)."""
    lines = _lines(WORK / "stdout-0.jsonl")[:8]
    head = json.loads(lines[0])
    stamp, session = head["timestamp"] + 9000, head["sessionID"]
    failed = {"type": "error", "timestamp": stamp, "sessionID": session,
              "error": {"name": "APIError", "data": {"message": "Bad Gateway"}}}  # fmt: skip
    done = {"type": "done", "timestamp": stamp, "sessionID": session, "reason": "idle",
            "rejected": ["external_directory"]}  # fmt: skip
    ended_by_error = turnfold.load(_cut(tmp_path, [*lines, json.dumps(failed)]))
    assert ended_by_error.warnings == []
    assert _statuses(ended_by_error) == ["failed"]
    ended_by_done = turnfold.load(_cut(tmp_path, [*lines, json.dumps(done)]))
    assert ended_by_done.warnings == []  # read, not "not an OpenCode run event"
    assert ended_by_done.metadata["rejected_permissions"] == ["external_directory"]
    assert ended_by_done.accounting is not None
    assert ended_by_done.accounting.counts["done"] == {"mapped": 1}
    assert not any(isinstance(e, AbortMarker) for e in ended_by_done)


@pytest.mark.parametrize("path", [INTERRUPT / "stdout-0.jsonl", WORK / "stdout-0.jsonl"])
def test_A2_a_stream_read_event_by_event_is_not_warned_of_as_it_goes(path: Path) -> None:
    """Every event but the last leaves the run without its end: fed one event at a time, as a
    follower feeds them, no event is warned of as cut off; only the whole stream is judged."""
    source, _ = open_source(path)
    reader = _Reader(source)
    for line, record in source.records():
        reader.event(record, line)
        assert source.warnings == []
    assert reader.open_run is None or path.parent == INTERRUPT
