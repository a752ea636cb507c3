"""Each turn's tokens and cost on its header (spec U-3, ``show_turn_usage``), and the corpus's
tables carrying the numbers the views show (C-3, issue 15 item 5), against hand counts."""

from __future__ import annotations

import pytest

import turnfold
from turnfold.model import AssistantText, ToolCall, Transcript, Usage, UserMessage
from turnfold.render.html import render_html
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.samples import claude_code_session
from turnfold.settings import DisplaySettings
from turnfold.settings_widget import SettingsWidget
from turnfold.widget import TranscriptWidget

from .test_usage import SAMPLE, hand_count
from .test_widget import make


def headers(transcript: Transcript, **settings: object) -> list[dict[str, object]]:
    view = build_view_model(transcript, DisplaySettings(**settings))
    return [dict(node["header"]) for node in view["nodes"] if node["kind"] == "turn"]


def two_turns() -> Transcript:
    """Two turns of gpt-4o; the first response's usage is written twice, growing (U-1)."""
    first = Usage(input_tokens=100, output_tokens=10, response_id="r1")
    final = Usage(input_tokens=100, output_tokens=20, response_id="r1")
    return Transcript(
        [
            UserMessage(text="one", timestamp="2026-03-02T14:00:00Z"),
            ToolCall(name="Read", status="success", usage=first,
                     started_at="2026-03-02T14:00:01Z", duration_ms=500),
            AssistantText(text="read it", model="gpt-4o", usage=final,
                          timestamp="2026-03-02T14:00:02Z"),
            AssistantText(text="done", model="gpt-4o", timestamp="2026-03-02T14:00:03Z",
                          usage=Usage(input_tokens=50, output_tokens=5, response_id="r2")),
            UserMessage(text="two", timestamp="2026-03-02T14:01:00Z"),
            AssistantText(text="ok", model="gpt-4o", timestamp="2026-03-02T14:01:01Z",
                          usage=Usage(input_tokens=2000, output_tokens=100)),
        ],
        metadata={"source_format": "openai", "model": "gpt-4o"},
    )  # fmt: skip


def test_U3_turn_usage_is_off_by_default() -> None:
    for header in headers(two_turns()):
        assert "usage" not in header
        assert "tokens" not in str(header["text"])


def test_U3_show_turn_usage_adds_each_turns_tokens_and_cost_to_its_header() -> None:
    first, second = headers(two_turns(), show_turn_usage=True)
    # By hand: r1 once at its largest counts (100 + 20) and r2 (50 + 5): 175 tokens; gpt-4o at
    # $2.50 input and $10 output per million: 150 * 2.5 + 25 * 10 = $0.000625.
    assert first["usage"] == "175 tokens · ≈ $0.000625"
    assert first["text"] == "Completed · 3s · 1 tool · 175 tokens · ≈ $0.000625"
    assert second["usage"] == "2.1k tokens · ≈ $0.006"  # 2000 * 2.5 + 100 * 10 = $0.006
    zh = headers(two_turns(), show_turn_usage=True, locale="zh")
    assert zh[0]["usage"] == "175 个 token · ≈ $0.000625"
    view = build_view_model(two_turns(), DisplaySettings(show_turn_usage=True))
    assert "175 tokens · ≈ $0.000625" in render_text(view)
    assert '<span class="tf-fixed">175 tokens · ≈ $0.000625</span>' in render_html(view)


def test_U3_a_turn_with_no_tokens_or_no_price_says_what_it_knows() -> None:
    transcript = Transcript([
        UserMessage(text="go"),
        AssistantText(text="hi", model="mockllm/model",
                      usage=Usage(input_tokens=9, output_tokens=1)),
        UserMessage(text="again"),
        AssistantText(text="hi"),
    ])  # fmt: skip
    priced, silent = headers(transcript, show_turn_usage=True)
    # A model the price table does not know: no cost, and why, as the session header says it.
    assert priced["usage"] == "10 tokens · no cost: no price for mockllm/model"
    assert "usage" not in silent


def test_U3_the_real_sessions_turn_counts_its_sub_agents_as_the_corpus_does() -> None:
    expected = hand_count(SAMPLE)
    tokens = sum(side["input_tokens"] + side["output_tokens"] for side in expected.values())
    (header,) = headers(claude_code_session(), show_turn_usage=True)
    assert tokens == 375_764
    assert header["usage"] == "375.8k tokens · ≈ $0.33"
    (row,) = turnfold.scan(SAMPLE, workers=1, cache=False).turns().to_pylist()
    for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
        assert row[name] == expected[False][name] + expected[True][name], name
    assert f"≈ ${row['cost_usd']:.2f}" == "≈ $0.33"


def test_C3_the_corpus_tables_carry_the_durations_the_views_show() -> None:
    transcript = claude_code_session()
    corpus = turnfold.scan(SAMPLE, workers=1, cache=False)
    (turn,) = corpus.turns().to_pylist()
    (header,) = headers(transcript)
    assert turn["duration_s"] == pytest.approx(143.428)  # by hand: 09:52:03.183 to 09:54:26.611
    assert header["duration"] == "2m 23s"
    timeline = build_view_model(transcript)["timeline"]
    assert timeline is not None
    bars = {bar["key"]: bar for t in timeline["turns"] for bar in t["bars"] or []}
    ids = {call.call_id: call.id for call in transcript.tool_calls()}
    calls = corpus.tool_calls().to_pylist()
    assert len(calls) == len(ids) == 13
    for row in calls:
        assert row["duration_ms"] == pytest.approx(bars[ids[row["call_id"]]]["w"] * 1000)
    by_entry = {ids[row["call_id"]]: row["duration_ms"] for row in calls}
    assert by_entry["e7"] == 21194  # the duration Claude Code recorded for the sub-agent
    assert by_entry["e8"] == pytest.approx(21269)  # by hand: 09:52:26.960 to 09:52:48.229


def test_U3_T4_the_settings_panel_turns_turn_usage_on_for_its_views(
    widgets: list[TranscriptWidget],
) -> None:
    view = make(widgets, two_turns())
    panel = SettingsWidget(view)
    assert "[ ] Show tokens and cost on each turn" in panel.summary()
    panel.turn_usage_toggle.value = True
    assert view.show_turn_usage
    view.flush()
    turns = [node for node in view.view["nodes"] if node["kind"] == "turn"]
    assert turns[0]["header"]["usage"] == "175 tokens · ≈ $0.000625"
    panel.close()
