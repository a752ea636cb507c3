"""What a search across runs (C-6) and a transcript's own search (P-11) still got wrong: a huge
query compiled for seconds in hundreds of megabytes; a file broken in place since the scan (a
trajectory overwritten with text) read as an empty run and gave "no hit" with no word; the
session browser's search (B-1), in a thread, said nothing of what it could not read; and the
corpus's search looked for the spaces around a query, which the transcript's search drops."""

from __future__ import annotations

import os
import shutil
import threading
import tracemalloc
import warnings
from pathlib import Path

import pytest

from tests.table_runs import table_source, trajectory
from turnfold.browser import SessionBrowser
from turnfold.corpus import Corpus, scan
from turnfold.model import AssistantText, ToolCall, ToolResult, Transcript, UserMessage
from turnfold.settings import DisplaySettings
from turnfold.widget import TranscriptWidget

FIXTURES = Path(__file__).parent / "fixtures"
MINI = FIXTURES / "harnesses" / "mini-swe-agent"
TRAJECTORY = MINI / "mini-swe-agent_v2.4.6_textbased_submitted.traj.json"
CODEX = FIXTURES / "codex" / "v0.171_apply-patch-and-interrupt.jsonl"
#: Far past any limit a search could sensibly have, and cheap enough for the old code to try.
HUGE = 50_001
LIMIT_SAID = r"at most [\d,]+ characters"

pytestmark = pytest.mark.usefixtures("cache_dir")


def _runs(tmp_path: Path) -> Path:
    """A folder of two runs: a mini-swe-agent trajectory (it holds "calc.py") and a Codex
    session (it does not)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(TRAJECTORY, runs / TRAJECTORY.name)
    shutil.copy(CODEX, runs / CODEX.name)
    return runs


def _said(caught: pytest.WarningsRecorder) -> str:
    (said,) = [str(w.message) for w in caught if str(w.message).startswith("search():")]
    return said


def _browser_search(browser: SessionBrowser, query: str) -> dict[str, object]:
    """The browser's search status once its thread is done with ``query``."""
    browser.search(query)
    for thread in threading.enumerate():
        if thread.name == "turnfold-browser-search":
            thread.join()
    hits = browser._hits
    assert hits is not None
    assert not hits["searching"]
    return dict(hits)


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    return scan(_runs(tmp_path), workers=1)


# --- 1. a huge query ------------------------------------------------------------------------------


@pytest.mark.parametrize("regex", [False, True])
def test_C6_a_query_past_the_limit_fails_at_once_naming_the_limit(
    corpus: Corpus, regex: bool
) -> None:
    with pytest.raises(ValueError, match=LIMIT_SAID):
        corpus.search("x" * HUGE, regex=regex)


@pytest.mark.parametrize("regex", [False, True])
def test_C6_refusing_a_huge_query_costs_no_memory_to_speak_of(corpus: Corpus, regex: bool) -> None:
    """The old search compiled the escaped query: about 90 bytes per character (17 MB here,
    900 MB for 10 MB of query), in each worker."""
    query = "y" * 200_000
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=LIMIT_SAID):
            corpus.search(query, regex=regex)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


def test_C6_P11_a_query_as_long_as_the_limit_is_searched_in_a_corpus_and_a_transcript() -> None:
    """A screen of output pasted whole is found, across runs and in the run's own view."""
    from turnfold.render.search import MAX_QUERY_LENGTH

    query = ("calc.py divides by zero; " * MAX_QUERY_LENGTH)[: MAX_QUERY_LENGTH - 1] + "!"
    output = ToolResult(text=f"collected 3 items\n{query}\n1 failed")
    call = ToolCall(call_id="c1", name="Bash", args={"command": "pytest"}, status="error",
                    result=output)  # fmt: skip
    transcript = Transcript([UserMessage(text="Run the tests"), call, AssistantText(text="Done.")])
    hits = scan([transcript]).search(query)
    assert [(hit.key, hit.turn, hit.entry_id) for hit in hits] == [("#0", 1, "e1")]
    widget = TranscriptWidget(transcript)
    try:
        found, total, label = widget.search_hits(query)
    finally:
        widget.close()
    assert (len(found), total, label) == (1, 1, "1 match")


@pytest.mark.parametrize(("locale", "said"), [("en", "at most 4,000 characters"),
                                              ("zh", "最多 4,000 个字符")])  # fmt: skip
def test_P11_the_transcript_search_box_says_the_limit_of_a_huge_query(
    locale: str, said: str
) -> None:
    """A view's request is answered, never raised: its search box says why nothing is found."""
    transcript = Transcript([UserMessage(text="x" * 100), AssistantText(text="Done.")])
    widget = TranscriptWidget(transcript, DisplaySettings(locale=locale))
    try:
        hits, total, label = widget.search_hits("x" * HUGE)
    finally:
        widget.close()
    assert (hits, total) == ([], 0)
    assert said in label


def test_B1_the_browser_says_the_limit_of_a_huge_query_at_once_and_echoes_no_megabytes(
    corpus: Corpus,
) -> None:
    browser = SessionBrowser(corpus)
    try:
        browser.search("x" * HUGE)  # no thread: answered here
        hits = browser._hits
    finally:
        browser.close()
    assert hits is not None
    assert not hits["searching"]
    assert hits["hits"] == []
    assert "at most 4,000 characters" in hits["label"]
    assert hits["query"].startswith("xxx")
    assert len(hits["query"]) < 100


# --- 2. a file changed since the scan -------------------------------------------------------------


@pytest.mark.parametrize("cache", [True, False])
def test_C6_a_trajectory_overwritten_with_text_since_the_scan_is_said_not_taken_for_no_match(
    tmp_path: Path, cache: bool
) -> None:
    """It loads as an empty run with load warnings, not an error: the old search gave "no
    hit" for it, as for a run that holds no match."""
    runs = _runs(tmp_path)
    corpus = scan(runs, workers=1, cache=cache)
    trajectory_file = runs / TRAJECTORY.name
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing changed yet: nothing said
        assert [hit.key for hit in corpus.search("calc.py", limit=1)] == [str(trajectory_file)]
    trajectory_file.write_text("this trajectory was overwritten with text\n", encoding="utf-8")
    assert corpus[str(trajectory_file)].entries == []  # no error to say it: an empty run
    with pytest.warns(UserWarning, match=r"1 file\(s\) changed since the scan") as caught:
        assert corpus.search("calc.py") == []
    said = _said(caught)
    assert str(trajectory_file) in said
    assert "scan again" in said
    assert str(runs / CODEX.name) not in said  # the file that did not change is not named
    assert caught[0].filename == __file__  # the reader's line, not turnfold's


def test_C6_a_file_modified_since_the_scan_is_searched_as_it_is_now_and_said(
    corpus: Corpus, tmp_path: Path
) -> None:
    trajectory_file = tmp_path / "runs" / TRAJECTORY.name
    before = corpus.search("calc.py")
    assert before
    stat = trajectory_file.stat()
    os.utime(trajectory_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))
    with pytest.warns(UserWarning, match="changed since the scan") as caught:
        assert corpus.search("calc.py") == before
    assert f"{trajectory_file} (modified" in _said(caught)


def test_C6_a_file_gone_and_a_file_changed_are_said_in_one_warning(
    corpus: Corpus, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    (runs / CODEX.name).unlink()
    (runs / TRAJECTORY.name).write_text("overwritten with text\n", encoding="utf-8")
    with pytest.warns(UserWarning, match=r"^search\(\)") as caught:
        assert corpus.search("calc.py") == []
    said = _said(caught)  # exactly one
    assert "could not read 1 file(s) again" in said
    assert "1 file(s) changed since the scan" in said
    assert str(runs / CODEX.name) in said
    assert f"{runs / TRAJECTORY.name} (6,793 bytes when scanned, 22 now)" in said


def test_C6_a_parquet_file_of_runs_rewritten_since_the_scan_is_said(tmp_path: Path) -> None:
    """A table of trajectories written by pyarrow: its rows are keyed by place, which a
    rewrite moves."""
    path = table_source("parquet", tmp_path, [{"messages": trajectory(i)} for i in range(3)],
                        "runs.parquet")  # fmt: skip
    corpus = scan(path, workers=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [hit.key for hit in corpus.search("file_1.py")] == [f"{path}#1"]
    table_source("parquet", tmp_path, [{"messages": trajectory(i)} for i in (7, 1, 2, 3)],
                 "runs.parquet")  # fmt: skip
    with pytest.warns(UserWarning, match="changed since the scan") as caught:
        corpus.search("file_1.py")
    assert str(path) in _said(caught)


# --- 3. the browser's search status ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("locale", "unread", "changed"),
    [("en", "1 file could not be read again since the scan", "1 file changed since the scan"),
     ("zh", "1 个文件自扫描后无法再读取", "1 个文件自扫描后已更改")],
)  # fmt: skip
def test_B1_the_browser_says_in_its_search_status_what_went_or_changed_since_the_scan(
    tmp_path: Path, locale: str, unread: str, changed: str
) -> None:
    """Its search runs in a thread: a warning there reaches no cell, so its status says it."""
    runs = _runs(tmp_path)
    browser = SessionBrowser(scan(runs, workers=1), DisplaySettings(locale=locale))
    try:
        # Every run reads as scanned: the status says the hits and no more.
        hits = _browser_search(browser, "calc.py")
        assert hits["label"] == {"en": "5 hits", "zh": "5 个结果"}[locale]
        (runs / CODEX.name).unlink()
        (runs / TRAJECTORY.name).write_text("overwritten with text\n", encoding="utf-8")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            hits = _browser_search(browser, "calc.py")
    finally:
        browser.close()
    assert hits["hits"] == []
    label = str(hits["label"])
    assert unread in label
    assert changed in label
    assert str(runs / CODEX.name) in label
    assert str(runs / TRAJECTORY.name) in label
    assert not [w for w in caught if "search()" in str(w.message)]  # said there, not lost here


# --- 4. the spaces around a query -----------------------------------------------------------------


def test_C6_P11_a_plain_query_is_looked_for_without_the_spaces_around_it() -> None:
    """A space typed before the word, a pasted line's end: the transcript's search never looked
    for them, the corpus's did, and found nothing where the word stands in parentheses."""
    transcript = Transcript([UserMessage(text="Fix the division (calc.py) please"),
                             AssistantText(text="Done.")])  # fmt: skip
    corpus = scan([transcript])
    assert corpus.search("calc.py")
    assert corpus.search("  calc.py\n") == corpus.search("calc.py")
    widget = TranscriptWidget(transcript)
    try:
        assert widget.search("  calc.py\n") == widget.search("calc.py") != ([], 0)
    finally:
        widget.close()
    # A regular expression is taken as written: its spaces are its own.
    assert corpus.search(" calc", regex=True) == []


def test_C6_a_query_of_spaces_only_is_no_query() -> None:
    corpus = scan([Transcript([UserMessage(text="a b"), AssistantText(text="c d")])])
    with pytest.raises(ValueError, match="needs something to look for"):
        corpus.search("   ")
