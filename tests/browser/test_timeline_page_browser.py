"""U-4 on a page with no script, in Chromium: a call of a few milliseconds in an hour's session is
drawn at least ``MIN_SHAPE_PX`` wide where it starts, and one at the axis's end ends there rather
than hang outside the picture (``tests/test_timeline_page.py`` checks the page's HTML and CSS).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tests.test_timeline_page import hour_with_blinks
from turnfold.render.html import MIN_SHAPE_PX
from turnfold.render.page import render_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser

#: The box of each shape and of the plot, as the reader's screen has them.
BOXES = """() => {
  const box = (e) => { const r = e.getBoundingClientRect(); return {x: r.x, w: r.width}; };
  const plot = document.querySelector('.tf-tl-plot');
  const bars = {};
  for (const a of plot.querySelectorAll('.tf-tl-bar > a')) bars[a.getAttribute('href')] = box(a);
  return {plot: box(plot), bars, marks: [...plot.querySelectorAll('.tf-tl-mark')].map(box)};
}"""


def test_U4_a_page_draws_a_blink_of_a_call_visible_and_inside_the_axis(
    chromium: Browser, tmp_path: Path
) -> None:
    page_file = tmp_path / "hour.html"
    page_file.write_text(render_page(hour_with_blinks(), title="hour"), encoding="utf-8")
    viewport = {"width": 900, "height": 600}
    context = chromium.new_context(java_script_enabled=False, viewport=viewport)
    try:
        page = context.new_page()
        page.goto(page_file.as_uri())
        page.locator(".tf-timeline > summary").click()
        boxes = page.evaluate(BOXES)
        plot, bars = boxes["plot"], boxes["bars"]
        per_second = plot["w"] / 3600.0
        long, blink, last = bars["#call-e1"], bars["#call-e2"], bars["#call-e3"]
        # The long command keeps its true span: the scale is the axis's.
        assert abs(long["x"] - (plot["x"] + 1 * per_second)) < 1
        assert abs(long["w"] - 3590 * per_second) < 1
        # 3 ms of an hour is far under a pixel: drawn MIN_SHAPE_PX wide, from where it starts.
        assert blink["w"] >= MIN_SHAPE_PX - 0.01
        assert abs(blink["x"] - (plot["x"] + 1800 * per_second)) < 1
        # The last call ends with the axis: drawn MIN_SHAPE_PX wide, ending there.
        assert last["w"] >= MIN_SHAPE_PX - 0.01
        assert abs(last["x"] + last["w"] - (plot["x"] + plot["w"])) < 0.5
        (mark,) = boxes["marks"]  # its failure mark, the same
        assert mark["w"] >= MIN_SHAPE_PX - 0.01
        assert mark["x"] + mark["w"] <= plot["x"] + plot["w"] + 0.01
        page.screenshot(path=str(tmp_path / "timeline.png"))
    finally:
        context.close()
