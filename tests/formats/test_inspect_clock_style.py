"""Where the clock changed is drawn as its own thing, not as idle time (spec U-4, W-3).

A break where the computer's clock changed is no stretch of time: the timeline marks it
(``TimelineGap.clock``), and each renderer draws it apart from an idle gap: its own class
(``tf-tl-clock``), solid and tinted in the theme's warning colour, which light and dark themes
each set, and its label and tooltip say ``clock changed``. On the ``forward`` sample of
``inspect-clock/clock_mockllm.eval`` (the real ``inspect_ai`` 0.3.285, its clock set 43 hours
forward between its two turns: ``clock_recipe.py``) and a session with ten idle minutes.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import turnfold
from tests.inspect_samples import HARNESSES
from turnfold.model import AssistantText, ToolCall, Transcript, UserMessage
from turnfold.render.html import _DARK, _LIGHT, render_html, timeline_css, turnfold_css
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings

CLOCK = HARNESSES / "inspect-clock" / "clock_mockllm.eval"
START = datetime(2026, 3, 2, 14, 0, tzinfo=timezone.utc)


def _at(seconds: float) -> str:
    return (START + timedelta(seconds=seconds)).isoformat()


def _idle() -> Transcript:
    """One turn: a call, then ten minutes in which nothing ran, then the answer."""
    return Transcript(
        [
            UserMessage(text="go", timestamp=_at(0)),
            ToolCall(name="bash", status="success", timestamp=_at(1), ended_at=_at(2)),
            AssistantText(text="done", timestamp=_at(602)),
        ]
    )


def _shapes(page: str, name: str) -> list[tuple[str, str]]:
    """The class and title of each timeline box or label of the page whose class starts with
    ``name``."""
    found = re.findall(rf'<span class="({name}[^"]*)" style="[^"]*"(?: title="([^"]*)")?', page)
    return [(classes, title) for classes, title in found]


def test_U4_a_clock_change_is_marked_apart_from_idle_time_in_the_view_model() -> None:
    changed = build_view_model(turnfold.load(CLOCK, sample="forward", epoch=1))["timeline"]
    idle = build_view_model(_idle())["timeline"]
    assert changed is not None
    assert idle is not None
    assert [(g["label"], g["clock"]) for t in changed["turns"] for g in t["gaps"]] == [
        ("clock changed", True)
    ]
    assert [(g["label"], g["clock"]) for t in idle["turns"] for g in t["gaps"]] == [
        ("10m idle", False)
    ]


def test_U4_a_page_draws_a_clock_change_with_its_own_class_label_and_title() -> None:
    page = render_html(build_view_model(turnfold.load(CLOCK, sample="forward", epoch=1)))
    assert _shapes(page, "tf-tl-gap") == [("tf-tl-gap tf-tl-clock", "clock changed")]
    assert _shapes(page, "tf-tl-idle") == [("tf-tl-idle tf-tl-clock", "clock changed")]
    assert ">clock changed</span>" in page  # the label row says it, as well as the tooltip
    idle = render_html(build_view_model(_idle()))
    assert _shapes(idle, "tf-tl-gap") == [("tf-tl-gap", "10m idle")]
    assert _shapes(idle, "tf-tl-idle") == [("tf-tl-idle", "10m idle")]
    zh = build_view_model(
        turnfold.load(CLOCK, sample="forward", epoch=1), DisplaySettings(locale="zh")
    )
    assert _shapes(render_html(zh), "tf-tl-gap") == [("tf-tl-gap tf-tl-clock", "时钟被调整")]


def _rule(css: str, selector: str) -> str:
    """The declarations of ``selector``'s rule in ``css``."""
    start = css.index(selector + " {") + len(selector) + 2
    return css[start : css.index("}", start)]


def test_W3_the_break_has_its_own_look_in_light_and_dark_themes() -> None:
    """Solid, tinted, in the warning colour, where an idle gap is a faint dashed outline; the
    warning colour is each theme's own (the page's light and dark palettes; the widget's
    ``--tf-warn``, set for both in ``js/src/widget.css``)."""
    for css in (turnfold_css(standalone=True), turnfold_css(standalone=False), timeline_css()):
        svg = _rule(css, ".turnfold .tf-tl-gap.tf-tl-clock")
        assert "stroke: var(--tf-warn)" in svg
        assert "fill: var(--tf-warn)" in svg
        assert "stroke-dasharray: none" in svg  # not the idle gap's dashes
        box = _rule(css, ".turnfold .tf-tl-plot > .tf-tl-clock")
        assert "border: 1px solid var(--tf-warn)" in box
        tint = _rule(css, ".turnfold .tf-tl-plot > .tf-tl-clock::before")
        assert "background: var(--tf-warn)" in tint
        assert "color: var(--tf-warn)" in _rule(css, ".turnfold .tf-tl-labels > .tf-tl-clock")
        idle = _rule(css, ".turnfold .tf-tl-gap")
        assert "stroke: var(--tf-faint)" in idle
    assert _LIGHT["--tf-warn"] != _DARK["--tf-warn"]
    page = turnfold_css(standalone=True)
    dark = page[page.index("@media (prefers-color-scheme: dark)") :]
    assert f"--tf-warn: {_DARK['--tf-warn']};" in dark
