"""Two runs side by side (B-3), as a user compares them: what a QA pass found wrong.

* A run that opens with a notice before its first prompt (the context a Gemini CLI session
  starts with) counted that notice as a turn of its own: a pair that did nothing, "only in" the
  run that has it, and the first difference that opened in place of a real one.
* ``turnfold render --compare`` took ``FILE#ID`` (one run of a file of many) as a missing file,
  so two samples of one eval log could not be compared from the terminal.
* Two files of one name (two runs' ``stdout-0.jsonl``) were both called by it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import turnfold
from turnfold.cli import main
from turnfold.comparison import side_of
from turnfold.model import SystemNotice, Transcript, UserMessage
from turnfold.render.compare_text import render_compare_text
from turnfold.render.compare_view import build_compare_view, compare_runs
from turnfold.render.viewmodel import build_view_model

FIXTURES = Path(__file__).parent / "fixtures"
#: Gemini CLI 0.61, three prompts (two after resumes), opening with its session context.
GEMINI = FIXTURES / "gemini" / "gemini-cli_v0.61_three-turns-two-resumes.jsonl"
#: Inspect, four samples of two epochs (``react_recipe.py``).
EVAL = FIXTURES / "harnesses" / "inspect" / "react_four-samples_two-epochs.eval"


pytestmark = pytest.mark.usefixtures("cache_dir")


def without_opening_notice(transcript: Transcript) -> Transcript:
    assert isinstance(transcript.entries[0], SystemNotice)
    return Transcript(transcript.entries[1:], metadata=transcript.metadata)


def test_B3_a_notice_before_the_first_prompt_is_part_of_the_first_turn() -> None:
    run = turnfold.load(GEMINI)
    bare = without_opening_notice(run)
    comparison = compare_runs(run, bare)
    # Three prompts, three turns on each side, each the same: nothing differs, nothing opens.
    assert [(p.a, p.b, p.status) for p in comparison.pairs] == [
        (0, 0, "same"), (1, 1, "same"), (2, 2, "same"),
    ]  # fmt: skip
    assert comparison.first_difference is None
    view = build_compare_view(comparison)
    assert view["summary"] == "3 turns aligned · 0 differ"
    assert view["first"] is None
    first = view["pairs"][0]
    assert first["header"]["label"] == "Turn 1"
    # The notice is still shown, before the first prompt of the run that has it.
    assert first["a"] is not None
    assert first["b"] is not None
    assert [node["kind"] for node in first["a"]][:2] == ["system", "user"]
    assert first["b"][0]["kind"] == "user"
    assert "session_context" in render_compare_text(view)


def test_B3_a_first_prompt_nothing_answered_is_a_pair_of_its_own() -> None:
    # The opening notice joins the first prompt, even one no turn answered; the next prompt
    # is a pair of its own still.
    run = turnfold.load(GEMINI)
    notice, *rest = run.entries
    unanswered = Transcript([notice, UserMessage(text="hello?"), *rest], metadata=run.metadata)
    blocks = side_of(unanswered).blocks
    assert [block.text for block in blocks] == [
        "hello?", "FIRST-PROMPT: run echo hi", "SECOND-PROMPT: anything else?",
        "THIRD-PROMPT: bye",
    ]  # fmt: skip
    assert [type(item.entry).__name__ for item in blocks[0].items] == ["SystemNotice",
                                                                       "UserMessage"]  # fmt: skip
    comparison = compare_runs(unanswered, run)
    assert [(p.a, p.b, p.status) for p in comparison.pairs] == [
        (0, None, "only-a"), (1, 0, "same"), (2, 1, "same"), (3, 2, "same"),
    ]  # fmt: skip


def test_B3_the_summary_counts_each_runs_turns_as_its_header_does() -> None:
    a = turnfold.load(GEMINI)
    b = turnfold.load(FIXTURES / "gemini" / "gemini-cli_v0.61_resume-api-form.jsonl")
    assert "3 turns" in build_view_model(a)["session"]["text"]  # type: ignore[index]
    assert "2 turns" in build_view_model(b)["session"]["text"]  # type: ignore[index]
    view = build_compare_view(compare_runs(a, b))
    # A: two aligned and one of its own; B: two aligned.
    assert view["summary"] == "2 turns aligned · 1 differs · 1 only in A"
    labels = [pair["header"]["text"].split(" · ")[:2] for pair in view["pairs"]]
    assert labels == [["Turn 1", "Same"], ["Turn 2", "Differs"], ["Turn 3", "Only in A"]]
    # The first difference, open, is the second prompt's: the first place the runs part.
    assert view["first"] == view["pairs"][1]["key"]


def test_B3_render_compare_takes_one_run_of_a_file_of_many(tmp_path: Path) -> None:
    log = tmp_path / "react.eval"
    shutil.copy(EVAL, log)
    assert main(["render", "--compare", f"{log}#crash/1", f"{log}#solve/1"]) == 0
    page = (tmp_path / "react-crash_1-vs-react-solve_1.html").read_text("utf-8")
    assert "<title>react.eval#crash/1 vs react.eval#solve/1</title>" in page
    assert 'class="tf-cmp-name">react.eval#crash/1<' in page
    assert "Crash: read /srv/data.txt." in page  # the crash sample's prompt …
    pairs = re.findall(r'<section class="tf-pair" data-key="[^"]*" data-status="([^"]*)"', page)
    # … and solve's two: two tasks, but a pair is a prompt (B-3): the first prompt of each
    # is one pair, its header saying the prompts differ; solve's second is its own.
    assert pairs == ["differs", "only-b"]
    assert "other prompt" in page


def test_B3_render_compare_tells_two_files_of_one_name_apart(tmp_path: Path) -> None:
    runs = FIXTURES / "opencode"
    a, b = runs / "work" / "stdout-0.jsonl", runs / "v1.1" / "work" / "stdout-0.jsonl"
    target = tmp_path / "page.html"
    assert main(["render", "--compare", str(a), str(b), "-o", str(target)]) == 0
    page = target.read_text("utf-8")
    assert "<title>opencode/work/stdout-0.jsonl vs v1.1/work/stdout-0.jsonl</title>" in page
    assert 'class="tf-cmp-name">opencode/work/stdout-0.jsonl<' in page
    assert 'class="tf-cmp-name">v1.1/work/stdout-0.jsonl<' in page
    # One file twice: A and B.
    assert main(["render", "--compare", str(a), str(a), "-o", str(target)]) == 0
    page = target.read_text("utf-8")
    assert 'class="tf-cmp-name">stdout-0.jsonl (A)<' in page
    assert 'class="tf-cmp-name">stdout-0.jsonl (B)<' in page
