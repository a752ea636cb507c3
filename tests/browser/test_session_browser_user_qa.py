"""A user's QA pass of the session browser in real JupyterLab and Chromium (spec B-1, C-6, C-7,
P-10, P-11, W-4).

The reader has scanned a home-like folder of runs (Claude Code projects, one with a sub-agent
folder and one cut off mid-line; Codex sessions with a spawned sub-agent's file and 120 copies,
so the table has two pages; an Inspect ``.eval`` of four samples by two epochs; a mini-swe-agent
trajectory; a file that is not a transcript) and browses it: sorting, filtering, paging, opening
runs and their folds, searching across runs, by mouse and by keyboard, in a wide and in a narrow
notebook column, re-running the cell, and saving the notebook for export.

One notebook and one kernel serve the whole module (a fixture of its own over the session's
JupyterLab server and Chromium, see ``conftest.py``): each test starts from the browser as the
cell made it (no search, the default query), set from the kernel.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import pytest
from playwright.sync_api import Locator, expect

from tests.browser.labkit import Lab, new_page
from tests.browser.test_session_browser import rows

if TYPE_CHECKING:
    from playwright.sync_api import Browser

    from tests.browser.labkit import LabServer

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
#: Codex sessions copied beside the real one: with the other runs, more than a page of rows.
CODEX_COPIES = 120
COUNTS = "135 rows, 1 error, 0 skipped"
#: The runs of the tree that are not Codex copies, by what their title starts with.
SUBAGENT_RUN = "FIRST-PROMPT: run a sub-agent in the background"
CODEX_TITLE = "Hello, Codex! Please explain what you do."


def build_home(home: Path) -> Path:
    """A reader's home with the runs of several agents, all copies of tests/fixtures."""
    claude = home / ".claude" / "projects"
    shutil.copytree(FIXTURES / "corpus" / "claude", home / ".claude")
    shutil.copytree(
        FIXTURES / "claude-code" / "v2.1.337_real_background-agent-folder", claude / "-home-dev-api"
    )
    whole = (claude / "-home-dev-shop" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl").read_bytes()
    (claude / "-home-dev-cut").mkdir()
    (claude / "-home-dev-cut" / "cut-session.jsonl").write_bytes(whole[: len(whole) // 2])
    shutil.copytree(FIXTURES / "corpus" / "codex", home / ".codex")
    day = home / ".codex" / "sessions" / "2026" / "05" / "12"
    parent = day / "rollout-2026-05-12T09-59-55-a1b2c3d4-e5f6-7890-abcd-ef1234567890.jsonl"
    for number in range(CODEX_COPIES):
        hour, minute = divmod(number, 60)
        name = f"rollout-2026-05-12T1{hour}-{minute:02d}-00-copy{number:03d}.jsonl"
        shutil.copy(parent, day / name)
    (home / "evals").mkdir()
    shutil.copy(FIXTURES / "harnesses" / "inspect" / "react_four-samples_two-epochs.eval",
                home / "evals")  # fmt: skip
    (home / "mini").mkdir()
    shutil.copy(FIXTURES / "harnesses" / "mini-swe-agent"
                / "mini-swe-agent_v2.4.6_textbased_submitted.traj.json", home / "mini")  # fmt: skip
    (home / "broken").mkdir()
    shutil.copy(FIXTURES / "corpus" / "broken" / "garbage.jsonl", home / "broken")
    return home


SETUP = """\
import os, tempfile
os.environ["TURNFOLD_CACHE_DIR"] = tempfile.mkdtemp()  # the test's own index
import turnfold
corpus = turnfold.scan({home!r}, workers=1)
browser = turnfold.SessionBrowser(corpus)"""

#: The browser as the cell made it: no search, the default query.
RESET = "browser.search(''); browser.query = {}"


class Session:
    """The module's notebook: the page, and the browser the second cell shows."""

    def __init__(self, lab: Lab, home: Path) -> None:
        self.lab = lab
        self.home = home

    @property
    def browser(self) -> Locator:
        panel = self.lab.page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
        return self.lab.page.locator(f"#{panel} .tf-browser").first

    @property
    def transcript(self) -> Locator:
        return self.browser.locator(".tf-b-transcript .tf-widget")

    def search(self, query: str) -> Locator:
        """Search every run for ``query`` from the box, Enter; the hits' label once answered."""
        box = self.browser.locator(".tf-b-search")
        box.fill(query)
        box.press("Enter")
        label = self.browser.locator(".tf-b-hits-label")
        expect(label).to_contain_text(f"“{query}”", timeout=60_000)
        return label

    def active_cell(self) -> int:
        return int(
            self.lab.page.evaluate(
                "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
            )
        )


@pytest.fixture(scope="module")
def notebook(
    chromium: Browser, lab_server: LabServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Session]:
    home = build_home(tmp_path_factory.mktemp("qa-home") / "home")
    with new_page(chromium) as page:
        lab = Lab(page, lab_server)
        page.on("console", lambda message: lab.console.append(f"{message.type}: {message.text}"))
        lab.write_notebook("user-qa.ipynb", [SETUP.format(home=str(home)), "browser"])
        lab.open("user-qa.ipynb")
        lab.run_all()
        session = Session(lab, home)
        session.browser.wait_for()
        try:
            yield session
        finally:
            with contextlib.suppress(Exception):
                page.evaluate("() => window.jupyterapp?.serviceManager.sessions.shutdownAll()")


@pytest.fixture
def qa(notebook: Session) -> Session:
    """The module's notebook with its browser reset, in a 1280 px wide window."""
    notebook.lab.page.set_viewport_size({"width": 1280, "height": 1000})
    notebook.lab.execute(RESET)
    expect(notebook.browser.locator(".tf-b-hits")).to_be_hidden()
    expect(notebook.browser.locator(".tf-b-range")).to_have_text("1–100 of 135")
    return notebook


def test_B1_sort_filter_and_page_through_a_home_of_runs(qa: Session) -> None:
    browser = qa.browser
    label = browser.locator(".tf-b-range")
    expect(browser.locator(".tf-b-counts")).to_have_text(COUNTS)
    assert rows(browser).count() == 100  # one page; the rest stays in the kernel

    turns = browser.locator("th", has_text="Turns")
    turns.locator("button").click()
    expect(turns).to_have_attribute("aria-sort", "descending")
    first = rows(browser).first
    expect(first).to_contain_text("Hello")  # the one run of five turns
    outcome = browser.locator("th", has_text="Outcome")
    outcome.locator("button").click()
    expect(outcome).to_have_attribute("aria-sort", "ascending")
    expect(turns).to_have_attribute("aria-sort", "none")
    outcomes = [rows(browser).nth(at).locator("td").last.inner_text() for at in range(9)]
    # Each outcome by its glyph and word; the runs that record none come after, not first.
    assert outcomes == ["⚠ Errored"] * 2 + ["◌ Incomplete"] * 4 + ["✔ Passed"] * 2 + [""]

    agent = browser.locator(".tf-b-control", has_text="Agent").locator("select")
    agent.select_option("inspect")
    expect(label).to_have_text("1–8 of 8 (135 in all)")
    browser.locator(".tf-b-control", has_text="Outcome").locator("select").select_option("error")
    expect(label).to_have_text("1–2 of 2 (135 in all)")
    assert {row.locator("td").nth(1).inner_text() for row in rows(browser).all()} == {
        "crash/1",
        "crash/2",
    }
    browser.locator(".tf-b-clear").click()
    expect(label).to_have_text("1–100 of 135")
    expect(agent).to_have_value("")

    browser.locator(".tf-b-flag input").check()
    expect(label).to_have_text("1–9 of 9 (135 in all)")
    assert all(
        row.locator("td.tf-tone-fail").count() == 1 for row in rows(browser).all()
    )  # each shows its failed tools in red, with a glyph
    browser.locator(".tf-b-flag input").uncheck()
    expect(label).to_have_text("1–100 of 135")
    browser.locator(".tf-b-date").nth(0).locator("input").fill("2026-05-12")
    browser.locator(".tf-b-date").nth(1).locator("input").fill("2026-05-12")
    expect(label).to_have_text(f"1–100 of {CODEX_COPIES + 1} (135 in all)")
    browser.locator(".tf-b-clear").click()

    # A filter of the reader's own with a value that is no number: said, not applied.
    builder = browser.locator(".tf-b-builder")
    builder.locator("select").first.select_option(label="Turns")
    builder.locator("select").nth(1).select_option(">=")
    builder.locator("input").fill("many")
    builder.locator("input").press("Enter")
    expect(browser.locator(".tf-b-problems")).to_have_text("Not a number: many")
    expect(label).to_have_text("1–100 of 135")
    builder.locator("input").fill("2")
    builder.locator("button").click()
    expect(browser.locator(".tf-b-chip")).to_have_text("Turns >= 2×")
    expect(browser.locator(".tf-b-problems")).to_have_text("")
    expect(label).to_have_text(f"1–100 of {CODEX_COPIES + 4} (135 in all)")
    browser.locator(".tf-b-chip button").click()

    pager = browser.locator(".tf-b-pager button")
    pager.nth(1).click()
    expect(label).to_have_text("101–135 of 135")
    expect(pager.nth(1)).to_be_disabled()
    assert rows(browser).count() == 35
    pager.nth(0).click()
    expect(label).to_have_text("1–100 of 135")
    expect(pager.nth(0)).to_be_disabled()


def test_C7_the_unreadable_file_reads_its_error_and_opens_to_it(qa: Session) -> None:
    browser = qa.browser
    browser.locator(".tf-b-pager button").nth(1).click()
    broken = rows(browser).filter(has_text="garbage.jsonl")
    expect(broken).to_have_count(1)
    expect(broken).to_have_class("tf-tone-row-error")
    title = broken.locator("td").first
    expect(title).to_contain_text("⚠ garbage.jsonl: line 1: not a transcript (invalid JSON)")
    # The whole reason, with the file's path and the formats tried, is its tooltip.
    tip = title.get_attribute("title") or ""
    assert tip.startswith(f"{qa.home / 'broken' / 'garbage.jsonl'}: line 1: not a transcript")
    assert "formats tried: turnfold, claude-code, codex" in tip
    broken.click()  # opens to its error, under the table
    expect(broken).to_have_class("tf-tone-row-error tf-b-open")
    expect(qa.transcript).to_contain_text(f"{qa.home / 'broken' / 'garbage.jsonl'}, line 1:")
    expect(qa.transcript.locator(".tf-turn")).to_have_count(0)

    # A session cut off mid-line is read as far as it goes, and says so once (L-4).
    builder = browser.locator(".tf-b-builder")
    builder.locator("select").first.select_option(label="Path")
    builder.locator("select").nth(1).select_option("contains")
    builder.locator("input").fill("cut-session")
    builder.locator("input").press("Enter")
    expect(browser.locator(".tf-b-range")).to_have_text("1–1 of 1 (135 in all)")
    rows(browser).first.click()
    expect(qa.transcript).to_contain_text("Loaded with 2 problems: some records may not be shown")
    expect(qa.transcript.locator(".tf-turn").first).to_be_visible()


def test_B1_P10_open_a_run_use_its_folds_go_to_another_and_back(qa: Session) -> None:
    browser = qa.browser
    run = rows(browser).filter(has_text=SUBAGENT_RUN)
    run.click()
    transcript = qa.transcript
    expect(transcript).to_contain_text(SUBAGENT_RUN)
    process = transcript.locator(".tf-turn .tf-toggle").first
    expect(process).to_have_attribute("aria-expanded", "false")  # settled: closed (P-8)
    process.click()
    expect(process).to_have_attribute("aria-expanded", "true")
    # The background sub-agent's row in the turn's process, and its own transcript in it.
    group = transcript.locator(".tf-toggle", has_text="Ran agents and ran commands")
    expect(group).to_have_attribute("aria-expanded", "false")
    group.click()
    agent = transcript.locator(".tf-toggle:has(.tf-agent-line)").first
    agent.click()
    expect(agent).to_have_attribute("aria-expanded", "true")
    expect(transcript.locator(".tf-subagent").first).to_be_visible()

    codex = rows(browser).filter(has_text=CODEX_TITLE).first
    codex.click()
    expect(transcript).to_contain_text(CODEX_TITLE)
    expect(transcript).not_to_contain_text(SUBAGENT_RUN)
    expect(browser.locator("tr.tf-b-open")).to_have_count(1)
    run.click()  # back: the run as the reader left it (P-10)
    expect(transcript).to_contain_text(SUBAGENT_RUN)
    expect(transcript.locator(".tf-turn .tf-toggle").first).to_have_attribute(
        "aria-expanded", "true"
    )
    expect(agent).to_have_attribute("aria-expanded", "true")
    expect(browser.locator("tr.tf-b-open")).to_contain_text(SUBAGENT_RUN)


def test_B1_keyboard_tab_to_the_grid_sort_arrows_and_enter(qa: Session) -> None:
    browser, page = qa.browser, qa.lab.page
    cell = qa.active_cell()
    browser.locator(".tf-b-search").focus()
    reached: list[str] = []
    for _ in range(60):  # the filters, the date fields, the builder, the headings, then a row
        page.keyboard.press("Tab")
        reached.append(page.evaluate("() => document.activeElement.tagName"))
        if reached[-1] == "TR":
            break
    assert reached[-1] == "TR", reached
    assert reached.count("BUTTON") >= 12  # every heading is a button: sortable by keyboard
    active = browser.locator('tr[aria-selected="true"]')
    expect(active).to_be_focused()
    page.keyboard.press("Home")
    expect(active).to_have_attribute("aria-rowindex", "2")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(active).to_have_attribute("aria-rowindex", "4")
    page.keyboard.press("Enter")
    expect(browser.locator("tr.tf-b-open")).to_have_attribute("aria-rowindex", "4")
    expect(qa.transcript).to_be_visible()
    page.keyboard.press("End")
    expect(active).to_have_attribute("aria-rowindex", "101")
    page.keyboard.press("ArrowDown")  # past the page's last row: the next page
    expect(browser.locator(".tf-b-range")).to_have_text("101–135 of 135")
    expect(active).to_have_attribute("aria-rowindex", "102")
    expect(active).to_be_focused()
    page.keyboard.press("Home")
    page.keyboard.press("ArrowUp")  # and back
    expect(browser.locator(".tf-b-range")).to_have_text("1–100 of 135")

    page.keyboard.press("Shift+Tab")  # back into the headings: Enter sorts
    heading = page.evaluate("() => document.activeElement.closest('th')?.innerText")
    assert heading, "Shift+Tab from the grid's row reached no heading"
    page.keyboard.press("Enter")
    expect(browser.locator("th", has_text=heading.strip())).not_to_have_attribute(
        "aria-sort", "none"
    )
    assert qa.active_cell() == cell  # the notebook took none of the keys


def test_C6_P11_search_every_run_open_a_hit_at_its_place(qa: Session) -> None:
    browser = qa.browser
    hits = browser.locator(".tf-b-hit")
    label = qa.search("disk is on fire")
    expect(label).to_have_text("4 hits · “disk is on fire”")
    keys = {hit.get_attribute("data-key") for hit in hits.all()}
    evals = qa.home / "evals" / "react_four-samples_two-epochs.eval"
    # The crash's message is in its answer and its failed tool's output, in both epochs.
    assert keys == {f"{evals}#crash/1", f"{evals}#crash/2"}
    hit = hits.nth(1)
    key, entry = hit.get_attribute("data-key"), hit.get_attribute("data-entry")
    hit.click()
    expect(qa.transcript).to_contain_text("Crash: read /srv/data.txt.")
    revealed = qa.transcript.locator(".tf-revealed")
    expect(revealed).to_have_count(1)
    assert (revealed.get_attribute("data-key") or "").endswith(entry or "")
    expect(revealed).to_be_in_viewport()  # the transcript opened at the hit (P-11)
    expect(revealed).to_contain_text("disk is on fire")
    # Its row is on the second page: the table turns to it, the row marked open (B-1).
    expect(browser.locator(".tf-b-range")).to_have_text("101–135 of 135")
    expect(browser.locator("tr.tf-b-open")).to_have_attribute("data-key", key or "")
    browser.locator(".tf-b-control", has_text="Agent").locator("select").select_option("inspect")
    expect(browser.locator("tr.tf-b-open")).to_have_attribute("data-key", key or "")
    # The hits follow the filter (B-1): the four are of inspect's runs.
    expect(label).to_have_text(
        "4 hits · in the 8 runs the filters keep · “disk is on fire”", timeout=60_000
    )
    browser.locator(".tf-b-clear").click()  # the searches below are of every run
    expect(label).to_have_text("4 hits · “disk is on fire”", timeout=60_000)

    expect(qa.search("no-such-words-anywhere")).to_have_text("No hit · “no-such-words-anywhere”")
    expect(hits).to_have_count(0)
    # The browser's search is for text: a pattern's brackets are letters, not an error.
    expect(qa.search("[unclosed(")).to_have_text("No hit · “[unclosed(”")
    expect(qa.search("Hello, Codex")).to_have_text("first 100 hits · “Hello, Codex”")


def test_C6_the_hit_list_by_keyboard_and_escape_gives_the_search_box_back(qa: Session) -> None:
    browser, page = qa.browser, qa.lab.page
    hits = browser.locator(".tf-b-hit")
    qa.search("readme")
    hits.first.focus()
    page.keyboard.press("ArrowDown")
    expect(hits.nth(1)).to_be_focused()
    page.keyboard.press("Enter")  # opens the hit focused
    expect(browser.locator("tr.tf-b-open")).to_have_attribute(
        "data-key", hits.nth(1).get_attribute("data-key") or ""
    )
    expect(qa.transcript.locator(".tf-revealed")).to_have_count(1)
    hits.nth(1).focus()
    page.keyboard.press("Escape")  # closes the list ...
    expect(browser.locator(".tf-b-hits")).to_be_hidden()
    # ... and the keyboard is back where the search began, not lost on the page's body.
    expect(browser.locator(".tf-b-search")).to_be_focused()
    expect(browser.locator(".tf-b-search")).to_have_value("")

    qa.search("readme")
    browser.locator(".tf-b-hits .tf-b-close").click()
    expect(browser.locator(".tf-b-hits")).to_be_hidden()
    expect(browser.locator(".tf-b-search")).to_be_focused()


#: A search for "readme" that waits for the test's word: it is still reading when the next
#: search starts, and ends after that one has answered.
SLOW_SEARCH = """\
import threading
started, gate = threading.Event(), threading.Event()
def slowly(read):
    def slow(query, *args, **options):
        if query == "readme":
            started.set()
            gate.wait(60)
        return read(query, *args, **options)
    return slow
# The browser's search reads through one of these (its public face, or what it wraps).
corpus.search, corpus._searched = slowly(corpus.search), slowly(corpus._searched)"""

END_SLOW_SEARCH = """\
gate.set()
for thread in threading.enumerate():
    if thread.name == "turnfold-browser-search":
        thread.join(60)
del corpus.search, corpus._searched
browser.query = {"sort": "turns", "descending": True}"""


def test_C6_a_newer_search_wins_over_one_still_reading(qa: Session) -> None:
    browser = qa.browser
    qa.lab.execute(SLOW_SEARCH)
    try:
        box = browser.locator(".tf-b-search")
        box.fill("readme")
        box.press("Enter")
        expect(browser.locator(".tf-b-hits-label")).to_have_text("Searching…")
        qa.lab.execute("assert started.wait(60)")
        expect(qa.search("Hello, Codex")).to_have_text("first 100 hits · “Hello, Codex”")
    finally:
        qa.lab.execute(END_SLOW_SEARCH)
    # The older search has ended, and the sort set after it has been drawn: its hits never came.
    expect(browser.locator("th", has_text="Turns")).to_have_attribute("aria-sort", "descending")
    expect(browser.locator(".tf-b-hits-label")).to_have_text("first 100 hits · “Hello, Codex”")
    expect(browser.locator(".tf-b-hit")).to_have_count(100)


def test_B1_a_narrow_notebook_column_keeps_every_control_within_reach(qa: Session) -> None:
    browser = qa.browser
    qa.search("readme")
    # JupyterLab's side bar, prompts and margins take about 370 px of the window: a window
    # 690 px wide leaves the output about 320 (a notebook beside another, a small screen).
    qa.lab.page.set_viewport_size({"width": 690, "height": 1000})
    qa.lab.page.wait_for_function(
        "(root) => root.getBoundingClientRect().width < 360", arg=browser.element_handle()
    )
    # Every control, the filter builder's value and Add included, within the output's width:
    # only the grid scrolls, inside its own box.
    outside = browser.evaluate(
        """(root) => {
            const right = root.getBoundingClientRect().right;
            return [...root.querySelectorAll(
                '.tf-b-bar *, .tf-b-hits-head *, .tf-b-filters *, .tf-b-pager *')]
                .filter((e) => e.getClientRects().length && !e.closest('.tf-b-column-list'))
                .filter((e) => e.getBoundingClientRect().right > right + 1)
                .map((e) => `${e.tagName}.${e.className} ${e.textContent.slice(0, 20)}`);
        }"""
    )
    assert outside == []
    assert browser.evaluate("(root) => root.scrollWidth <= root.clientWidth + 1")
    builder = browser.locator(".tf-b-builder")
    builder.locator("input").fill("2")
    builder.locator("select").first.select_option(label="Turns")
    builder.locator("select").nth(1).select_option(">=")
    builder.locator("button").click()  # a click at its place: reachable
    expect(browser.locator(".tf-b-chip")).to_have_text("Turns >= 2×")
    qa.lab.screenshot("session-browser-user-qa-320px.png", browser)


def test_B1_running_the_browser_s_cell_again_keeps_what_the_reader_set(qa: Session) -> None:
    """The cell ``browser`` shows the same widget again: its query, open run, folds and search
    are the widget's, so a new view shows them as the reader left them (a cell that makes a new
    browser, ``corpus`` or ``SessionBrowser(corpus)``, starts afresh)."""
    browser = qa.browser
    browser.locator("th", has_text="Title").locator("button").click()
    browser.locator(".tf-b-control", has_text="Outcome").locator("select").select_option("error")
    expect(browser.locator(".tf-b-range")).to_have_text("1–2 of 2 (135 in all)")
    rows(browser).nth(1).click()
    # Its run is drawn (the kernel sends it before the selection): a fold opened before would
    # be the run shown last, which the new one then replaces.
    expect(browser.locator("tr.tf-b-open")).to_have_attribute("aria-rowindex", "3")
    process = qa.transcript.locator(".tf-turn .tf-toggle").first
    process.click()
    expect(process).to_have_attribute("aria-expanded", "true")
    qa.search("disk is on fire")

    qa.lab.run_cell(1)

    browser = qa.browser
    expect(browser.locator(".tf-b-range")).to_have_text("1–2 of 2 (135 in all)")
    expect(browser.locator("th", has_text="Title")).to_have_attribute("aria-sort", "ascending")
    expect(browser.locator(".tf-b-control", has_text="Outcome").locator("select")).to_have_value(
        "error"
    )
    expect(browser.locator("tr.tf-b-open")).to_have_attribute("aria-rowindex", "3")
    expect(qa.transcript.locator(".tf-turn .tf-toggle").first).to_have_attribute(
        "aria-expanded", "true"
    )
    expect(browser.locator(".tf-b-hits-label")).to_have_text(
        "4 hits · in the 2 runs the filters keep · “disk is on fire”"
    )
    # The search box says what the hits it shows are of, as before the cell ran again.
    expect(browser.locator(".tf-b-search")).to_have_value("disk is on fire")


def test_W4_the_saved_notebook_holds_the_browser_s_text_and_table(qa: Session) -> None:
    from nbconvert import HTMLExporter

    import turnfold

    qa.lab.run_cell(1)  # the bundle of a view in the default query, as the notebook shows it
    qa.lab.command("docmanager:save")
    path = qa.lab.server.root / "user-qa.ipynb"
    saved = nbformat.read(path, as_version=4)
    for _ in range(100):  # the save may still be on its way to the disk
        if saved.cells[1].outputs:
            break
        qa.lab.page.wait_for_timeout(100)
        saved = nbformat.read(path, as_version=4)
    (output,) = saved.cells[1].outputs
    data = output["data"]
    assert data["text/plain"] == f"SessionBrowser: {COUNTS}; showing 1–100 of 135"
    # The same in a fresh process: no random id, no time of the render (nbval-stable).
    fresh = turnfold.SessionBrowser(turnfold.scan(str(qa.home), workers=1))
    try:
        bundle = fresh._repr_mimebundle_()
        assert bundle is not None
        assert data["text/html"] == bundle[0]["text/html"]
    finally:
        fresh.close()
    table = data["text/html"]
    assert f"<p>{COUNTS}</p>" in table
    assert table.count("<tr>") == 51  # the headings and the first 50 rows ...
    # ... and the rest, counted
    assert "… 85 more rows: .rows of the browser, or corpus.to_pandas()" in table

    # Exported without widget state (JupyterLab's default), the page shows that table.
    html, _ = HTMLExporter().from_notebook_node(saved)
    assert f"<p>{COUNTS}</p>" in html
    assert CODEX_TITLE in html
