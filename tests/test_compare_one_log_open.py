"""Two eval logs compared (spec B-3): a sample only one log holds opens its run alone.

The summary named the samples only one log holds, but nothing opened them: only a changed pair
opened its two transcripts. Now each is a row of the table (after the changed pairs, in the
same pages), which opens its one run on its side, the other side saying the sample is not
there; a page gives each its own section (``only-<n>``), linked from its row; the text lists
them.

``tests/fixtures/compare-qa`` holds two versions of one task made with the real ``inspect_ai``
(``qa_recipe.py``): ``s6`` (11 + 12, answered 23) only in v1, ``s7`` (13 + 14, 27) only in v2.
"""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser
from typing import Any

import pytest

import turnfold
from tests.compare_qa_logs import NAMES, compared, opened
from tests.test_viewmodel_schema import _WIRE, _check, _check_typed
from turnfold.compare_widget import CompareWidget
from turnfold.model import AssistantText, Transcript, UserMessage
from turnfold.render import compare_nodes, compare_page
from turnfold.render.compare_page import render_compare_page
from turnfold.render.compare_text import render_compare_text
from turnfold.render.compare_view import ONLY_NAMED, PAGE_ROWS
from turnfold.render.viewmodel import iter_nodes
from turnfold.settings import DisplaySettings

S6, S7 = "arith_qa · s6/1", "arith_qa · s7/1"

pytestmark = pytest.mark.usefixtures("cache_dir")


def _rows(widget: CompareWidget) -> list[tuple[str, str, str, str, str | None]]:
    assert widget._table is not None
    return [(r["key"], r["change_label"], r["a"], r["b"], r["only"]) for r in widget._table["rows"]]


def _side_text(view: Any, side: str) -> str:
    """What the text outline of a comparison draws of one side's turns, pair after pair."""
    name = next(each["name"] for each in view["sides"] if each["key"] == side)
    lines = render_compare_text(view).split("\n")
    said, inside = [], False
    for line in lines:
        if line.startswith("  ") and not line.startswith("    "):
            inside = line.strip() == name
        elif inside:
            said.append(line.strip())
    return "\n".join(said)


# --- the widget ----------------------------------------------------------------------------------


def test_B3_the_table_lists_each_sample_only_one_log_holds_after_the_changed_ones(
    widgets: list[CompareWidget],
) -> None:
    widget = compared(widgets, "en")
    assert _rows(widget) == [
        ("arith_qa · s 2/1", "Regressed", "Passed · score 1", "Failed · score 0", None),
        ("arith_qa · ü4/1", "Improved", "Failed · score 0", "Passed · score 1", None),
        (S6, "Only in v1", "Passed · score 1", "Not in v2", "a"),
        (S7, "Only in v2", "Not in v1", "Passed · score 1", "b"),
    ]
    assert widget._table is not None
    assert widget._table["range_label"] == "1–4 of 4"
    # The first regression is still what opens first; the summary line keeps its wording.
    assert (widget._table["selected"], widget._table["selected_only"]) == ("arith_qa · s 2/1", None)
    summary = widget._table["summary"]
    assert summary.endswith(f"1 only in v1 ({S6}) · 1 only in v2 ({S7})")
    _check_typed(dict(widget._table), compare_nodes.PairTable, "_table")


@pytest.mark.parametrize(
    ("key", "only", "present", "absent", "answer"),
    [(S6, "a", "a", "b", "23"), (S7, "b", "b", "a", "27")],
)
def test_B3_selecting_a_sample_of_one_log_opens_its_run_alone_on_its_side(
    widgets: list[CompareWidget], key: str, only: str, present: str, absent: str, answer: str
) -> None:
    widget = compared(widgets, "en")
    widget._handle_custom_msg({"type": "select", "key": key, "only": only}, [])
    view = widget.view
    assert view is not None
    assert (view["key"], view["only"]) == (key, only)
    other = NAMES[1] if only == "a" else NAMES[0]
    mine = NAMES[0] if only == "a" else NAMES[1]
    assert view["summary"] == f"Only in {mine}: {other} does not hold this sample"
    sides = {side["key"]: side for side in view["sides"]}
    assert sides[absent]["gap"] == f"Not in {other}"
    assert (sides[absent]["session"], sides[absent]["outcome"]) == (None, None)
    assert sides[present]["session"] is not None
    assert sides[present]["outcome"] is not None
    assert sides[present]["outcome"]["text"] == "Passed · score 1"
    assert view["pairs"], "the run's turns are shown"
    for pair in view["pairs"]:
        assert pair[absent] is None  # a gap, saying "Not in …"
        assert pair["header"]["status"] == f"only-{only}"
        assert pair["header"]["status_label"] == f"Only in {mine}"
    assert answer in _side_text(view, present).split("\n")
    assert _side_text(view, absent) == f"({sides[absent]['gap']})"
    assert view["first"] is None  # nothing to part from: the run's own default folds
    # Its keys are the widget's sides' (a/, b/), so its tool's output is sent on request.
    nodes = [node for pair in view["pairs"] for node in (pair["a"] or pair["b"] or [])]
    tools = [node for node in iter_nodes({"nodes": nodes}) if node["kind"] == "tool"]
    assert tools
    assert all(tool["key"].startswith(f"{present}/") for tool in tools)
    assert widget.output_parts(tools[0]["key"]) == [answer]
    # The row is marked as the one shown, on its page.
    assert widget._table is not None
    assert (widget._table["selected"], widget._table["selected_only"]) == (key, only)
    _WIRE["on"] = True
    try:
        _check(widget._compare, compare_nodes.CompareView, "_compare")
    finally:
        _WIRE["on"] = False


def test_B3_a_sample_of_one_log_is_chosen_with_its_side_and_a_wrong_side_changes_nothing(
    widgets: list[CompareWidget],
) -> None:
    widget = compared(widgets, "en")
    before = widget.view
    for wrong in ({"type": "select", "key": S6}, {"type": "select", "key": S6, "only": "b"},
                  {"type": "select", "key": S6, "only": "<b>"}):  # fmt: skip
        widget._handle_custom_msg(wrong, [])
        assert widget.view is before
    with pytest.raises(KeyError, match="only in b"):
        widget.select(S6, "b")


def test_B3_a_sample_of_one_log_opens_in_chinese(widgets: list[CompareWidget]) -> None:
    widget = compared(widgets, "zh")
    assert _rows(widget)[2:] == [
        (S6, "仅在 v1 中", "通过 · 得分 1", "不在 v2 中", "a"),
        (S7, "仅在 v2 中", "不在 v1 中", "通过 · 得分 1", "b"),
    ]
    widget.select(S7, "b")
    assert widget.view is not None
    assert widget.view["summary"] == "仅在 v2 中：v1 中没有此样本"
    assert widget.view["sides"][0]["gap"] == "不在 v1 中"


def test_B3_two_samples_whose_keys_read_alike_open_their_own_run(
    widgets: list[CompareWidget],
) -> None:
    # A key of 1 in one log and "1" in the other join nothing, and both read "1".
    left = Transcript([UserMessage(text="left"), AssistantText(text="from the left")])
    right = Transcript([UserMessage(text="right"), AssistantText(text="from the right")])
    widget = turnfold.compare(turnfold.scan([left]), turnfold.scan([right]), names=NAMES,
                              key=lambda row: 1 if row["title"] == "left" else "1")  # fmt: skip
    widgets.append(widget)
    assert [(r[0], r[4]) for r in _rows(widget)] == [("1", "a"), ("1", "b")]
    assert widget.view is None  # nothing changed: nothing opens by itself
    widget._handle_custom_msg({"type": "select", "key": "1", "only": "b"}, [])
    assert widget.view is not None
    assert "from the right" in _side_text(widget.view, "b").split("\n")
    assert widget._table is not None
    assert (widget._table["selected"], widget._table["selected_only"]) == ("1", "b")


def test_B3_the_samples_of_one_log_are_paged_with_the_changed_ones(
    widgets: list[CompareWidget],
) -> None:
    # One log of sixty samples against a log of one: the summary names ten, the table pages
    # through all of them as it pages changed samples.
    many = [Transcript([UserMessage(text=f"q{n}"), AssistantText(text=f"a{n}")],
                       metadata={"outcome": "pass", "sample": n}) for n in range(61)]  # fmt: skip
    widget = turnfold.compare(turnfold.scan(many), turnfold.scan(many[:1]), names=NAMES)
    widgets.append(widget)
    table = widget._table
    assert table is not None
    assert table["summary"].startswith("0 regressed · 1 the same · 60 only in v1 (")
    assert table["summary"].endswith(f" and {60 - ONLY_NAMED} more)")
    assert (len(table["rows"]), table["pages"]) == (PAGE_ROWS, 2)
    assert table["range_label"] == "1–50 of 60"
    assert table["empty"] == "No sample's outcome or score changed."
    widget.page(1)
    assert [r["key"] for r in widget._table["rows"]] == [str(n) for n in range(51, 61)]
    widget.page(0)
    widget._handle_custom_msg({"type": "select", "key": "57", "only": "a"}, [])
    assert widget._table["page"] == 1  # the page of the chosen row
    assert widget.view is not None
    assert "a57" in _side_text(widget.view, "a").split("\n")


def test_B3_the_widget_s_text_lists_the_samples_of_one_log(widgets: list[CompareWidget]) -> None:
    widget = compared(widgets, "en")
    widget.select(S6, "a")
    bundle = widget._repr_mimebundle_()
    assert bundle is not None
    plain = bundle[0]["text/plain"].split("\n")
    assert plain[3:8] == [
        "Sample            Change      v1                v2",
        "arith_qa · s 2/1  Regressed   Passed · score 1  Failed · score 0",
        "arith_qa · ü4/1   Improved    Failed · score 0  Passed · score 1",
        "arith_qa · s6/1   Only in v1  Passed · score 1  Not in v2",
        "arith_qa · s7/1   Only in v2  Not in v1         Passed · score 1",
    ]
    # Then the run shown: its side, the other side's gap saying the sample is not there.
    shown = plain[9:]
    assert shown[2] == "Only in v1: v2 does not hold this sample"
    assert "    (Not in v2)" in shown
    assert "    23" in shown
    page = _Page(bundle[0]["text/html"])
    assert page.links == ["only-1"]  # the one view the widget holds, linked from its row
    assert "only-1" in page.ids


# --- the page ------------------------------------------------------------------------------------


class _Page(HTMLParser):
    """A page's ids, in-page links, each section's columns' text by side, its gaps."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.links: list[str] = []
        self.link_text: dict[str, str] = {}
        self.columns: dict[tuple[str, str], str] = {}  # (section id, side) → text
        self._section = ""
        self._column: tuple[str, str] | None = None
        self._depth = 0  # open elements inside the current column
        self._link: str | None = None
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        if found.get("id") is not None:
            self.ids.append(str(found["id"]))
        if "tf-cmp-section" in classes:
            self._section = str(found["id"])
        href = found.get("href")
        if tag == "a" and href and href.startswith("#"):
            self.links.append(href[1:])
            self._link = href[1:]
        if self._column is not None:
            self._depth += 1
        elif "tf-col" in classes:
            self._column = (self._section, str(found.get("data-side")))
            self.columns.setdefault(self._column, "")
            self._depth = 0

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._link = None
        if self._column is not None:
            if self._depth == 0:
                self._column = None
            else:
                self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._column is not None:
            self.columns[self._column] += data
        if self._link is not None:
            self.link_text[self._link] = self.link_text.get(self._link, "") + data


def test_B3_the_page_gives_each_sample_of_one_log_a_section_linked_from_its_row() -> None:
    html = render_compare_page(*opened(), names=NAMES)
    page = _Page(html)
    assert [name for name, count in Counter(page.ids).items() if count > 1] == []
    assert page.links == ["pair-1", "pair-2", "only-3", "only-4"]
    assert set(page.links) <= set(page.ids)
    assert (page.link_text["only-3"], page.link_text["only-4"]) == (S6, S7)
    # Each run on its side, the other side saying the sample is not there.
    assert "23" in page.columns["only-3", "a"]
    assert page.columns["only-3", "b"] == "Not in v2"
    assert page.columns["only-4", "a"] == "Not in v1"
    assert "27" in page.columns["only-4", "b"]
    # Their calls' anchors are theirs (only-<n>/a/…), apart from the pairs' (pair-<n>/a/…).
    assert [name for name in page.ids if name.startswith("call-only-")] == [
        "call-only-3/a/e2", "call-only-4/b/e2",
    ]  # fmt: skip


def test_B3_a_page_too_long_for_every_sample_of_one_log_says_how_many_it_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(compare_page, "STATIC_TABLE_ROWS", 3)
    html = render_compare_page(*opened(), names=NAMES)
    page = _Page(html)
    assert page.links == ["pair-1", "pair-2", "only-3"]
    assert "1 more sample only one run holds is not on this page" in html
    assert "more changed sample" not in html
    zh = render_compare_page(*opened(), DisplaySettings(locale="zh"), names=NAMES)
    assert "还有 1 个仅一方有的样本不在此页" in zh
    assert "仅在 v1 中：v2 中没有此样本" in zh
