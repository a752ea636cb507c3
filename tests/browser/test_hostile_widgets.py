"""Hostile transcripts in the notebook (spec X-1), in real JupyterLab driven by Chromium: the
widget of each of the readers' real files carrying payloads (``tests/hostile_inputs.py``), the
comparison widget of two of them, and the session browser of the folder (one run named by a
payload), every fold opened and every element hovered, with the trap of
``test_hostile_pages.py`` installed before JupyterLab's own script.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Locator, expect

from tests.browser.labkit import Lab
from tests.browser.test_hostile_pages import TRAP
from tests.hostile_inputs import NEW_READERS, hostile_copy

SETUP = """\
import os, tempfile
os.environ["TURNFOLD_CACHE_DIR"] = tempfile.mkdtemp()  # the test's own index
import turnfold
from turnfold.widget import TranscriptWidget"""
#: A run's file name a payload chose (its key in the session browser).
NAMED = "<img src=x onerror=\"window.__pwned='key'\">\u202erun.json"


def _folder(lab: Lab) -> Path:
    # A folder of its own: the session browser's hostile test makes "hostile-runs" in the
    # same lab.
    folder = lab.server.root / "hostile-new-readers"
    folder.mkdir(exist_ok=True)
    for name in NEW_READERS:
        hostile_copy(name, folder)
    (folder / NAMED).write_bytes((folder / Path(NEW_READERS[-1]).name).read_bytes())
    return folder


def _hover_everything(root: Locator) -> None:
    root.evaluate(
        """(root) => root.querySelectorAll('*').forEach((e) => {
            for (const kind of ['mouseover', 'mouseenter', 'focus']) {
                e.dispatchEvent(new Event(kind, {bubbles: true}));
            }
        })"""
    )


def _assert_trapped_nothing(lab: Lab, *roots: Locator) -> None:
    # Once for every widget, after all were opened and hovered: the trap is the page's.
    lab.page.wait_for_timeout(1000)  # any handler a payload managed to attach has fired by now
    assert lab.page.evaluate("() => window.__caught") == []
    for root in roots:
        lab.assert_inert(root)
        assert root.locator("svg script, base, link").count() == 0


@pytest.mark.own_page  # the trap is an init script, run when a page starts
def test_X1_each_reader_s_hostile_file_runs_nothing_in_its_widget(lab: Lab) -> None:
    lab.page.add_init_script(TRAP)
    folder = _folder(lab)
    cells = [SETUP] + [
        f"TranscriptWidget(turnfold.load({str(folder / Path(name).name)!r}))"
        for name in NEW_READERS
    ]
    lab.open_notebook("hostile-readers.ipynb", cells, widgets=len(NEW_READERS))
    views = lab.views()
    assert views.count() == len(NEW_READERS)
    widgets = [views.nth(index) for index in range(views.count())]
    for widget in widgets:
        widget.scroll_into_view_if_needed()  # the notebook draws the cells in view alone
        lab.open_everything(widget)
        _hover_everything(widget)
        # the payload is there to read, as text.
        assert "<script>window.__pwned='script'</script>" in widget.inner_text()
    _assert_trapped_nothing(lab, *widgets)


@pytest.mark.own_page  # the trap is an init script, run when a page starts
def test_X1_B1_B3_the_browser_and_the_comparison_of_hostile_runs_run_nothing(lab: Lab) -> None:
    lab.page.add_init_script(TRAP)
    folder = _folder(lab)
    a, b = (folder / Path(name).name for name in NEW_READERS[:2])
    cells = [SETUP, f"turnfold.compare({str(a)!r}, {str(b)!r})",
             f"turnfold.scan({str(folder)!r}, workers=1)"]  # fmt: skip
    lab.write_notebook("hostile-browse.ipynb", cells)
    lab.open("hostile-browse.ipynb")
    lab.run_all()
    output = lab.page.locator(".jp-OutputArea-output")
    compare = lab.views().first
    expect(compare).to_be_visible()
    assert lab.open_everything(compare) > 0
    browser = lab.page.locator(".tf-browser").first
    rows = browser.locator(".tf-b-grid tbody tr")
    expect(rows).to_have_count(len(NEW_READERS) + 1)
    for index in range(rows.count()):
        rows.nth(index).click()
        opened = browser.locator(".tf-b-transcript .tf-widget .tf-turn").first
        expect(opened).to_be_visible(timeout=30_000)
        lab.open_everything(browser.locator(".tf-b-transcript .tf-widget").first)
    for index in range(output.count()):
        _hover_everything(output.nth(index))
    _assert_trapped_nothing(lab, compare, browser)
