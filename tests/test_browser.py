"""The session browser, kernel side (spec B-1, Q-5, C-6, P-10, P-11, W-4), without a browser.

What the view is sent (``_page``, ``_choices``, ``_hits``) is checked as a reader would read it:
the rows in the order asked for, the cells' text, what a filter keeps. The view itself is tested
in a real JupyterLab in ``tests/browser/test_session_browser.py``.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import turnfold
from turnfold.browser import SessionBrowser
from turnfold.corpus import COLUMNS, Corpus, scan
from turnfold.corpus.discover import Item
from turnfold.corpus.paging import PAGE_ROWS, Paging
from turnfold.corpus.tables import row_schema
from turnfold.model import AssistantText, Transcript, UserMessage
from turnfold.samples import demo_session
from turnfold.settings import DisplaySettings
from turnfold.settings_widget import SettingsWidget

from .test_widget import WIDGET_MIME, Wire, _Shell

# Every test its own index, never the user's.
pytestmark = pytest.mark.usefixtures("cache_dir")

TREE = Path(__file__).parent / "fixtures" / "corpus"
START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def rows_of(count: int) -> list[dict[str, Any]]:
    """``count`` rows of runs: every third by codex, every fourth failed a tool, one a day."""
    rows = []
    for i in range(count):
        rows.append({
            "key": f"run-{i:05d}", "title": f"Task {i}" if i % 7 else f"task {i}",
            "agent": "codex" if i % 3 == 0 else "claude-code",
            "model": None if i % 5 == 0 else f"model-{i % 2}",
            "started": START + timedelta(days=i), "turns": i % 10,
            "tool_calls": 2 * (i % 10), "failed_tools": 1 if i % 4 == 0 else 0,
            "duration_s": float(i), "input_tokens": 1000 * i, "output_tokens": 10 * i,
            "outcome": ("pass", "fail", None)[i % 3], "error": None,
        })  # fmt: skip
    return rows


def table_of(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist([dict.fromkeys(COLUMNS) | row for row in rows], schema=row_schema())


def corpus_of(transcripts: dict[str, Transcript], rows: list[dict[str, Any]]) -> Corpus:
    """A corpus of ``rows`` whose items are ``transcripts`` by key."""
    empty = pa.table({})

    def opener(position: int, row: dict[str, Any]) -> Item:
        return Item(key=row["key"], transcript=transcripts[row["key"]])

    return Corpus(table_of(rows), empty, empty, skipped=0, opener=opener)


def keys(page: dict[str, Any]) -> list[str]:
    return [row["key"] for row in page["rows"]]


def page_of(paging: Paging, raw: dict[str, Any]) -> dict[str, Any]:
    query, problems = paging.query(raw)
    return dict(paging.page(query, problems))


# --- B-1: sort, filter, page (Python decides) -----------------------------------------------------


def test_B1_the_first_page_shows_the_default_columns_in_the_corpus_order() -> None:
    page = page_of(Paging(table_of(rows_of(250))), {})
    assert [c["name"] for c in page["columns"]] == [
        "title", "agent", "model", "started", "duration_s", "turns", "tool_calls",
        "failed_tools", "tokens", "cost_usd", "outcome",
    ]  # fmt: skip
    assert keys(page) == [f"run-{i:05d}" for i in range(PAGE_ROWS)]
    assert page["total"] == 250
    assert page["label"] == "1–100 of 250"


def test_B1_only_text_columns_may_be_cut_short_by_a_narrow_table() -> None:
    # The view lets a narrow table cut the columns marked clip (tests/browser/
    # test_session_browser_widths.py): text; never a figure, a moment or an outcome.
    columns = [*COLUMNS, "tokens"]
    page = page_of(Paging(table_of(rows_of(1))), {"columns": columns})
    clipped = {head["name"] for head in page["columns"] if head["clip"]}
    assert {"title", "agent", "model", "error"} <= clipped
    for name in ("started", "duration_s", "tokens", "cost_usd", "outcome", "score", "turns"):
        assert name not in clipped


def test_B1_cells_read_as_a_person_reads_them_with_outcome_and_failures_at_a_glance() -> None:
    page = page_of(Paging(table_of(rows_of(5))), {})
    names = [c["name"] for c in page["columns"]]
    first = dict(zip(names, page["rows"][0]["cells"], strict=True))
    assert first["started"] == {"text": "2026-01-01 00:00", "title": "2026-01-01 00:00:00 UTC"}
    assert first["outcome"] == {"text": "✔ Passed", "tone": "pass"}
    assert first["failed_tools"] == {"text": "✖ 1", "tone": "fail"}  # a glyph, not colour alone
    second = dict(zip(names, page["rows"][1]["cells"], strict=True))
    assert second["outcome"] == {"text": "✖ Failed", "tone": "fail"}
    assert second["failed_tools"] == {"text": "0", "tone": "dim"}
    assert second["tokens"]["text"] == "1k"  # input plus output, as the session header counts
    assert dict(zip(names, page["rows"][2]["cells"], strict=True))["outcome"] == {"text": ""}


def test_B1_sort_by_any_column_numbers_text_and_moments_missing_values_last() -> None:
    paging = Paging(table_of(rows_of(30)))
    by_turns = page_of(paging, {"sort": "turns", "descending": True})
    turns = [row["cells"][5]["text"] for row in by_turns["rows"]]
    assert turns == sorted(turns, key=int, reverse=True)
    # Ties keep the corpus's order.
    assert keys(by_turns)[:3] == ["run-00009", "run-00019", "run-00029"]
    assert by_turns["columns"][5]["sort"] == "descending"
    by_title = page_of(paging, {"sort": "title"})
    titles = [row["cells"][0]["text"] for row in by_title["rows"]]
    assert titles == sorted(titles, key=str.lower)  # as a reader sorts words
    for descending in (False, True):
        by_model = page_of(paging, {"sort": "model", "descending": descending})
        models = [row["cells"][2]["text"] for row in by_model["rows"]]
        assert models[-6:] == [""] * 6  # no model recorded: last either way
    newest = page_of(paging, {"sort": "started", "descending": True})
    assert keys(newest)[0] == "run-00029"


def test_B1_filters_agent_model_outcome_failures_dates_numbers_and_any_column() -> None:
    paging = Paging(table_of(rows_of(60)))

    def kept(*filters: dict[str, Any]) -> list[int]:
        page = page_of(paging, {"filters": list(filters), "columns": ["key"]})
        assert page["problems"] == []
        return [int(key.removeprefix("run-")) for key in keys(page)]

    assert kept({"column": "agent", "op": "==", "value": "codex"}) == list(range(0, 60, 3))
    assert kept({"column": "model", "op": "==", "value": None}) == list(range(0, 60, 5))
    assert kept({"column": "outcome", "op": "==", "value": "fail"}) == list(range(1, 60, 3))
    has_failures = {"column": "failed_tools", "op": ">=", "value": 1}
    assert kept(has_failures) == list(range(0, 60, 4))
    # A date means that whole day, whichever end of the range it is.
    since = {"column": "started", "op": ">=", "value": "2026-01-10"}
    until = {"column": "started", "op": "<=", "value": "2026-01-12"}
    assert kept(since, until) == [9, 10, 11]
    assert kept({"column": "started", "op": "==", "value": "2026-01-03"}) == [2]
    assert kept({"column": "duration_s", "op": ">=", "value": "57.5"}) == [58, 59]
    assert kept({"column": "title", "op": "contains", "value": "TASK 1"})[:3] == [1, 10, 11]
    assert kept({"column": "turns", "op": "==", "value": 4}, has_failures) == [4, 24, 44]
    assert kept({"column": "model", "op": "!=", "value": None})[:4] == [1, 2, 3, 4]


def test_B1_a_query_from_the_view_keeps_what_it_can_and_says_what_it_could_not() -> None:
    paging = Paging(table_of(rows_of(10)))
    page = page_of(paging, {
        "sort": "nope", "columns": ["turns", "bogus", "turns"], "offset": -5,
        "filters": [{"column": "turns", "op": ">=", "value": "many"}, "junk",
                    {"column": "agent", "op": ">=", "value": "a"},
                    {"column": "started", "op": "<=", "value": "yesterday"},
                    {"column": "turns", "op": ">=", "value": ""},
                    {"column": "title", "op": "contains", "value": None},
                    {"column": "agent", "op": "==", "value": "codex"}],
    })  # fmt: skip
    assert page["problems"] == [
        "No column nope",
        "Not a number: many",
        "Not a filter: junk",
        "Agent takes no range",
        "Not a date: yesterday",
        # At least nothing had been "is missing": no run matched, with nothing said.
        "Turns >=: give a value to compare with",
        "Title contains: give a value to compare with",
    ]
    assert page["query"]["sort"] is None
    assert [c["name"] for c in page["columns"]] == ["turns"]
    assert page["total"] == 4  # the agent filter it could use still applies
    assert page["query"]["offset"] == 0


def test_B1_the_next_page_continues_the_same_order_and_the_last_page_is_as_far_as_it_goes() -> None:
    paging = Paging(table_of(rows_of(250)))
    query = {"sort": "duration_s", "descending": True}
    first = page_of(paging, query)
    second = page_of(paging, {**query, "offset": PAGE_ROWS})
    assert keys(first)[-1] == "run-00150"
    assert keys(second)[0] == "run-00149"
    assert second["label"] == "101–200 of 250"
    beyond = page_of(paging, {**query, "offset": 10_000})
    assert beyond["query"]["offset"] == 200
    assert len(beyond["rows"]) == 50
    filtered = page_of(paging, {"filters": [{"column": "agent", "op": "==", "value": "codex"}]})
    assert filtered["label"] == "1–84 of 84 (250 in all)"


def test_Q5_what_the_view_is_sent_does_not_grow_with_the_corpus() -> None:
    small, large = Paging(table_of(rows_of(300))), Paging(table_of(rows_of(30_000)))
    for query in ({}, {"sort": "turns"}, {"filters": [{"column": "turns", "op": ">=", "value": 5}]},
                  {"sort": "title", "offset": 200}):  # fmt: skip
        sizes = [len(json.dumps(page_of(paging, query))) for paging in (small, large)]
        assert sizes[1] < 1.1 * sizes[0], query
    assert len(json.dumps(large.choices())) < 1.5 * len(json.dumps(small.choices()))


def test_B1_the_filters_offer_the_commonest_values_with_their_counts() -> None:
    choices = Paging(table_of(rows_of(30))).choices()
    controls = {(c["column"], c["op"]): c for c in choices["controls"]}
    assert [o["value"] for o in controls["agent", "=="]["options"]] == ["claude-code", "codex"]
    assert [o["count"] for o in controls["agent", "=="]["options"]] == [20, 10]
    outcomes = {o["value"]: o["label"] for o in controls["outcome", "=="]["options"]}
    assert outcomes == {"pass": "✔ Passed", "fail": "✖ Failed"}
    assert controls["failed_tools", ">="]["kind"] == "flag"
    assert controls["failed_tools", ">="]["value"] == 1
    assert {(c["column"], c["op"]) for c in choices["controls"] if c["kind"] == "date"} == {
        ("started", ">="),
        ("started", "<="),
    }
    ops = {c["name"]: c["ops"] for c in choices["columns"]}
    assert ops["turns"] == ["==", "!=", ">=", "<=", "contains"]
    assert ops["agent"] == ["==", "!=", "contains"]


# --- B-1: the widget ------------------------------------------------------------------------------


def scanned(browsers: list[SessionBrowser], **kwargs: Any) -> SessionBrowser:
    browser = SessionBrowser(scan(TREE, workers=1), **kwargs)
    browsers.append(browser)
    return browser


def test_B1_the_view_writes_a_query_and_gets_the_page_that_answers_it(
    browsers: list[SessionBrowser],
) -> None:
    browser = scanned(browsers)
    assert browser._page["total"] == len(browser.corpus)
    browser.query = {"sort": "tool_calls", "descending": True, "columns": ["title", "tool_calls"],
                     "filters": [{"column": "error", "op": "==", "value": None}]}  # fmt: skip
    page = browser._page
    counts = [int(row["cells"][1]["text"]) for row in page["rows"]]
    assert counts == sorted(counts, reverse=True)
    frame = browser.rows
    assert list(frame.key) == keys(page)
    assert list(frame.columns[: len(COLUMNS)]) == list(COLUMNS)
    assert frame.error.isna().all()


def test_B1_an_unreadable_run_says_why_in_its_title_cell(browsers: list[SessionBrowser]) -> None:
    browser = scanned(browsers)
    broken = [row for row in browser._page["rows"] if row.get("tone") == "error"]
    assert len(broken) == 2
    assert all(row["cells"][0]["text"].startswith("⚠ ") for row in broken)


def test_B1_opening_a_row_shows_its_run_in_one_reused_transcript_widget_with_its_own_folds(
    browsers: list[SessionBrowser],
) -> None:
    first = Transcript([UserMessage(text="first"), AssistantText(text="one")])
    second = Transcript([UserMessage(text="second"), AssistantText(text="two")])
    rows = [{"key": "a", "title": "first"}, {"key": "b", "title": "second"}]
    corpus = corpus_of({"a": first, "b": second}, rows)
    browser = SessionBrowser(corpus)
    browsers.append(browser)
    widget = browser.transcript_widget  # made with the browser, empty, for every front end
    assert browser._transcript is widget
    assert widget.transcript.entries == []
    browser.show("a")
    assert browser.transcript_widget is widget
    assert widget.transcript is first
    widget._folds = {"process:turn:x": "open"}  # as the view writes them
    browser._on_view_message(browser, {"type": "open", "key": "b", "entry": None}, [])
    assert (browser.selected, widget.transcript, widget._folds) == ("b", second, {})
    wire = Wire(widget)
    browser.selected = "a"  # code can open a run too
    assert browser.transcript_widget is widget
    assert widget.transcript is first
    (replace,) = wire.custom("replace")
    assert replace["folds"] == {"process:turn:x": "open"}  # P-10: kept while the browser lives
    browser._on_view_message(browser, {"type": "open", "key": "nope"}, [])  # untrusted: ignored
    browser._on_view_message(browser, ["not", "a", "request"], [])
    assert browser.selected == "a"


def test_B1_a_settings_widget_linked_to_the_browser_redraws_the_run_under_it(
    browsers: list[SessionBrowser],
) -> None:
    settings = DisplaySettings()
    browser = SessionBrowser(corpus_of({"a": demo_session()}, [{"key": "a"}]), settings)
    browsers.append(browser)
    panel = SettingsWidget(browser.settings)
    try:
        browser.show("a")
        widget = browser.transcript_widget
        assert widget is not None
        panel.settings.transcript_display_mode = "flat"
        assert widget.transcript_display_mode == "flat"
        widget.flush()
        assert widget.view["mode"] == "flat"
    finally:
        panel.close()


def test_C6_a_search_across_runs_lists_hits_and_opening_one_reveals_it(
    browsers: list[SessionBrowser],
) -> None:
    browser = scanned(browsers)
    browser._on_view_message(browser, {"type": "search", "query": "readme"}, [])
    assert browser._hits is not None
    deadline = time.monotonic() + 60
    while browser._hits["searching"] and time.monotonic() < deadline:
        time.sleep(0.05)
    hits = browser._hits
    assert not hits["searching"]
    assert hits["hits"]
    assert hits["label"] == f"{len(hits['hits'])} hits" if len(hits["hits"]) > 1 else "1 hit"
    expected = browser.corpus.search("readme", limit=100)
    assert [(h["key"], h["entry"]) for h in hits["hits"]] == [(h.key, h.entry_id) for h in expected]
    hit = hits["hits"][0]
    assert "readme" in hit["snippet"].lower()
    assert hit["title"] != hit["key"]  # the run's title, as its row shows it
    opening = {"type": "open", "key": hit["key"], "entry": hit["entry"]}
    widget = browser.transcript_widget
    wire = Wire(widget)
    browser._on_view_message(browser, opening, [])  # the first run opened
    assert browser.selected == hit["key"]
    assert wire.custom("reveal") == []  # no view yet to open a path in
    widget._msg_callbacks(widget, {"type": "hello", "view": "v1"}, [])  # its view is up
    (reveal,) = wire.custom("reveal")
    assert reveal["key"].endswith(hit["entry"])
    wire.clear()
    browser.show(browser.corpus.keys[0])
    browser._on_view_message(browser, opening, [])  # the same widget, shown again: at once
    (reveal,) = wire.custom("reveal")
    assert reveal["key"].endswith(hit["entry"])
    browser.search("")
    assert browser._hits is None


def test_B1_a_hostile_title_is_text_in_the_page_and_escaped_in_the_saved_output(
    browsers: list[SessionBrowser],
) -> None:
    hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    transcript = Transcript([UserMessage(text=hostile), AssistantText(text=hostile)])
    browser = SessionBrowser(corpus_of({"x": transcript}, [{"key": "x", "title": hostile}]))
    browsers.append(browser)
    assert browser._page["rows"][0]["cells"][0]["text"] == hostile  # drawn as text by the view
    bundle = browser._repr_mimebundle_()
    assert bundle is not None
    html = bundle[0]["text/html"]
    assert "<script" not in html
    assert "<img" not in html
    assert "&lt;script&gt;" in html


# --- W-4: the saved output ------------------------------------------------------------------------


def test_W4_the_bundle_carries_the_widget_counts_and_a_deterministic_table_of_50_rows(
    browsers: list[SessionBrowser],
) -> None:
    rows = rows_of(120)
    corpus = corpus_of({}, rows)
    bundles = []
    for _ in range(2):
        browser = SessionBrowser(corpus)
        browsers.append(browser)
        bundle = browser._repr_mimebundle_()
        assert bundle is not None
        bundles.append(bundle[0])
    data = bundles[0]
    assert set(data) == {WIDGET_MIME, "text/plain", "text/html"}
    counts = "SessionBrowser: 120 rows, 0 errors, 0 skipped; showing 1–100 of 120"
    assert data["text/plain"] == counts
    assert data["text/html"] == bundles[1]["text/html"]
    assert data["text/html"].count("<tr>") == 51  # the heading and 50 rows
    assert "… 70 more rows" in data["text/html"]
    assert data["text/html"] == corpus._repr_html_()  # a Corpus outside a kernel shows the same


def test_B1_a_corpus_as_a_cell_s_last_expression_shows_the_browser() -> None:
    shell = _Shell(kernel=object())
    assert turnfold.register_display(shell) is True
    function = shell.display_formatter.mimebundle_formatter.by_name["turnfold.corpus", "Corpus"]
    data, _ = function(corpus_of({}, rows_of(3)))
    assert {WIDGET_MIME, "text/plain", "text/html"} <= set(data)
    assert data["text/plain"].startswith("SessionBrowser: 3 rows")


def test_B1_the_browser_refuses_what_is_not_a_corpus() -> None:
    with pytest.raises(TypeError, match="Corpus"):
        SessionBrowser([])  # type: ignore[arg-type]
    # A name that is none of its traits is an error, where traitlets dropped it unsaid.
    with pytest.raises(TypeError, match=r"no argument 'locale'; give display settings as"):
        SessionBrowser(corpus_of({}, rows_of(3)), locale="zh")
