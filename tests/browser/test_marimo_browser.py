"""turnfold's widgets in a real marimo server, driven by Chromium (spec N-2).

The server runs ``notebooks/marimo_quickstart.py`` (``marimo run``) on a free loopback port with a
token; the page draws the transcript through ``mo.ui.anywidget`` and the settings panel through
its own view. A second server runs a notebook of values left bare in marimo's dark theme.
Fixtures of the browser suite: ``conftest.py``.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.labkit import TIMEOUT_MS, _free_port, new_page, serving

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

pytestmark = pytest.mark.browser

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "marimo_quickstart.py"
PROCESS = "process:turn:e0"  # the demo session's first turn, as in test_widget_browser.py
GROUP_TITLE = "Thought, searched and read files"
#: The notebook's own transcript views: not the one under the session browser's table.
TRANSCRIPTS = ".tf-widget:not(.tf-browser *)"


#: Values left bare as cells' last values, which marimo shows by its own display protocol; run in
#: marimo's dark theme.
BARE_VALUES = """\
import marimo

app = marimo.App()


@app.cell
def _():
    import marimo as mo

    import turnfold
    import turnfold.samples

    mo.ui.anywidget(turnfold.TranscriptWidget(turnfold.samples.demo_session()))
    return (turnfold,)


@app.cell
def _(turnfold):
    turnfold.scan([turnfold.samples.demo_session(), turnfold.samples.claude_code_session()])
    return


@app.cell
def _(turnfold):
    turnfold.samples.demo_session()
    return
"""


@contextmanager
def marimo_run(notebook: Path, base: Path, theme: str = "light") -> Iterator[str]:
    """``marimo run`` of ``notebook`` in ``theme``, for as long as the context lasts: its URL."""
    token = secrets.token_hex(16)
    port = _free_port()
    settings = base / "config" / "marimo" / "marimo.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text(f'[display]\ntheme = "{theme}"\n')
    env = {
        **os.environ,
        "MARIMO_SKIP_UPDATE_CHECK": "1",  # no look-up of marimo's latest version
        "XDG_CONFIG_HOME": str(base / "config"),  # the reader's own marimo settings stay out
        "XDG_STATE_HOME": str(base / "state"),
        "XDG_CACHE_HOME": str(base / "cache"),
        "JUPYTER_CONFIG_DIR": str(base / "jupyter"),  # and turnfold's saved defaults
    }
    command = [
        sys.executable, "-m", "marimo", "run", str(notebook),
        "--headless", "--host", "127.0.0.1", "--port", str(port), "--token",
        "--token-password", token, "--no-sandbox",
    ]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with serving(command, env, base / "server.log", f"{url}/health"):
        yield f"{url}/?access_token={token}"


@pytest.fixture(scope="module")
def marimo_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``marimo run`` of the quickstart, until the module's tests are done: its URL."""
    with marimo_run(NOTEBOOK, tmp_path_factory.mktemp("marimo")) as url:
        yield url


@pytest.fixture(scope="module")
def dark_page(chromium: Browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    """A page of ``BARE_VALUES`` run in marimo's dark theme."""
    base = tmp_path_factory.mktemp("marimo-dark")
    notebook = base / "bare_values.py"
    notebook.write_text(BARE_VALUES)
    with marimo_run(notebook, base, theme="dark") as url, new_page(chromium) as page:
        page.goto(url)
        yield page


@pytest.fixture
def page(chromium: Browser, marimo_url: str) -> Iterator[Page]:
    with new_page(chromium) as page:
        page.goto(marimo_url)
        yield page


def _header(widget: Locator, key: str) -> Locator:
    return widget.locator(f'[data-key="{key}"]').first.locator(":scope > .tf-toggle")


def test_N2_the_transcript_shows_and_folds_in_marimo(page: Page) -> None:
    widgets = page.locator(TRANSCRIPTS)
    expect(widgets).to_have_count(3, timeout=TIMEOUT_MS)
    demo = widgets.first
    expect(demo.locator(".tf-answer").first).to_contain_text("parseConfig now defaults port")
    process = _header(demo, PROCESS)
    expect(process).to_have_attribute("aria-expanded", "false")  # P-8: settled, closed
    process.click()
    expect(process).to_have_attribute("aria-expanded", "true")
    group = demo.get_by_role("button", name=GROUP_TITLE)
    expect(group).to_be_visible()
    group.click()  # one level at a time: the group's rows, from the kernel's view model
    expect(group).to_have_attribute("aria-expanded", "true")
    expect(demo.locator(".tf-summary").first).to_be_visible()
    process.click()
    expect(group).to_be_hidden()
    # Every request went to the marimo server on loopback.
    urls = page.evaluate("() => performance.getEntriesByType('resource').map((e) => e.name)")
    hosts = {urlsplit(url).hostname for url in urls if url.startswith(("http:", "https:"))}
    assert hosts <= {"127.0.0.1"}


def test_N2_T4_the_settings_panel_redraws_the_transcript_in_marimo(page: Page) -> None:
    demo = page.locator(TRANSCRIPTS).nth(1)  # the view the panel is linked to, under it
    expect(demo).to_be_visible(timeout=TIMEOUT_MS)
    panel = page.locator(".tf-settings")
    expect(panel.get_by_role("checkbox", name="Show thinking")).to_be_checked()
    _header(demo, PROCESS).click()
    expect(demo.locator(".tf-group").first).to_be_visible()
    flat = panel.get_by_role("button", name="Flat", exact=True)
    flat.click()  # P-4: no nested groups
    expect(flat).to_have_attribute("aria-pressed", "true")
    expect(demo.locator(".tf-group")).to_have_count(0)
    expect(_header(demo, PROCESS)).to_have_attribute("aria-expanded", "true")  # P-10: kept
    # T-4: the child of Process display hides under Flat, and comes back with its value.
    child = panel.get_by_role("checkbox", name="Auto-collapse settled groups")
    expect(child).to_have_count(0)
    panel.get_by_role("button", name="Fully folded", exact=True).click()
    expect(child).to_be_checked()
    expect(demo.locator(".tf-group").first).to_be_visible()
    # P-5: with thinking hidden, the first group keeps one row, which stands on its own.
    panel.get_by_role("checkbox", name="Show thinking").uncheck()
    expect(demo.get_by_role("button", name=GROUP_TITLE)).to_have_count(0)


def test_N2_B1_the_session_browser_sorts_and_opens_a_run_in_marimo(page: Page) -> None:
    browser = page.locator(".tf-browser")
    expect(browser).to_be_visible(timeout=TIMEOUT_MS)
    rows = browser.locator(".tf-b-grid tbody tr")
    expect(rows).to_have_count(2)
    expect(browser.locator(".tf-b-range")).to_have_text("1–2 of 2")
    rows.first.click()  # the run opens under the table, in the transcript widget
    transcript = browser.locator(".tf-b-transcript .tf-widget")
    expect(transcript.locator(".tf-answer").first).to_be_visible(timeout=TIMEOUT_MS)
    _header(transcript, PROCESS).click()
    expect(_header(transcript, PROCESS)).to_have_attribute("aria-expanded", "true")


def _colour(locator: Locator, prop: str) -> tuple[int, ...]:
    """The computed ``prop`` of ``locator`` as its RGB channels."""
    value = locator.evaluate(f"(el) => getComputedStyle(el).{prop}")
    return tuple(int(float(part)) for part in value[value.index("(") + 1 : -1].split(",")[:3])


def test_N2_the_views_follow_marimo_s_dark_theme(dark_page: Page) -> None:
    # marimo says dark by the class ``dark`` on its body and inside each anywidget's shadow root,
    # not by JupyterLab's variables: the views had kept their light palette, dark text on
    # marimo's dark page.
    expect(dark_page.locator("body.dark")).to_have_count(1, timeout=TIMEOUT_MS)
    demo = dark_page.locator(TRANSCRIPTS).first
    answer = demo.locator(".tf-answer").first
    expect(answer).to_contain_text("parseConfig now defaults port", timeout=TIMEOUT_MS)
    assert min(_colour(answer, "color")) > 180  # light text
    assert max(_colour(demo.locator(".tf-utext").first, "backgroundColor")) < 60  # dark box
    title = dark_page.locator(".tf-browser .tf-b-grid tbody td").first
    expect(title).to_be_visible(timeout=TIMEOUT_MS)  # its scan may end after the transcript
    assert min(_colour(title, "color")) > 180


def test_N2_a_transcript_or_corpus_left_as_a_cell_s_value_shows_as_its_widget(
    dark_page: Page,
) -> None:
    # marimo shows a value by its ``_display_`` before its repr: a bare transcript had shown as
    # ``<Transcript: …>`` and a corpus as the static table, not the views a Jupyter kernel shows.
    browser = dark_page.locator(".tf-browser")
    expect(browser.locator(".tf-b-grid tbody tr")).to_have_count(2, timeout=TIMEOUT_MS)
    expect(dark_page.locator(TRANSCRIPTS)).to_have_count(2)
    bare = dark_page.locator(TRANSCRIPTS).nth(1)
    expect(bare.locator(".tf-answer").first).to_contain_text("parseConfig now defaults port")
    process = _header(bare, PROCESS)
    process.click()
    expect(process).to_have_attribute("aria-expanded", "true")
    expect(bare.get_by_role("button", name=GROUP_TITLE)).to_be_visible()
