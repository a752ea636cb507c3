"""Two runs side by side (B-3) where one failed before any turn began.

A run that holds no prompt and only an error (the model API refused the first request) was cut
into one block of no prompt, which the alignment took for a prompt not recorded and paired by
its place with the other run's first turn: "1 turn aligned · 1 differs · Failed → Completed",
as if the two runs had answered one prompt. Nothing in it answered a prompt: it has no prompt
slot to pair (a turn whose prompt the transcript does not hold, as OpenCode's ``run --format
json`` prints it, still has one). It is a turn only in its run now, and the other run's first
turn has no counterpart; two runs that both failed so are still one pair.

The failed run is the stdout of the **real** ``opencode run --format json`` (OpenCode 1.18.33,
``tests/fixtures/agents/opencode-run-json/fails-first_recipe.py``): one ``error`` event.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import turnfold
from turnfold.compare_widget import CompareWidget
from turnfold.model import AssistantError, Transcript
from turnfold.render.compare_html import render_compare_html
from turnfold.render.compare_nodes import CompareView
from turnfold.render.compare_text import render_compare_text
from turnfold.render.compare_view import build_compare_view, compare_runs
from turnfold.settings import DisplaySettings

FIXTURES = Path(__file__).parent / "fixtures"
FAILED = FIXTURES / "agents" / "opencode-run-json" / "opencode_v1.18.33_run-json_fails-first.jsonl"
#: ``opencode run --format json`` of a run that worked: one turn, its prompt not printed.
OPENCODE = FIXTURES / "opencode" / "work" / "stdout-0.jsonl"
#: Gemini CLI 0.61: three prompts, each recorded.
GEMINI = FIXTURES / "gemini" / "gemini-cli_v0.61_three-turns-two-resumes.jsonl"
ERROR = "Invalid value for 'messages'. (TF-ERR-FATAL)"


def failed() -> Transcript:
    run = turnfold.load(FAILED)
    assert [type(e) for e in run.entries] == [AssistantError]
    return run


def view(a: Transcript, b: Transcript, names: tuple[str, str], locale: str = "en") -> CompareView:
    snapshot = DisplaySettings(locale=locale).snapshot()
    return build_compare_view(compare_runs(a, b, snapshot), snapshot, names=names)


def sections(compared: CompareView) -> list[tuple[str, str]]:
    """Each pair of the static HTML, in order: its status and its markup, to the next pair
    (a pair's turns are sections too)."""
    html = render_compare_html(compared, standalone=False)
    pairs = html.split('<section class="tf-pair"')[1:]
    status = re.compile(r'^[^>]*data-status="([^"]+)">')
    found = [(status.match(pair), pair) for pair in pairs]
    return [(match.group(1), pair) for match, pair in found if match is not None]


def test_B3_a_run_that_failed_before_any_turn_is_not_paired_with_the_other_s_first_turn() -> None:
    comparison = compare_runs(failed(), turnfold.load(GEMINI))
    # Was [(0, 0, "differs"), (None, 1, "only-b"), (None, 2, "only-b")].
    assert [(p.a, p.b, p.status) for p in comparison.pairs] == [
        (0, None, "only-a"), (None, 0, "only-b"), (None, 1, "only-b"), (None, 2, "only-b"),
    ]  # fmt: skip
    assert comparison.first_difference == 0
    # A run whose prompt is not recorded still pairs by its place: it has a turn that answered.
    not_recorded = compare_runs(turnfold.load(OPENCODE), turnfold.load(GEMINI))
    assert (not_recorded.pairs[0].a, not_recorded.pairs[0].b) == (0, 0)
    # Two runs that both failed so are one pair, side by side.
    both = compare_runs(failed(), failed())
    assert [(p.a, p.b, p.status, p.differences) for p in both.pairs] == [(0, 0, "same", ())]


def test_B3_the_failed_run_and_the_other_s_first_turn_each_stand_alone_in_text() -> None:
    compared = view(failed(), turnfold.load(OPENCODE), ("failed", "worked"))
    # Was "1 turn aligned · 1 differs", a pair "prompts not recorded · Failed → Completed".
    assert compared["summary"] == "0 turns aligned · 1 only in failed · 1 only in worked"
    assert [pair["header"]["status"] for pair in compared["pairs"]] == ["only-a", "only-b"]
    assert compared["first"] == compared["pairs"][0]["key"]
    text = render_compare_text(compared)
    assert "prompts not recorded" not in text
    assert "Failed → Completed" not in text
    alone, other = text.split("\n\n")[1:3]
    assert alone.split("\n") == [
        "Turn 1 · Only in failed · Failed · 0 tools",
        "  failed",
        "    Failed",
        f"    ✖ {ERROR}",
        "  worked",
        "    (No counterpart in worked)",
    ]
    assert other.split("\n")[:4] == [
        "Turn 1 · Only in worked · Completed · 9 tools · 1 failed · 75.6k tokens · 939ms",
        "  failed",
        "    (No counterpart in failed)",
        "  worked",
    ]


def test_B3_the_failed_run_and_the_other_s_first_turn_each_stand_alone_in_html() -> None:
    compared = view(turnfold.load(GEMINI), failed(), ("gemini", "failed"))
    found = sections(compared)
    # The run on the right comes first, alone; then each of the other's turns, alone.
    assert [status for status, _ in found] == ["only-b", "only-a", "only-a", "only-a"]
    (_, alone), (_, first), *_ = found
    assert html.escape(ERROR) in alone
    assert '<div class="tf-gap">No counterpart in gemini</div>' in alone
    assert "FIRST-PROMPT" not in alone
    assert "FIRST-PROMPT" in first
    assert html.escape(ERROR) not in first
    assert '<div class="tf-gap">No counterpart in failed</div>' in first
    assert compared["summary"] == "0 turns aligned · 3 only in gemini · 1 only in failed"


def test_B3_in_zh_and_in_the_widget(widgets: list[CompareWidget]) -> None:
    compared = view(failed(), turnfold.load(OPENCODE), ("failed", "worked"), "zh")
    assert compared["summary"] == "对齐 0 轮 · 1 轮仅在 failed 中 · 1 轮仅在 worked 中"
    widget = turnfold.compare(FAILED, OPENCODE, names=("failed", "worked"))
    widgets.append(widget)
    assert widget._compare is not None
    statuses = [pair["header"]["status"] for pair in widget._compare["pairs"]]
    assert statuses == ["only-a", "only-b"]
