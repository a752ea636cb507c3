"""Static HTML of a comparison: two columns of ``<details>`` folds, no script (spec B-3, W-4).

The twin of the compare widget for a notebook's ``text/html``, an export and ``turnfold render
--compare``: each side of each pair is drawn by :mod:`turnfold.render.html` exactly as a
transcript's page draws it (so its folds are native ``<details>``), under the pair's header.
Folds are not linked across the sides here: that needs script, which these pages have none of.
For two corpora, the table of changed samples links to each pair's section below it, and each
sample only one corpus holds to the section of its one run.

Deterministic, as every rendering (W-4): no counters, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from turnfold.i18n import plural
from turnfold.render.compare_nodes import CompareView, PairNode, PairTable
from turnfold.render.content import escape
from turnfold.render.html import (
    budgeted_nodes,
    html_frame,
    nodes_html,
    notice_html,
    outcome_html,
    session_html,
)
from turnfold.render.nodes import View
from turnfold.render.viewmodel import SCHEMA_VERSION

__all__ = ["COMPARE_CSS", "compare_body", "render_compare_html", "render_corpus_html"]

#: The layout of a comparison, for the static pages and the widget alike (every rule scoped
#: under ``.turnfold``, whose colour variables both define).
COMPARE_CSS = """
body.tf-page .turnfold { max-width: 1500px; }
.turnfold .tf-cmp-sides, .turnfold .tf-cols {
  display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 0 20px;
}
.turnfold .tf-col { min-width: 0; }
.turnfold .tf-cmp-name { font-weight: 600; color: var(--tf-fg); }
.turnfold .tf-cmp-totals, .turnfold .tf-cmp-side .tf-session {
  display: flex; flex-wrap: wrap; align-items: baseline; gap: 0 5px;
}
.turnfold .tf-cmp-summary { color: var(--tf-dim); margin: 6px 0; }
.turnfold .tf-pair { border-top: 1px solid var(--tf-border); padding: 6px 0 2px; margin-top: 6px; }
.turnfold .tf-pair-head {
  display: flex; flex-wrap: wrap; align-items: baseline; gap: 2px 6px; color: var(--tf-dim);
}
.turnfold .tf-pair-label { color: var(--tf-fg); font-weight: 600; }
.turnfold .tf-pair[data-status="differs"] .tf-pair-status { color: var(--tf-warn); }
.turnfold .tf-pair[data-status^="only"] .tf-pair-status,
.turnfold .tf-pair[data-status^="notices"] .tf-pair-status { color: var(--tf-accent); }
.turnfold .tf-dp-changed { color: var(--tf-fg-strong); font-weight: 600; }
.turnfold .tf-gap {
  margin: 10px 0; padding: 6px 10px; border: 1px dashed var(--tf-border); border-radius: 6px;
  color: var(--tf-faint); font-style: italic;
}
.turnfold .tf-cmp-table-box { margin: 0 0 12px; overflow-x: auto; }
.turnfold .tf-cmp-table { border-collapse: collapse; width: 100%; margin: 6px 0; }
.turnfold .tf-cmp-table th, .turnfold .tf-cmp-table td {
  text-align: left; vertical-align: top; padding: 3px 8px;
  border-bottom: 1px solid var(--tf-border);
}
.turnfold .tf-cmp-table th { color: var(--tf-dim); font-weight: 600; }
.turnfold .tf-cmp-table th, .turnfold .tf-cmp-table td {
  overflow-wrap: normal;  /* a word ("Regressed") is never split: the box scrolls instead */
}
.turnfold .tf-cmp-table tr.tf-selected td { background: var(--tf-bg-soft); }
.turnfold .tf-cmp-pick {
  appearance: none; border: 0; background: none; padding: 0; font: inherit; cursor: pointer;
  color: var(--tf-accent); text-align: left;
}
.turnfold .tf-cmp-pick:focus-visible, .turnfold .tf-cmp-page:focus-visible {
  outline: 2px solid var(--tf-accent); outline-offset: 1px;
}
.turnfold .tf-cmp-title { color: var(--tf-dim); max-width: 40em; overflow-wrap: anywhere; }
.turnfold .tf-change-regressed { color: var(--tf-error); font-weight: 600; }
.turnfold .tf-change-improved { color: var(--tf-accent); }
.turnfold .tf-change-only { color: var(--tf-dim); font-style: italic; }
.turnfold .tf-cmp-pager { display: flex; align-items: baseline; gap: 8px; color: var(--tf-dim); }
.turnfold .tf-cmp-page { font: inherit; }
.turnfold .tf-cmp-section { margin-top: 18px; }
@media (max-width: 600px) {  /* a phone: the two runs one above the other, each at full width */
  .turnfold .tf-cmp-sides, .turnfold .tf-cols { grid-template-columns: minmax(0, 1fr); }
}
"""

_SEP = '<span class="tf-sep">·</span>'


def _frame(view: CompareView | None, locale: str) -> View:
    """The head a page of a comparison is framed with (its language and mode)."""
    return {
        "schema": SCHEMA_VERSION,
        "locale": locale,
        "mode": view["mode"] if view else "",
        "show_thinking": view["show_thinking"] if view else True,
        "session": None,
        "timeline": None,
        "outcome": None,
        "notice": None,
        "nodes": [],
    }


def compare_body(view: CompareView, *, budget: int | None = None) -> str:
    """The HTML of a comparison: the two runs' heads, the summary, each pair in two columns.

    ``budget`` bounds the size as :func:`~turnfold.render.html.render_html`'s does: once the
    pairs drawn reach that many characters, the turns of the later ones are drawn without the
    work inside their process, which says it was left out. The earlier pairs keep theirs: the
    first that differs is the one a reader opens.
    """
    locale = view["locale"]
    heads = []
    for side in view["sides"]:
        heads.append(
            f'<div class="tf-cmp-side" data-side="{escape(side["key"])}">'
            f'<div class="tf-cmp-name">{escape(side["name"])}</div>\n'
            f"{session_html(side['session'])}{outcome_html(side['outcome'])}"
            f"{notice_html(side['notice'], locale)}</div>"
        )
    gaps = [side["gap"] for side in view["sides"]]
    pairs: list[str] = []
    left = budget
    for pair in view["pairs"]:
        drawn = _pair(pair, gaps, locale, left)
        pairs.append(drawn)
        if left is not None:
            left = max(0, left - len(drawn))
    return (
        f'<div class="tf-cmp" data-key="{escape(view["key"])}">\n'
        f'<div class="tf-cmp-sides">{"".join(heads)}</div>\n'
        f'<div class="tf-cmp-summary">{escape(view["summary"])}</div>{"".join(pairs)}</div>\n'
    )


def _pair(pair: PairNode, gaps: Sequence[str], locale: str, budget: int | None) -> str:
    header = pair["header"]
    parts = [
        f'<span class="tf-pair-label">{escape(header["label"])}</span>',
        f'<span class="tf-pair-status">{escape(header["status_label"])}</span>',
    ]
    for part in header["parts"]:
        changed = " tf-dp-changed" if part["changed"] else ""
        name = escape(part["name"])
        parts.append(f'<span class="tf-dp tf-dp-{name}{changed}">{escape(part["text"])}</span>')
    columns = []
    for side, gap in zip(("a", "b"), gaps, strict=True):
        nodes = pair["a"] if side == "a" else pair["b"]
        if not nodes:
            inner = f'<div class="tf-gap">{escape(gap)}</div>'
        elif budget is None:
            inner = nodes_html(nodes, locale, first_turn=None)
        else:
            inner = "".join(budgeted_nodes(nodes, locale, budget))
            budget = max(0, budget - len(inner))
        columns.append(f'<div class="tf-col" data-side="{side}">{inner}</div>')
    status = escape(header["status"])
    return (
        f'\n<section class="tf-pair" data-key="{escape(pair["key"])}" data-status="{status}">'
        f'<div class="tf-pair-head">{_SEP.join(parts)}</div>\n'
        f'<div class="tf-cols">{"".join(columns)}</div></section>'
    )


def render_compare_html(
    view: CompareView,
    *,
    title: str | None = None,
    standalone: bool = True,
    budget: int | None = None,
) -> str:
    """Two transcripts side by side: a whole page (strict CSP, no script) or a fragment;
    ``budget`` as :func:`compare_body`'s."""
    before, after = html_frame(
        _frame(view, view["locale"]),
        title=title,
        standalone=standalone,
        css=COMPARE_CSS,
        deep_links=False,
    )
    return before + compare_body(view, budget=budget) + after


#: A table row's or a comparison's identity on a page: its key and, for a sample only one corpus
#: holds, that corpus's side (two rows may share a key's text).
Anchored = tuple[str, str | None]


def table_html(table: PairTable, anchors: Mapping[Anchored, str]) -> str:
    """The changed samples, then those of one corpus only, each linked to its section when
    ``anchors`` has it."""
    lines = [
        f'<div class="tf-cmp-totals" data-side="{escape(t["side"])}">'
        f'<span class="tf-cmp-name">{escape(t["name"])}</span>{_SEP}{escape(t["text"])}</div>'
        for t in table["totals"]
    ]
    lines.append(f'<div class="tf-cmp-summary">{escape(table["summary"])}</div>')
    if table["empty"]:
        lines.append(f'<div class="tf-note">{escape(table["empty"])}</div>')
    if not table["rows"]:
        return '<div class="tf-cmp-table-box">' + "\n".join(lines) + "</div>\n"
    head = "".join(f"<th>{escape(column)}</th>" for column in table["columns"])
    lines.append(f'<table class="tf-cmp-table"><thead><tr>{head}</tr></thead><tbody>')
    for row in table["rows"]:
        key = escape(row["key"])
        anchor = anchors.get((row["key"], row["only"]))
        name = f'<a class="tf-cmp-pick" href="#{anchor}">{key}</a>' if anchor else key
        title = row["title"]
        said = f'<div class="tf-cmp-title">{escape(title)}</div>' if title else ""
        change = escape(row["change"])
        lines.append(
            f'<tr data-key="{key}"><td>{name}{said}</td>'
            f'<td class="tf-change tf-change-{change}">{escape(row["change_label"])}</td>'
            f"<td>{escape(row['a'])}</td><td>{escape(row['b'])}</td></tr>"
        )
    lines.append("</tbody></table>")
    return '<div class="tf-cmp-table-box">' + "\n".join(lines) + "</div>\n"


def render_corpus_html(
    table: PairTable,
    views: Sequence[CompareView],
    *,
    locale: str,
    left_out: int = 0,
    left_out_alone: int = 0,
    title: str | None = None,
    standalone: bool = True,
    budget: int | None = None,
) -> str:
    """Two corpora: the table of changed samples and of samples of one corpus only, then each
    of ``views`` (the table's rows in order: a pair side by side, a run alone on its side);
    ``left_out`` more changed samples and ``left_out_alone`` more of one corpus are not in the
    table; ``budget`` bounds each comparison as :func:`compare_body`'s."""
    # Numbered by place, named by kind, as the keys of their sides are (``pair-2/a/``).
    anchors = {
        (view["key"], view["only"]): f"{'pair' if view['only'] is None else 'only'}-{n}"
        for n, view in enumerate(views, start=1)
    }
    body = [table_html(table, anchors)]
    for phrase, count in zip(("compare.left_out", "compare.left_out_alone"),
                             (left_out, left_out_alone), strict=True):  # fmt: skip
        if count:
            body.append(f'<div class="tf-note">{escape(plural(phrase, count, locale))}</div>\n')
    for view in views:
        body.append(
            f'<div class="tf-cmp-section" id="{anchors[view["key"], view["only"]]}">'
            f'<h2 class="tf-cmp-name">{escape(view["key"])}</h2>\n'
            f"{compare_body(view, budget=budget)}</div>\n"
        )
    frame = _frame(views[0] if views else None, locale)
    before, after = html_frame(
        frame, title=title, standalone=standalone, css=COMPARE_CSS, deep_links=False
    )
    return before + "".join(body) + after
