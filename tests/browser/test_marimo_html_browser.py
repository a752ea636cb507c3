"""turnfold's static HTML drawn by marimo's ``mo.Html`` in Chromium (spec N-2, W-4).

The notebook of ``tests/test_marimo_html.py`` (a transcript with its timeline's call links, its
page, two comparisons, the session browser's fallback, the corpus table) is exported by
``marimo export html`` and opened from its file; the marimo frontend it loads from its CDN is
served from the installed marimo package, and nothing else leaves the machine. A link to the page
with an inline ``style`` had made marimo's React throw (error #62): the output showed "Something
went wrong" in place of the transcript.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from tests.browser.labkit import TIMEOUT_MS
from tests.test_marimo_html import OUTPUTS, export
from turnfold.render.html import MIN_SHAPE_PX

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Route

marimo = pytest.importorskip("marimo")

#: Where an export loads marimo's frontend from, and the installed copy of the same files.
FRONTEND = re.compile(r"https://cdn\.jsdelivr\.net/npm/@marimo-team/frontend@[^/]+/dist/([^?#]+)")
STATIC = Path(marimo.__file__).parent / "_static"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export(tmp_path_factory.mktemp("marimo-html-browser"))


@pytest.fixture
def page(chromium: Browser, exported: Path) -> Iterator[Page]:
    context = chromium.new_context(viewport={"width": 1280, "height": 1000})
    left: list[str] = []

    def local(route: Route) -> None:
        url = route.request.url
        found = FRONTEND.match(url)
        if found and (STATIC / found[1]).is_file():
            route.fulfill(path=STATIC / found[1])
        elif url.startswith(("file:", "data:", "blob:")):
            route.continue_()
        else:
            left.append(url)
            route.abort()

    context.route("**/*", local)
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(exported.as_uri())
        yield page
        assert errors == []
        assert left == []  # marimo's frontend came from the package; nothing else was asked
    finally:
        context.close()


def test_N2_marimo_draws_every_html_output_of_turnfold(page: Page) -> None:
    outputs = page.locator(".output-area")
    expect(outputs.locator(".tf-runs-table")).to_have_count(2, timeout=TIMEOUT_MS)
    # marimo's error boundary says this, with React's error, where an output failed to draw.
    expect(page.get_by_text("Something went wrong")).to_have_count(0)
    expect(page.get_by_text("Minified React error")).to_have_count(0)
    expect(outputs).to_have_count(len(OUTPUTS))
    expect(outputs.locator(".turnfold")).to_have_count(len(OUTPUTS))
    # The transcript and its page, each with its timeline; the comparisons; the two tables.
    expect(page.locator(".tf-timeline")).to_have_count(2)
    for n in (0, 1):
        expect(outputs.nth(n).locator(".tf-session")).to_contain_text("claude-sonnet-4")
        expect(outputs.nth(n).locator(".tf-timeline > summary")).to_be_visible()
    expect(outputs.nth(2).locator(".tf-cmp").first).to_be_attached()
    expect(outputs.nth(3).locator("a.tf-cmp-pick", has_text="arithmetic · 2/1")).to_be_visible()
    for n in (4, 5):
        expect(outputs.nth(n).locator(".tf-runs-table tbody tr")).to_have_count(2)


def test_N2_U4_the_timeline_s_call_links_fill_their_bars_in_marimo(page: Page) -> None:
    timeline = page.locator(".tf-timeline").first
    expect(timeline).to_be_visible(timeout=TIMEOUT_MS)
    timeline.locator(":scope > summary").click()
    links = timeline.locator('.tf-tl-bar > a[href^="#call-"]')
    expect(links.first).to_be_visible()
    assert links.count() > 10
    # Each link covers its bar, which the place on the axis is given to.
    for n in (0, links.count() - 1):
        link = links.nth(n)
        bar = link.locator("xpath=..").bounding_box()
        box = link.bounding_box()
        assert bar is not None
        assert box is not None
        assert box == pytest.approx(bar, abs=0.5)
        assert box["width"] >= MIN_SHAPE_PX - 0.01
        assert link.get_attribute("title")
