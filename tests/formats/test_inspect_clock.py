"""The Inspect reader after the computer's clock changed mid-sample (spec H-1, P-7, U-4, C-3).

Inspect stamps each event by the wall clock and by its own sample clock (``working_start``),
which a change of the computer's clock leaves alone: where the two disagree, the reader warns,
names each change, and puts the stamps after it back on the clock the sample started on for
the timeline (``meta["clock_shift_s"]``). A clock set back is found as a clock set forward
is; a real wait, however long, stays a wait; and the attempts retried before the sample's own
are looked at each on its own clock. A turn's duration is read from its stamps put back on the
first clock, so its header, its timeline label and its ``corpus.turns()`` row agree, and no
duration holds a jump.

On ``inspect-clock/clock_mockllm.eval``, which the real ``inspect_ai`` 0.3.285 wrote with
the wall clock it reads changed mid-run (``clock_recipe.py``): two turns per sample, the clock
never changed (``steady``), set 43 hours forward between the turns (``forward``), 30 seconds
back between them (``back``), 43 hours forward while the first turn's call ran (``in_call``),
43 hours forward between the turns with a real 75-second wait in the second (``waited``), or
30 seconds back inside a first attempt that failed and was retried (``retried``); and on
copies of the ``steady`` sample edited here.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cache
from typing import Any

import pytest
from inspect_ai.event import ModelEvent, SampleInitEvent, ToolEvent
from inspect_ai.log import EvalSample, read_eval_log_sample

import turnfold
from tests.inspect_samples import HARNESSES
from turnfold.corpus import Corpus, scan
from turnfold.model import Transcript
from turnfold.process import Turn, plan_projection, project
from turnfold.render.viewmodel import build_view_model
from turnfold.timeline import GAP_SHOWN_S
from turnfold.tools import format_duration

CLOCK = HARNESSES / "inspect-clock" / "clock_mockllm.eval"
CHANGED = {
    "forward": "43h forward",
    "back": "30s back",
    "in_call": "43h forward",
    "waited": "43h forward",
}
#: How far the recipe set the clock forward (``clock_recipe.FORWARD``), and how long the
#: ``waited`` sample's second call waited (``clock_recipe.WAIT``).
FORWARD_S, WAIT_S = 43 * 3600.0, 75.0


@cache
def _corpus() -> Corpus:
    return scan(CLOCK, workers=1, cache=False)


def _record(sample: str) -> EvalSample:
    return read_eval_log_sample(str(CLOCK), id=sample, epoch=1)


def _turns(transcript: Transcript) -> list[Turn]:
    return [item for item in project(transcript) if isinstance(item, Turn)]


def _timeline(transcript: Transcript) -> dict[str, Any]:
    node = build_view_model(transcript)["timeline"]
    assert node is not None
    return dict(node)


def _turn_rows(sample: str) -> list[dict[str, Any]]:
    [row] = [r for r in _corpus() if r["sample"] == f"{sample}/1"]
    return [t for t in _corpus().turns().to_pylist() if t["key"] == row["key"]]


# --- what is found ------------------------------------------------------------------------------


def test_H1_a_clock_left_alone_is_no_change() -> None:
    transcript = turnfold.load(CLOCK, sample="steady", epoch=1)
    assert transcript.warnings == []
    assert not any("clock_shift_s" in e.meta or "clock_changed" in e.meta for e in transcript)


@pytest.mark.parametrize("sample", sorted(CHANGED))
def test_H1_each_change_of_the_clock_is_warned_of_and_named(sample: str) -> None:
    """One warning, naming how far and which way the clock was set; the ``back`` sample's
    30 seconds are less than its span and Inspect's timing can tell apart (a minute): the
    order of its stamps by Inspect's own clock tells it."""
    transcript = turnfold.load(CLOCK, sample=sample, epoch=1)
    [warning] = transcript.warnings
    assert f"it was set {CHANGED[sample]}" in warning.reason
    assert ", then" not in warning.reason  # one change, the one the recipe made
    assert warning.source == str(CLOCK)
    record = _record(sample)
    assert transcript.metadata["duration_s"] == record.total_time  # Inspect's, as before


def test_H1_the_stamps_after_a_change_are_put_back_on_the_first_clock() -> None:
    """Each stamp of the second turn carries the seconds that undo the change, 43 hours back
    to within the few microseconds the two clocks are read apart; the first turn's none."""
    transcript = turnfold.load(CLOCK, sample="forward", epoch=1)
    first, second = [item.segment for item in plan_projection(transcript) if item.segment]
    assert not any("clock_shift_s" in e.meta for e in [first.user, *first.entries] if e)
    shifts = [e.meta["clock_shift_s"] for e in [second.user, *second.entries] if e]
    assert len(shifts) == 1 + len(second.entries)
    assert {name for said in shifts for name in said} == {"timestamp", "started_at", "ended_at"}
    assert all(v == pytest.approx(-43 * 3600, abs=0.001) for s in shifts for v in s.values())


# --- durations, headers, timeline and corpus agree ----------------------------------------------


@pytest.mark.parametrize("sample", ["steady", *sorted(CHANGED)])
def test_P7_U4_C3_each_turn_s_duration_is_one_in_header_timeline_and_corpus(sample: str) -> None:
    """Each turn is measured by its stamps on the first clock, a few milliseconds here, not
    43 hours: the turn the clock changed in too. Its header, its timeline label and its corpus
    row say the same."""
    transcript = turnfold.load(CLOCK, sample=sample, epoch=1)
    durations = [turn.header.duration_ms for turn in _turns(transcript)]
    measured = [d for d in durations if d is not None]
    assert len(measured) == 2
    # The first turn of ``steady`` waited seconds on its first call; ``waited``'s second, 75.
    quick = {"steady": [1], "waited": [0]}.get(sample, [0, 1])
    assert all(measured[i] < 1000 for i in quick)
    node = _timeline(transcript)
    for turn, duration in zip(node["turns"], durations, strict=True):
        said = format_duration(duration, hide_trailing_zeros=True) if duration else None
        assert turn["label"].split(" · ")[1:-1] == ([said] if said else [])
    rows = _turn_rows(sample)
    assert [r["duration_s"] for r in rows] == [d / 1000 if d else None for d in durations]
    for turn in _turns(transcript):  # no duration, and the reason, on the turn that held it
        assert (turn.header.duration_note is not None) == (turn.header.duration_ms is None)


@pytest.mark.parametrize("sample", ["forward", "back"])
def test_U4_a_change_between_turns_is_a_break_between_them(sample: str) -> None:
    """The second turn comes after the first (43 hours after it, or 30 seconds before it, by
    the wall clock), a break labelled as the clock's change between them, no idle time."""
    node = _timeline(turnfold.load(CLOCK, sample=sample, epoch=1))
    first, second = node["turns"]
    assert first["gaps"] == []
    assert second["gaps"] == [
        {"x": first["w"], "w": GAP_SHOWN_S, "label": "clock changed", "clock": True}
    ]
    assert second["x"] == pytest.approx(first["x"] + first["w"] + GAP_SHOWN_S, abs=0.001)
    assert second["w"] < 1  # its own moments, milliseconds apart
    assert "·" not in node["sparkline"]
    assert "¦" in node["sparkline"]


def test_U4_C3_a_call_the_clock_changed_during_lasts_what_it_ran() -> None:
    """``in_call``'s first call began on the old clock and ended on the new: its duration (its
    bar, its row of ``corpus.tool_calls()``) is what it ran by Inspect's clock, milliseconds,
    and the break is drawn after it."""
    transcript = turnfold.load(CLOCK, sample="in_call", epoch=1)
    record = _record("in_call")
    event = next(e for e in record.events if isinstance(e, ToolEvent))
    assert event.completed is not None
    assert event.working_time is not None
    assert (event.completed - event.timestamp).total_seconds() > 43 * 3600  # by the wall clock
    call = next(c for c in transcript.tool_calls())
    assert call.recorded_duration_ms == pytest.approx(event.working_time * 1000, abs=5)
    [row] = [r for r in _corpus().tool_calls().to_pylist()
             if r["call_id"] == call.call_id and r["key"].endswith("in_call/1")]  # fmt: skip
    assert row["duration_ms"] == pytest.approx(call.recorded_duration_ms)
    node = _timeline(transcript)
    first = node["turns"][0]
    [bar] = first["bars"]
    assert bar["w"] == pytest.approx(call.recorded_duration_ms / 1000, abs=0.001)
    [gap] = first["gaps"]
    assert gap["label"] == "clock changed"
    assert gap["x"] == pytest.approx(bar["x"] + bar["w"], abs=0.001)


# --- copies edited here: a clock set back before the run, and a log without working times ------


#: A change edited into a copy of the ``steady`` sample: from the start of its ``nth`` span
#: named ``since`` on, its stamps run ``seconds`` later (earlier, negative); a ``wait`` (real
#: time passing, which Inspect's monotonic clock runs through too, but not its working time)
#: or a jump of the wall clock (which nothing else sees).
_Move = tuple[str, int, float, bool]


def _edited(moves: list[_Move], *, working: bool = True) -> dict[str, Any]:
    """The ``steady`` sample's record as the ``moves`` would have stamped it: each event's
    ``timestamp`` and ``completed`` from each move's moment on (its setup's left alone), and
    ``completed_at``; each wait's seconds added to ``total_time``, which Inspect reads from
    the monotonic clock; its ``working_start``s dropped where not ``working`` (a log before
    Inspect kept them)."""
    record = _record("steady").model_dump(mode="json")
    events = record["events"]
    marks = []
    for since, nth, seconds, wait in moves:
        begins = [e for e in events if e["event"] == "span_begin" and e.get("name") == since]
        marks.append((datetime.fromisoformat(begins[nth - 1]["timestamp"]), seconds))
        if wait:
            record["total_time"] += seconds

    def moved(stamp: str) -> str:
        moment = datetime.fromisoformat(stamp)
        return (moment + timedelta(seconds=sum(s for at, s in marks if moment >= at))).isoformat()

    for event in events:
        for name in ("timestamp", "completed"):
            if event.get(name):
                event[name] = moved(event[name])
        if not working:
            event.pop("working_start", None)
    record["completed_at"] = moved(record["completed_at"])
    return record


def _steady(shift_s: float, since: str, *, working: bool = True, nth: int = 1) -> dict[str, Any]:
    """The ``steady`` sample's record, as a clock set ``shift_s`` seconds off at the start of
    its ``nth`` span named ``since`` would have stamped it (:func:`_edited`)."""
    return _edited([(since, nth, shift_s, False)], working=working)


def test_H1_events_stamped_before_the_sample_started_are_a_clock_set_back() -> None:
    """Every event of the run stamped 30 seconds before ``started_at`` (the clock set back as
    the sample's clock started): found, though the sample's span and Inspect's timing are
    within the minute that tells a forward change. Each bar lasts what its call ran."""
    transcript = turnfold.load(_steady(-30, "solvers"))
    [warning] = transcript.warnings
    assert "it was set 30s back. " in warning.reason
    calls = transcript.tool_calls()
    assert all(c.meta["clock_shift_s"]["started_at"] == pytest.approx(30) for c in calls)
    node = _timeline(transcript)
    assert [b["w"] for t in node["turns"] for b in t["bars"]] == [
        round(c.recorded_duration_ms / 1000, 3) for c in calls if c.recorded_duration_ms
    ]
    assert "idle" not in " ".join(g["label"] for t in node["turns"] for g in t["gaps"])


def test_H1_without_working_times_a_stamp_earlier_than_the_one_before_is_a_clock_set_back() -> None:
    """A log that records no ``working_start`` (before Inspect kept one): an event stamped 30
    seconds before the one before it is found by the wall clock alone."""
    transcript = turnfold.load(_steady(-30, "second_turn", working=False))
    [warning] = transcript.warnings
    # Its 7-second call's event, logged after the events of the call's span, is no change.
    assert "it was set 30s back. " in warning.reason
    first, second = _timeline(transcript)["turns"]
    assert second["x"] > first["x"] + first["w"]  # after it, not half a minute before it
    assert [g["label"] for g in second["gaps"]] == ["clock changed"]


def test_H1_without_working_times_a_clock_set_back_at_the_last_event_is_found() -> None:
    """By the wall clock alone, an event behind the one before it is a clock set back only if
    what was stamped after it is behind too: after the last event, that is the sample's
    ``completed_at``. The last event (the scorers' span's end) and ``completed_at`` 30 seconds
    back: found, and named."""
    record = _steady(0, "solvers", working=False)
    last = record["events"][-1]
    for stamped, name in ((last, "timestamp"), (record, "completed_at")):
        stamped[name] = (datetime.fromisoformat(stamped[name]) - timedelta(seconds=30)).isoformat()
    transcript = turnfold.load(record)
    [warning] = transcript.warnings
    assert "it was set 30s back. " in warning.reason
    # No entry was stamped after it: every turn is measured as before.
    assert all(turn.header.duration_ms for turn in _turns(transcript))


def test_P7_without_working_times_the_turn_the_clock_changed_in_has_no_duration_and_says_why() -> (
    None
):
    """The clock set 30 seconds back as the second turn's call began, in a log with no
    ``working_start``: the step that held the change was measured by nothing (how long it
    really took is unknown), so that turn shows no duration, and says why; the first, on one
    clock, is measured."""
    transcript = turnfold.load(_steady(-30, "lookup", working=False, nth=2))
    [warning] = transcript.warnings
    assert "it was set 30s back. " in warning.reason
    first, second = _turns(transcript)
    assert first.header.duration_ms is not None
    assert second.header.duration_ms is None
    assert second.header.duration_note is not None
    assert "clock changed" in second.header.duration_note


# --- a real wait is a wait (the clock set forward in the same sample) ----------------------------


def test_H1_U4_a_real_wait_in_a_sample_whose_clock_jumped_stays_a_wait() -> None:
    """``waited``: the clock set 43 hours forward between the turns, and the second turn's call
    waited 75 seconds for an operator (Inspect's known wait: it is out of the working time, in
    ``total_time``). One change is named and drawn; the wait is none: the call's bar lasts the
    75 seconds it took, and so does its turn."""
    transcript = turnfold.load(CLOCK, sample="waited", epoch=1)
    [warning] = transcript.warnings
    assert "it was set 43h forward" in warning.reason
    assert ", then" not in warning.reason
    record = _record("waited")
    waited = [e for e in record.events if isinstance(e, ToolEvent)][1]
    assert waited.completed is not None
    lasted = (waited.completed - waited.timestamp).total_seconds()
    assert lasted > WAIT_S
    call = transcript.tool_calls()[1]
    shifts = call.meta["clock_shift_s"]
    assert shifts["started_at"] == shifts["ended_at"]  # one clock: the wait moved nothing
    node = _timeline(transcript)
    second = node["turns"][1]
    assert [g["label"] for t in node["turns"] for g in t["gaps"]] == ["clock changed"]
    assert [g["clock"] for g in second["gaps"]] == [True]
    [bar] = second["bars"]
    assert bar["w"] == pytest.approx(lasted, abs=0.001)
    durations = [turn.header.duration_ms for turn in _turns(transcript)]
    assert durations[1] is not None
    assert durations[1] / 1000 == pytest.approx(lasted, abs=1)


def test_H1_a_jump_is_told_from_a_longer_wait_by_how_far_the_clock_was_set_in_all() -> None:
    """A copy of ``steady`` that waited 20 minutes between its turns, and whose clock was set
    10 minutes forward as its second call began: its span runs 10 minutes past Inspect's
    timing, which the jump makes up and the longer wait does not. The wait is idle time before
    the second turn, the jump a break inside it."""
    transcript = turnfold.load(
        _edited([("second_turn", 1, 1200.0, True), ("lookup", 2, 600.0, False)])
    )
    [warning] = transcript.warnings
    assert "it was set 10m forward" in warning.reason
    assert ", then" not in warning.reason
    second = _timeline(transcript)["turns"][1]
    assert [(g["label"], g["clock"]) for g in second["gaps"]] == [
        ("20m idle", False),
        ("clock changed", True),
    ]


# --- attempts retried before the sample's own ---------------------------------------------------


def test_H1_U4_a_change_inside_a_retried_attempt_is_found_on_that_attempt_s_clock() -> None:
    """``retried``: its first attempt's call set the clock 30 seconds back, then failed; the
    attempt that followed ran on the changed clock. The change is warned of, naming the
    attempt; the failed call's bar lasts what it ran, the break is drawn after it, once: the
    sample's own attempt carries on from the clock the retried one left, so its turns follow
    it with no other break, and every turn is measured."""
    transcript = turnfold.load(CLOCK, sample="retried", epoch=1)
    [warning] = transcript.warnings
    assert "attempt 1 of the sample" in warning.reason
    assert "it was set 30s back. " in warning.reason
    record = _record("retried")
    assert record.error_retries is not None
    [retry] = record.error_retries
    failed = next(e for e in retry.events or [] if isinstance(e, ToolEvent))
    assert failed.completed is not None
    assert failed.working_time is not None
    assert (failed.completed - failed.timestamp).total_seconds() < -29  # by the wall clock
    call = transcript.tool_calls()[0]
    assert call.recorded_duration_ms == pytest.approx(failed.working_time * 1000, abs=5)
    # Every stamp after the change, the sample's own attempt's too, is put back 30 seconds on.
    later = [e for e in transcript.entries[transcript.entries.index(call) + 1 :] if e.timestamp]
    assert later
    assert all(e.meta["clock_shift_s"]["timestamp"] == pytest.approx(30) for e in later)
    node = _timeline(transcript)
    assert [g["label"] for t in node["turns"] for g in t["gaps"]] == ["clock changed"]
    tried, *ran = node["turns"]
    [bar] = tried["bars"]
    [gap] = tried["gaps"]
    assert gap["x"] == pytest.approx(bar["x"] + bar["w"], abs=0.002)  # each to the ms
    assert all(turn["x"] >= tried["x"] + tried["w"] for turn in ran)
    durations = [turn.header.duration_ms for turn in _turns(transcript)]
    assert len(durations) == 3
    assert all(d is not None and d < 1000 for d in durations)


# --- the turn the clock changed in --------------------------------------------------------------


def test_P7_the_turn_the_clock_changed_in_is_measured_on_the_working_clock() -> None:
    """``in_call``'s first turn, whose call the clock was set 43 hours forward during, lasts
    its real time: from its prompt (stamped as the sample was set up) to its answer, less the
    43 hours the recipe set, to a few milliseconds (the step that held the change counts the
    working time Inspect gave it)."""
    transcript = turnfold.load(CLOCK, sample="in_call", epoch=1)
    first = _turns(transcript)[0]
    record = _record("in_call")
    asked = next(e for e in record.events if isinstance(e, SampleInitEvent))
    answered = [e for e in record.events if isinstance(e, ModelEvent)][1]
    assert answered.completed is not None
    real = (answered.completed - asked.timestamp).total_seconds() - FORWARD_S
    assert first.header.duration_ms is not None
    assert first.header.duration_ms / 1000 == pytest.approx(real, abs=0.005)
    assert first.header.duration_note is None
