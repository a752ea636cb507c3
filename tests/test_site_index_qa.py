"""The static site's index (B-2) and the session browser (B-1) as a QA pass read them.

* A run whose source records a title (Claude Code's ``custom-title``, Codex's thread name) had
  its page headed by that title, while its index link and the index's search used its first
  prompt: one run, two names.
* The Sample column sorted as text (``10/1`` before ``2/1``, ``1/10`` before ``1/2``), in the
  index and in the browser.
* The index's search did not read the Sample column: ``s#3`` or ``2/7`` found nothing.

The index's script is emulated here as it reads the rows (``site-index.js``): it orders rows by
the values of ``data-sort`` with ``<`` (missing values last) and keeps the rows whose
``data-text`` holds what the reader typed, lower-cased.
"""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.browser import SessionBrowser
from turnfold.corpus import paging
from turnfold.corpus.summarize import TITLE_LIMIT
from turnfold.model import AssistantText, Transcript, UserMessage
from turnfold.render.site import INDEX, RUNS, build_site, page_name

FIXTURES = Path(__file__).parent / "fixtures"
#: ``site-index-qa/numbered_recipe.py``'s log: samples ``1``, ``2`` and ``10``, ten epochs each.
NUMBERED = FIXTURES / "site-index-qa" / "numbered_ten-epochs.eval"
#: Sample ids with a space, a ``#`` and a non-ASCII letter (``compare-qa/qa_recipe.py``).
QA_V1 = FIXTURES / "compare-qa" / "qa_v1.eval"
#: Sessions whose sources record a title besides their first prompt.
TITLED = {
    "claude-code_v2.1.x_schema-coverage.jsonl": ("Stage0 small fixture", "Hello"),
    "codex_rollout_schema-coverage.jsonl": ("[trimmed for fixture]", "List the files"),
}
#: Every sample of ``NUMBERED`` in the order a reader counts: ids as numbers, then epochs.
COUNTED = [f"{sample}/{epoch}" for sample in (1, 2, 10) for epoch in range(1, 11)]


class _Index(HTMLParser):
    """The index's rows: each one's data attributes, its cells' text and its link."""

    def __init__(self) -> None:
        super().__init__()
        self.heads: list[str] = []
        self.rows: list[dict[str, Any]] = []
        self._cell: list[str] | None = None
        self._in_head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "thead":
            self._in_head = True
        elif tag == "tr" and not self._in_head:
            self.rows.append({"attrs": dict(attrs), "cells": [], "link": None})
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "a" and self.rows and not self._in_head:
            self.rows[-1]["link"] = dict(attrs).get("href")

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self._in_head = False
        elif tag in ("td", "th") and self._cell is not None:
            text = "".join(self._cell)
            (self.heads if self._in_head else self.rows[-1]["cells"]).append(text)
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def index_of(site: Path) -> _Index:
    parsed = _Index()
    parsed.feed((site / INDEX).read_text("utf-8"))
    return parsed


def sorted_as_the_script_sorts(index: _Index, head: str) -> list[list[str]]:
    """The rows' cells in the order the index's script gives them on a click of ``head``
    (ascending: a word column's first click), missing values last, ties in the page's order."""
    at = index.heads.index(head)
    keyed = [(json.loads(row["attrs"]["data-sort"])[at], n, row["cells"])
             for n, row in enumerate(index.rows)]  # fmt: skip
    present = sorted((k for k in keyed if k[0] is not None), key=lambda k: (k[0], k[1]))
    return [cells for _, _, cells in present + [k for k in keyed if k[0] is None]]


def found_by(index: _Index, typed: str) -> list[list[str]]:
    """The rows the index's search keeps for what the reader typed."""
    needle = typed.strip().lower()
    return [row["cells"] for row in index.rows if needle in row["attrs"]["data-text"]]


def heading(page: Path) -> str:
    found = re.search(r"<h1>([^<]*)</h1>", page.read_text("utf-8"))
    assert found is not None, page
    return found.group(1)


# --- one title per run ----------------------------------------------------------------------------


def _titled_site(tmp_path: Path) -> tuple[Path, Path]:
    """The site of a folder of the :data:`TITLED` sessions: that folder, and the site's."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in TITLED:
        shutil.copyfile(FIXTURES / name, runs / name)
    out = tmp_path / "site"
    build_site(runs, out, workers=1, progress=False)
    return runs, out


def test_B2_a_run_s_recorded_title_names_its_index_link_as_it_heads_its_page(
    tmp_path: Path,
) -> None:
    runs, out = _titled_site(tmp_path)
    index = index_of(out)
    title_at = index.heads.index("Title")
    by_link = {row["link"]: row for row in index.rows}
    assert len(by_link) == len(TITLED)
    for name, (recorded, prompt) in TITLED.items():
        page = page_name(str(runs / name))
        row = by_link[f"{RUNS}/{page}"]
        assert heading(out / RUNS / page) == recorded
        assert row["cells"][title_at] == recorded  # the link's words are the page's heading
        # Found by its title and by its first prompt, as before.
        assert row["cells"] in found_by(index, recorded.upper())
        assert row["cells"] in found_by(index, prompt)
    # A rebuild keeps every page as it was and names each run as the first build did.
    assert build_site(runs, out, workers=1, progress=False).written == 0
    assert index_of(out).rows == index.rows


def test_B2_X1_a_recorded_title_is_text_on_one_line_in_the_index_and_cut_as_a_row_s(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    named = Transcript([UserMessage(text="Hi"), AssistantText(text="Hello.")])
    named.metadata["title"] = '<img src=x onerror="alert(1)">\nsecond line ' + "word " * 400
    (runs / "named.jsonl").write_text(named.dump(), encoding="utf-8")
    out = tmp_path / "site"
    build_site(runs, out, workers=1, progress=False)
    (row,) = index_of(out).rows
    shown = row["cells"][0]
    assert shown.startswith('<img src=x onerror="alert(1)"> second line word word')
    assert len(shown) == TITLE_LIMIT  # cut as a row's title is (C-2)
    assert shown.endswith("…")
    assert "<img" not in (out / INDEX).read_text("utf-8")  # text, never markup
    assert row["cells"] in found_by(index_of(out), "second line word")


def test_B2_the_index_sorts_titles_by_the_title_each_row_shows(tmp_path: Path) -> None:
    _, out = _titled_site(tmp_path)
    index = index_of(out)
    titles = [
        cells[index.heads.index("Title")] for cells in sorted_as_the_script_sorts(index, "Title")
    ]
    assert titles == sorted((recorded for recorded, _ in TITLED.values()), key=str.lower)


# --- the Sample column, sorted as a reader counts -------------------------------------------------


@pytest.mark.parametrize(
    ("samples", "counted"),
    [
        (["10/1", "2/1", "1/1"], ["1/1", "2/1", "10/1"]),  # ids as numbers
        (["1/10", "1/2", "1/1"], ["1/1", "1/2", "1/10"]),  # epochs as numbers
        (["item-10/1", "item-9/2", "Item-9/1"], ["Item-9/1", "item-9/2", "item-10/1"]),
        (["s#3/1", "s1/1", "ü4/1", "s 2/1"], ["s1/1", "s 2/1", "s#3/1", "ü4/1"]),
        # An id with a slash of its own: the epoch is what follows the last one.
        (["a/10/1", "a/9/2"], ["a/9/2", "a/10/1"]),
        # An OpenHands instance, a database's session: no epoch, the id alone.
        (["django__django-11099", "django__django-9296"],
         ["django__django-9296", "django__django-11099"]),
        (["x/1", "x"], ["x", "x/1"]),  # no epoch before the first
        (["07/1", "7/1", "6/1"], ["6/1", "07/1", "7/1"]),  # leading zeros: the same number
    ],
)  # fmt: skip
def test_B1_B2_samples_sort_by_id_naturally_then_epoch_as_a_number(
    samples: list[str], counted: list[str]
) -> None:
    assert paging.sample_order(samples) == counted
    assert sorted(samples, key=paging.sample_key) == counted


def test_B1_B2_a_hostile_sample_id_sorts_without_being_read_as_a_number() -> None:
    # Python refuses to read an integer of more than 4,300 digits: a key must not try.
    huge = "9" * 100_000
    assert paging.sample_order([f"{huge}/1", "2/1", f"1/{huge}"]) == [
        f"1/{huge}",
        "2/1",
        f"{huge}/1",
    ]


def test_B2_the_index_sorts_the_sample_column_as_numbers(tmp_path: Path) -> None:
    out = tmp_path / "site"
    build_site(NUMBERED, out, workers=1, progress=False)
    index = index_of(out)
    sample_at = index.heads.index("Sample")
    assert sorted(row["cells"][sample_at] for row in index.rows) == sorted(COUNTED)
    order = [cells[sample_at] for cells in sorted_as_the_script_sorts(index, "Sample")]
    assert order == COUNTED


def test_B1_the_browser_sorts_the_sample_column_as_numbers() -> None:
    corpus = turnfold.scan(NUMBERED, workers=1, cache=False)
    browser = SessionBrowser(corpus)
    try:
        sample_at = [head["name"] for head in browser._page["columns"]].index("sample")
        for descending in (False, True):
            browser.query = {"sort": "sample", "descending": descending}
            shown = [row["cells"][sample_at]["text"] for row in browser._page["rows"]]
            assert shown == (COUNTED[::-1] if descending else COUNTED)
            assert list(browser.rows["sample"]) == shown
        # Filtered, then sorted: the same rule over the rows kept.
        ends_in_one = {"column": "sample", "op": "contains", "value": "/1"}
        browser.query = {"sort": "sample", "filters": [ends_in_one]}
        shown = [row["cells"][sample_at]["text"] for row in browser._page["rows"]]
        assert shown == [sample for sample in COUNTED if "/1" in sample]
    finally:
        browser.close()


# --- the index's search reads the Sample column ---------------------------------------------------


def test_B2_the_index_finds_a_row_by_its_sample(tmp_path: Path) -> None:
    out = tmp_path / "site"
    build_site(QA_V1, out, workers=1, progress=False)
    index = index_of(out)
    sample_at = index.heads.index("Sample")
    assert [cells[sample_at] for cells in found_by(index, "s#3")] == ["s#3/1"]
    assert [cells[sample_at] for cells in found_by(index, "Ü4")] == ["ü4/1"]
    numbered = tmp_path / "numbered"
    build_site(NUMBERED, numbered, workers=1, progress=False)
    index = index_of(numbered)
    assert [cells[sample_at] for cells in found_by(index, " 2/7 ")] == ["2/7"]
