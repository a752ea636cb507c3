"""The timeline: where the time went (spec U-4), laid out once in Python for every renderer.

Each test names what a reader sees: bars where the calls ran, as long as they ran, stacked when
they overlap, failures marked, long idle stretches shortened and labelled, a click that reveals
exactly the call's ancestor path (P-11), a long session drawn one bar per turn, and a live widget
that sends only the turn that changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.model import AssistantText, ToolCall, Transcript, UserMessage
from turnfold.process import ProjectionPlanner, plan_projection
from turnfold.recording import Recorder
from turnfold.render.html import DEEP_LINKS, render_html
from turnfold.render.scripts import script_tag
from turnfold.render.text import render_text
from turnfold.render.viewmodel import ancestor_path, build_view_model, iter_nodes
from turnfold.samples import claude_code_session, demo_session
from turnfold.session import session_facts
from turnfold.settings import DisplaySettings
from turnfold.timeline import DETAIL_CALLS, GAP_SHOWN_S, MAX_LANES, MIN_W, Timeline
from turnfold.tools import tool_category
from turnfold.transport import unpack_view
from turnfold.widget import TranscriptWidget

from .test_widget import Wire, _ask, make

START = datetime(2026, 3, 2, 14, 0, tzinfo=timezone.utc)


def stamp(seconds: float) -> str:
    return (START + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def ticking(step: float = 1.0) -> Callable[[], str]:
    """A Recorder's clock that moves ``step`` seconds at each reading."""
    seconds = iter(range(0, 10**9))
    return lambda: stamp(next(seconds) * step)


def bars(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [bar for turn in node["turns"] for bar in turn["bars"] or []]


def timeline_of(transcript: Transcript, locale: str = "en") -> dict[str, Any]:
    node = build_view_model(transcript, DisplaySettings(locale=locale))["timeline"]
    assert node is not None
    return dict(node)


# --- the layout ----------------------------------------------------------------------------------


def test_U4_each_call_is_a_bar_at_its_start_as_long_as_its_recorded_duration() -> None:
    node = timeline_of(demo_session())
    shown = {bar["key"]: bar for bar in bars(node)}
    # Hand count from the demo session: the test run started 5 s in and took 3.4 s, and failed.
    assert (shown["e7"]["x"], shown["e7"]["w"], shown["e7"]["failed"]) == (5.0, 3.4, True)
    assert shown["e7"]["label"] == "Bash npm test -- config · 3.4s · Failed"
    assert (shown["e11"]["x"], shown["e11"]["w"]) == (11.0, 12.0)  # the reviewer sub-agent
    for call in demo_session().tool_calls():
        assert shown[call.id]["category"] == tool_category(call.name)  # the rows' palette
    # Turns along the axis: the second turn starts 35 s after the first ended (no gap to cut).
    assert [(t["x"], t["w"], t["number"]) for t in node["turns"]] == [
        (0.0, 25.0, "1"),
        (60.0, 2.0, "2"),
    ]
    assert node["span"] == 62.0
    assert not node["open"]  # U-4: closed by default


def test_U4_calls_that_overlap_in_time_stack_in_lanes() -> None:
    shown = {bar["key"]: bar for bar in bars(timeline_of(demo_session()))}
    # One grep and two reads issued at once (2.000 s), then a test run and the reviewer in parallel.
    assert len({shown[key]["y"] for key in ("e2", "e3", "e4")}) == 3
    assert shown["e10"]["y"] != shown["e11"]["y"]
    assert shown["e7"]["y"] == shown["e2"]["y"]  # the first lane is free again by then


def test_U4_calls_of_no_recorded_length_at_one_moment_take_a_lane_each() -> None:
    # Bars of no length at the same x shared a lane: one covered the other, unclickable.
    calls = [ToolCall(call_id=f"c{i}", name="Read", status="success", timestamp=stamp(1))
             for i in range(3)]  # fmt: skip
    transcript = Transcript([UserMessage(text="go", timestamp=stamp(0)), *calls,
                             AssistantText(text="done", timestamp=stamp(4))])  # fmt: skip
    placed = bars(timeline_of(transcript))
    assert len(placed) == 3
    assert len({bar["x"] for bar in placed}) == 1
    assert len({bar["y"] for bar in placed}) == 3


def test_U4_a_fan_out_wider_than_the_lanes_shares_the_last_one() -> None:
    calls = [
        ToolCall(call_id=f"c{i}", name="Read", status="success", started_at=stamp(1),
                 duration_ms=2000)
        for i in range(MAX_LANES + 3)
    ]  # fmt: skip
    transcript = Transcript([UserMessage(text="go", timestamp=stamp(0)), *calls,
                             AssistantText(text="done", timestamp=stamp(4))])  # fmt: skip
    node = timeline_of(transcript)
    assert len({bar["y"] for bar in bars(node)}) == MAX_LANES
    assert node["height"] == max(bar["y"] for bar in bars(node)) + node["bar"] + 4


def idle_session() -> Transcript:
    """Two turns 30 minutes apart; the second waits 5 minutes (for a permission, say) inside."""
    return Transcript([
        UserMessage(text="first", timestamp=stamp(0)),
        ToolCall(call_id="a", name="Read", status="success", started_at=stamp(2),
                 ended_at=stamp(4)),
        AssistantText(text="one", timestamp=stamp(10)),
        UserMessage(text="second", timestamp=stamp(1810)),
        ToolCall(call_id="b", name="Bash", status="success", started_at=stamp(1812),
                 ended_at=stamp(1815)),
        ToolCall(call_id="c", name="Edit", status="success", started_at=stamp(2115),
                 ended_at=stamp(2116)),
        AssistantText(text="two", timestamp=stamp(2120)),
    ])  # fmt: skip


def test_U4_idle_gaps_over_a_minute_are_shortened_and_labelled() -> None:
    node = timeline_of(idle_session())
    first, second = node["turns"]
    assert (first["x"], first["w"]) == (0.0, 10.0)
    # 30 minutes between the turns are drawn as GAP_SHOWN_S, and say how long they were.
    assert second["x"] == 10.0 + GAP_SHOWN_S
    assert [(g["x"], g["w"], g["label"]) for g in second["gaps"]] == [
        (10.0, GAP_SHOWN_S, "30m idle"),
        (second["x"] + 5.0, GAP_SHOWN_S, "5m idle"),  # from the command's end to the edit
    ]
    edit = next(bar for bar in second["bars"] if bar["key"] == "e5")
    assert edit["x"] == second["x"] + 5.0 + GAP_SHOWN_S
    assert second["w"] == 5.0 + GAP_SHOWN_S + 5.0
    # The text rendering's one line shows the shortened gaps as dots.
    assert "·" in node["sparkline"]
    assert len(node["sparkline"]) == 48
    zh = timeline_of(idle_session(), locale="zh")
    assert zh["turns"][1]["gaps"][0]["label"] == "空闲 30m"


def test_U4_a_transcript_that_records_no_time_has_no_timeline() -> None:
    transcript = Transcript([UserMessage(text="go"), ToolCall(name="Read", status="success"),
                             AssistantText(text="done")])  # fmt: skip
    view = build_view_model(transcript)
    assert view["timeline"] is None
    assert "Timeline" not in render_text(view)
    assert 'class="tf-timeline"' not in render_html(view)


# --- a click reveals the call (P-11) -------------------------------------------------------------


def test_U4_P11_every_bar_names_a_call_whose_ancestor_path_opens_to_it() -> None:
    # The real session: parallel sub-agents whose own calls are bars too, keyed under their call.
    view = build_view_model(claude_code_session())
    node = view["timeline"]
    assert node is not None
    shown = bars(dict(node))
    tools = {n["key"]: n for n in iter_nodes(view) if n["kind"] == "tool"}
    assert {bar["key"] for bar in shown} <= set(tools)
    nested = [bar for bar in shown if "/" in bar["key"]]
    assert nested, "the sub-agents' calls are on the timeline too"
    for bar in shown:
        path = ancestor_path(view, bar["key"])
        assert path, bar["key"]
        assert path[0] == "process:turn:e0", bar["key"]
    spawning, _ = nested[0]["key"].split("/")
    assert spawning in ancestor_path(view, nested[0]["key"])  # the sub-agent's call opens too
    failed = {bar["key"] for bar in shown if bar["failed"]}
    assert failed == {t for t, n in tools.items() if n["status"] in ("error", "cancelled")} & {
        bar["key"] for bar in shown
    }


def test_U4_the_static_page_links_each_bar_to_its_calls_row_with_no_script() -> None:
    page = render_html(build_view_model(claude_code_session()))
    links = re.findall(r'<a href="#(call-[^"]+)"', page)
    ids = set(re.findall(r'<div class="tf-tool [^"]*" data-key="[^"]+" id="([^"]+)"', page))
    assert links
    assert set(links) <= ids
    assert "call-e7/e2" in links  # a sub-agent's call, inside its call's row
    assert page.lower().count("<script") == page.count(script_tag(DEEP_LINKS))  # the page's own
    timeline = page[page.index('<details class="tf-timeline"') :]
    assert timeline.startswith('<details class="tf-timeline" data-key="timeline">')  # closed


def test_U4_labels_are_escaped_where_they_are_drawn() -> None:
    hostile = '<img src=x onerror=alert(1)>"'
    transcript = Transcript([
        UserMessage(text="go", timestamp=stamp(0)),
        ToolCall(call_id="c", name=hostile, description=hostile, status="error",
                 started_at=stamp(1), duration_ms=500),
        AssistantText(text="done", timestamp=stamp(3)),
    ])  # fmt: skip
    node = timeline_of(transcript)
    assert bars(node)[0]["label"].startswith(hostile)  # plain text in the view model
    page = render_html(build_view_model(transcript))
    assert "<img src=x" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;&quot;" in page


# --- a long session ------------------------------------------------------------------------------


def long_session(turns: int, calls: int) -> Transcript:
    rec = Recorder(clock=ticking())
    for turn in range(turns):
        rec.user(f"task {turn}")
        for call in range(calls):
            name = "Read" if call % 3 else "Bash"
            started = rec.start_tool(name, {"file_path": f"f{turn}_{call}.py"})
            rec.finish_tool(started, "ok", status="error" if (turn, call) == (1, 0) else "success")
        rec.assistant(f"done {turn}")
    return rec.transcript


def test_U4_a_long_session_is_one_bar_per_turn_and_a_turn_zooms_into_its_calls() -> None:
    transcript = long_session(turns=DETAIL_CALLS // 4 + 1, calls=5)
    items = plan_projection(transcript)
    timeline = Timeline()
    node = timeline.node(items, "en", session_facts(transcript))
    assert node is not None
    assert node["note"] == "one bar per turn"
    turns = node["turns"]
    assert all(turn["bars"] is None and turn["number"] is None for turn in turns)
    assert turns[1]["failed"]
    assert not turns[0]["failed"]
    assert turns[0]["category"] == "read"  # four reads took more time than one command
    assert turns[0]["call"] == "e1"  # where the static page's bar links to
    zoomed = timeline.turn(turns[1]["key"], "en")
    assert zoomed is not None
    assert zoomed["back"] == "Whole session"
    (detail,) = zoomed["turns"]
    assert len(detail["bars"] or []) == 5
    assert (zoomed["origin"], zoomed["span"]) == (turns[1]["x"], turns[1]["w"])
    header = [n for n in build_view_model(transcript)["nodes"] if n["kind"] == "turn"][1]["header"]
    assert zoomed["title"] == f"Turn 2 · {header['duration']} · 5 tools (1 failed)"  # as its header
    assert timeline.turn("timeline:turn:nowhere", "en") is None


def test_U4_the_layout_of_an_unchanged_turn_is_reused() -> None:
    rec = Recorder(clock=ticking())
    for turn in range(3):
        rec.user(f"task {turn}")
        rec.finish_tool(rec.start_tool("Read", {"file_path": "a"}), "ok")
        rec.assistant("done")
    timeline = Timeline()
    planner = ProjectionPlanner(rec.transcript)
    items, _ = planner.plan(None)
    first = timeline.node(items, "en", session_facts(rec.transcript))
    rec.user("more")
    rec.start_tool("Bash", {"command": "make"})
    items, _ = planner.plan(None, changed=[e.id for e in rec.transcript.entries[-2:]])
    second = timeline.node(items, "en", session_facts(rec.transcript))
    assert first is not None
    assert second is not None
    assert all(a is b for a, b in zip(first["turns"], second["turns"][:3], strict=True))
    assert len(second["turns"]) == 4


# --- the widget: closed content and live updates (Q-2, Q-3, W-2) --------------------------------


def live(widgets: list[TranscriptWidget]) -> tuple[Recorder, TranscriptWidget, Wire]:
    rec = Recorder(clock=ticking())
    for turn in range(20):
        rec.user(f"task {turn}")
        rec.finish_tool(rec.start_tool("Read", {"file_path": f"f{turn}"}), "ok")
        rec.assistant("done")
    widget = make(widgets, rec.transcript)
    return rec, widget, Wire(widget)


def test_U4_Q2_the_closed_timeline_is_laid_out_and_sent_only_when_opened(
    widgets: list[TranscriptWidget],
) -> None:
    _, widget, wire = live(widgets)
    sent = unpack_view(widget._view)["view"]["timeline"]
    assert sent["deferred"]
    assert sent["turns"] == []
    assert sent["title"] == "Timeline"
    assert not widget._timeline.laid_out  # opening a transcript costs no layout
    (reply,) = _ask(widget, wire, type="content", keys=["timeline"])
    whole = reply["nodes"]["timeline"]
    assert len(whole["turns"]) == 20
    assert "deferred" not in whole
    assert whole == build_view_model(widget.transcript)["timeline"]


def test_U4_Q3_a_live_call_sends_only_its_turn_of_an_open_timeline(
    widgets: list[TranscriptWidget],
) -> None:
    rec, widget, wire = live(widgets)
    # The reader opened it: the view asks for its turns at once, and saves its folds a moment
    # later; the calls the agent appends meanwhile must reach it all the same.
    _ask(widget, wire, type="content", keys=["timeline"])
    assert "timeline" not in widget._folds
    wire.clear()
    rec.start_tool("Bash", {"command": "make"})
    widget.flush()
    (patch,) = wire.custom("patch")
    changed = patch["timeline"]
    assert [u["turn"]["key"] for u in changed["upsert"]] == ["timeline:turn:e57"]
    assert set(changed["fields"]) <= {"span", "height", "sparkline"}
    assert changed["remove"] == []
    assert "timeline" not in patch.get("fields", {})


def test_U4_Q3_a_closed_timeline_costs_a_live_update_its_few_fields(
    widgets: list[TranscriptWidget], in_parts: None
) -> None:
    rec, widget, wire = live(widgets)
    for opened_elsewhere in (False, True):  # laid out for a static rendering, or not at all
        if opened_elsewhere:
            widget._repr_mimebundle_()
        wire.clear()
        rec.start_tool("Bash", {"command": "make"})
        widget.flush()
        (patch,) = wire.custom("patch")
        assert "timeline" not in patch
        assert "timeline" not in patch.get("fields", {})


def test_U4_P11_a_clicked_bar_reveals_its_call_in_the_view_that_asked(
    widgets: list[TranscriptWidget], in_parts: None
) -> None:
    widget = make(widgets, claude_code_session())
    wire = Wire(widget)
    (reveal,) = _ask(widget, wire, type="reveal", key="e7/e2")
    assert reveal["type"] == "reveal"
    assert reveal["key"] == "e7/e2"
    assert reveal["path"] == ancestor_path(widget.view, "e7/e2")
    assert "e7" in reveal["path"]
    assert reveal["path"][0] in reveal["nodes"]  # the closed process comes along
    assert _ask(widget, wire, type="reveal", key="nowhere") == []


def test_U4_a_coarse_timeline_s_turn_comes_in_detail_when_the_view_zooms(
    widgets: list[TranscriptWidget],
) -> None:
    widget = make(widgets, long_session(turns=DETAIL_CALLS // 4 + 1, calls=5))
    wire = Wire(widget)
    (reply,) = _ask(widget, wire, type="content", keys=["timeline"])  # the reader opens it
    key = reply["nodes"]["timeline"]["turns"][0]["key"]
    assert reply["nodes"]["timeline"]["turns"][0]["bars"] is None
    (reply,) = _ask(widget, wire, type="content", keys=[key])  # and zooms into a turn
    zoomed = reply["nodes"][key]
    assert zoomed["key"] == key
    assert len(zoomed["turns"][0]["bars"]) == 5


FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json*"))


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_U4_C3_every_bar_lasts_its_calls_recorded_duration(path: Path) -> None:
    transcript = turnfold.load(path)
    node = build_view_model(transcript)["timeline"]
    if node is None:
        return  # no time recorded, or no tool called: no timeline, nothing to compare
    calls = {call.id: call for call in transcript.tool_calls()}
    for bar in bars(dict(node)):
        call = calls.get(bar["key"])
        if call is None:
            continue  # a sub-agent's call, keyed under its own
        recorded = call.recorded_duration_ms
        expected = MIN_W if not recorded else max(round(recorded / 1000, 3), MIN_W)
        assert bar["w"] == pytest.approx(expected, abs=0.0011), bar["key"]
