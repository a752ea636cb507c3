"""Long lines against the width of the window, in Chromium from ``file://`` (B-2, B-3, W-6).

A title or first prompt of thousands of characters (with spaces or none), or a long agent or
model name, had the site's index keep its text columns wide: the title stopped at a quarter of
the window, but no narrower, so in a 1000 px window the Cost and Outcome columns lay past the
edge of the table's box, to be scrolled to. The text columns give way first now, as the session
browser's do (``test_session_browser_widths.py``): cut to their first line with an ellipsis,
their whole text the cell's title, and no figure ever cut. A run's page and a comparison's page
keep a very long unbroken line (a prompt, a tool's input, its result) within the window.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.test_site_browser import TREE, visiting
from turnfold.model import AssistantText, ToolCall, ToolResult, Transcript, UserMessage
from turnfold.render.compare_page import render_compare_page
from turnfold.render.page import render_page
from turnfold.render.site import INDEX, build_site

if TYPE_CHECKING:
    from playwright.sync_api import Browser

UNBROKEN = "x" * 3000
SPACED = " ".join(["word"] * 700)
PATH = "/srv/" + "/".join(["segment"] * 400)
#: An agent's and a model's name as long as a file may make them (they are the transcript's).
AGENT, MODEL = "agent-" + "a" * 400, "model-" + "m" * 400

#: The index's table as a reader sees it: per column, its heading, whether its cells are text
#: (cut short where the table is narrow), how far it lies past the box's visible edge, and how
#: many of its cells show less than their whole text.
LAYOUT = """() => {
    const box = document.querySelector('.tf-site-table');
    const edge = box.getBoundingClientRect().left + box.clientLeft + box.clientWidth;
    const rows = [...document.querySelectorAll('.tf-runs-table tbody tr')];
    const cut = (td) => {
        const clip = td.querySelector('.tf-runs-clip');
        return clip ? clip.scrollHeight > clip.clientHeight + 1 : td.scrollWidth > td.clientWidth;
    };
    const columns = [...document.querySelectorAll('.tf-runs-table thead th')].map((th, at) => ({
        label: th.innerText.trim(),
        text: rows.some((tr) => tr.children[at].querySelector('.tf-runs-clip')),
        past: Math.max(0, Math.round(th.getBoundingClientRect().right - edge)),
        cut: rows.filter((tr) => cut(tr.children[at])).length,
    }));
    return {page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
            scrolls: box.scrollWidth > box.clientWidth + 1, columns};
}"""


def long_run(prompt: str, **metadata: str) -> Transcript:
    """A run whose prompt, tool input, result and answer are each one very long line."""
    return Transcript(
        [
            UserMessage(text=prompt),
            ToolCall(call_id="c1", name="Bash", args={"command": f"echo {UNBROKEN}"},
                     status="success", result=ToolResult(text=UNBROKEN)),
            AssistantText(text=f"Done: {UNBROKEN}"),
        ],
        metadata=dict(metadata),
    )  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test corpus, and runs whose titles and names are very long."""
    runs = tmp_path_factory.mktemp("runs")
    shutil.copytree(TREE, runs, dirs_exist_ok=True)
    for name, prompt in (("unbroken", UNBROKEN), ("spaced", SPACED), ("path", PATH)):
        (runs / f"long-{name}.jsonl").write_text(long_run(prompt).dump(), encoding="utf-8")
    named = long_run("fix the bug", agent=AGENT, model=MODEL)
    (runs / "long-names.jsonl").write_text(named.dump(), encoding="utf-8")
    out = tmp_path_factory.mktemp("site")
    build_site(runs, out, workers=1, progress=False)
    return out


def layout(chromium: Browser, site: Path, width: int) -> dict[str, Any]:
    with visiting(chromium, True) as visit:
        visit.page.set_viewport_size({"width": width, "height": 800})
        visit.page.goto((site / INDEX).as_uri())
        found: dict[str, Any] = visit.page.evaluate(LAYOUT)
        return found


@pytest.mark.parametrize("width", [1280, 1000])
def test_B2_long_titles_and_names_give_way_before_any_figure_leaves_the_window(
    chromium: Browser, site: Path, width: int
) -> None:
    found = layout(chromium, site, width)
    columns = {column["label"]: column for column in found["columns"]}
    assert {"Tokens", "Cost", "Outcome"} <= set(columns)
    # Every column, figures and all, within the window: nothing to scroll to.
    assert found["page"] == 0
    assert not found["scrolls"], (width, found)
    assert [c["label"] for c in found["columns"] if c["past"] > 0] == [], (width, found)
    # The text columns gave way, and no figure is cut.
    assert {c["label"] for c in found["columns"] if c["text"]} == {"Title", "Agent", "Model"}
    assert [c["label"] for c in found["columns"] if c["cut"] and not c["text"]] == []
    assert columns["Title"]["cut"] >= 3
    assert columns["Agent"]["cut"]
    assert columns["Model"]["cut"]


def test_B2_a_window_narrower_than_the_figures_scrolls_the_table_alone(
    chromium: Browser, site: Path
) -> None:
    found = layout(chromium, site, 420)
    assert found["page"] == 0  # the counts and filters stay put; only the table's box scrolls
    assert found["scrolls"]
    assert [c["label"] for c in found["columns"] if c["cut"] and not c["text"]] == []
    with visiting(chromium, True) as visit:
        visit.page.set_viewport_size({"width": 420, "height": 800})
        visit.page.goto((site / INDEX).as_uri())
        # The text columns gave all they could first: each at its narrowest, a few letters.
        widths = visit.page.evaluate(
            """() => [...document.querySelectorAll('tbody tr:last-child .tf-runs-clip')]
                .map((clip) => clip.offsetWidth / parseFloat(getComputedStyle(clip).fontSize))"""
        )
    assert len(widths) == 3
    assert all(6.5 < width < 7.5 for width in widths), widths


#: Each title cell of the index: its title attribute, its text, and where its link goes.
TITLES = """() => [...document.querySelectorAll('tbody tr')].map((tr) => {
    const td = tr.children[0];
    return {title: td.title, text: td.innerText, href: td.querySelector('a')?.href ?? null};
})"""


def test_B2_a_cut_title_keeps_its_whole_text_and_its_link(chromium: Browser, site: Path) -> None:
    with visiting(chromium, False) as visit:  # without script too: the title is the page's
        page = visit.page
        page.set_viewport_size({"width": 1000, "height": 800})
        page.goto((site / INDEX).as_uri())
        cells = page.evaluate(TITLES)
        for prompt in (UNBROKEN, SPACED, PATH):
            [cell] = [cell for cell in cells if cell["text"][:50] == prompt[:50]]
            # The row's title (the first prompt's start, as the corpus row keeps it), whole in
            # the cell's text and its tooltip, however little of it the cell shows.
            assert cell["title"] == cell["text"]
            assert len(cell["text"]) >= 100
            assert prompt.startswith(cell["text"].rstrip("…"))
            page.goto(cell["href"])  # its page shows the prompt, well past the row's title
            shown = page.evaluate("() => document.querySelector('main').textContent")
            assert "".join(prompt[:1000].split()) in "".join(shown.split())
            page.go_back()
        names = page.locator("tbody tr", has_text="fix the bug").locator("td")
        assert names.nth(1).get_attribute("title") == AGENT
        assert names.nth(2).get_attribute("title") == MODEL


@pytest.mark.parametrize("width", [1280, 420])
def test_W6_B3_a_long_unbroken_line_stays_within_a_page_and_a_comparison(
    chromium: Browser, tmp_path: Path, width: int
) -> None:
    run, other = long_run(f"fix {UNBROKEN}"), long_run(f"fix it {UNBROKEN[:-5]}")
    pages = {
        "page": render_page(run, title="long"),
        "compare": render_compare_page(run, other, names=("A", "B")),
    }
    with visiting(chromium, True) as visit:
        visit.page.set_viewport_size({"width": width, "height": 800})
        for name, html in pages.items():
            path = tmp_path / f"{name}.html"
            path.write_text(html, encoding="utf-8")
            visit.page.goto(path.as_uri())
            visit.page.evaluate(
                "() => document.querySelectorAll('details').forEach((d) => { d.open = true; })"
            )
            past = visit.page.evaluate(
                """() => [...document.querySelectorAll('main *, .turnfold *')]
                    .filter((e) => e.getClientRects().length
                            && e.getBoundingClientRect().right > innerWidth + 1)
                    .map((e) => e.tagName + '.' + e.className)"""
            )
            sideways = visit.page.evaluate(
                "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert (name, sideways, past) == (name, 0, [])
            assert UNBROKEN[:100] in visit.page.locator("body").inner_text()
