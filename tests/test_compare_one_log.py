"""Two eval logs compared (spec B-3), as a QA pass found them wrong.

* The summary said "1 only in v1 · 1 only in v2" and never said which samples those were, on the
  page, in the text and in the widget, though the comparison knows them.
* A page of two corpora repeated each pair's ids (``id="call-a/e2"``, ``id="call-b/e2"``) in
  every pair's section: each comparison's sides reused the ``a/`` and ``b/`` key prefixes.

``tests/fixtures/compare-qa`` holds two versions of one task made with the real ``inspect_ai``
(``qa_recipe.py``): ``s6`` only in v1, ``s7`` only in v2.
"""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser

import pytest

from tests.compare_qa_logs import NAMES, compared, opened
from turnfold.compare_widget import CompareWidget
from turnfold.comparison import compare_rows
from turnfold.render.compare_page import render_compare_page
from turnfold.render.compare_view import build_pair_table
from turnfold.render.viewmodel import iter_nodes
from turnfold.settings import DisplaySettings

SUMMARY = (
    "1 regressed · 1 improved · 3 the same · 1 only in v1 (arith_qa · s6/1)"
    " · 1 only in v2 (arith_qa · s7/1)"
)
SUMMARY_ZH = (
    "1 个退步 · 1 个进步 · 3 个相同 · 1 项仅在 v1 中（arith_qa · s6/1）"
    " · 1 项仅在 v2 中（arith_qa · s7/1）"
)

pytestmark = pytest.mark.usefixtures("cache_dir")


class _Page(HTMLParser):
    """Every ``id`` and in-page ``href`` of a page, and the text of its summaries."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.links: list[str] = []
        self.summaries: list[str] = []
        self._in_summary = False
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id") is not None:
            self.ids.append(str(found["id"]))
        href = found.get("href")
        if href and href.startswith("#"):
            self.links.append(href[1:])
        if "tf-cmp-summary" in (found.get("class") or "").split():
            self._in_summary = True
            self.summaries.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_summary = False

    def handle_data(self, data: str) -> None:
        if self._in_summary:
            self.summaries[-1] += data


# --- the samples of one log are named ------------------------------------------------------------


def test_B3_the_page_names_the_samples_only_one_log_has() -> None:
    page = _Page(render_compare_page(*opened(), names=NAMES))
    # The table's summary first, then each changed sample's own comparison.
    assert page.summaries[0] == SUMMARY


def test_B3_the_widget_and_its_text_name_the_samples_only_one_log_has(
    widgets: list[CompareWidget],
) -> None:
    widget = compared(widgets)
    assert widget._table is not None
    assert widget._table["summary"] == SUMMARY  # what the view draws
    bundle = widget._repr_mimebundle_()
    assert bundle is not None
    data, _ = bundle
    assert data["text/plain"].split("\n")[2] == SUMMARY
    assert _Page(data["text/html"]).summaries[0] == SUMMARY


def test_B3_the_samples_only_one_log_has_are_named_in_chinese(
    widgets: list[CompareWidget],
) -> None:
    widget = compared(widgets, "zh")
    assert widget._table is not None
    assert widget._table["summary"] == SUMMARY_ZH
    zh = DisplaySettings(locale="zh")
    assert _Page(render_compare_page(*opened(), zh, names=NAMES)).summaries[0] == SUMMARY_ZH


def test_B3_many_samples_of_one_log_are_named_up_to_a_bound_and_the_rest_counted() -> None:
    from turnfold.render.compare_view import ONLY_NAMED

    # A log of hundreds of samples against a log of one: the summary stays a line.
    rows_a = [{"key": f"a.jsonl#{n}", "sample": f"s{n}", "outcome": "pass"} for n in range(500)]
    rows_b = [{"key": "b.jsonl#0", "sample": "s0", "outcome": "pass"}]
    comparison = compare_rows(rows_a, rows_b)
    summary = build_pair_table(comparison, "en", names=NAMES)["summary"]
    named = ", ".join(f"s{n}" for n in range(1, ONLY_NAMED + 1))
    more = 499 - ONLY_NAMED
    assert summary == f"0 regressed · 1 the same · 499 only in v1 ({named} and {more} more)"
    zh = build_pair_table(comparison, "zh", names=NAMES)["summary"]
    named_zh = "、".join(f"s{n}" for n in range(1, ONLY_NAMED + 1))
    assert zh == f"0 个退步 · 1 个相同 · 499 项仅在 v1 中（{named_zh} 及另外 {more} 项）"


# --- every id of the page is its own ------------------------------------------------------------


def test_B3_a_page_of_two_logs_gives_no_two_elements_one_id() -> None:
    html = render_compare_page(*opened(), names=NAMES)
    page = _Page(html)
    repeated = [name for name, count in Counter(page.ids).items() if count > 1]
    assert repeated == []
    # Each changed sample's section is there, its calls anchored, and the table's links land.
    assert {"pair-1", "pair-2"} <= set(page.ids)
    # one call a side, two pairs (the sections of s6 and s7 alone: test_compare_one_log_open)
    assert sum(name.startswith("call-pair-") for name in page.ids) == 4
    assert page.links[:2] == ["pair-1", "pair-2"]
    assert set(page.links) <= set(page.ids)


def test_B3_the_widget_keeps_its_side_prefixes_and_answers_content_requests(
    widgets: list[CompareWidget],
) -> None:
    # One comparison at a time: its sides are a/ and b/, as the view's fold memory expects.
    widget = compared(widgets)
    assert widget.view is not None
    nodes = [n for pair in widget.view["pairs"] for n in (*(pair["a"] or []), *(pair["b"] or []))]
    keys = [node["key"] for node in nodes]
    assert keys
    assert all(key.startswith(("a/", "b/")) for key in keys)
    tools = [
        node["key"]
        for pair in widget.view["pairs"]
        for node in iter_nodes({"nodes": pair["a"] or []})
        if node["kind"] == "tool"
    ]
    assert tools
    assert widget.output_parts(tools[0]) == ["7"]
