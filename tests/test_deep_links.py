"""Deep links (spec B-2): every turn and tool call of a static page has a stable anchor.

The page's own script, which opens the folds around the anchor a link names, is checked in a
real Chromium from ``file://`` with JavaScript on and off (``tests/browser/test_site_browser.py``).
"""

from __future__ import annotations

import re

from turnfold.model import AssistantText, UserMessage
from turnfold.render.html import render_html
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.samples import claude_code_session, demo_session
from turnfold.widget import TranscriptWidget

ID = re.compile(r'data-key="([^"]+)" id="([^"]+)"')


def anchors(page: str) -> dict[str, str]:
    """Each anchor of ``page`` and the key of the node it names."""
    found = {anchor: key for key, anchor in ID.findall(page)}
    assert len(found) == len(ID.findall(page)), "an anchor is used twice"
    return found


def test_B2_each_top_level_turn_and_every_tool_call_has_an_anchor() -> None:
    transcript = claude_code_session()  # sub-agents: their calls nest in the spawning row
    view = build_view_model(transcript)
    found = anchors(render_html(view))
    turns = [n["key"] for n in view["nodes"] if n["kind"] == "turn"]
    assert [found[f"turn-{n}"] for n in range(1, len(turns) + 1)] == turns
    assert sum(1 for anchor in found if anchor.startswith("turn-")) == len(turns)  # top level
    calls = {n["key"] for n in iter_nodes(view) if n["kind"] == "tool"}
    assert any("/" in key for key in calls)  # a sub-agent's call is linkable too
    assert {found[f"call-{key}"] for key in calls} == calls


def test_B2_an_anchor_names_the_same_node_as_the_session_grows() -> None:
    transcript = demo_session()
    before = anchors(render_html(build_view_model(transcript)))
    transcript.append(UserMessage(text="one more question"))
    transcript.append(AssistantText(text="one more answer"))
    after = anchors(render_html(build_view_model(transcript)))
    assert {a: k for a, k in after.items() if a in before} == before
    assert len(after) == len(before) + 1  # the new turn


def test_B2_the_notebook_reveals_what_a_page_s_anchor_names() -> None:
    transcript = demo_session()
    found = anchors(render_html(build_view_model(transcript)))
    widget = TranscriptWidget(transcript)
    try:
        for anchor in ("turn-2", "call-e3"):
            path = widget.reveal(f"#{anchor}")
            assert path is not None
            assert path == widget.reveal(found[anchor])  # the same node, the same folds
    finally:
        widget.close()
