"""The session browser's table over a corpus of wide rows (spec B-1, Q-5, X-1), and a static
site's files keeping their modes when replaced (B-2).

A table source's own columns (a list of a trajectory's steps, a struct of its task) were
converted to text whole, every row's at once, each time a :class:`~turnfold.corpus.paging.Paging`
was made (a ``SessionBrowser``, a rescan set on it, a ``Corpus`` shown as HTML), and a page of
100 rows was converted at once: now only what a page shows, or what a sort or filter by such a
column reads, is converted, a page of rows at a time under the one rule for values held at once
(:func:`~turnfold.formats.tables.held_values`, as ``tests/test_corpus_pages_bounded.py`` checks
for a corpus's rows). The hostile tables are built here with pyarrow; the cap is scaled down by
the memory the process may use, and what is held is measured by ``tracemalloc`` (bytes
allocated), not by time.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.held_memory import lowered_memory, with_peak
from turnfold.browser import SessionBrowser
from turnfold.corpus.paging import Paging
from turnfold.formats import tables
from turnfold.render import site
from turnfold.render.site import INDEX, MANIFEST, RUNS, build_site
from turnfold.settings import DisplaySettings

pa = pytest.importorskip("pyarrow")

_MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])
#: A process that may use this much memory converts at most 3,495 values at once.
_TINY = 4 << 20
#: Runs in the hostile corpus: each row holds about the limit's worth, together 48 times it.
_RUNS = 48
TREE = Path(__file__).parent / "fixtures" / "corpus"


pytestmark = pytest.mark.usefixtures("cache_dir")


def _wide_corpus(steps: int) -> Any:
    """A corpus of :data:`_RUNS` runs of two messages, each with a ``steps`` column of
    ``steps`` short texts and a ``task`` struct (a table source's own columns, C-1)."""
    names = [f"step{n:05}" for n in range(steps)]
    table = pa.table({
        "messages": pa.array([[{"role": "user", "content": "go"},
                               {"role": "assistant", "content": "done"}]] * _RUNS,
                             pa.list_(_MESSAGE)),
        "steps": pa.array([names[: steps - n] for n in range(_RUNS)], pa.list_(pa.string())),
        "task": pa.array([{"id": n, "split": "abc"[n % 3]} for n in range(_RUNS)]),
    })  # fmt: skip
    return turnfold.scan(table, workers=1)


def _texts(page: dict[str, Any], at: int) -> list[str]:
    return [row["cells"][at]["text"] for row in page["rows"]]


def test_B1_a_browser_of_wide_rows_holds_no_more_than_the_page_it_shows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """48 runs whose ``steps`` each hold about the limit's values: every row's was converted
    to text at once when the browser's table was made (48 times the limit's worth), and the
    rows of a page at once. Now a page of rows that hold no more than the limit together is
    converted at a time: made, shown, sorted and filtered by ``steps``, the browser holds the
    page's own text and at most the limit's worth beside it; the cells say what they said."""
    most = lowered_memory(monkeypatch, _TINY)
    steps = most - 64  # the row's own columns (C-2) bring it to about the limit
    corpus = _wide_corpus(steps)
    table = corpus.to_arrow()  # built once, in Arrow: not what is measured
    worth = most * tables.VALUE_BYTES  # 1 MB; the steps of every row are 11 MB of objects

    paging, peak = with_peak(lambda: Paging(table))
    assert peak < worth

    expected = [str(row["steps"]) for row in table.select(["steps"]).slice(0, 4).to_pylist()]
    query, problems = paging.query({"columns": ["title", "steps", "task"]})
    page, peak = with_peak(lambda: paging.page(query, problems))
    shown = _texts(page, 1)
    assert len(shown) == _RUNS
    assert shown[:4] == expected
    assert _texts(page, 2)[:2] == ["{'id': 0, 'split': 'a'}", "{'id': 1, 'split': 'b'}"]
    held = sum(len(text) for text in shown)  # the page's own text, which the view is sent
    assert peak < held + worth

    # Sorted by the shortest list first: its text, ``[..., 'step03383']``, sorts first.
    query, problems = paging.query({"sort": "steps", "columns": ["steps"], "offset": 0})
    page, peak = with_peak(lambda: paging.page(query, problems))
    assert problems == []
    assert _texts(page, 0) == sorted(_texts(page, 0), key=str.lower)
    assert peak < sum(len(text) for text in _texts(page, 0)) + worth
    filters = [{"column": "steps", "op": "contains", "value": f"step{steps - 3:05}'"},
               {"column": "task", "op": "contains", "value": "'split': 'c'"}]  # fmt: skip
    query, problems = paging.query({"filters": filters, "columns": ["title"]})
    page, peak = with_peak(lambda: paging.page(query, problems))
    assert (page["total"], problems) == (1, [])  # rows 0 to 2 hold that step; row 2 is 'c'
    assert peak < worth


def test_B1_a_session_browser_and_a_corpus_s_html_of_wide_rows_are_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a notebook makes of such a corpus, a ``SessionBrowser`` and the ``text/html`` a
    ``Corpus`` shows without a kernel, converted every row's ``steps`` to text; now neither
    converts a column it does not show (their default columns)."""
    most = lowered_memory(monkeypatch, _TINY)
    corpus = _wide_corpus(most - 64)
    corpus.to_arrow()
    SessionBrowser(corpus).close()  # the widget's first code and style: not what is measured
    worth = most * tables.VALUE_BYTES
    html, peak = with_peak(corpus._repr_html_)
    assert html.count("<tr>") == _RUNS + 1  # and the heads
    assert peak < worth

    def browse() -> dict[str, Any]:
        browser = SessionBrowser(corpus)
        try:
            return dict(browser._page)
        finally:
            browser.close()

    page, peak = with_peak(browse)
    assert page["total"] == _RUNS
    assert peak < worth


# --- B-2: a site's files keep their modes ---------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    target = tmp_path / "tree"
    shutil.copytree(TREE, target)
    return target


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask() -> Iterator[int]:
    """The umask the test runs under (022), restored after it."""
    before = os.umask(0o022)
    try:
        yield 0o022
    finally:
        os.umask(before)


def test_B2_a_rebuilt_site_keeps_the_modes_of_the_files_it_replaces(
    tree: Path, tmp_path: Path, umask: int
) -> None:
    """A site kept private (its pages, index and manifest 0600, or 0640) became readable by
    everyone (0644) when rebuilt: each file was written anew and moved over the old one with
    the mode a new file gets. Now each keeps the mode of the file it replaces; a new file
    still gets what the umask gives."""
    out = tmp_path / "site"
    build_site(tree, out, workers=1, progress=False)
    pages = sorted((out / RUNS).glob("*.html"))
    assert pages
    for path in (out / INDEX, out / MANIFEST, *pages):
        assert _mode(path) == 0o666 & ~umask
    modes = {out / INDEX: 0o640, out / MANIFEST: 0o600}
    modes |= {page: (0o600, 0o640, 0o444)[at % 3] for at, page in enumerate(pages)}
    for path, mode in modes.items():
        path.chmod(mode)
    before = {page: page.stat().st_mtime_ns for page in pages}
    # Another locale: every page is built again.
    build_site(tree, out, DisplaySettings(locale="zh"), workers=1, progress=False)
    assert sorted((out / RUNS).glob("*.html")) == pages
    assert all(page.stat().st_mtime_ns != before[page] for page in pages)  # replaced, not kept
    assert '<html lang="zh">' in (out / INDEX).read_text("utf-8")
    assert {path: _mode(path) for path in modes} == modes
    assert not list(out.glob(".*.part"))
    assert not list((out / RUNS).glob(".*.part"))


def test_B2_a_page_in_progress_is_never_more_readable_than_the_page_it_replaces(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask: int
) -> None:
    """While a run's page is written, before it is known which page it replaces (its name
    waits for the run's key), it is readable by its owner only; the index and the manifest
    have the mode of the file they replace while they are written."""
    out = tmp_path / "site"
    build_site(tree, out, workers=1, progress=False)
    for path in (out / INDEX, out / MANIFEST, *(out / RUNS).glob("*.html")):
        path.chmod(0o600)
    seen: list[int] = []
    write_page = site.write_page

    def watched(stream: Any, *args: Any, **kwargs: Any) -> int:
        seen.append(stat.S_IMODE(os.fstat(stream.fileno()).st_mode))
        return write_page(stream, *args, **kwargs)

    monkeypatch.setattr(site, "write_page", watched)
    replaced: list[tuple[str, int]] = []
    real_replace = os.replace

    def replacing(source: Any, target: Any) -> None:
        if Path(target).is_relative_to(out):  # not a cache's file the build may write
            replaced.append((Path(target).name, _mode(Path(source))))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replacing)
    build_site(tree, out, DisplaySettings(locale="zh"), workers=1, progress=False)
    assert seen
    assert set(seen) == {0o600}
    assert dict(replaced) == {
        **{page.name: 0o600 for page in (out / RUNS).glob("*.html")},
        INDEX: 0o600, MANIFEST: 0o600,
    }  # fmt: skip
