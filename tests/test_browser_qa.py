"""The session browser as a reader pages, sorts and updates it, kernel side (spec B-1, C-7).

Found going through the browser in real JupyterLab with a corpus of a few hundred runs; the view
checks are in ``tests/browser/test_session_browser_qa.py``.
"""

from __future__ import annotations

import datetime
import decimal
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.browser import SessionBrowser
from turnfold.corpus.paging import PAGE_ROWS, Paging

from .test_browser import keys, page_of, rows_of, table_of

# Every test its own index, never the user's.
pytestmark = pytest.mark.usefixtures("cache_dir")

TREE = Path(__file__).parent / "fixtures" / "corpus"


def test_B1_the_page_before_the_short_last_page_is_the_whole_page_before_it() -> None:
    paging = Paging(table_of(rows_of(250)))
    last = page_of(paging, {"offset": 10_000})
    assert last["label"] == "201–250 of 250"
    # The view steps back by a row from the last page's first: the page that holds that row.
    before = page_of(paging, {"offset": last["query"]["offset"] - 1})
    assert before["label"] == "101–200 of 250"  # was 151–250: the last page's rows again
    assert keys(before) == [f"run-{i:05d}" for i in range(100, 200)]
    assert page_of(paging, {"offset": 57})["query"]["offset"] == 0
    assert page_of(paging, {"offset": PAGE_ROWS})["label"] == "101–200 of 250"


def _frame_with_columns_of_every_kind() -> Any:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([
        {"messages": [{"role": "user", "content": f"Task {i}"},
                      {"role": "assistant", "content": "Done."}],
         "tags": ["retry", "slow"] if i % 2 else None, "meta": {"seed": i},
         "flaky": bool(i % 2), "split": "abc"[i % 3], "day": datetime.date(2026, 1, 1 + i),
         "reward": decimal.Decimal(i) / 4}
        for i in range(6)
    ])  # fmt: skip
    frame["split"] = frame["split"].astype("category")
    return frame


def test_B1_a_table_source_s_list_struct_flag_category_date_and_decimal_columns_sort_and_filter(
    browsers: list[SessionBrowser],
) -> None:
    browser = SessionBrowser(turnfold.scan(_frame_with_columns_of_every_kind(), workers=1))
    browsers.append(browser)

    def shown(name: str) -> list[str]:
        return [row["cells"][1]["text"] for row in browser._page["rows"]]

    # Each had raised in the kernel (Arrow neither sorts a list nor lower-cases a flag), and the
    # view had waited for a page that never came.
    browser.query = {"sort": "tags", "columns": ["title", "tags"]}
    assert shown("tags") == ["['retry', 'slow']"] * 3 + [""] * 3  # missing values last
    browser.query = {"sort": "meta", "descending": True, "columns": ["title", "meta"]}
    assert shown("meta")[:2] == ["{'seed': 5}", "{'seed': 4}"]
    browser.query = {"sort": "flaky", "columns": ["title", "flaky"]}
    assert shown("flaky") == ["False"] * 3 + ["True"] * 3
    browser.query = {"sort": "split", "columns": ["title", "split"]}
    assert shown("split") == ["a", "a", "b", "b", "c", "c"]
    browser.query = {"sort": "day", "descending": True, "columns": ["title", "day"]}
    assert shown("day")[0] == "2026-01-06"
    browser.query = {"sort": "reward", "descending": True, "columns": ["title", "reward"]}
    assert shown("reward") == ["1.25", "1", "0.75", "0.5", "0.25", "0"]  # as numbers
    assert browser._page["problems"] == []
    # Filtered by what the cells say.
    filters = [("tags", "contains", "retry", 3), ("flaky", "==", "True", 3),
               ("meta", "contains", "'seed': 2", 1), ("split", "==", "b", 2),
               ("reward", ">=", 1, 2), ("day", "contains", "01-03", 1)]  # fmt: skip
    for column, op, value, total in filters:
        browser.query = {"filters": [{"column": column, "op": op, "value": value}]}
        assert (column, browser._page["total"], browser._page["problems"]) == (column, total, [])
    # The rows for code keep the source's own values.
    browser.query = {}
    assert list(browser.rows["tags"].iloc[1]) == ["retry", "slow"]
    assert browser.rows["reward"].iloc[1] == decimal.Decimal("0.25")


def test_B1_the_view_shows_the_corpus_counts_as_repr_says_them(
    browsers: list[SessionBrowser],
) -> None:
    corpus = turnfold.scan(TREE, workers=1)
    browser = SessionBrowser(corpus)
    browsers.append(browser)
    assert corpus.skipped  # what no row of the page would show
    assert corpus.errors
    assert repr(corpus) == f"<Corpus: {browser._counts}>"
    zh = SessionBrowser(corpus, settings=turnfold.DisplaySettings(locale="zh"))
    browsers.append(zh)
    assert zh._counts == corpus.describe("zh") != browser._counts


def _session(path: Path, prompt: str) -> None:
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": path.stem, "timestamp": "2026-03-01T10:00:00Z",
         "message": {"role": "user", "content": prompt}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": path.stem,
         "timestamp": "2026-03-01T10:00:05Z",
         "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "text", "text": f"Done: {prompt}"}],
                     "usage": {"input_tokens": 10, "output_tokens": 5}}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_B1_a_rescan_set_from_the_kernel_keeps_the_reader_s_sort_filters_page_and_open_run(
    browsers: list[SessionBrowser], tmp_path: Path
) -> None:
    folder = tmp_path / "runs"
    shutil.copytree(TREE, folder)
    for i in range(120):
        _session(folder / f"run-{i:03d}.jsonl", f"Task {i:03d}")
    browser = SessionBrowser(turnfold.scan(folder, workers=1))
    browsers.append(browser)
    agent = {"column": "agent", "op": "==", "value": "claude-code"}
    browser.query = {"sort": "title", "descending": True, "offset": PAGE_ROWS, "filters": [agent]}
    shown = keys(browser._page)
    browser.show(shown[0])
    widget = browser.transcript_widget
    widget._folds = {"process:turn:x": "open"}  # as the view writes them
    before = browser._page["label"]
    (folder / "run-new.jsonl").write_text("", encoding="utf-8")  # an error row more
    _session(folder / "run-200.jsonl", "Task 200")
    (folder / "notes.txt").write_text("not a session", encoding="utf-8")

    browser.corpus = turnfold.scan(folder, workers=1)

    assert len(browser.corpus) == len(browser._paging.table)
    assert browser._page["label"] != before
    assert browser._page["label"].startswith("101–")  # the same page, sort and filter
    assert browser._page["query"]["sort"] == "title"
    assert browser._page["query"]["filters"][0]["value"] == "claude-code"
    assert repr(browser.corpus) == f"<Corpus: {browser._counts}>"
    assert browser.selected == shown[0]
    assert widget.transcript.dump() == turnfold.load(shown[0]).dump()
    assert widget._folds == {"process:turn:x": "open"}  # P-10: the reader's folds kept
    # A rescan without the run shown shows none.
    (folder / Path(shown[0]).name).unlink()
    browser.corpus = turnfold.scan(folder, workers=1)
    assert browser.selected is None
    assert widget.transcript.entries == []
    with pytest.raises(TypeError, match="shows a Corpus"):
        browser.corpus = "runs"  # type: ignore[assignment]


@pytest.mark.parametrize(("locale", "said"), [("en", "contains"), ("zh", "包含")])
def test_C8_the_filter_operators_are_said_in_the_reader_s_language(locale: str, said: str) -> None:
    """The builder's operator menu and a filter's chip say ``contains`` in the reader's
    language; the comparison signs stay signs."""
    from turnfold import samples
    from turnfold.corpus.paging import Paging

    sample = sorted(Path(samples.__file__).parent.glob("*.jsonl"))[:1]
    table = turnfold.scan(sample, workers=1, cache=False).to_arrow()
    labels = Paging(table, locale=locale).choices()["op_labels"]
    assert labels == {"==": "==", "!=": "!=", ">=": ">=", "<=": "<=", "contains": said}
