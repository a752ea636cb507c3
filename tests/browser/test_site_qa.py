"""The static site's index as a user uses it in Chromium, from ``file://`` (B-2): a site in a
folder whose name holds a space, a ``#`` and a non-ASCII letter, of runs whose sample ids hold
them too; the search finds a row by what its title cell shows (``tests/test_site_qa.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from turnfold.model import AssistantText, Transcript
from turnfold.render.site import INDEX, build_site

if TYPE_CHECKING:
    from playwright.sync_api import Browser

QA_LOG = Path(__file__).resolve().parent.parent / "fixtures" / "compare-qa" / "qa_v1.eval"


def test_B2_every_link_and_the_search_work_in_a_folder_named_as_users_name_them(
    chromium: Browser, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copyfile(QA_LOG, runs / "arith v1.eval")  # samples s1, s 2, s#3, ü4, s5, s6
    (runs / "no-prompt.jsonl").write_text(
        Transcript([AssistantText(text="Started on my own.")]).dump(), encoding="utf-8"
    )
    (runs / "broken séance.jsonl").write_text('{"type": "user", "message":', encoding="utf-8")
    site = tmp_path / "site #1 é"
    build_site(runs, site, workers=1, progress=False)
    context = chromium.new_context()
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda message: problems.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: problems.append(str(error)))
    try:
        page.goto((site / INDEX).as_uri())
        rows = page.locator("tbody tr:visible")
        assert rows.count() == 8
        search = page.locator(".tf-site-filters input[type=search]")
        search.fill("Broken Séance")
        assert rows.count() == 1
        assert rows.first.inner_text().startswith("⚠ broken séance.jsonl: ")
        assert rows.first.locator("a").count() == 0  # no page: no link to a missing one
        search.fill("no-prompt")
        assert rows.all_inner_texts()[0].startswith("no-prompt.jsonl")
        search.fill("")
        links = page.locator("tbody tr a").evaluate_all("as => as.map(a => a.href)")
        assert len(links) == 7  # every sample of the log, and the run with no prompt
        for link in links:
            page.goto(link)
            assert page.locator("h1").inner_text()
            page.locator("nav.tf-site-nav a[href='../index.html']").click()
            assert page.url == (site / INDEX).as_uri()
        assert problems == []
    finally:
        context.close()
