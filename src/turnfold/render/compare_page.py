"""Two runs as one standalone page: ``turnfold render --compare A B`` (spec B-3, W-6).

Two transcripts: their comparison, side by side. Two corpora: the table of the samples whose
outcome or score changed, regressions first, each linked to its two runs side by side below it,
then of the samples only one corpus holds, each linked to its one run below it.
The page is self-contained (strict CSP, no script): its folds are ``<details>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from turnfold.comparison import RowPair, Run, compare_rows
from turnfold.corpus import Corpus
from turnfold.model import Transcript
from turnfold.render.compare_html import render_compare_html, render_corpus_html
from turnfold.render.compare_view import (
    build_compare_view,
    build_pair_table,
    compare_alone,
    compare_runs,
    left_out,
    table_rows,
)
from turnfold.settings import DisplaySettings, SettingsSnapshot, snapshot_of

__all__ = ["STATIC_TABLE_ROWS", "render_compare_page"]

#: Samples (changed, then of one corpus only) a static rendering of two corpora lists, each with
#: its section (a widget pages through all of them).
STATIC_TABLE_ROWS = 500


def render_compare_page(
    a: Run,
    b: Run,
    settings: DisplaySettings | SettingsSnapshot | None = None,
    *,
    key: Any = None,
    names: Sequence[str] = ("A", "B"),
    title: str | None = None,
) -> str:
    """The page comparing ``a`` and ``b``: two transcripts, or two corpora joined by ``key``
    (see :func:`turnfold.compare`)."""
    snapshot = snapshot_of(settings)
    if isinstance(a, Transcript) and isinstance(b, Transcript):
        view = build_compare_view(compare_runs(a, b, snapshot), snapshot, names=names)
        return render_compare_html(view, title=title)
    if not (isinstance(a, Corpus) and isinstance(b, Corpus)):
        raise TypeError(
            f"compare two transcripts or two corpora, not {type(a).__name__} and {type(b).__name__}"
        )
    rows = compare_rows(a.rows, b.rows, key)
    table = build_pair_table(rows, snapshot.locale, names=names, page_rows=STATIC_TABLE_ROWS)
    views = []
    # Numbered as their sections are (``pair-<n>``, ``only-<n>``): one page, so no two sides
    # share an id.
    for number, listed in enumerate(table_rows(rows)[: len(table["rows"])], start=1):
        if isinstance(listed, RowPair):
            comparison = compare_runs(a[listed.a["key"]], b[listed.b["key"]], snapshot, pair=number)
            views.append(build_compare_view(comparison, snapshot, names=names, key=listed.key))
            continue
        run = (a if listed.side == "a" else b)[listed.row["key"]]
        comparison = compare_alone(run, listed.side, snapshot, pair=number)
        views.append(build_compare_view(comparison, snapshot, names=names, key=listed.key,
                                        only=listed.side))  # fmt: skip
    changed, alone = left_out(rows, len(table["rows"]))
    return render_corpus_html(table, views, locale=snapshot.locale, left_out=changed,
                              left_out_alone=alone, title=title)  # fmt: skip
