"""The timeline of a session whose computer's clock changed while it was recorded (spec U-4).

A reader that found the change gave each stamp after it the seconds that put it back on the
clock the session started on (``meta["clock_shift_s"]``); the timeline places every moment so,
and draws each change where it happened as a break labelled as the clock's change, never as
idle time, and no bar as long as the jump. On the ``jumped`` sample the real ``inspect_ai``
0.3.285 wrote (``inspect-timing/timing_recipe.py``: the clock it reads set 43 hours forward
mid-run, as its one call began) and on a session built here whose clock went back and then
forward.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from inspect_ai.event import ToolEvent
from inspect_ai.log import read_eval_log_sample

import turnfold
from tests.inspect_samples import HARNESSES
from turnfold.model import AssistantText, Entry, ToolCall, Transcript, UserMessage
from turnfold.process import plan_projection
from turnfold.render.html import render_html
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.session import session_facts
from turnfold.settings import DisplaySettings
from turnfold.timeline import GAP_SHOWN_S, Timeline
from turnfold.tools import format_duration

TIMING = HARNESSES / "inspect-timing" / "timing_mockllm.eval"
START = datetime(2026, 3, 2, 14, 0, tzinfo=timezone.utc)
#: The clock set back an hour between the turns, then 43 hours forward inside the second.
BACK, FORWARD = -3600.0, 43 * 3600.0


def timeline_of(transcript: Transcript, locale: str = "en") -> dict[str, Any]:
    node = build_view_model(transcript, DisplaySettings(locale=locale))["timeline"]
    assert node is not None
    return dict(node)


def labels(node: dict[str, Any]) -> list[str]:
    return [gap["label"] for turn in node["turns"] for gap in turn["gaps"]]


# --- the real jumped sample ----------------------------------------------------------------------


def test_U4_a_clock_set_forward_is_a_break_not_43_hours_idle() -> None:
    """The ``jumped`` sample's stamps span 43 hours; Inspect timed it at 94 ms. Its timeline
    draws one break, labelled as the clock's change, before the call stamped on the new clock,
    and the call's bar as long as the call ran."""
    record = read_eval_log_sample(str(TIMING), id="jumped", epoch=1)
    [event] = [e for e in record.events if isinstance(e, ToolEvent)]
    assert event.completed is not None
    ran = (event.completed - event.timestamp).total_seconds()
    transcript = turnfold.load(TIMING, sample="jumped", epoch=1)
    node = timeline_of(transcript)
    assert labels(node) == ["clock changed"]
    [turn] = node["turns"]
    [bar] = turn["bars"]
    assert bar["w"] == round(ran, 3)
    [gap] = turn["gaps"]
    assert gap["w"] == GAP_SHOWN_S
    assert gap["x"] + gap["w"] <= bar["x"]  # the call was stamped after the change
    # The turn is its moments, on one clock, and the break: not 43 hours, nor 43 hours shortened.
    total = record.total_time
    assert total is not None
    assert turn["w"] < GAP_SHOWN_S + total
    shown = format_duration(total * 1000, hide_trailing_zeros=True)
    assert turn["label"] == f"Turn 1 · {shown} · 1 tool"
    assert set(node["sparkline"]) <= set("▁▂▃▄▅▆▇█¦")
    assert "¦" in node["sparkline"]
    assert "·" not in node["sparkline"]  # no idle time drawn
    assert labels(timeline_of(transcript, "zh")) == ["时钟被调整"]


def test_U4_the_text_and_the_page_say_clock_changed_not_idle() -> None:
    transcript = turnfold.load(TIMING, sample="jumped", epoch=1)
    view = build_view_model(transcript)
    page = render_html(view)
    assert 'title="clock changed"' in page
    assert "idle" not in "".join(labels(dict(view["timeline"] or {})))
    assert "43h idle" not in page
    text = render_text(view)
    assert "43h" not in text
    assert "¦" in text


# --- a session built here: back between the turns, forward inside the second --------------------


def _at(real: float, shift: float) -> str:
    """The wall clock's stamp of the moment ``real`` seconds into the session, on a clock set
    ``-shift`` seconds off."""
    return (START + timedelta(seconds=real - shift)).isoformat()


def _stamped(entry: Entry, shift: float, *names: str) -> Entry:
    """``entry`` as a reader marks a stamp after a change (and a turn whose stamps hold one)."""
    if shift:
        entry.meta["clock_shift_s"] = dict.fromkeys(names or ("timestamp",), shift)
    return entry


def _call(name: str, began: float, ended: float, shift: float) -> ToolCall:
    call = ToolCall(name=name, status="success", timestamp=_at(began, shift),
                    started_at=_at(began, shift), ended_at=_at(ended, shift))  # fmt: skip
    _stamped(call, shift, "timestamp", "started_at", "ended_at")
    return call


def _changed_twice() -> Transcript:
    """Turn 1 on the first clock, with five minutes of idle time; the clock set an hour back
    before turn 2, and 43 hours forward in it, between its two calls."""
    back, forward = -BACK, -BACK - FORWARD  # the shifts that undo them
    second = [
        _stamped(UserMessage(text="again", timestamp=_at(310, back)), back),
        _call("read", 311, 313, back),
        _call("bash", 315, 316, forward),
        _stamped(AssistantText(text="done", timestamp=_at(317, forward)), forward),
    ]
    for entry in second:  # its stamps hold a change: no duration read from them (P-7)
        entry.meta["clock_changed"] = True
    return Transcript(
        [
            UserMessage(text="go", timestamp=_at(0, 0)),
            _call("read", 1, 3, 0),
            AssistantText(text="thinking it over", timestamp=_at(4, 0)),
            _call("bash", 304, 305, 0),
            AssistantText(text="first", timestamp=_at(306, 0)),
            *second,
        ]
    )


def test_U4_each_change_is_a_break_where_it_happened_and_idle_time_stays_idle() -> None:
    node = timeline_of(_changed_twice())
    first, second = node["turns"]
    # Turn 1: its calls where they ran, the five minutes between them shortened as idle.
    assert [(b["x"], b["w"]) for b in first["bars"]] == [(1.0, 2.0), (4.0 + GAP_SHOWN_S, 1.0)]
    assert [g["label"] for g in first["gaps"]] == ["5m idle"]
    assert first["w"] == 306 - 300 + GAP_SHOWN_S
    # The clock went back between the turns: a break, then turn 2 after turn 1, not an hour
    # before it; inside it, a break where it went forward, and each bar as long as its call.
    assert second["x"] == first["w"] + GAP_SHOWN_S
    start = second["x"]
    assert [(g["x"], g["label"]) for g in second["gaps"]] == [
        (first["w"], "clock changed"),
        (start + 315 - 310, "clock changed"),
    ]
    assert [(b["x"], b["w"]) for b in second["bars"]] == [
        (start + 1, 2.0),
        (start + 315 - 310 + GAP_SHOWN_S, 1.0),
    ]
    assert second["w"] == 317 - 310 + GAP_SHOWN_S
    assert second["label"] == "Turn 2 · 2 tools"  # no duration across the change
    assert node["span"] == second["x"] + second["w"]
    spark = node["sparkline"]
    assert "·" in spark
    assert spark.count("¦") >= 2


def test_U4_a_turn_zoomed_into_keeps_its_break() -> None:
    transcript = _changed_twice()
    timeline = Timeline()
    node = timeline.node(plan_projection(transcript), "en", session_facts(transcript))
    assert node is not None
    zoomed = timeline.turn(node["turns"][1]["key"], "en")
    assert zoomed is not None
    [turn] = zoomed["turns"]
    assert [g["label"] for g in turn["gaps"]] == ["clock changed", "clock changed"]
    assert "¦" in zoomed["sparkline"]


def test_U4_without_a_reader_s_shifts_the_stamps_are_drawn_as_they_are() -> None:
    """Sessions whose reader found no change draw as before: the contrast the shifts make."""
    transcript = _changed_twice()
    for entry in transcript.entries:
        entry.meta.pop("clock_shift_s", None)
    node = timeline_of(transcript)
    assert labels(node) == ["5m idle", "43h 2s idle"]
