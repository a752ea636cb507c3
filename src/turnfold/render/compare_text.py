"""Readable text of a comparison: a notebook's ``text/plain`` and nbval (spec B-3, W-4).

Each pair is its header line, then each side's turns as :func:`turnfold.render.text.render_text`
outlines them, indented under the run's name; a gap says there is no counterpart. For two
corpora, the table of changed samples, then of the samples only one corpus holds, comes first.
Plain text, deterministic.

>>> print(render_table_text({"summary": "1 regressed · 0 the same", "totals": [], "columns":
...     ["Sample", "Change", "A", "B"], "rows": [{"kind": "pair-row", "key": "1/1", "title":
...     None, "change": "regressed", "change_label": "Regressed", "a": "Passed", "b": "Failed",
...     "only": None}], "page": 0, "pages": 1, "range_label": "1–1 of 1", "selected": None,
...     "selected_only": None, "empty": None}))
1 regressed · 0 the same
Sample  Change     A       B
1/1     Regressed  Passed  Failed
"""

from __future__ import annotations

from turnfold.i18n import translate
from turnfold.render.compare_nodes import CompareView, PairNode, PairTable
from turnfold.render.nodes import TopNode, View
from turnfold.render.text import render_text

__all__ = ["render_compare_text", "render_table_text"]

INDENT = "  "


def render_compare_text(view: CompareView, *, width: int = 100) -> str:
    """The comparison as text: each run's header, the summary, then pair after pair."""
    lines: list[str] = []
    for side in view["sides"]:
        facts = [part for part in (side["session"], side["outcome"]) if part]
        said = " · ".join(part["text"] for part in facts)
        lines.append(f"{side['name']}: {said}" if said else side["name"])
    lines.append(view["summary"])
    for pair in view["pairs"]:
        lines += ["", pair["header"]["text"], *_sides(pair, view, width)]
    return "\n".join(line.rstrip() for line in lines)


def _sides(pair: PairNode, view: CompareView, width: int) -> list[str]:
    lines: list[str] = []
    for side in view["sides"]:
        nodes = pair["a"] if side["key"] == "a" else pair["b"]
        lines.append(INDENT + side["name"])
        if nodes is None:
            lines.append(INDENT * 2 + translate("text.aside", view["locale"], text=side["gap"]))
            continue
        outline = render_text(_view(view, nodes), width=width - 2 * len(INDENT))
        lines += [INDENT * 2 + line if line else "" for line in outline.split("\n")]
    return lines


def _view(view: CompareView, nodes: list[TopNode]) -> View:
    return {
        "schema": view["schema"],
        "locale": view["locale"],
        "mode": view["mode"],
        "show_thinking": view["show_thinking"],
        "session": None,
        "timeline": None,
        "outcome": None,
        "notice": None,
        "nodes": nodes,
    }


def render_table_text(table: PairTable) -> str:
    """The changed samples, then those of one corpus only, as aligned columns, under each
    corpus's totals and the summary."""
    from rich.cells import cell_len

    lines = [f"{t['name']}: {t['text']}" for t in table["totals"]]
    lines.append(table["summary"])
    if table["empty"]:
        lines.append(table["empty"])
    if not table["rows"]:
        return "\n".join(lines)
    rows = [table["columns"]]
    rows += [[row["key"], row["change_label"], row["a"], row["b"]] for row in table["rows"]]
    widths = [max(cell_len(row[n]) for row in rows) for n in range(len(table["columns"]))]
    for row in rows:
        cells = [
            cell + " " * (width - cell_len(cell)) for cell, width in zip(row, widths, strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
