"""What the view shows of a scorer's calls and of a run whose clock changed (P-5, P-6, P-7,
U-4, C-3).

A model-graded scorer's grader calls (``meta["scoring"]``, Inspect's ``model_graded_qa``) are
grouped apart from the agent's activity, so the agent's group counts what the turn header
counts, and every rendering labels the grader's row as the scoring's. Where the Inspect reader
warned that the sample's clock changed, no turn's duration is read from the jumped stamps: a
one-turn sample's turn takes Inspect's timing of the sample; the turns of a longer one show
none, and say why. On the logs the real ``inspect_ai`` 0.3.285 wrote
(``inspect-leftovers/leftovers_recipe.py``, ``inspect-timing/timing_recipe.py``).
"""

from __future__ import annotations

import html
from typing import Any

import pytest
from inspect_ai.log import read_eval_log_sample

import turnfold
from tests.inspect_samples import HARNESSES
from turnfold.corpus import scan
from turnfold.formats.harnesses.inspect_log import _unmeasured_turns
from turnfold.live_settings import DisplaySettings
from turnfold.model import AssistantText, ToolCall, Transcript, UserMessage
from turnfold.ondemand import wire_header
from turnfold.process import ActivityGroup, BatchPiece, Turn, is_scoring_call, project
from turnfold.render.html import render_html
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model, open_all
from turnfold.tools import format_duration

LEFTOVERS = HARNESSES / "inspect-leftovers" / "leftovers_mockllm.eval"
TIMING = HARNESSES / "inspect-timing" / "timing_mockllm.eval"


def _turn(transcript: Transcript, **settings: Any) -> Turn:
    [turn] = [i for i in project(transcript, DisplaySettings(**settings)) if isinstance(i, Turn)]
    return turn


def _calls(item: object) -> list[ToolCall]:
    if isinstance(item, ActivityGroup):
        return [c for i in item.items for c in _calls(i)]
    return list(item.calls) if isinstance(item, BatchPiece) else []


# --- a scorer's calls ---------------------------------------------------------------------------


@pytest.mark.parametrize("sample", ["after", "check"])
def test_P6_the_agent_s_group_counts_what_the_header_counts(sample: str) -> None:
    """The agent's calls (its tool, the solver's side call) are one group whose count is the
    header's; the grader's call, after them, is a row of its own (P-5: one item, no group)."""
    transcript = turnfold.load(LEFTOVERS, sample=sample, epoch=1)
    [grader] = [c for c in transcript.tool_calls() if is_scoring_call(c)]
    turn = _turn(transcript)
    assert turn.process is not None
    [group] = [i for i in turn.process.items if isinstance(i, ActivityGroup)]
    assert grader not in _calls(group)
    assert len(_calls(group)) == turn.header.tool_count == 2
    assert group.count_text == "2 operations"
    [alone] = [i for i in turn.process.items if grader in _calls(i)]
    assert isinstance(alone, BatchPiece)


def test_P6_several_scorer_calls_are_a_group_titled_for_the_scoring() -> None:
    """Two grader calls in a row: a group of their own, titled as the scoring and counting
    them; the agent's group, before it, counts the agent's call alone."""
    scoring = {"side_call": True, "scoring": True}
    transcript = Transcript(
        [
            UserMessage(text="what is the answer?"),
            ToolCall(name="lookup", status="success"),
            ToolCall(name="bash", status="success"),
            AssistantText(text="42"),
            ToolCall(name="model_graded_qa", status="success", meta=scoring),
            ToolCall(name="model_graded_fact", status="error", meta=scoring),
        ]
    )
    turn = _turn(transcript)
    assert turn.answer is not None
    assert turn.answer.text == "42"
    assert turn.process is not None
    agent, graders = turn.process.items
    assert isinstance(agent, ActivityGroup)
    assert isinstance(graders, ActivityGroup)
    assert (agent.count_text, turn.header.tool_count) == ("2 operations", 2)
    assert (graders.title, graders.count_text) == ("Scoring", "2 operations")
    assert [c.name for c in _calls(graders)] == ["model_graded_qa", "model_graded_fact"]
    zh = _turn(transcript, locale="zh")
    assert zh.process is not None
    assert zh.process.items[1].title == "评分"  # type: ignore[union-attr]
    # Flat: no groups, the rows as they ran, each grader's labelled (below).
    flat = _turn(transcript, transcript_display_mode="flat")
    assert flat.process is not None
    assert not any(isinstance(i, ActivityGroup) for i in flat.process.items)


def test_P7_the_grader_s_row_is_labelled_the_scoring_s_in_every_rendering() -> None:
    transcript = turnfold.load(LEFTOVERS, sample="after", epoch=1)
    view = build_view_model(transcript)
    view["nodes"] = open_all(view["nodes"])
    rows = [line for line in render_text(view, width=200).splitlines() if "[Scoring]" in line]
    assert len(rows) == 1
    assert "model_graded_qa" in rows[0]
    assert "[Scoring]" not in render_text(build_view_model(turnfold.load(TIMING, sample="agree")))
    page = render_html(view)
    assert page.count('<span class="tf-st tf-scoring">Scoring</span>') == 1
    zh = build_view_model(transcript, DisplaySettings(locale="zh"))
    zh["nodes"] = open_all(zh["nodes"])
    assert "[评分]" in render_text(zh, width=200)


# --- a clock that changed -----------------------------------------------------------------------


def test_P7_a_one_turn_sample_whose_clock_jumped_takes_inspect_s_timing() -> None:
    """The ``jumped`` sample's stamps span 43 hours; its one turn shows Inspect's
    ``total_time`` on its header, its timeline bar and its corpus row, as the session does."""
    record = read_eval_log_sample(str(TIMING), id="jumped", epoch=1)
    assert record.total_time is not None
    shown = format_duration(record.total_time * 1000, hide_trailing_zeros=True)
    transcript = turnfold.load(TIMING, sample="jumped", epoch=1)
    turn = _turn(transcript)
    assert turn.header.duration == shown
    assert turn.header.duration_note is None
    text = render_text(build_view_model(transcript))
    assert f"Completed · {shown} · 1 tool" in text
    assert "43h" not in text
    timeline = build_view_model(transcript)["timeline"]
    assert timeline is not None
    [bar] = timeline["turns"]
    assert bar["label"] == f"Turn 1 · {shown} · 1 tool"
    corpus = scan(TIMING, workers=1, cache=False)
    [row] = [r for r in corpus if r["sample"] == "jumped/1"]
    [turn_row] = [t for t in corpus.turns().to_pylist() if t["key"] == row["key"]]
    assert turn_row["duration_s"] == pytest.approx(record.total_time)


def test_P7_the_turns_of_a_longer_sample_whose_clock_jumped_show_no_duration_and_why() -> None:
    """Two turns, the second's stamps 43 hours on: neither shows a duration read from them;
    the header's title says why, in the HTML and the widget's wire form."""
    transcript = Transcript(
        [
            UserMessage(text="one", timestamp="2026-12-07T08:00:00Z"),
            AssistantText(text="a", timestamp="2026-12-07T08:00:01Z"),
            UserMessage(text="two", timestamp="2026-12-07T08:00:02Z"),
            AssistantText(text="b", timestamp="2026-12-09T03:00:02Z"),
        ]
    )
    assert [i.header.duration for i in project(transcript) if isinstance(i, Turn)] == ["1s", "43h"]
    _unmeasured_turns(transcript, 3.0)
    turns = [i for i in project(transcript) if isinstance(i, Turn)]
    assert [t.header.duration for t in turns] == [None, None]
    why = "No duration: the computer's clock changed while the run was recorded"
    assert all(t.header.duration_note and t.header.duration_note.startswith(why) for t in turns)
    view = build_view_model(transcript)
    headers = [n["header"] for n in view["nodes"] if n["kind"] == "turn"]
    assert [h.get("duration_title", "")[: len(why)] for h in headers] == [why, why]
    assert wire_header(dict(headers[0]))["duration_title"] == headers[0]["duration_title"]
    assert render_html(view).count(f'<span class="tf-status" title="{html.escape(why)}') == 2
    corpus = scan([transcript], workers=1, cache=False)
    assert [t["duration_s"] for t in corpus.turns().to_pylist()] == [None, None]


def test_P7_one_turn_of_a_sample_whose_clock_jumped_takes_the_sample_s_time() -> None:
    transcript = Transcript(
        [
            UserMessage(text="one", timestamp="2026-12-07T08:00:00Z"),
            AssistantText(text="a", timestamp="2026-12-09T03:00:02Z"),
        ]
    )
    _unmeasured_turns(transcript, 3.0)
    assert _turn(transcript).header.duration_ms == 3000.0
