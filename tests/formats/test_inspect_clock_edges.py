"""The Inspect reader where a stamp out of its place and a change of the computer's clock meet
(spec H-1, P-7, U-4, C-3).

Inspect stamps a sandbox event as its command starts but times it (``working_start``) once the
command has ended, so such an event lies behind the events before it by as long as the command
ran: a stamp out of its place that no clock change made, which stays quiet, however many come
in a row. A clock set back right at the next event (a command's, or as the sample's clock
starts, after its setup) stays set: the stamps after it keep the new clock, and it is found,
once, by how far it was set. Where the run sat idle and the clock changed between the same two
turns, the timeline draws both.

On ``inspect-timing/edges_mockllm.eval``, which the real ``inspect_ai`` 0.3.285 wrote with the
wall clock it reads changed mid-run (``edges_recipe.py``): two turns per sample, each calling a
tool that runs two two-second commands in Inspect's ``local`` sandbox; the clock never changed
(``two_execs``), set 30 seconds back just before the first command (``back_at_exec``), one
second into it (``back_in_exec``), or as the sample's clock started (``back_at_start``), set
43 hours forward then (``forward_at_start``), or 43 hours forward during a 70-second idle
stretch between the turns (``idle_and_forward``); and on copies of ``two_execs`` edited here.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cache
from typing import Any

import pytest
from inspect_ai.event import ModelEvent, SampleInitEvent, SandboxEvent, SpanBeginEvent
from inspect_ai.log import EvalSample, read_eval_log_sample

import turnfold
from tests.inspect_samples import HARNESSES
from turnfold.corpus import Corpus, scan
from turnfold.model import Transcript
from turnfold.process import Turn, project
from turnfold.render.viewmodel import build_view_model
from turnfold.timeline import GAP_SHOWN_S
from turnfold.tools import format_duration

EDGES = HARNESSES / "inspect-timing" / "edges_mockllm.eval"
#: How far the recipe set the clock (``edges_recipe.BACK``, ``edges_recipe.FORWARD``), and how
#: long ``idle_and_forward`` sat idle between its turns (``edges_recipe.IDLE``).
BACK_S, FORWARD_S, IDLE_S = -30.0, 43 * 3600.0, 70.0
CHANGED = {
    "back_at_exec": "30s back",
    "back_in_exec": "30s back",
    "back_at_start": "30s back",
    "forward_at_start": "43h forward",
    "idle_and_forward": "43h forward",
}


@cache
def _corpus() -> Corpus:
    return scan(EDGES, workers=1, cache=False)


def _record(sample: str) -> EvalSample:
    return read_eval_log_sample(str(EDGES), id=sample, epoch=1)


def _turns(transcript: Transcript) -> list[Turn]:
    return [item for item in project(transcript) if isinstance(item, Turn)]


def _timeline(transcript: Transcript) -> dict[str, Any]:
    node = build_view_model(transcript)["timeline"]
    assert node is not None
    return dict(node)


def _run(record: EvalSample) -> list[Any]:
    """The events of the sample's own run (its setup left out), in the order Inspect's own
    clock of it (``working_start``) says they happened."""
    setup = {e.id for e in record.events if isinstance(e, SpanBeginEvent) and e.type == "init"}
    run = [e for e in record.events
           if not isinstance(e, SampleInitEvent) and e.span_id not in setup]  # fmt: skip
    return sorted(run, key=lambda e: e.working_start)


# --- a stamp out of its place, and no change ----------------------------------------------------


def test_H1_sandbox_commands_stamped_as_they_started_are_no_change() -> None:
    """``two_execs``: by its ``timestamp``, each command's event lies behind the event before
    the two commands (the call's span, on Inspect's clock) by about the two seconds its command
    ran: two stamps behind in a row, in each turn, as a clock set back would leave them. The
    clock never changed, and nothing says it did."""
    record = _record("two_execs")
    behind = []
    before = None
    for event in _run(record):
        if not isinstance(event, SandboxEvent):
            before = event
            continue
        assert before is not None
        wall = (event.timestamp - before.timestamp).total_seconds()
        behind.append(wall - (event.working_start - before.working_start))
    assert len(behind) == 4
    assert all(-2.5 < excess < -1.9 for excess in behind)
    transcript = turnfold.load(EDGES, sample="two_execs", epoch=1)
    assert transcript.warnings == []
    assert not any("clock_shift_s" in e.meta or "clock_changed" in e.meta for e in transcript)
    assert all(turn.header.duration_ms for turn in _turns(transcript))


# --- a clock set back right at the next event ---------------------------------------------------


@pytest.mark.parametrize("sample", sorted(CHANGED))
def test_H1_each_change_is_found_once_and_named_as_far_as_it_was_set(sample: str) -> None:
    """One warning, naming the one change the recipe made, as far as it set the clock: not
    the 32 seconds a command's start stamp beside it would add, nor a change split in two."""
    transcript = turnfold.load(EDGES, sample=sample, epoch=1)
    [warning] = transcript.warnings
    assert f"it was set {CHANGED[sample]}" in warning.reason
    assert ", then" not in warning.reason
    assert warning.source == str(EDGES)


def test_H1_a_command_stamped_first_on_a_clock_set_back_is_a_change_that_stays() -> None:
    """``back_at_exec``: the clock set 30 seconds back just before the first command: its event
    is the very next stamped, on the new clock, and every event after it stays there. Each
    stamp from the call's result on is put back 30 seconds on; the prompt and the call that ran
    the command, stamped before, are not."""
    record = _record("back_at_exec")
    run = _run(record)
    first = next(i for i, e in enumerate(run) if isinstance(e, SandboxEvent))
    before, after = run[first - 1], run[first:]
    assert (run[first].timestamp - before.timestamp).total_seconds() < -25
    assert all((e.timestamp - before.timestamp).total_seconds() < 0 for e in after[:3])
    transcript = turnfold.load(EDGES, sample="back_at_exec", epoch=1)
    prompt, *entries = [e for e in transcript.entries if e.timestamp]
    assert "clock_shift_s" not in prompt.meta
    shifted = [e for e in entries if "clock_shift_s" in e.meta]
    assert shifted
    assert all(s == pytest.approx(-BACK_S, abs=0.01)
               for e in shifted for s in e.meta["clock_shift_s"].values())  # fmt: skip


@pytest.mark.parametrize(("sample", "change"), [("back_at_start", BACK_S),
                                                ("forward_at_start", FORWARD_S)])  # fmt: skip
def test_P7_U4_C3_a_clock_set_as_the_sample_started_is_a_break_in_its_first_turn(
    sample: str, change: float
) -> None:
    """The clock set as Inspect started the sample's clock, after the setup stamped the
    prompt: the prompt stays on the first clock, every stamp after it is put back on it; the
    first turn lasts its real time (to the milliseconds between the setup's end and
    ``started_at``), not 30 seconds less or 43 hours more, in its header, its timeline label
    and its corpus row; its timeline draws the break after the prompt."""
    record = _record(sample)
    prompt = next(e for e in record.events if isinstance(e, SampleInitEvent))
    answer = [e for e in record.events if isinstance(e, ModelEvent)][1]
    assert answer.completed is not None
    real = (answer.completed - prompt.timestamp).total_seconds() - change
    transcript = turnfold.load(EDGES, sample=sample, epoch=1)
    first = _turns(transcript)[0]
    assert first.header.duration_ms is not None
    assert first.header.duration_ms / 1000 == pytest.approx(real, abs=0.05)
    assert first.header.duration_note is None
    user = transcript.entries[0]
    assert user.timestamp == prompt.timestamp.isoformat()
    assert "clock_shift_s" not in user.meta
    later = [e for e in transcript.entries[1:] if e.timestamp]
    assert all(e.meta["clock_shift_s"]["timestamp"] == pytest.approx(-change, abs=0.05)
               for e in later)  # fmt: skip
    turn = _timeline(transcript)["turns"][0]
    assert [g["label"] for g in turn["gaps"]] == ["clock changed"]
    said = format_duration(first.header.duration_ms, hide_trailing_zeros=True)
    assert turn["label"].split(" · ")[1] == said
    [row] = [r for r in _corpus() if r["sample"] == f"{sample}/1"]
    durations = [t["duration_s"] for t in _corpus().turns().to_pylist() if t["key"] == row["key"]]
    assert durations[0] == pytest.approx(first.header.duration_ms / 1000)


# --- idle time and a change between the same two turns ------------------------------------------


def test_U4_idle_time_and_a_change_between_two_turns_are_both_drawn() -> None:
    """``idle_and_forward`` sat 70 seconds between its turns, and the clock was set 43 hours
    forward meanwhile: the second turn comes after the idle gap, labelled as the time it
    really was, then the clock's break; the sparkline shows both."""
    record = _record("idle_and_forward")
    answered = [e for e in record.events if isinstance(e, ModelEvent)][1].completed
    [solver] = [e for e in record.events
                if isinstance(e, SpanBeginEvent) and e.name == "second_turn"]  # fmt: skip
    # The second prompt, added once the solver's wait is over (the jump in the middle of it).
    added = next(e for e in record.events if e.event == "state" and e.span_id == solver.id)
    assert answered is not None
    # From the first turn's answer to the second prompt, less the jump: real time.
    waited = (added.timestamp - answered).total_seconds() - FORWARD_S
    assert IDLE_S <= waited < IDLE_S + 1
    said = format_duration(waited * 1000, hide_trailing_zeros=True)
    transcript = turnfold.load(EDGES, sample="idle_and_forward", epoch=1)
    node = _timeline(transcript)
    first, second = node["turns"]
    assert first["gaps"] == []
    end = first["x"] + first["w"]
    idle, broken = second["gaps"]
    assert (idle["x"], idle["label"], idle["clock"]) == (pytest.approx(end, abs=0.001),
                                                         f"{said} idle", False)  # fmt: skip
    assert (broken["x"], broken["label"], broken["clock"]) == (
        pytest.approx(end + GAP_SHOWN_S, abs=0.001),
        "clock changed",
        True,
    )
    assert second["x"] == pytest.approx(end + 2 * GAP_SHOWN_S, abs=0.001)
    assert "·" in node["sparkline"]
    assert "¦" in node["sparkline"]
    # Each turn measured as it ran, a few seconds: neither holds the idle time or the jump.
    assert all(t.header.duration_ms and t.header.duration_ms < 10_000 for t in _turns(transcript))


# --- copies of ``two_execs`` edited here --------------------------------------------------------


def _two_execs() -> dict[str, Any]:
    return _record("two_execs").model_dump(mode="json")


def _moved(stamp: str, seconds: float) -> str:
    return (datetime.fromisoformat(stamp) + timedelta(seconds=seconds)).isoformat()


def test_H1_one_event_stamped_back_alone_is_a_stamp_out_of_its_place() -> None:
    """The first model event's ``timestamp`` 30 seconds earlier, every stamp after it as it
    was: no change of the clock, which would have stayed set."""
    record = _two_execs()
    model = next(e for e in record["events"] if e["event"] == "model")
    model["timestamp"] = _moved(model["timestamp"], BACK_S)
    assert turnfold.load(record).warnings == []


def test_H1_a_sandbox_event_that_records_no_end_is_read_by_neither_stamp() -> None:
    """A sandbox event without ``completed`` (its end): its start says nothing of the clock
    beside the working time Inspect gave it at its end, and nothing is found."""
    record = _two_execs()
    for event in record["events"]:
        if event["event"] == "sandbox":
            event["completed"] = None
    assert turnfold.load(record).warnings == []


def test_H1_completed_at_stamped_behind_the_last_event_is_a_clock_set_back() -> None:
    """``completed_at`` 30 seconds back, every event as it was: Inspect stamps it after every
    event, so the clock was set back before it. No entry was stamped after it: none is moved,
    and every turn is measured as before."""
    record = _two_execs()
    record["completed_at"] = _moved(record["completed_at"], BACK_S)
    transcript = turnfold.load(record)
    [warning] = transcript.warnings
    assert "it was set 30s back. " in warning.reason
    assert not any("clock_shift_s" in e.meta for e in transcript)
    assert all(turn.header.duration_ms for turn in _turns(transcript))


def test_H1_completed_at_behind_by_working_time_alone_is_no_change() -> None:
    """``working_time`` 30 seconds more than the events' working times reach (a log edited, or
    a figure of another kind), its stamps as Inspect wrote them: ``completed_at`` is not
    behind the last event by the wall clock, and nothing is found."""
    record = _two_execs()
    record["working_time"] += 30
    assert turnfold.load(record).warnings == []


@pytest.mark.parametrize("sample", ["back_at_start", "forward_at_start"])
def test_H1_without_working_times_a_change_as_the_sample_started_is_still_found(
    sample: str,
) -> None:
    """A log that records no ``working_start``: ``started_at`` is stamped right after the setup's
    span ends, nothing run between them, so the wall clock alone tells the change there."""
    record = _record(sample).model_dump(mode="json")
    for event in record["events"]:
        event.pop("working_start", None)
    [warning] = turnfold.load(record).warnings
    assert f"it was set {CHANGED[sample]}" in warning.reason
