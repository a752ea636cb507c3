"""A turn whose prompt the source does not record (spec P-1): the views say so, muted, where
the prompt would stand; titles, search and the site's first prompt pass the mark by.

Sources: the real stdout of ``claude -p --input-format stream-json`` with two prompts on its
stdin (``tests/fixtures/agents/claude-stream-json``): a run per prompt, neither prompt in it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import turnfold
from turnfold.formats.common import prompt_not_recorded
from turnfold.model import AssistantText, Transcript, UserMessage
from turnfold.render.html import render_html
from turnfold.render.site import _first_prompt
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings

TWO_PROMPTS = (
    Path(__file__).parent
    / "fixtures/agents/claude-stream-json/claude-code_v2.1.332_stream-json_tokens-two-prompts.jsonl"
)
NOT_RECORDED = {"en": "Prompt not recorded", "zh": "未记录提示"}


def _view(transcript: Transcript, locale: str = "en") -> dict:  # type: ignore[type-arg]
    return build_view_model(transcript, DisplaySettings(locale=locale))  # type: ignore[return-value]


@pytest.mark.parametrize("locale", ["en", "zh"])
def test_P1_the_text_view_says_each_run_s_prompt_is_not_recorded(locale: str) -> None:
    """Two runs, two turns: each opens with the user's row saying, dim, that its prompt is not
    recorded (no empty line of text), and each run's answer stands below its own header."""
    text = render_text(_view(turnfold.load(TWO_PROMPTS), locale))
    user = "User" if locale == "en" else "用户"
    lines = text.splitlines()
    marks = [i for i, line in enumerate(lines) if line == f"  {NOT_RECORDED[locale]}"]
    assert len(marks) == 2
    for at in marks:
        assert lines[at - 1] == user  # the label, then the note: no blank line of text
    first, second = marks
    assert "TF-DONE-1: checked." in lines[first:second]
    assert "TF-DONE-2: still fine after the resume." in lines[second:]


def test_P1_the_html_and_the_widget_draw_the_note_muted_in_the_user_s_row() -> None:
    """The view model's user node carries the note as the muted ``tf-note`` the static page
    and the widget both style (the widget sets the node's ``html`` as it is)."""
    view = _view(turnfold.load(TWO_PROMPTS))
    users = [node for node in view["nodes"] if node["kind"] == "user"]
    note = '<div class="tf-note">Prompt not recorded</div>'
    assert [node["html"] for node in users] == [note, note]
    assert [node["command"] for node in users] == [None, None]
    page = render_html(view, title="two prompts")
    assert page.count(f'<div class="tf-utext">{note}</div>') == 2


def test_P1_a_recorded_prompt_has_no_note() -> None:
    transcript = Transcript([UserMessage(text="Fix it"), AssistantText(text="Fixed.")])
    (user, _) = _view(transcript)["nodes"]
    assert "tf-note" not in user["html"]
    assert "Prompt not recorded" not in render_text(_view(transcript))


def test_P1_the_mark_titles_nothing_and_is_found_by_no_search(tmp_path: Path) -> None:
    """The session's title is its first recorded prompt (none: no title, never the note);
    the site's first prompt and search pass the mark by."""
    transcript = Transcript(
        [
            prompt_not_recorded(),
            AssistantText(text="TF-ONE"),
            UserMessage(text="Then fix the parser"),
            AssistantText(text="TF-TWO"),
        ]
    )
    saved = tmp_path / "session.jsonl"
    saved.write_text(transcript.dump())
    assert turnfold.load(saved) == transcript  # the mark survives turnfold's own format
    corpus = turnfold.scan([saved, TWO_PROMPTS], cache=False)
    titles = corpus.to_pandas().set_index("path")["title"]
    assert titles[str(saved)] == "Then fix the parser"
    assert titles.isna()[str(TWO_PROMPTS)]
    assert _first_prompt(transcript) == "Then fix the parser"
    assert corpus.search("not recorded") == []
