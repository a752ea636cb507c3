"""How a corpus row looks to a person (spec B-1, B-2): column labels, kinds and cell text.

The session browser, its notebook fallback and the static site's index draw the same cells, so
what a column is called and how a value reads (``2m 3s``, ``48.2k``, ``✖ 3``) is decided here,
once, in the reader's language. A cell carries a *tone* beside its text where its value is
something to notice (an outcome, failures, an item that could not be read): a renderer colours
by the tone, and the text always says the same thing with a glyph, so nothing rests on colour
alone. Pure Python: no Arrow, no widget.

>>> cell(column("outcome"), "fail", "en")
{'text': '✖ Failed', 'tone': 'fail'}
>>> cell(column("duration_s"), 123.4, "en"), cell(column("tokens"), 48_213, "en")
({'text': '2m 3s'}, {'text': '48.2k', 'title': '48,213'})
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import PurePath
from typing import Any, Literal, TypedDict

from turnfold.corpus.summarize import COLUMNS
from turnfold.cost import NoCost, format_usd
from turnfold.formats.errors import tried_said
from turnfold.i18n import translate
from turnfold.render.content import plain_text
from turnfold.render.viewmodel import OUTCOMES, compact_count
from turnfold.tools import format_duration

if sys.version_info >= (3, 11):
    from typing import NotRequired
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired

__all__ = [
    "CHOICE_COLUMNS",
    "DEFAULT_COLUMNS",
    "DERIVED",
    "TOKEN_PARTS",
    "Cell",
    "Column",
    "ColumnHead",
    "Kind",
    "Option",
    "Row",
    "Tone",
    "cell",
    "column",
    "columns_of",
    "derived",
    "heads_of",
    "label",
    "options_of",
    "row_of",
    "unreadable",
]

Kind = Literal[
    "text", "count", "tokens", "duration", "cost", "datetime", "outcome", "failures", "number",
    "error",
]  # fmt: skip
#: What a cell says beyond its text, for a renderer's colour (the text has the glyph too).
Tone = Literal["pass", "fail", "error", "incomplete", "other", "dim"]

#: A column that is no C-2 column but is worth a glance: input plus output tokens, as the
#: session header counts them (input includes cached input, U-1).
DERIVED = ("tokens",)
#: The columns ``tokens`` adds up; missing when both are.
TOKEN_PARTS = ("input_tokens", "output_tokens")
#: The columns whose values a filter offers as a choice, and how many of them at most.
CHOICE_COLUMNS = ("agent", "model", "outcome")
OPTION_LIMIT = 100
#: What a table shows until the reader picks other columns (issue 16).
DEFAULT_COLUMNS = (
    "title", "agent", "model", "started", "duration_s", "turns", "tool_calls", "failed_tools",
    "tokens", "cost_usd", "outcome",
)  # fmt: skip

_KINDS: dict[str, Kind] = {
    "started": "datetime", "ended": "datetime", "duration_s": "duration", "turns": "count",
    "tool_calls": "count", "failed_tools": "failures", "errors": "count", "subagents": "count",
    "input_tokens": "tokens", "output_tokens": "tokens", "cache_read_tokens": "tokens",
    "cache_write_tokens": "tokens", "tokens": "tokens", "cost_usd": "cost",
    "outcome": "outcome", "score": "number", "warnings": "count", "error": "error",
}  # fmt: skip
_NUMERIC = frozenset({"count", "tokens", "duration", "cost", "failures", "number"})
#: An outcome's glyph (H-6's outcomes), so it reads without its colour.
_GLYPHS = {"pass": "✔", "fail": "✖", "error": "⚠", "incomplete": "◌"}
#: Text longer than this gets its whole self as a tooltip too (a table cell clips it).
_LONG = 60


@dataclass(frozen=True)
class Column:
    """A column a table can show: its name in the corpus's table and what kind of value it holds."""

    name: str
    kind: Kind

    @property
    def numeric(self) -> bool:
        """Numbers: right-aligned, filtered by ranges, sorted largest first on a first click."""
        return self.kind in _NUMERIC

    @property
    def clip(self) -> bool:
        """Free text (a title, a name, an error): what a table too narrow for every column cuts
        short, so that numbers, moments and outcomes never are."""
        return self.kind in ("text", "error")

    @property
    def ranged(self) -> bool:
        """Values a range filter (``>=``, ``<=``) applies to: numbers and moments."""
        return self.numeric or self.kind == "datetime"


class Cell(TypedDict):
    """One value as a person reads it; ``title`` holds its fuller form, for a tooltip."""

    text: str
    tone: NotRequired[Tone]
    title: NotRequired[str]


class ColumnHead(TypedDict):
    """A shown column's heading, with how it is sorted now (``aria-sort``)."""

    name: str
    label: str
    numeric: bool
    clip: bool  #: :attr:`Column.clip`
    sort: Literal["ascending", "descending"] | None


class Option(TypedDict):
    """A value of a choice column, how it reads, and how many rows hold it."""

    value: str
    label: str
    count: int


class Row(TypedDict):
    """One row as a table draws it: its item's key, its cells in the order of the columns,
    and ``tone: "error"`` for an item that could not be read (its title cell says why)."""

    key: str
    cells: list[Cell]
    tone: NotRequired[Tone]


def column(name: str, kind: Kind | None = None) -> Column:
    """The column ``name``: a C-2 column or :data:`DERIVED` one by its known kind, else (a
    table source's own column) as ``kind`` says, text by default."""
    return Column(name, _KINDS.get(name) or kind or "text")


def columns_of(extra: dict[str, Kind]) -> list[Column]:
    """Every column a browser offers: the C-2 columns, the derived ones, then a table source's
    own (``extra``: name → kind)."""
    return [column(name) for name in (*COLUMNS, *DERIVED)] + [
        column(name, kind) for name, kind in extra.items()
    ]


def label(name: str, locale: str) -> str:
    """The column's heading: the catalog's phrase for a C-2 or derived column, else its name."""
    if name in COLUMNS or name in DERIVED:
        return translate(f"browser.column.{name}", locale)
    return name


def cell(col: Column, value: Any, locale: str) -> Cell:
    """How ``value`` of the column ``col`` reads; a missing value is an empty cell."""
    if value is None:
        return {"text": ""}
    kind = col.kind
    if kind == "outcome":
        known = value in OUTCOMES
        written = plain_text(str(value))  # the source's word, set as text
        phrase = (translate(f"outcome.{value}", locale) if known
                  else translate("outcome.other", locale, outcome=written))  # fmt: skip
        tone: Tone = value if known else "other"
        return {"text": f"{_GLYPHS.get(value, '•')} {phrase}", "tone": tone}
    if kind == "failures":
        return {"text": f"✖ {value:,}", "tone": "fail"} if value else {"text": "0", "tone": "dim"}
    if kind == "error":
        return unreadable(value, None)
    if kind == "count":
        return {"text": f"{value:,}"}
    if kind == "tokens":
        return {"text": compact_count(int(value)), "title": f"{value:,}"}
    if kind == "duration":
        return {"text": format_duration(float(value) * 1000, hide_trailing_zeros=True)}
    if kind == "cost":
        return {"text": f"${format_usd(float(value))}"}
    if kind == "datetime" and isinstance(value, datetime):
        moment = value.astimezone(timezone.utc) if value.tzinfo else value
        exact = moment.strftime("%Y-%m-%d %H:%M:%S")
        return {"text": moment.strftime("%Y-%m-%d %H:%M"), "title": f"{exact} UTC"}
    if kind == "number" and isinstance(value, float):
        return {"text": f"{value:g}"}
    if col.name == "no_cost" and (why := NoCost.read(str(value))) is not None:
        # The row holds the reason in English (NoCost.said), as filters match it: read back and
        # said in the reader's language, in full as its title, as a turn's header says it. A
        # text no reason's (another version's row) is shown as the row holds it, below.
        text, full = why.reason_in(locale), why.title_in(locale)
        return {"text": plain_text(text), "title": plain_text(full)}
    # A title, a model's or an agent's name is the transcript's (spec X-1): the browser sets it
    # as text, so a control or bidi override in it is made visible here, as a page shows it.
    text = plain_text(str(value))
    return {"text": text, "title": text} if len(text) > _LONG else {"text": text}


def derived(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` (a corpus row as a dict) with the derived columns: ``tokens``, the
    :data:`TOKEN_PARTS` added (:class:`~turnfold.corpus.paging.Paging` adds them over whole
    columns)."""
    parts = [row.get(name) for name in TOKEN_PARTS]
    tokens = None if parts == [None] * len(parts) else sum(part or 0 for part in parts)
    return {**row, "tokens": tokens}


def heads_of(
    shown: list[Column], locale: str, sort: str | None = None, descending: bool = False
) -> list[ColumnHead]:
    """The headings of the ``shown`` columns, the one named ``sort`` marked as sorted."""
    heads: list[ColumnHead] = []
    for col in shown:
        order: Literal["ascending", "descending"] | None = None
        if col.name == sort:
            order = "descending" if descending else "ascending"
        heads.append({"name": col.name, "label": label(col.name, locale), "numeric": col.numeric,
                      "clip": col.clip, "sort": order})  # fmt: skip
    return heads


def row_of(values: dict[str, Any], shown: list[Column], locale: str) -> Row:
    """A row as a table draws it: ``values`` (the row's ``key``, ``path``, ``sample``,
    ``error`` and the shown columns' values) as cells; an item that could not be read says in
    its title cell which file it is and why (:func:`unreadable`)."""
    cells = [cell(col, values.get(col.name), locale) for col in shown]
    row: Row = {"key": str(values["key"]), "cells": cells}
    error = values.get("error")
    if error is not None:
        row["tone"] = "error"
        for at, col in enumerate(shown):
            if col.name == "title":
                cells[at] = unreadable(error, values.get("path"), values.get("sample"))
    return row


def unreadable(error: Any, path: str | None, sample: str | None = None) -> Cell:
    """The title cell of an item that could not be read: the file's name (and the sample's,
    of a file of many runs) before the error, since an unreadable file has no title of its
    own to tell it from the others, and its whole path in the tooltip. An error that names
    the file first, as a load's does (L-4), does not name it twice: its reason follows the
    name, where a narrow cell would have cut it off after the path.

    >>> shown = unreadable("line 1: invalid JSON", "/runs/broken/garbage.jsonl")
    >>> shown["text"], shown["title"]
    ('⚠ garbage.jsonl: line 1: invalid JSON', '/runs/broken/garbage.jsonl: line 1: invalid JSON')
    >>> unreadable("/runs/a.jsonl, line 2: not a transcript", "/runs/a.jsonl")["text"]
    '⚠ a.jsonl: line 2: not a transcript'
    >>> unreadable("no messages", None)
    {'text': '⚠ no messages', 'tone': 'error', 'title': 'no messages'}
    """
    error = plain_text(str(error))  # it may quote the file's content or name (spec X-1)
    if not path:
        return {"text": _one_line(f"⚠ {_tried_counted(error)}"), "tone": "error", "title": error}
    path = plain_text(path)
    for named in (f"{path}, ", f"{path}: "):
        if error.startswith(named):
            error = error[len(named) :]
            break
    where = f"#{plain_text(str(sample))}" if sample else ""
    name = f"{PurePath(path).name}{where}"
    text = _one_line(f"⚠ {name}: {_tried_counted(error)}")
    return {"text": text, "tone": "error", "title": f"{path}{where}: {error}"}


def _one_line(text: str) -> str:
    """A cell's text on one line: a row's error keeps the line breaks the raised error has (a
    path may hold one), its cell does not."""
    return " ".join(text.splitlines())


def _tried_counted(error: str) -> str:
    """A "not a transcript" error with its formats tried counted, not named (some sixty, the
    same in every such row), as the command line says them (:func:`tried_said`); the tooltip
    names them.

    >>> _tried_counted("not a transcript (the source is empty); formats tried: a, b, c, d")
    'not a transcript (the source is empty); 4 formats tried'
    >>> _tried_counted("not a transcript (x); formats tried: codex")
    'not a transcript (x); formats tried: codex'
    """
    head, said, tried = error.rpartition("; formats tried: ")
    return f"{head}; {tried_said(tried.split(', '))}" if said else error


def options_of(col: Column, counted: Iterable[tuple[Any, int]], locale: str) -> list[Option]:
    """The values a choice filter of ``col`` offers, from ``(value, rows)`` pairs: the
    commonest first (ties by value), at most :data:`OPTION_LIMIT`, missing values left out."""
    found = sorted(((value, count) for value, count in counted if value is not None),
                   key=lambda pair: (-pair[1], pair[0]))  # fmt: skip
    return [
        {"value": value, "label": cell(col, value, locale)["text"], "count": count}
        for value, count in found[:OPTION_LIMIT]
    ]
