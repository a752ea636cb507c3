"""U-4 on a page with no script: a call of a few milliseconds in a long session stays visible.

The widget widens a shape too short to see in its script (``MIN_BAR_PX``, ``js/src/timeline.js``).
A page (``turnfold render``, a notebook's ``text/html``) has none: its timeline's shapes are boxes
placed on the axis by CSS alone, which keeps each turn, call and failure mark at least
``MIN_SHAPE_PX`` wide and never lets one pass the axis's end. Chromium measures the drawn boxes in
``tests/browser/test_timeline_page_browser.py``.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from turnfold.model import AssistantText, ToolCall, Transcript, UserMessage
from turnfold.render.html import MIN_SHAPE_PX, render_html, turnfold_css
from turnfold.render.viewmodel import build_view_model

START = datetime(2026, 3, 2, 14, 0, tzinfo=timezone.utc)
HOUR = 3600.0


def stamp(seconds: float) -> str:
    return (START + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def hour_with_blinks() -> Transcript:
    """An hour's turn: a long command, a 3 ms read in the middle, a failed 2 ms read that ends
    where the axis does (the answer comes at the same moment)."""
    return Transcript([
        UserMessage(text="go", timestamp=stamp(0)),
        ToolCall(call_id="long", name="Bash", args={"command": "make"}, status="success",
                 started_at=stamp(1), duration_ms=(HOUR - 10) * 1000),
        ToolCall(call_id="blink", name="Read", args={"file_path": "a.py"}, status="success",
                 started_at=stamp(HOUR / 2), duration_ms=3),
        ToolCall(call_id="last", name="Read", args={"file_path": "b.py"}, status="error",
                 started_at=stamp(HOUR - 0.002), duration_ms=2),
        AssistantText(text="done", timestamp=stamp(HOUR)),
    ])  # fmt: skip


def shapes(page: str) -> list[dict[str, str]]:
    """The boxes of the page's timeline plot, each as its attributes and, for a call's bar, its
    link's (``href``, ``title``): a link fills its box and has no place of its own (marimo)."""
    plot = page[page.index('<div class="tf-tl-plot"') :]
    plot = plot[: plot.index("</div>")]
    found: list[dict[str, str]] = []
    for tag, attributes in re.findall(r"<(a|span)\b([^>]*)>", plot):
        parsed = dict(re.findall(r'([\w-]+)="([^"]*)"', attributes))
        if tag == "a":
            assert set(parsed) <= {"href", "title"}, parsed
            found[-1].update(parsed)
        else:
            found.append(parsed)
    return found


def variables(style: str) -> dict[str, float]:
    return {name: float(value) for name, value in re.findall(r"--([\w-]+):([^;]+)", style)}


def test_U4_a_page_draws_each_call_as_a_box_on_the_axis_with_its_true_span() -> None:
    view = build_view_model(hour_with_blinks())
    timeline = view["timeline"]
    assert timeline is not None
    page = render_html(view)
    assert "<svg" not in page[page.index('<details class="tf-timeline"') :]
    drawn = shapes(page)
    # Calls are keyed by their entries: the long command, the blink, the last read.
    long, blink, last = "e1", "e2", "e3"
    bars = {s["href"]: s for s in drawn if "tf-tl-bar" in s["class"]}
    assert set(bars) == {f"#call-{long}", f"#call-{blink}", f"#call-{last}"}
    # The axis is not changed: each box says the span of its call, in seconds of the axis.
    by_key = {bar["key"]: bar for turn in timeline["turns"] for bar in turn["bars"] or []}
    for key in (long, blink, last):
        place = variables(bars[f"#call-{key}"]["style"])
        assert (place["x"], place["w"]) == (by_key[key]["x"], by_key[key]["w"])
        assert place["h"] == timeline["bar"]
    assert variables(bars[f"#call-{blink}"]["style"])["w"] < HOUR / 100_000  # far under a pixel
    assert bars[f"#call-{blink}"]["title"].startswith("Read")
    assert bars[f"#call-{blink}"]["class"] == "tf-tl-bar tf-c-read"
    # The failed call's mark is a box over it, and the turn's band one under everything.
    marks = [s for s in drawn if s["class"] == "tf-tl-mark"]
    assert [variables(m["style"])["x"] for m in marks] == [by_key[last]["x"]]
    assert drawn[0]["class"] == "tf-tl-band"
    plot = page[page.index('<div class="tf-tl-plot"') :]
    assert plot.startswith(f'<div class="tf-tl-plot" style="--h:{timeline["height"]}" role="group"')


def test_U4_a_pages_css_keeps_every_shape_visible_and_inside_the_axis() -> None:
    css = turnfold_css(standalone=True)
    rule = css[css.index(".turnfold .tf-tl-plot > * {") :]
    rule = rule[: rule.index("}")]
    # At least MIN_SHAPE_PX wide, however short: the widget's MIN_BAR_PX, as a page can say it.
    assert MIN_SHAPE_PX == 4
    assert f"max(calc(var(--w) * 100% / var(--tf-span)), {MIN_SHAPE_PX}px)" in rule
    # From its start on the axis, unless that would pass the end: then ending there.
    assert "--tf-tl-left: calc((var(--x) - var(--tf-x0)) * 100% / var(--tf-span))" in rule
    assert "left: min(var(--tf-tl-left), calc(100% - var(--tf-tl-width)))" in rule
    assert "width: var(--tf-tl-width)" in rule
    # An idle gap is drawn as long as it is.
    gap = css[css.index(".turnfold .tf-tl-plot > .tf-tl-gap {") :]
    assert "--tf-tl-width: calc(var(--w) * 100% / var(--tf-span))" in gap[: gap.index("}")]
