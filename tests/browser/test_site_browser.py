"""The static site and its deep links in Chromium from ``file://``, script on and off (B-2, X-1).

Pages are opened straight from disk, as a reader opens a folder someone sent them: no server.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.test_widget_browser import _hostile_transcript, _load_test_module
from turnfold.model import Transcript, UserMessage
from turnfold.render.page import render_page
from turnfold.render.site import INDEX, RUNS, build_site
from turnfold.samples import demo_session

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

TREE = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
#: The demo's first Read: inside its turn's process, an activity group and a summary row.
CALL = "e3"
ANCESTORS = ["process:turn:e0", "group:e1", "summary:e2"]


@dataclass
class Visit:
    page: Page
    console: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@contextmanager
def visiting(chromium: Browser, script: bool) -> Iterator[Visit]:
    context = chromium.new_context(
        java_script_enabled=script, viewport={"width": 1200, "height": 800}
    )
    visit = Visit(context.new_page())
    visit.page.on(
        "console", lambda message: visit.console.append(f"{message.type}: {message.text}")
    )
    visit.page.on("dialog", lambda dialog: (visit.dialogs.append(dialog.message), dialog.dismiss()))
    visit.page.on("request", lambda request: visit.requests.append(request.url))
    try:
        yield visit
    finally:
        context.close()


def open_folds(page: Page) -> list[str]:
    """The keys of the folds open on the page (what a reader sees opened)."""
    return page.evaluate(
        "() => [...document.querySelectorAll('details[open]')].map((d) => d.dataset.key"
        " ?? d.parentElement.closest('[data-key]')?.dataset.key)"
    )


def in_view(page: Page, selector: str) -> bool:
    return page.evaluate(
        """(selector) => {
            const box = document.querySelector(selector).getBoundingClientRect();
            return box.height > 0 && box.top >= 0 && box.top < innerHeight;
        }""",
        selector,
    )


@pytest.fixture
def site(tmp_path: Path) -> Path:
    out = tmp_path / "site"
    build_site(TREE, out, workers=1, progress=False)
    return out


@pytest.mark.parametrize("script", [True, False], ids=["script", "no-script"])
def test_B2_a_deep_link_opens_exactly_the_folds_around_its_target(
    chromium: Browser, tmp_path: Path, script: bool
) -> None:
    page_file = tmp_path / "demo.html"
    page_file.write_text(render_page(demo_session(), title="demo"), encoding="utf-8")
    with visiting(chromium, script) as visit:
        visit.page.goto(f"{page_file.as_uri()}#call-{CALL}")
        visit.page.wait_for_load_state()
        # The process, group and summary around the call; not its own fold, nor any other.
        assert sorted(key for key in open_folds(visit.page) if key) == sorted(ANCESTORS)
        assert in_view(visit.page, f"#call-{CALL}")
        visit.page.goto(f"{page_file.as_uri()}#turn-2")
        visit.page.wait_for_load_state()
        assert in_view(visit.page, "#turn-2 > .tf-process > summary")  # lands on its header
        assert not [line for line in visit.console if "Content Security Policy" in line]


def test_B2_a_link_within_the_page_opens_its_target_too(chromium: Browser, tmp_path: Path) -> None:
    page_file = tmp_path / "demo.html"
    page_file.write_text(render_page(demo_session(), title="demo"), encoding="utf-8")
    with visiting(chromium, True) as visit:
        visit.page.goto(page_file.as_uri())
        assert open_folds(visit.page) == []  # a settled session paints closed
        visit.page.evaluate(f"() => {{ location.hash = '#call-{CALL}'; }}")
        visit.page.wait_for_function(
            f"() => document.getElementById('call-{CALL}').offsetHeight > 0"
        )
        assert sorted(key for key in open_folds(visit.page) if key) == sorted(ANCESTORS)


def test_B2_the_index_sorts_filters_and_searches_with_its_own_script(
    chromium: Browser, site: Path
) -> None:
    with visiting(chromium, True) as visit:
        page = visit.page
        page.goto((site / INDEX).as_uri())
        rows = page.locator("tbody tr:visible")
        total = rows.count()
        assert page.locator(".tf-site-filters").is_visible()  # its script ran, under its CSP
        assert page.locator(".tf-site-shown").inner_text() == f"{total} of {total} runs"
        page.locator(".tf-site-filters select[data-column=agent]").select_option("codex")
        assert rows.count() == 1
        assert "codex" in rows.first.inner_text()
        page.locator(".tf-site-filters select[data-column=agent]").select_option("")
        page.locator(".tf-site-filters input[type=search]").fill("CLAUDE.md")  # a first prompt
        assert 0 < rows.count() < total
        page.locator(".tf-site-filters input[type=search]").fill("")
        page.locator("input[data-failed]").check()
        assert all("✖" in row for row in rows.all_inner_texts())
        page.locator("input[data-failed]").uncheck()
        tools = page.locator("th", has_text="Tools")
        tools.locator("button").click()
        assert tools.get_attribute("aria-sort") == "descending"
        counts = [
            int(text or -1) for text in page.locator("tbody tr td:nth-child(7)").all_inner_texts()
        ]
        assert counts == sorted(counts, reverse=True)
        # From the index to its first run, along to the next, and back.
        page.goto((site / INDEX).as_uri())
        page.locator("tbody tr a").first.click()
        assert f"/{RUNS}/" in page.url
        first = page.url
        page.locator("nav a[rel=next]").click()
        assert page.url != first
        page.locator("nav a[rel=prev]").click()
        assert page.url == first
        page.locator("nav a", has_text="All runs").click()
        assert page.url.endswith(INDEX)
        assert not [line for line in visit.console if "Content Security Policy" in line]
        assert {url.split(":", 1)[0] for url in visit.requests} == {"file"}


@pytest.mark.parametrize("width", [1280, 420])
def test_B2_the_index_fits_the_window_and_only_its_table_scrolls_sideways(
    chromium: Browser, tmp_path: Path, width: int
) -> None:
    """Long first prompts and model names made the table wider than the page: at 1280 pixels
    the Cost and Outcome columns lay past the window's edge, and on a phone the whole page,
    counts and filters too, scrolled sideways."""
    harnesses = TREE.parent / "harnesses"
    runs = tmp_path / "runs"
    shutil.copytree(TREE, runs)
    for wide in [
        harnesses / "openhands" / "openhands_trajectory_basic-gui-mode.json",
        *harnesses.glob("mini-swe-agent/*deepseek_sqlfluff-2419_trimmed.traj.json"),
    ]:
        shutil.copyfile(wide, runs / wide.name)
    out = tmp_path / "site"
    build_site(runs, out, workers=1, progress=False)
    with visiting(chromium, True) as visit:
        page = visit.page
        page.set_viewport_size({"width": width, "height": 800})
        page.goto((out / INDEX).as_uri())
        sideways = "(e) => e.scrollWidth - e.clientWidth"
        assert page.evaluate(f"({sideways})(document.documentElement)") == 0
        last = page.locator("thead th").last.bounding_box()
        assert last is not None
        if width == 1280:  # every column in view
            assert last["x"] + last["width"] <= width
        else:  # the table scrolls in its own box, under the counts and filters
            assert page.locator(".tf-site-table").evaluate(sideways) > 0
            counts = page.locator(".tf-site-counts").bounding_box()
            assert counts is not None
            assert counts["width"] <= width


def test_B2_without_script_the_index_is_the_whole_table(chromium: Browser, site: Path) -> None:
    with visiting(chromium, False) as visit:
        visit.page.goto((site / INDEX).as_uri())
        assert not visit.page.locator(".tf-site-filters").is_visible()
        total = visit.page.locator("tbody tr").count()
        assert visit.page.locator("tbody tr:visible").count() == total > 1


def test_X1_B2_a_hostile_corpus_stays_inert_in_the_site(chromium: Browser, tmp_path: Path) -> None:
    security = _load_test_module("test_security")
    runs = tmp_path / "runs"
    runs.mkdir()
    transcript = _hostile_transcript()
    payloads = [*security.PAYLOADS[:12], "<img src=x onerror=\"console.log('TF-PWNED')\">"]
    for number, payload in enumerate(payloads):
        run = Transcript([UserMessage(text=payload), *transcript.entries])  # the payload: a title
        (runs / f"run-{number:02d}.jsonl").write_text(run.dump(), encoding="utf-8")
    out = tmp_path / "site"
    build_site(runs, out, workers=1, progress=False)
    with visiting(chromium, True) as visit:
        page = visit.page
        page.goto((out / INDEX).as_uri())
        assert page.locator("tbody tr").count() == len(payloads)
        assert payloads[-1] in page.locator("table").inner_text()  # the title, as text
        page.locator(".tf-site-filters input[type=search]").fill("onerror")
        page.locator("tbody tr:visible a").first.click()
        page.evaluate(
            "() => document.querySelectorAll('details').forEach((d) => { d.open = true; })"
        )
        page.wait_for_timeout(1000)  # give any injected handler time to fire
        assert visit.dialogs == []
        assert not [line for line in visit.console if "TF-PWNED" in line]
        assert {url.split(":", 1)[0] for url in visit.requests} <= {"file", "data"}
        assert page.locator("iframe, object, embed, form, img[onerror]").count() == 0
        assert page.locator("script").count() == 1  # the page's own deep links
