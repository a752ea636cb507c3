"""A rescan keeps the session browser's search honest, kernel side (spec B-1, C-6, P-10).

When ``browser.corpus`` is set to a rescan while search hits are shown, the search is asked again
of the new corpus, within the reader's filters: no hit names a run gone, changed or now left out,
and the new runs' hits are listed. The reader's page and the run they opened are kept where they
still are; a run opened whose file is gone is closed. Every corpus here is a real scan of files
written to disk: files of runs (:func:`tests.table_runs.rollouts_saying`) and single Chat
Completions trajectories (:func:`tests.table_runs.trajectory`).
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.table_runs import rollouts_saying, trajectory
from tests.test_browser_search_filters import hit_keys, searched
from turnfold.browser import SessionBrowser
from turnfold.corpus import Corpus
from turnfold.corpus.paging import PAGE_ROWS

# Every test its own index, never the user's.
pytestmark = pytest.mark.usefixtures("cache_dir")

KEEP = {"column": "title", "op": "contains", "value": "keep"}


def run_file(path: Path, task: str, answer: str) -> Path:
    """One run at ``path``: a Chat Completions trajectory asking ``task`` (its row's title) and
    ending with ``answer``."""
    messages = trajectory(0)
    messages[0] = {**messages[0], "content": task}
    messages[-1] = {**messages[-1], "content": answer}
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def rescan(browser: SessionBrowser, folder: Path) -> None:
    browser.corpus = turnfold.scan(folder, workers=1)


def test_B1_C6_a_rescan_searches_the_new_corpus_for_the_query_shown(
    browsers: list[SessionBrowser], tmp_path: Path
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = rollouts_saying(tmp_path / "a", "needle", (0, 1, 2))
    b = rollouts_saying(tmp_path / "b", "needle", (5,))
    browser = SessionBrowser(turnfold.scan(tmp_path, workers=1))
    browsers.append(browser)
    browser.search("needle")
    assert hit_keys(browser) == [f"{a}#0", f"{a}#1", f"{a}#2", f"{b}#5"]
    # One file gone, one changed (two of its runs no longer say it, one more does), one new.
    shutil.rmtree(tmp_path / "b")
    rollouts_saying(tmp_path / "a", "needle", (1, 3))
    (tmp_path / "c").mkdir()
    c = rollouts_saying(tmp_path / "c", "needle", (7,))

    rescan(browser, tmp_path)

    assert hit_keys(browser) == [f"{a}#1", f"{a}#3", f"{c}#7"]
    hits = searched(browser)
    # Read as the scan read them: no file named as changed or unreadable since.
    assert (hits["query"], hits["label"]) == ("needle", "3 hits")
    assert [hit["title"] for hit in hits["hits"]] == [
        "Task 1: list the files", "Task 3: list the files", "Task 7: list the files"
    ]  # fmt: skip
    assert [hit["snippet"] for hit in hits["hits"]] == [
        "Done with task 1, needle.", "Done with task 3, needle.", "Done with task 7, needle."
    ]  # fmt: skip
    # A search the reader closed stays closed through a rescan.
    browser.search("")
    number = browser._search_count
    rescan(browser, tmp_path)
    assert browser._hits is None
    assert browser._search_count == number


def test_B1_C6_a_rescan_searches_within_the_filters_and_leaves_out_a_run_they_now_leave_out(
    browsers: list[SessionBrowser], tmp_path: Path
) -> None:
    alpha = run_file(tmp_path / "alpha.json", "keep alpha", "needle in alpha")
    beta = run_file(tmp_path / "beta.json", "keep beta", "needle in beta")
    run_file(tmp_path / "gamma.json", "drop gamma", "needle in gamma")
    epsilon = run_file(tmp_path / "epsilon.json", "keep epsilon", "nothing here")
    browser = SessionBrowser(turnfold.scan(tmp_path, workers=1))
    browsers.append(browser)
    browser.query = {"filters": [KEEP]}
    browser.search("needle")
    assert sorted(hit_keys(browser)) == [str(alpha), str(beta)]
    assert searched(browser)["label"] == "2 hits · in the 3 runs the filters keep"
    alpha.unlink()  # gone
    run_file(beta, "dropped beta", "needle in beta")  # changed: the filter now leaves it out
    delta = run_file(tmp_path / "delta.json", "keep delta", "needle in delta")  # new

    rescan(browser, tmp_path)

    assert sorted(row["key"] for row in browser._page["rows"]) == [str(delta), str(epsilon)]
    assert hit_keys(browser) == [str(delta)]
    assert searched(browser)["label"] == "1 hit · in the 2 runs the filters keep"
    assert searched(browser)["hits"][0]["title"] == "keep delta"


def test_B1_C6_a_rescan_keeps_the_page_and_the_run_opened_from_a_hit_and_closes_it_once_gone(
    browsers: list[SessionBrowser], tmp_path: Path
) -> None:
    # Ten files of twelve runs: two pages. Only the last file's fifth run says the word.
    folders = [tmp_path / f"part-{i}" for i in range(10)]
    for i, folder in enumerate(folders):
        folder.mkdir()
        rollouts_saying(folder, "needle", (4,) if i == 9 else ())
    browser = SessionBrowser(turnfold.scan(tmp_path, workers=1))
    browsers.append(browser)
    browser.search("needle")
    (old,) = searched(browser)["hits"]
    browser._on_view_message(browser, {"type": "open", "key": old["key"],
                                       "entry": old["entry"]}, [])  # fmt: skip
    assert browser._page["query"]["offset"] == PAGE_ROWS  # turned to the page of its row
    widget = browser.transcript_widget
    widget._folds = {"process:turn:x": "open"}  # as the view writes them
    extra = tmp_path / "part-extra"
    extra.mkdir()
    new = f"{rollouts_saying(extra, 'needle', (0,))}#0"

    rescan(browser, tmp_path)

    assert sorted(hit_keys(browser)) == sorted([old["key"], new])
    assert browser._page["query"]["offset"] == PAGE_ROWS  # the reader's page kept
    assert browser.selected == old["key"]  # and the run they opened, in their folds (P-10)
    assert widget.transcript.dump() == browser.corpus[old["key"]].dump()
    assert widget._folds == {"process:turn:x": "open"}

    shutil.rmtree(folders[9])  # the opened run's file is gone
    rescan(browser, tmp_path)

    assert hit_keys(browser) == [new]
    assert searched(browser)["label"] == "1 hit"
    assert browser.selected is None  # closed rather than a run no hit or row names
    assert widget.transcript.entries == []
    assert browser._page["query"]["offset"] == PAGE_ROWS
    assert old["key"] not in [row["key"] for row in browser._page["rows"]]


def test_B1_C6_a_search_still_reading_at_a_rescan_gives_way_to_the_new_corpus_s(
    browsers: list[SessionBrowser], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    rollouts_saying(tmp_path / "a", "needle", (0, 1))
    before = turnfold.scan(tmp_path, workers=1)
    reading, done = threading.Event(), threading.Event()
    searched_by_corpus = Corpus._searched

    def held(corpus: Corpus, *args: Any) -> Any:
        if corpus is before:  # the old corpus's search is still reading when the rescan lands
            reading.set()
            assert done.wait(60)
        return searched_by_corpus(corpus, *args)

    monkeypatch.setattr(Corpus, "_searched", held)
    browser = SessionBrowser(before)
    browsers.append(browser)
    browser.search("needle")
    assert reading.wait(60)
    shutil.rmtree(tmp_path / "a")
    (tmp_path / "c").mkdir()
    path = rollouts_saying(tmp_path / "c", "needle", (2,))

    rescan(browser, tmp_path)
    done.set()

    # Not the old search's answer (no hit, its file unreadable), which ended after.
    assert hit_keys(browser) == [f"{path}#2"]
    assert searched(browser)["label"] == "1 hit"
