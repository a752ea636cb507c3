"""The session browser in real JupyterLab, driven by Chromium (issue 16; B-1, C-6, P-11, X-1).

Fixtures and helpers are documented in ``conftest.py``. The browser is the ``.tf-browser`` of
the cell's output; the run opened from it shows under its table in a ``.tf-widget``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from playwright.sync_api import Locator, expect

from tests.browser.labkit import Lab
from tests.browser.test_widget_browser import _hostile_transcript, _load_test_module
from turnfold.model import Transcript, UserMessage

if TYPE_CHECKING:
    from playwright.sync_api import FloatRect

TREE = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"

SETUP = """\
import os, tempfile
os.environ["TURNFOLD_CACHE_DIR"] = tempfile.mkdtemp()  # the test's own index
import turnfold"""

#: 250 short runs as a table of trajectories: three pages of rows.
MANY = """\
import pandas as pd
rows = [{"task": f"t{i}", "agent_name": "a" if i % 2 else "b", "messages": [
    {"role": "user", "content": f"Task {i}: what is {i} + {i}?"},
    {"role": "assistant", "content": f"It is {2 * i}."}]} for i in range(250)]
corpus = turnfold.scan(pd.DataFrame(rows), workers=1)"""


def browser_of(lab: Lab, name: str, cells: list[str]) -> Locator:
    lab.write_notebook(name, cells)
    lab.open(name)
    lab.run_all()
    panel = lab.page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
    browser = lab.page.locator(f"#{panel} .tf-browser").first
    browser.wait_for()
    return browser


def rows(browser: Locator) -> Locator:
    return browser.locator(".tf-b-grid tbody tr")


def column(browser: Locator, label: str) -> list[str]:
    """The text of each shown row's cell in the column headed ``label``."""
    return browser.evaluate(
        """(root, label) => {
            const heads = [...root.querySelectorAll('.tf-b-grid th')].map((th) => th.innerText);
            const at = heads.findIndex((text) => text.startsWith(label));
            return [...root.querySelectorAll('.tf-b-grid tbody tr')]
                .map((tr) => tr.children[at].textContent);
        }""",
        label,
    )


def test_B1_sort_by_a_column_and_filter_by_agent_in_the_kernel(lab: Lab) -> None:
    browser = browser_of(lab, "sort.ipynb", [SETUP, f"turnfold.scan({str(TREE)!r}, workers=1)"])
    grid = browser.locator(".tf-b-grid")
    assert grid.get_attribute("role") == "grid"
    count = rows(browser).count()
    assert count >= 5
    assert grid.get_attribute("aria-rowcount") == str(count + 1)
    assert browser.locator(".tf-b-range").inner_text() == f"1–{count} of {count}"

    tools = browser.locator("th", has_text="Tools")
    tools.locator("button").click()
    expect(tools).to_have_attribute("aria-sort", "descending")  # numbers: largest first
    shown = [int(text or "-1") for text in column(browser, "Tools")]
    assert shown == sorted(shown, reverse=True)
    tools.locator("button").click()
    expect(tools).to_have_attribute("aria-sort", "ascending")

    browser.locator(".tf-b-choice", has_text="Agent").locator("select").select_option("codex")
    expect(browser.locator(".tf-b-range")).to_have_text(f"1–1 of 1 ({count} in all)")
    assert column(browser, "Agent") == ["codex"]
    browser.locator(".tf-b-clear").click()
    expect(rows(browser)).to_have_count(count)


def test_B1_outcome_and_failures_read_at_a_glance_by_glyph_and_colour(lab: Lab) -> None:
    browser = browser_of(lab, "glance.ipynb", [SETUP, f"turnfold.scan({str(TREE)!r}, workers=1)"])
    failed = browser.locator("td.tf-tone-fail").first
    assert failed.inner_text().startswith("✖ ")
    red = failed.evaluate("(e) => getComputedStyle(e).color")
    plain = browser.locator("td:not([class])").first.evaluate("(e) => getComputedStyle(e).color")
    assert red != plain
    unreadable = browser.locator("tr.tf-tone-row-error td.tf-tone-error").first
    assert unreadable.inner_text().startswith("⚠ ")


def test_B1_keyboard_moves_opens_and_turns_the_page(lab: Lab) -> None:
    browser = browser_of(lab, "keys.ipynb", [SETUP, MANY, "corpus"])
    expect(browser.locator(".tf-b-range")).to_have_text("1–100 of 250")
    rows(browser).first.click()  # opens the first run, and the grid has the focus
    transcript = browser.locator(".tf-b-transcript .tf-widget")
    expect(transcript).to_contain_text("Task 0: what is 0 + 0?")
    lab.page.keyboard.press("ArrowDown")
    lab.page.keyboard.press("Enter")
    expect(transcript).to_contain_text("Task 1: what is 1 + 1?")
    expect(browser.locator("tr.tf-b-open")).to_have_attribute("aria-rowindex", "3")
    lab.screenshot("session-browser.png", browser)

    lab.page.keyboard.press("End")
    lab.page.keyboard.press("ArrowDown")  # past the last row: the next page, from the kernel
    expect(browser.locator(".tf-b-range")).to_have_text("101–200 of 250")
    active = browser.locator('tr[aria-selected="true"]')
    expect(active).to_have_attribute("aria-rowindex", "102")
    expect(active).to_be_focused()
    assert rows(browser).count() == 100  # the view holds one page
    lab.page.keyboard.press("Enter")
    expect(transcript).to_contain_text("Task 100: what is 100 + 100?")
    lab.page.keyboard.press("ArrowUp")  # back past the first row: the page before, its last row
    expect(browser.locator(".tf-b-range")).to_have_text("1–100 of 250")
    expect(browser.locator('tr[aria-selected="true"]')).to_have_attribute("aria-rowindex", "101")
    # The notebook did not take the keys: its cells stayed where they were.
    assert (
        lab.page.evaluate("() => window.jupyterapp.shell.currentWidget.content.activeCellIndex")
        == 2
    )


def test_C6_P11_slash_searches_every_run_and_a_hit_opens_revealed(lab: Lab) -> None:
    browser = browser_of(lab, "search.ipynb", [SETUP, f"turnfold.scan({str(TREE)!r}, workers=1)"])
    rows(browser).first.focus()  # nothing opened yet: the hit opens the first run
    lab.page.keyboard.press("/")
    search = browser.locator(".tf-b-search")
    expect(search).to_be_focused()
    search.fill("readme")
    search.press("Enter")
    hits = browser.locator(".tf-b-hit")
    expect(hits.first).to_be_visible(timeout=60_000)
    assert "readme" in hits.first.locator(".tf-b-hit-snippet").inner_text().lower()
    key, entry = (hits.first.get_attribute(name) or "" for name in ("data-key", "data-entry"))
    hits.first.click()
    expect(browser.locator("tr.tf-b-open")).to_have_attribute("data-key", key)
    revealed = browser.locator(".tf-b-transcript .tf-revealed")
    expect(revealed).to_have_count(1)
    expect(revealed).to_be_visible()  # its folds opened: exactly its ancestors (P-11)
    assert (revealed.get_attribute("data-key") or "").endswith(entry)


def test_X1_a_hostile_corpus_stays_text_in_the_browser_and_its_transcripts(lab: Lab) -> None:
    security = _load_test_module("test_security")
    folder = lab.server.root / "hostile-runs"
    folder.mkdir()
    transcript = _hostile_transcript()
    for number, payload in enumerate([*security.PAYLOADS[:12], "<img src=x onerror=alert(1)>"]):
        run = Transcript([UserMessage(text=payload), *transcript.entries])  # the payload: a title
        (folder / f"run-{number:02d}.jsonl").write_text(run.dump(), encoding="utf-8")
    browser = browser_of(lab, "hostile.ipynb", [SETUP, f"turnfold.scan({str(folder)!r})"])
    expect(rows(browser)).to_have_count(13)
    for index in range(3):
        rows(browser).nth(index).click()
        # Each run is the whole hostile transcript (a megabyte): the kernel loads it and draws
        # it on a busy CI machine, which has taken over the default 5 s.
        opened = browser.locator(".tf-b-transcript .tf-widget .tf-turn").first
        expect(opened).to_be_visible(timeout=30_000)
    lab.page.wait_for_timeout(1000)  # give any injected handler time to fire
    assert lab.dialogs == []
    assert not [line for line in lab.console if "TF-PWNED" in line]
    assert not [url for url in lab.requests if "evil.test" in url]
    assert browser.locator("script, iframe, object, embed, form, img[onerror]").count() == 0
    assert "<img src=x onerror=alert(1)>" in browser.locator(".tf-b-grid").inner_text()


#: The fixture folder scanned, as a notebook cell.
SCAN_TREE = f"turnfold.scan({str(TREE)!r}, workers=1)"


def _box(locator: Locator) -> FloatRect:
    box = locator.bounding_box()
    assert box is not None, locator
    return box


def test_B1_the_column_picker_opens_on_a_line_of_its_own_under_the_filters(lab: Lab) -> None:
    browser = browser_of(lab, "picker.ipynb", [SETUP, SCAN_TREE])
    builder = browser.locator(".tf-b-builder")
    builder.locator("select").first.select_option(label="Turns")
    builder.locator("select").nth(1).select_option(">=")
    builder.locator("input").fill("2")
    builder.locator("button").click()
    chip = browser.locator(".tf-b-chip")
    expect(chip).to_have_text("Turns >= 2×")
    browser.locator(".tf-b-columns > summary").click()
    picker = browser.locator(".tf-b-column-list")
    expect(picker.locator("label", has_text="Outcome")).to_be_visible()
    lab.screenshot("session-browser-columns.png", browser)
    filters, opened = _box(browser.locator(".tf-b-filters")), _box(browser.locator(".tf-b-columns"))
    chip_box, list_box = _box(chip), _box(picker)
    # The open picker spans the filters' width from their left edge, below the reader's chips:
    # squeezed into the row's end, it had stretched the row and floated the chips halfway down.
    assert abs(opened["x"] - filters["x"]) < 2
    assert opened["width"] > 0.95 * filters["width"]
    assert chip_box["y"] + chip_box["height"] <= list_box["y"]


def test_C6_a_hit_cut_to_one_line_keeps_its_whole_title_and_snippet_as_a_tooltip(
    lab: Lab,
) -> None:
    browser = browser_of(lab, "hit-tips.ipynb", [SETUP, SCAN_TREE])
    search = browser.locator(".tf-b-search")
    search.fill("readme")
    search.press("Enter")
    hit = browser.locator(".tf-b-hit").first
    expect(hit).to_be_visible(timeout=60_000)
    title, snippet = hit.locator(".tf-b-hit-title"), hit.locator(".tf-b-hit-snippet")
    # Cut short on screen (the session's title is a long prompt) ...
    assert title.evaluate("(e) => e.scrollWidth > e.clientWidth")
    # ... and whole in the tooltip.
    assert title.get_attribute("title") == title.text_content()
    assert (title.get_attribute("title") or "").startswith("/orchestrator @CLAUDE.md")
    assert snippet.get_attribute("title") == snippet.text_content()
    assert "readme" in (snippet.get_attribute("title") or "").lower()


def test_B1_keys_on_a_focused_filter_are_the_filters_not_the_notebooks(lab: Lab) -> None:
    browser = browser_of(lab, "filter-keys.ipynb", [SETUP, SCAN_TREE])
    active = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
    assert lab.page.evaluate(active) == 1  # the browser's cell
    agent = browser.locator(".tf-b-control", has_text="Agent").locator("select")
    agent.focus()
    # JupyterLab's command mode binds the arrow keys to the focused element (`:focus`): the key
    # had moved the notebook's active cell, and the focus with it, and the choice stayed "Any".
    lab.page.keyboard.press("ArrowDown")
    expect(agent).to_have_value("claude-code")  # the commonest agent, first after "Any"
    expect(browser.locator(".tf-b-range")).to_have_text("1–2 of 2 (6 in all)")
    expect(agent).to_be_focused()
    assert lab.page.evaluate(active) == 1


#: A title within the length Python gives a tooltip past (60 characters), in capitals: wider
#: than the 36em a cell is cut at, as a Chinese or Japanese title of 40 characters is.
CAPITALS = "MIGRATE THE WHOLE MEDIA MODULE TO WASM AND FIX EVERY WARNING"
SHOUTED = f"""\
import pandas as pd
corpus = turnfold.scan(pd.DataFrame([{{"task": "t0", "messages": [
    {{"role": "user", "content": {CAPITALS!r}}},
    {{"role": "assistant", "content": "Done."}}]}}]), workers=1)
corpus"""


def test_B1_a_title_cut_short_by_its_width_shows_whole_as_a_tooltip(lab: Lab) -> None:
    assert len(CAPITALS) <= 60
    browser = browser_of(lab, "shouted.ipynb", [SETUP, SHOUTED])
    title = rows(browser).first.locator("td").first
    expect(title).to_have_text(CAPITALS)
    # Cut, with an ellipsis: its text, broken into lines at the cell's width, shows its first.
    assert title.locator(".tf-b-clip").evaluate("(e) => e.scrollHeight > e.clientHeight")
    title.hover()
    expect(title).to_have_attribute("title", CAPITALS)
