"""The session browser's search within the filters, close control and page turn to a hit's row,
in real JupyterLab driven by Chromium (spec B-1, C-6, P-11).

The kernel side of each is checked in ``tests/test_browser_search_filters.py``; the helpers and
the corpus of
250 runs (three pages; odd tasks by agent ``a``, even ones by ``b``) are
``tests/browser/test_session_browser.py``'s.
"""

from __future__ import annotations

from playwright.sync_api import Locator, expect

from tests.browser.labkit import Lab
from tests.browser.test_session_browser import MANY, SETUP, browser_of, rows


def agent(browser: Locator, value: str) -> None:
    browser.locator(".tf-b-control", has_text="Agent").locator("select").select_option(value)


def search(browser: Locator, query: str) -> None:
    box = browser.locator(".tf-b-search")
    box.fill(query)
    box.press("Enter")


def tasks(hits: Locator) -> list[int]:
    """The task number of each hit shown, from its title (``Task 12: what is …``)."""
    titles = hits.locator(".tf-b-hit-title").all_inner_texts()
    return [int(title.split(":")[0].removeprefix("Task ")) for title in titles]


def test_B1_C6_a_search_lists_only_hits_of_runs_the_filters_keep_and_follows_them(lab: Lab) -> None:
    browser = browser_of(lab, "search-filtered.ipynb", [SETUP, MANY, "corpus"])
    agent(browser, "b")  # the even tasks
    expect(browser.locator(".tf-b-range")).to_have_text("1–100 of 125 (250 in all)")
    # "+ 12" is in tasks 12 and 120 to 129: six of them even, five odd.
    search(browser, "+ 12")
    hits = browser.locator(".tf-b-hit")
    label = browser.locator(".tf-b-hits-label")
    expect(label).to_have_text("6 hits · in the 125 runs the filters keep · “+ 12”", timeout=60_000)
    assert tasks(hits) == [12, 120, 122, 124, 126, 128]
    agent(browser, "a")  # the filter changes while the hits show: they follow it
    expect(label).to_have_text("5 hits · in the 125 runs the filters keep · “+ 12”", timeout=60_000)
    assert tasks(hits) == [121, 123, 125, 127, 129]
    browser.locator(".tf-b-clear").click()
    expect(label).to_have_text("11 hits · “+ 12”", timeout=60_000)
    lab.screenshot("session-browser-search-filtered.png", browser)


def test_B1_a_run_opened_closes_by_its_button_or_escape_in_the_table(lab: Lab) -> None:
    browser = browser_of(lab, "close-run.ipynb", [SETUP, MANY, "corpus"])
    close = browser.get_by_role("button", name="Close this run")
    expect(close).to_be_hidden()  # nothing open, nothing to close
    rows(browser).first.click()
    transcript = browser.locator(".tf-b-transcript")
    expect(transcript.locator(".tf-widget")).to_contain_text("Task 0: what is 0 + 0?")
    expect(close).to_be_visible()
    lab.screenshot("session-browser-close-run.png", browser)

    # Reached by the keyboard: Tab from the table's row, past the pager, lands on it.
    for _ in range(6):
        if close.evaluate("(e) => e === document.activeElement"):
            break
        lab.page.keyboard.press("Tab")
    expect(close).to_be_focused()
    lab.page.keyboard.press("Enter")
    expect(transcript).to_be_hidden()
    expect(close).to_be_hidden()
    expect(browser.locator("tr.tf-b-open")).to_have_count(0)
    expect(transcript.locator(".tf-turn")).to_have_count(0)  # the transcript widget emptied
    first = rows(browser).first
    expect(first).to_be_focused()  # the keyboard goes back to the row it closed

    lab.page.keyboard.press("Enter")  # opened again from the table
    expect(transcript.locator(".tf-widget")).to_contain_text("Task 0: what is 0 + 0?")
    expect(browser.locator("tr.tf-b-open")).to_have_attribute("aria-rowindex", "2")
    lab.page.keyboard.press("Escape")  # the focus in the table: Escape closes it
    expect(transcript).to_be_hidden()
    expect(browser.locator("tr.tf-b-open")).to_have_count(0)
    expect(first).to_be_focused()
    # The notebook did not take the keys: its cells stayed where they were.
    active = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
    assert lab.page.evaluate(active) == 2


def test_B1_P11_a_hit_on_another_page_turns_the_table_to_its_row_marked_open(lab: Lab) -> None:
    browser = browser_of(lab, "hit-page.ipynb", [SETUP, MANY, "corpus"])
    expect(browser.locator(".tf-b-range")).to_have_text("1–100 of 250")
    search(browser, "what is 150 + 150")
    hit = browser.locator(".tf-b-hit")
    expect(hit).to_have_count(1, timeout=60_000)
    key = hit.get_attribute("data-key")
    hit.click()
    expect(browser.locator(".tf-b-range")).to_have_text("101–200 of 250")
    opened = browser.locator("tr.tf-b-open")
    expect(opened).to_have_attribute("data-key", key or "")
    expect(opened).to_have_attribute("aria-rowindex", "152")
    expect(opened).to_have_attribute("aria-selected", "true")  # the grid's cursor, for the keys
    expect(browser.locator(".tf-b-transcript .tf-widget")).to_contain_text("Task 150")
    # In the table's own view, not scrolled away below its first rows.
    scroller = browser.locator(".tf-b-scroll").bounding_box()
    row = opened.bounding_box()
    assert scroller is not None
    assert row is not None
    assert scroller["y"] <= row["y"]
    assert row["y"] + row["height"] <= scroller["y"] + scroller["height"] + 1
    lab.screenshot("session-browser-hit-page.png", browser)
