"""The session browser's search, close and page turn, kernel side (spec B-1, C-6, P-10, P-11).

A search across runs looks only in the rows the reader's filters keep, and again when they change;
a run open under the table can be closed; a run opened from a search hit turns the table to the
page holding its row. The view is checked in a real JupyterLab in
``tests/browser/test_session_browser_filters_close.py``.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.table_runs import rollouts_saying
from tests.test_browser import corpus_of, keys, rows_of, table_of
from tests.test_widget import Wire
from turnfold import browser as browser_module
from turnfold.browser import SessionBrowser
from turnfold.corpus.paging import PAGE_ROWS, Paging
from turnfold.model import AssistantText, Transcript, UserMessage

# Every test its own index, never the user's.
pytestmark = pytest.mark.usefixtures("cache_dir")

CODEX = {"column": "agent", "op": "==", "value": "codex"}
CLAUDE = {"column": "agent", "op": "==", "value": "claude-code"}


def runs(count: int, saying: str = "needle") -> tuple[dict[str, Transcript], list[dict[str, Any]]]:
    """``count`` runs (rows as :func:`tests.test_browser.rows_of`: every third by codex), each
    answering with ``saying``."""
    rows = rows_of(count)
    transcripts = {
        row["key"]: Transcript([UserMessage(text=row["title"]),
                                AssistantText(text=f"{saying} of {row['key']}")])
        for row in rows
    }  # fmt: skip
    return transcripts, rows


def searched(browser: SessionBrowser) -> dict[str, Any]:
    """The browser's hits once its searches have ended."""
    for thread in threading.enumerate():
        if thread.name == "turnfold-browser-search":
            thread.join()
    hits: dict[str, Any] | None = browser._hits
    assert hits is not None
    assert not hits["searching"]
    return hits


def hit_keys(browser: SessionBrowser) -> list[str]:
    return [hit["key"] for hit in searched(browser)["hits"]]


# --- search within the filters --------------------------------------------------------------------


def test_B1_C6_a_search_finds_only_runs_the_filters_keep(browsers: list[SessionBrowser]) -> None:
    browser = SessionBrowser(corpus_of(*runs(12)))
    browsers.append(browser)
    browser.query = {"filters": [CODEX]}
    browser._on_view_message(browser, {"type": "search", "query": "needle"}, [])
    codex = [f"run-{i:05d}" for i in range(0, 12, 3)]
    assert hit_keys(browser) == codex
    assert browser._hits is not None
    assert browser._hits["label"] == "4 hits · in the 4 runs the filters keep"


def test_B1_C6_a_change_of_the_filters_searches_again(browsers: list[SessionBrowser]) -> None:
    # The search box still holds the query: its hits follow the table rather than vanish.
    browser = SessionBrowser(corpus_of(*runs(12)))
    browsers.append(browser)
    browser.search("needle")
    assert len(hit_keys(browser)) == 12
    assert searched(browser)["label"] == "12 hits"
    browser.query = {**browser.query, "filters": [CLAUDE]}
    assert hit_keys(browser) == [f"run-{i:05d}" for i in range(12) if i % 3]
    browser.query = {**browser.query, "filters": [CLAUDE, {"column": "turns", "op": ">=",
                                                           "value": 8}]}  # fmt: skip
    assert hit_keys(browser) == ["run-00008"]
    assert searched(browser)["label"] == "1 hit · in the 1 run the filters keep"
    browser.query = {**browser.query, "filters": [{"column": "turns", "op": ">=", "value": 99}]}
    assert searched(browser) == {"query": "needle", "searching": False, "hits": [],
                                 "label": "No hit · in the 0 runs the filters keep"}  # fmt: skip
    # A sort or another page is no new search, nor is a filter once the search is closed.
    number = browser._search_count
    browser.query = {**browser.query, "filters": [], "sort": "turns", "offset": 0}
    assert browser._search_count == number + 1
    browser.query = {**browser.query, "sort": "title"}
    assert browser._search_count == number + 1
    browser.search("")
    browser.query = {**browser.query, "filters": [CODEX]}
    assert browser._hits is None


def test_B1_C6_a_file_of_runs_is_searched_for_its_rows_the_filters_keep(
    browsers: list[SessionBrowser], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One file holds twelve runs, read as one item: its hits of rows the filters leave out
    # took the limit's places, and the file is searched on for the rows they keep.
    path = rollouts_saying(tmp_path, "needle", (0, 1, 2, 5, 10))
    monkeypatch.setattr(browser_module, "HIT_LIMIT", 2)
    browser = SessionBrowser(turnfold.scan(path, workers=1, cache=False))
    browsers.append(browser)
    browser.search("needle")
    assert hit_keys(browser) == [f"{path}#0", f"{path}#1"]
    browser.query = {"filters": [{"column": "title", "op": "contains", "value": "Task 1"}]}
    assert [row["key"] for row in browser._page["rows"]] == [f"{path}#{i}" for i in (1, 10, 11)]
    assert hit_keys(browser) == [f"{path}#1", f"{path}#10"]


# --- closing the run shown ------------------------------------------------------------------------


def test_B1_closing_the_run_empties_the_transcript_and_selects_nothing(
    browsers: list[SessionBrowser],
) -> None:
    transcripts, rows = runs(3)
    browser = SessionBrowser(corpus_of(transcripts, rows))
    browsers.append(browser)
    assert browser._strings["close_run"] == "Close this run"
    widget = browser.transcript_widget
    browser.show("run-00001")
    widget._folds = {"process:turn:x": "open"}  # as the view writes them
    wire = Wire(widget)
    browser._on_view_message(browser, {"type": "close_run"}, [])
    assert browser.selected is None
    assert widget.transcript.entries == []
    assert wire.custom("replace")  # the view draws the empty transcript
    browser.show("run-00001")
    assert widget._folds == {"process:turn:x": "open"}  # P-10: kept for when it opens again
    browser.selected = None  # code closes it the same way
    assert widget.transcript.entries == []
    browser.close_run()  # nothing open: nothing to do
    assert browser.selected is None


# --- a hit's run on another page ------------------------------------------------------------------


def test_B1_the_page_of_a_row_follows_the_filters_and_the_sort() -> None:
    paging = Paging(table_of(rows_of(250)))
    query, _ = paging.query({})
    assert paging.offset_of(query, "run-00000") == 0
    assert paging.offset_of(query, "run-00100") == PAGE_ROWS
    assert paging.offset_of(query, "run-00249") == 2 * PAGE_ROWS
    assert paging.offset_of(query, "nope") is None
    newest, _ = paging.query({"sort": "started", "descending": True})
    assert paging.offset_of(newest, "run-00000") == 2 * PAGE_ROWS
    assert paging.offset_of(newest, "run-00249") == 0
    codex, _ = paging.query({"filters": [CODEX]})  # every third: 84 rows, one page
    assert paging.offset_of(codex, "run-00249") == 0
    assert paging.offset_of(codex, "run-00001") is None  # left out by the filter


def test_B1_opening_a_hit_on_another_page_turns_the_table_to_its_row(
    browsers: list[SessionBrowser],
) -> None:
    browser = SessionBrowser(corpus_of(*runs(250)))
    browsers.append(browser)
    browser.query = {"sort": "duration_s", "descending": True}
    assert browser._page["query"]["offset"] == 0
    browser.search("needle of run-00003")
    (hit,) = searched(browser)["hits"]
    browser._on_view_message(browser, {"type": "open", "key": hit["key"],
                                       "entry": hit["entry"]}, [])  # fmt: skip
    assert browser.selected == "run-00003"
    page = browser._page
    assert page["query"]["offset"] == 2 * PAGE_ROWS  # 249 … 3: the third page
    assert "run-00003" in keys(page)
    assert page["query"]["sort"] == "duration_s"  # the reader's order kept
    assert browser.query["offset"] == 2 * PAGE_ROWS
    # A row opened on the page shown leaves the table where it is.
    browser._on_view_message(browser, {"type": "open", "key": "run-00010", "entry": None}, [])
    assert browser._page["query"]["offset"] == 2 * PAGE_ROWS
    # Code opens a run the same way; a run the filters leave out leaves the table as it is.
    browser.show("run-00249")
    assert browser._page["query"]["offset"] == 0
    browser.query = {**browser.query, "filters": [CLAUDE], "offset": PAGE_ROWS}
    browser.show("run-00003")  # a codex run
    assert (browser.selected, browser._page["query"]["offset"]) == ("run-00003", PAGE_ROWS)
