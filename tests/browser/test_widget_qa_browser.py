"""The widgets' defects a QA pass found, checked in real JupyterLab and Chromium (spec U-4, W-3,
B-1): a turn of milliseconds in a long session's timeline, keys on a focused header reaching the
notebook, and the session browser's rows (a DataFrame's model and agent, an unreadable file).

Fixtures and helpers are documented in ``conftest.py``.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Locator, expect

from tests.browser.labkit import Lab
from tests.browser.test_compare_browser import FIRST_A, TWO_DEMOS
from tests.browser.test_session_browser import SCAN_TREE, SETUP, TREE, browser_of, column, rows
from turnfold.formats import FORMATS

# A session of fifty minutes whose second turn lasts 5 ms, its one call 3 ms: a thousandth of
# a pixel at any width a notebook has.
SHORT_TURN_SETUP = """\
from datetime import datetime, timedelta, timezone
from turnfold.recording import Recorder
from turnfold.widget import TranscriptWidget

start, now = datetime(2026, 3, 2, 14, 0, tzinfo=timezone.utc), [0.0]
rec = Recorder(clock=lambda: (start + timedelta(seconds=now[0])).isoformat())
def at(seconds): now[0] = seconds
at(0); rec.user("Port the build to Bazel")
at(1); done = rec.start_tool("Bash", {"command": "bazel build //..."})
at(3000); rec.finish_tool(done, "ok")
at(3001); rec.assistant("Done.")
at(3030); rec.user("And the version?")
at(3030.001); quick = rec.start_tool("Read", {"file_path": "VERSION"})
at(3030.004); rec.finish_tool(quick, "1.2.3")
at(3030.005); rec.assistant("It is 1.2.3.")
widget = TranscriptWidget(rec.transcript)"""

SPAN_S = 3030.005


def _box(locator: Locator) -> dict[str, float]:
    return dict(locator.evaluate("(e) => e.getBoundingClientRect().toJSON()"))


def test_U4_a_turn_of_milliseconds_in_a_long_session_can_be_seen_pointed_at_and_clicked(
    lab: Lab,
) -> None:
    lab.page.set_viewport_size({"width": 1100, "height": 1000})
    widget = lab.open_notebook("timeline-short.ipynb", [SHORT_TURN_SETUP, "widget"])
    lab.toggle(widget, "timeline")
    timeline = lab.keyed(widget, "timeline")
    short = timeline.locator('[data-call="e4"]')
    expect(short).to_be_visible()
    axis = _box(timeline.locator(".tf-tl-svg"))
    bar, band = _box(short.locator("rect")), _box(timeline.locator(".tf-tl-band").nth(1))
    # Seen: at least MIN_BAR_PX (4) wide, its band too (it had been a thousandth of a pixel).
    assert bar["width"] >= 4
    assert band["width"] >= 4
    # The scale is the truth: the bar covers its moment, on the picture (the session's last
    # moment is the axis's end), and the long call keeps its width.
    x = axis["x"] + 3030.001 / SPAN_S * axis["width"]
    assert bar["x"] <= x <= bar["x"] + bar["width"]
    assert bar["x"] + bar["width"] <= axis["x"] + axis["width"] + 0.5
    long = _box(timeline.locator('[data-call="e1"] rect'))
    assert abs(long["width"] - 2999 / SPAN_S * axis["width"]) <= 3
    # The tooltip says the true duration.
    assert short.locator("title").text_content() == "Read VERSION · 3ms"
    # Pointed at: the pointer at its middle is on it, and hovering outlines it.
    middle = (bar["x"] + bar["width"] / 2, bar["y"] + bar["height"] / 2)
    assert lab.page.evaluate(
        "([x, y]) => Boolean(document.elementFromPoint(x, y)?.closest('[data-call=\"e4\"]'))",
        list(middle),
    )
    before = short.locator("rect").evaluate("(e) => getComputedStyle(e).stroke")
    lab.page.mouse.move(*middle)
    expect(short.locator("rect")).not_to_have_css("stroke", before)
    # Clicked: its call is revealed, in the turn it belongs to.
    lab.page.mouse.click(*middle)
    revealed = lab.keyed(widget, "e4")
    expect(revealed).to_be_visible()
    lab.screenshot("timeline-short-turn.png", timeline)
    # A narrower view draws it MIN_BAR_PX wide still (its width follows the view's).
    lab.page.set_viewport_size({"width": 700, "height": 1000})
    narrower = _box(timeline.locator(".tf-tl-svg"))["width"]
    assert narrower < axis["width"]
    lab.page.wait_for_function(
        "() => document.querySelector('[data-call=\"e4\"] rect').getBoundingClientRect().width >= 4"
    )


ACTIVE = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
CELLS = "() => window.jupyterapp.shell.currentWidget.content.widgets.length"

#: JupyterLab's command-mode shortcuts a reader's keys on a focused header had set off: select
#: another cell, insert one above (`a`) or below (`b`), delete one (`d d`), cut one (`x`).
NOTEBOOK_KEYS = ["ArrowDown", "ArrowUp", "j", "k", "a", "b", "d", "d", "x", "m"]


def _notebook(lab: Lab) -> tuple[Any, Any]:
    return lab.page.evaluate(CELLS), lab.page.evaluate(ACTIVE)


def _press_notebook_keys(lab: Lab, header: Locator) -> tuple[Any, Any]:
    """Focus ``header`` in command mode (its cell becomes the active one) and press the keys;
    returns the notebook's cells and active cell from before the keys."""
    lab.page.evaluate("() => window.jupyterapp.commands.execute('notebook:enter-command-mode')")
    header.focus()
    before = _notebook(lab)
    for key in NOTEBOOK_KEYS:
        lab.page.keyboard.press(key)
        expect(header).to_be_focused()  # the focus stayed: no cell took it
    return before


def test_W3_keys_on_a_focused_transcript_header_are_the_widgets_not_the_notebooks(
    lab: Lab,
) -> None:
    widget = lab.open_notebook(
        "keys-transcript.ipynb",
        ["from turnfold.samples import demo_session\nimport turnfold",
         "turnfold.TranscriptWidget(demo_session())", "1 + 1"],
    )  # fmt: skip
    header = lab.header(widget, "process:turn:e0")
    opened = lab.expanded(widget, "process:turn:e0")
    cells, active = _press_notebook_keys(lab, header)
    assert _notebook(lab) == (cells, active)  # no cell added, deleted or moved to
    assert lab.expanded(widget, "process:turn:e0") == opened
    # The widget's own keys still work: Space and Enter toggle, Tab moves on.
    lab.page.keyboard.press("Space")
    expect(header).to_have_attribute("aria-expanded", str(not opened).lower())
    lab.page.keyboard.press("Enter")
    expect(header).to_have_attribute("aria-expanded", str(opened).lower())
    lab.page.keyboard.press("Tab")
    expect(header).not_to_be_focused()
    assert widget.evaluate("(root) => root.contains(document.activeElement)")
    assert _notebook(lab) == (cells, active)


def test_W3_keys_on_a_focused_compare_header_are_the_widgets_not_the_notebooks(
    lab: Lab,
) -> None:
    widget = lab.open_notebook("keys-compare.ipynb", [TWO_DEMOS, "widget", "1 + 1"])
    header = lab.header(widget, FIRST_A)
    cells, active = _press_notebook_keys(lab, header)
    assert _notebook(lab) == (cells, active)
    assert not lab.expanded(widget, FIRST_A)
    lab.page.keyboard.press("Enter")  # its own key: opens it, and its counterpart (B-3)
    expect(header).to_have_attribute("aria-expanded", "true")
    assert _notebook(lab) == (cells, active)


DATAFRAME = """\
import pandas as pd
corpus = turnfold.scan(pd.DataFrame([
    {"task": f"t{i}", "model": model, "agent_name": agent, "messages": [
        {"role": "user", "content": f"Task {i}"}, {"role": "assistant", "content": "Done."}]}
    for i, (model, agent) in enumerate([("gpt-4o", "solver"), ("claude-sonnet-4", "critic")])
]), workers=1)
corpus"""


def test_B1_a_dataframe_s_model_and_agent_name_show_in_the_model_and_agent_columns(
    lab: Lab,
) -> None:
    browser = browser_of(lab, "frame-columns.ipynb", [SETUP, DATAFRAME])
    expect(rows(browser)).to_have_count(2)
    assert column(browser, "Model") == ["gpt-4o", "claude-sonnet-4"]
    assert column(browser, "Agent") == ["solver", "critic"]
    agent = browser.locator(".tf-b-control", has_text="Agent").locator("select")
    agent.select_option("critic")
    expect(rows(browser)).to_have_count(1)
    assert column(browser, "Model") == ["claude-sonnet-4"]


def test_B1_an_unreadable_file_s_row_names_the_file_with_its_path_on_hover(lab: Lab) -> None:
    browser = browser_of(lab, "unreadable.ipynb", [SETUP, SCAN_TREE])
    broken = browser.locator("tr.tf-tone-row-error td.tf-tone-error")
    expect(broken).to_have_count(2)
    texts = sorted(broken.all_inner_texts())
    tried, counted = f"; formats tried: {', '.join(FORMATS)}", f"; {len(FORMATS)} formats tried"
    assert texts == [
        f"⚠ empty.jsonl: not a transcript (the source is empty){counted}",
        f"⚠ garbage.jsonl: line 1: not a transcript (invalid JSON){counted}",
    ]
    garbage = broken.filter(has_text="garbage.jsonl")
    garbage.hover()
    path = TREE / "broken" / "garbage.jsonl"
    expect(garbage).to_have_attribute(
        "title", f"{path}: line 1: not a transcript (invalid JSON){tried}"
    )
