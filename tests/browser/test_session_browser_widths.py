"""The session browser's table in an output area narrower than its columns (spec B-1).

In real JupyterLab, driven by Chromium (fixtures in ``conftest.py``). The default columns of
``tests/fixtures/corpus`` are about 1,160 px wide at their full width: in a 900–1000 px output
area the table had kept every column whole and cut the last ones (Tokens, Cost, Outcome) at the
output's edge, to be scrolled to. Text gives way first now: the title, agent and model are cut
short with an ellipsis (their whole text a tooltip), and no figure ever is.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Locator

from tests.browser.labkit import Lab
from tests.browser.test_session_browser import SCAN_TREE, SETUP, browser_of

#: What the grid looks like to a reader: per column, its heading, whether it is a text column,
#: how much of it lies past the visible edge of the scrolled box, and how many of its cells
#: show less than their whole text.
LAYOUT = """(root) => {
    const scroller = root.querySelector('.tf-b-scroll');
    const edge = scroller.getBoundingClientRect().left + scroller.clientLeft + scroller.clientWidth;
    const rows = [...root.querySelectorAll('.tf-b-grid tbody tr')];
    const cut = (td) => {
        const clip = td.querySelector('.tf-b-clip');
        return clip ? clip.scrollHeight > clip.clientHeight + 1 : td.scrollWidth > td.clientWidth;
    };
    const columns = [...root.querySelectorAll('.tf-b-grid th')].map((th, at) => ({
        label: th.innerText.trim(),
        text: rows.some((tr) => tr.children[at].querySelector('.tf-b-clip')),
        past: Math.max(0, Math.round(th.getBoundingClientRect().right - edge)),
        cut: rows.filter((tr) => cut(tr.children[at])).length,
    }));
    return {width: root.getBoundingClientRect().width, scrolls:
            scroller.scrollWidth > scroller.clientWidth + 1, columns};
}"""


def output_width(lab: Lab, browser: Locator, width: int) -> dict[str, Any]:
    """The grid's layout with the browser ``width`` px wide: the window is resized so that
    JupyterLab's own layout (side bar, prompt, margins) leaves that much to the output."""
    size = lab.page.viewport_size
    assert size is not None
    now = browser.evaluate("(root) => root.getBoundingClientRect().width")
    lab.page.set_viewport_size({"width": round(size["width"] + width - now), "height": 1000})
    lab.page.wait_for_function(
        "([root, width]) => Math.abs(root.getBoundingClientRect().width - width) < 2",
        arg=[browser.element_handle(), width],
    )
    layout: dict[str, Any] = browser.evaluate(LAYOUT)
    return layout


def test_B1_a_narrow_output_cuts_the_tables_text_and_never_its_figures(lab: Lab) -> None:
    browser = browser_of(lab, "widths.ipynb", [SETUP, SCAN_TREE])
    for width in (1000, 950, 900):
        layout = output_width(lab, browser, width)
        columns = {column["label"]: column for column in layout["columns"]}
        assert {"Tokens", "Cost", "Outcome"} <= set(columns)
        # Every column, figures and all, within the output's width: nothing to scroll to.
        assert not layout["scrolls"], (width, layout)
        assert [c["label"] for c in layout["columns"] if c["past"] > 0] == [], (width, layout)
        # No figure is cut; the text columns are the ones that gave way.
        assert [c["label"] for c in layout["columns"] if c["cut"] and not c["text"]] == []
        assert {c["label"] for c in layout["columns"] if c["text"]} == {"Title", "Agent", "Model"}
        assert columns["Title"]["cut"], (width, layout)
    lab.screenshot("session-browser-900px.png", browser)
    # A title cut short shows its whole text when the pointer reaches it.
    title = browser.locator(".tf-b-grid tbody tr", has_text="Hello, Codex!").locator("td").first
    title.hover()
    assert title.get_attribute("title") == "Hello, Codex! Please explain what you do."


def test_B1_an_output_narrower_than_the_figures_scrolls_and_still_cuts_none(lab: Lab) -> None:
    browser = browser_of(lab, "narrow.ipynb", [SETUP, SCAN_TREE])
    layout = output_width(lab, browser, 600)
    assert layout["scrolls"]  # the figures alone are wider: the grid scrolls to them
    assert [c["label"] for c in layout["columns"] if c["cut"] and not c["text"]] == []
    # The text columns gave all they could first: each is at its narrowest, a few letters wide.
    widths = browser.evaluate(
        """(root) => [...root.querySelectorAll('.tf-b-grid tbody tr:last-child .tf-b-clip')]
            .map((clip) => clip.offsetWidth / parseFloat(getComputedStyle(clip).fontSize))"""
    )
    assert widths
    assert all(6.5 < width < 7.5 for width in widths), widths
