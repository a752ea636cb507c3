"""A table of runs as static HTML (spec B-1, B-2): a notebook's fallback, the site's index.

Cells come as :mod:`turnfold.corpus.columns` made them (text, a tone, a tooltip); this module only
draws them, escaped, with the tone as a class. Deterministic (W-4): the same rows give the same
bytes. The stylesheet is scoped under ``.tf-runs`` and takes its colours from the palette every
rendering shares (:func:`turnfold.render.html.palette_css`), adding the colour of a pass.

>>> heads = [{"name": "title", "label": "Title", "numeric": False, "clip": False, "sort": None}]
>>> print(runs_table(heads, [{"key": "k", "cells": [{"text": "<b>", "tone": "fail"}]}]))
<table class="tf-runs-table"><thead><tr><th scope="col">Title</th></tr></thead><tbody>
<tr><td class="tf-tone-fail">&lt;b&gt;</td></tr>
</tbody></table>
"""

from __future__ import annotations

from collections.abc import Callable

from turnfold.corpus.columns import Cell, ColumnHead, Row
from turnfold.corpus.paging import Paging, Query
from turnfold.i18n import plural
from turnfold.render.content import escape
from turnfold.render.html import palette_css

__all__ = ["HTML_ROWS", "RUNS_CSS", "runs_html", "runs_table"]

#: Rows of a corpus a notebook's saved output shows (the browser's, or a Corpus's).
HTML_ROWS = 50

#: The table's own rules; each tone reads in colour as well as by the glyph its text carries.
RUNS_CSS = """\
.turnfold .tf-runs-table { border-collapse: collapse; width: 100%; font-size: 12px; }
.turnfold .tf-runs-table th, .turnfold .tf-runs-table td {
  text-align: left; padding: 2px 8px; border-bottom: 1px solid var(--tf-border);
  white-space: nowrap; max-width: 40em; overflow: hidden; text-overflow: ellipsis;
}
.turnfold .tf-runs-table th { color: var(--tf-dim); font-weight: 600; }
.turnfold .tf-runs-table .tf-num { text-align: right; font-variant-numeric: tabular-nums; }
.turnfold .tf-runs-table a { color: var(--tf-accent); text-decoration: none; }
.turnfold .tf-runs-table a:hover { text-decoration: underline; }
.turnfold .tf-tone-pass { color: var(--tf-ok); }
.turnfold .tf-tone-fail, .turnfold .tf-tone-error { color: var(--tf-error); }
.turnfold .tf-tone-incomplete { color: var(--tf-warn); }
.turnfold .tf-tone-other, .turnfold .tf-tone-dim { color: var(--tf-dim); }
"""


def _head(head: ColumnHead) -> str:
    numeric = ' class="tf-num"' if head["numeric"] else ""
    return f'<th scope="col"{numeric}>{escape(head["label"])}</th>'


def _cell(cell: Cell, numeric: bool, href: str | None, clip: bool) -> str:
    classes = ["tf-num"] if numeric else []
    tone = cell.get("tone")
    if tone:
        classes.append(f"tf-tone-{tone}")
    attrs = f' class="{" ".join(classes)}"' if classes else ""
    title = cell.get("title")
    if title:
        attrs += f' title="{escape(title)}"'
    text = escape(cell["text"])
    if clip:  # free text, which a page's rules may cut short (the site's index does)
        text = f'<span class="tf-runs-clip">{text}</span>'
    if href:
        text = f'<a href="{escape(href)}">{text}</a>'
    return f"<td{attrs}>{text}</td>"


def runs_table(
    heads: list[ColumnHead],
    rows: list[Row],
    *,
    link: Callable[[Row], str | None] | None = None,
    row_attrs: Callable[[Row], str] | None = None,
) -> str:
    """``rows`` under ``heads`` as one ``<table>``. ``link`` gives the address the row's title
    cell links to; ``row_attrs`` extra attributes of its ``<tr>`` (already escaped)."""
    header = "".join(_head(head) for head in heads)
    lines = [f'<table class="tf-runs-table"><thead><tr>{header}</tr></thead><tbody>']
    for row in rows:
        cells = []
        for head, each in zip(heads, row["cells"], strict=True):
            href = link(row) if link is not None and head["name"] == "title" else None
            cells.append(_cell(each, head["numeric"], href, head["clip"]))
        attrs = row_attrs(row) if row_attrs is not None else ""
        lines.append(f"<tr{attrs}>{''.join(cells)}</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def runs_html(paging: Paging, query: Query, counts: str) -> str:
    """A notebook's static output of a corpus (W-4): ``counts``, then the first
    :data:`HTML_ROWS` rows of ``query`` in a table with its own style, and how many more (in
    the paging's locale, as its column heads are)."""
    page = paging.page({**query, "offset": 0}, size=HTML_ROWS)
    more = page["total"] - len(page["rows"])
    lines = [
        f'<div class="turnfold tf-runs"><style>{palette_css(standalone=False)}\n{RUNS_CSS}</style>',
        f"<p>{escape(counts)}</p>",
        runs_table(page["columns"], page["rows"]),
    ]
    if more > 0:
        lines.append(f"<p>{escape(plural('browser.more_rows', more, paging.locale))}</p>")
    lines.append("</div>")
    return "\n".join(lines)
