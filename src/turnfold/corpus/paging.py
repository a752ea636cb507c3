"""The session browser's rows (spec B-1, Q-5): filter, sort and page a corpus with Arrow compute.

A :class:`Paging` holds the corpus's table and answers a :class:`Query` (sort column, filters,
the columns shown, where the page starts) with one :class:`Page`: the matching rows' count and
at most :data:`PAGE_ROWS` rows, each cell already as a person reads it
(:mod:`turnfold.corpus.columns`). Filters and the sort run as Arrow compute over whole columns,
never as a Python loop over rows, and the order they give is kept, so the next page of the same
query is a slice of it: a browser of 100,000 rows costs per request what one page costs, plus
one columnar pass when the query changes (Q-5).

A query comes from the view, so it is untrusted: :meth:`Paging.query` keeps what it can use and
says, in the reader's language, what it could not (an unknown column, ``"abc"`` as a number).

>>> import pyarrow as pa
>>> from turnfold.corpus.tables import row_schema
>>> rows = [dict.fromkeys(row_schema().names) | {"key": k, "turns": n, "agent": a}
...         for k, n, a in (("a", 3, "codex"), ("b", 9, "claude-code"), ("c", 5, "codex"))]
>>> paging = Paging(pa.Table.from_pylist(rows, schema=row_schema()))
>>> query, problems = paging.query({"sort": "turns", "descending": True,
...                                 "filters": [{"column": "agent", "op": "==", "value": "codex"}]})
>>> page = paging.page(query)
>>> [row["key"] for row in page["rows"]], page["total"], page["label"], problems
(['c', 'a'], 2, '1–2 of 2 (3 in all)', [])
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from turnfold.corpus.columns import (
    CHOICE_COLUMNS,
    DEFAULT_COLUMNS,
    TOKEN_PARTS,
    Column,
    ColumnHead,
    Kind,
    Option,
    Row,
    columns_of,
    heads_of,
    label,
    options_of,
    row_of,
)
from turnfold.corpus.summarize import COLUMNS
from turnfold.formats.tables import held_pages
from turnfold.i18n import translate

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover - Python 3.10
    pass

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "OPS",
    "PAGE_ROWS",
    "Choices",
    "ColumnChoice",
    "Control",
    "Filter",
    "Page",
    "Paging",
    "Query",
    "default_columns",
    "sample_key",
    "sample_order",
]

#: Rows in one page: what a view holds at a time (issue 16: 50 to 200).
PAGE_ROWS = 100
Op = Literal["==", "!=", ">=", "<=", "contains"]
OPS: tuple[Op, ...] = ("==", "!=", ">=", "<=", "contains")


class Filter(TypedDict):
    """``column op value``; ``value`` null matches a missing value (``==``) or any other
    (``!=``). A date (``2026-01-31``) against a moment column means that whole day."""

    column: str
    op: Op
    value: str | float | None


class Query(TypedDict):
    """What the reader asked for: the sort column (None: the corpus's order), its direction,
    filters (all must hold), the columns shown (in order) and the first row of the page."""

    sort: str | None
    descending: bool
    filters: list[Filter]
    columns: list[str]
    offset: int


class Page(TypedDict):
    """One page of the answer to ``query``: ``total`` rows match, ``rows`` start at
    ``query.offset``; ``label`` says which (``1–100 of 3,412``); ``problems`` what of the
    query could not be used."""

    query: Query
    total: int
    columns: list[ColumnHead]
    rows: list[Row]
    label: str
    problems: list[str]


class ColumnChoice(TypedDict):
    """A column the reader can show, sort or filter by, with the operators it takes."""

    name: str
    label: str
    kind: Kind
    ops: list[Op]


class Control(TypedDict):
    """A filter with a control of its own, holding ``column op value`` when set: a ``choice``
    of ``options`` (``==``), a ``flag`` that sets ``value``, or a ``date`` (``>=`` from,
    ``<=`` to). Any other filter is the reader's own, made from :class:`ColumnChoice`."""

    kind: Literal["choice", "flag", "date"]
    column: str
    op: Op
    value: str | float | None
    label: str
    options: list[Option]


class Choices(TypedDict):
    """What the filters offer: their controls, and every column."""

    rows: int
    controls: list[Control]
    columns: list[ColumnChoice]
    #: Each operator as the reader's language says it (``contains``: 包含 in zh).
    op_labels: dict[str, str]


def default_columns(rows_share_a_file: bool) -> list[str]:
    """What a table of runs shows until the reader picks columns: :data:`DEFAULT_COLUMNS`,
    and where rows share a file (an eval log's samples and epochs, a database's sessions),
    whose titles may be the same prompt, ``sample`` beside the title to tell them apart
    (``1/2``: sample 1, epoch 2). One rule for every table of runs: the live browser, a saved
    notebook's (W-4), a Corpus's own HTML and the static site's index (B-2).

    >>> default_columns(True)[:3]
    ['title', 'sample', 'agent']
    >>> "sample" in default_columns(False)
    False
    """
    shown = list(DEFAULT_COLUMNS)
    if rows_share_a_file:
        shown.insert(shown.index("title") + 1, "sample")
    return shown


#: A run of digits in a sample's id: a number, as a reader counts (``item-9`` before ``item-10``).
_DIGITS = re.compile(r"([0-9]+)")


def sample_key(sample: str) -> tuple[Any, ...]:
    """How a row's ``sample`` sorts: its id naturally (digits as numbers, words regardless of
    case), then its epoch (``"id/epoch"``, after the id's last ``/``) as a number; a sample of
    no epoch (an OpenHands instance, a database's session) before the same id's first epoch.
    One rule for every table of runs: the browser's sort and the static site's index.

    >>> sorted(["10/1", "2/10", "2/2", "item-10", "Item-9"], key=sample_key)
    ['2/2', '2/10', '10/1', 'Item-9', 'item-10']
    """
    name, slash, epoch = sample.rpartition("/")
    if slash and epoch.isascii() and epoch.isdigit():
        return (_natural(name), _counted(epoch), sample)
    return (_natural(sample), (-1, ""), sample)


def _natural(text: str) -> tuple[Any, ...]:
    """``text`` as words and numbers: split at its digits, words at even places and numbers at
    odd ones, so two keys compare word with word and number with number."""
    return tuple(_counted(part) if at % 2 else part.casefold()
                 for at, part in enumerate(_DIGITS.split(text)))  # fmt: skip


def _counted(digits: str) -> tuple[int, str]:
    """Digits as a number compares, without reading them as one: an id of 5,000 digits is no
    integer Python reads (and a file's id is untrusted), but a shorter number is the smaller."""
    significant = digits.lstrip("0")
    return (len(significant), significant)


def sample_order(samples: Iterable[str]) -> list[str]:
    """The distinct ``samples`` in the order :func:`sample_key` gives them."""
    return sorted(set(samples), key=sample_key)


class Paging:
    """Answers queries over one corpus table (the C-2 columns, a table source's own after).

    The order of the last query's filters and sort is kept (one array of row positions), so
    pages of the same query cost a slice and a ``take`` of one page's rows.
    """

    def __init__(self, table: pa.Table, locale: str = "en") -> None:
        self.locale = locale
        self.source = table
        read, self._textual = _as_read(table)
        self.table = _with_derived(read)
        #: The text of each :attr:`_textual` column sorted or filtered by, made when first asked.
        self._texts: dict[str, pa.ChunkedArray[Any]] = {}
        extra = {name: _kind_of(self.table.schema.field(name).type)
                 for name in table.column_names if name not in COLUMNS}  # fmt: skip
        self.columns: dict[str, Column] = {c.name: c for c in columns_of(extra)}
        self._kept: tuple[str, pa.Array[Any] | None] | None = None
        #: Each row's place in :func:`sample_order`, once the reader sorts by sample.
        self._sample_ranks: Any = None
        import pyarrow.compute as pc

        paths = table.column("path")
        #: What the table shows until the reader picks columns (:func:`default_columns`).
        self.default_columns = default_columns(
            pc.count(paths).as_py() > pc.count_distinct(paths).as_py()
        )

    # --- queries ---------------------------------------------------------------------------------

    def query(self, raw: Mapping[str, Any] | None) -> tuple[Query, list[str]]:
        """``raw`` (from the view) as a query this corpus can answer, and what was left out."""
        raw = raw if isinstance(raw, Mapping) else {}
        problems: list[str] = []
        sort = raw.get("sort")
        if sort is not None and sort not in self.columns:
            problems.append(self._t("browser.problem.column", column=str(sort)))
            sort = None
        filters: list[Filter] = []
        for each in raw.get("filters") or []:
            found = self._filter(each)
            if isinstance(found, str):
                problems.append(found)
            else:
                filters.append(found)
        shown = [name for name in raw.get("columns") or [] if name in self.columns]
        offset = raw.get("offset")
        return {
            "sort": sort,
            "descending": bool(raw.get("descending")),
            "filters": filters,
            "columns": list(dict.fromkeys(shown)) or list(self.default_columns),
            "offset": max(0, offset) if isinstance(offset, int) else 0,
        }, problems

    def _filter(self, raw: Any) -> Filter | str:
        """A filter of the view's, checked; or why it cannot be used."""
        if not isinstance(raw, Mapping):
            return self._t("browser.problem.filter", filter=str(raw))
        name, op, value = raw.get("column"), raw.get("op"), raw.get("value")
        if name not in self.columns:
            return self._t("browser.problem.column", column=str(name))
        if op not in OPS:
            return self._t("browser.problem.filter", filter=f"{name} {op}")
        col = self.columns[name]
        if (value == "" or value is None) and op not in ("==", "!="):
            # "= nothing" is "is missing"; at least, at most or containing nothing is no test
            return self._t("browser.problem.value", column=label(name, self.locale), op=op)
        if value == "" or value is None:
            value = None
        elif op in (">=", "<=") and not col.ranged:
            return self._t("browser.problem.range", column=label(name, self.locale))
        elif col.numeric and _number(value) is None:
            return self._t("browser.problem.number", value=str(value))
        elif col.kind == "datetime" and _moment(value) is None:
            return self._t("browser.problem.date", value=str(value))
        elif not isinstance(value, (str, int, float)) or isinstance(value, bool):
            return self._t("browser.problem.filter", filter=f"{name} {op}")
        return {"column": name, "op": op, "value": value}

    # --- order -----------------------------------------------------------------------------------

    def order(self, query: Query) -> pa.Array[Any] | None:
        """The positions of the matching rows in the order asked for; None: every row, in the
        corpus's order. Kept for the next page of the same filters and sort."""
        import pyarrow as pa
        import pyarrow.compute as pc

        signature = json.dumps([query["sort"], query["descending"], query["filters"]])
        if self._kept is not None and self._kept[0] == signature:
            return self._kept[1]
        positions: pa.Array[Any] | None = None
        if query["filters"]:
            mask = pc.fill_null(self._mask(query["filters"]), False)
            positions = pc.indices_nonzero(mask)
        sort = query["sort"]
        if sort is not None:
            values = self._ranks_of_samples() if sort == "sample" else self._column(sort)
            if positions is None:
                positions = pa.array(range(self.table.num_rows), pa.uint64())
            else:
                values = values.take(positions)
            if sort != "sample" and self.columns[sort].kind in ("text", "error"):
                values = pc.utf8_lower(values)  # as a reader sorts words
            direction: Literal["ascending", "descending"] = (
                "descending" if query["descending"] else "ascending"
            )
            # Arrow's sort is stable, so ties keep the corpus's order; missing values go last
            # either way (its default).
            ranks = pc.sort_indices(values, [("", direction)])
            positions = positions.take(ranks)
        self._kept = (signature, positions)
        return positions

    def _ranks_of_samples(self) -> Any:
        """Each row's place among the column's samples in :func:`sample_order` (null: no
        sample), so Arrow sorts them as the static site's index does. Arrow has no natural
        order of text: the distinct samples are ordered in Python, once per browser."""
        if self._sample_ranks is None:
            import pyarrow as pa
            import pyarrow.compute as pc

            samples: Any = pc.cast(self.table.column("sample"), pa.string())
            distinct = [value for value in pc.unique(samples).to_pylist() if value is not None]
            ordered = pa.array(sample_order(distinct), pa.string())
            self._sample_ranks = pc.index_in(samples, value_set=ordered)
        return self._sample_ranks

    def _column(self, name: str) -> Any:
        """The column ``name`` as a sort or a filter reads it: a :attr:`_textual` column as
        the text its cells show (:func:`_shown`), converted a page of rows at a time, once."""
        if name not in self._textual:
            return self.table.column(name)
        if name not in self._texts:
            import pyarrow as pa

            # Each page's cells converted and dropped before the next: a column of wide lists,
            # every row's at once, held many times what one load may.
            chunks = [pa.array([_shown(value) for value in page.column(0).to_pylist()],
                               pa.string())
                      for page in held_pages(self.table.select([name]))]  # fmt: skip
            self._texts[name] = pa.chunked_array(chunks, pa.string())
        return self._texts[name]

    def _mask(self, filters: list[Filter]) -> Any:
        """Where every filter holds: a boolean array (the stubs type Arrow's compute results
        too narrowly to follow them through)."""
        import pyarrow.compute as pc

        mask = self._test(filters[0])
        for each in filters[1:]:
            mask = pc.and_kleene(mask, self._test(each))
        return mask

    def _test(self, each: Filter) -> Any:
        """Where one filter holds (null where it cannot tell: such rows do not match)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        values = self._column(each["column"])
        col, op, value = self.columns[each["column"]], each["op"], each["value"]
        if value is None:
            return pc.is_valid(values) if op == "!=" else pc.is_null(values)
        if op == "contains":
            return pc.match_substring(pc.cast(values, pa.string()), str(value), ignore_case=True)
        if col.kind == "datetime":
            start, end = (pa.scalar(moment, values.type) for moment in _span(str(value)))
            after = pc.greater_equal(values, start)
            if op == ">=":
                return after
            before = pc.less(values, end) if end.is_valid else pc.less_equal(values, start)
            if op == "<=":
                return before
            same = pc.and_(after, before) if end.is_valid else pc.equal(values, start)
            return same if op == "==" else pc.invert(same)
        target: Any = _number(value) if col.numeric else str(value)
        if not col.numeric and not pa.types.is_string(values.type):
            values = pc.cast(values, pa.string())
        compare = {"==": pc.equal, "!=": pc.not_equal, ">=": pc.greater_equal,
                   "<=": pc.less_equal}[op]  # fmt: skip
        return compare(values, target)

    # --- pages -----------------------------------------------------------------------------------

    def page(self, query: Query, problems: list[str] | None = None, size: int = PAGE_ROWS) -> Page:
        """The page of ``query`` that holds the row at its offset (an offset past the end: the
        last page). Pages start at multiples of ``size``: a view steps back from the short last
        page by a row and gets the whole page before it, never one that overlaps the last."""
        order = self.order(query)
        total = self.table.num_rows if order is None else len(order)
        offset = min(query["offset"], max(0, total - 1)) // size * size
        query = {**query, "offset": offset}
        shown = query["columns"]
        wanted = list(dict.fromkeys(["key", "path", "sample", "error", "title", *shown]))
        if order is None:
            part = self.table.slice(offset, size).select(wanted)
        else:
            part = self.table.select(wanted).take(order.slice(offset, size))
        columns = [self.columns[name] for name in shown]
        textual = self._textual.intersection(wanted)
        rows: list[Row] = []
        # A page of rows whose values together a load may hold at a time: a row's cells
        # keep their text only, not the lists and structs it was made from.
        for batch in held_pages(part):
            for values in batch.to_pylist():
                values.update((name, _shown(values[name])) for name in textual)
                rows.append(row_of(values, columns, self.locale))
        return {
            "query": query,
            "total": total,
            "columns": heads_of(columns, self.locale, query["sort"], query["descending"]),
            "rows": rows,
            "label": self._label(offset, len(rows), total),
            "problems": list(problems or []),
        }

    def offset_of(self, query: Query, key: str, size: int = PAGE_ROWS) -> int | None:
        """The first row of the page of ``query`` that holds the row ``key`` (as :meth:`page`
        starts its pages), or None where the query's filters leave that row out: a run opened
        from elsewhere than its row (a search hit) turns the table to it."""
        import pyarrow as pa
        import pyarrow.compute as pc

        keys = self.table.column("key")
        at: int = pc.index(keys, pa.scalar(key, keys.type)).as_py()
        order = self.order(query)
        if at >= 0 and order is not None:
            at = pc.index(order, pa.scalar(at, order.type)).as_py()
        return None if at < 0 else at // size * size

    def _label(self, offset: int, count: int, total: int) -> str:
        if not total:
            return self._t("browser.none")
        every = self.table.num_rows
        first, last = f"{offset + 1:,}", f"{offset + count:,}"
        if total == every:
            return self._t("browser.range", first=first, last=last, total=f"{total:,}")
        return self._t("browser.range_filtered", first=first, last=last, total=f"{total:,}",
                       every=f"{every:,}")  # fmt: skip

    def selection(self, query: Query) -> pa.Table:
        """Every matching row, in the order asked for, with the corpus's own columns."""
        order = self.order(query)
        return self.source if order is None else self.source.take(order)

    # --- what the filters offer ------------------------------------------------------------------

    def choices(self) -> Choices:
        """The filters with controls of their own (agent, model, outcome: their commonest
        values with counts; has failures; a date range), and every column."""
        controls: list[Control] = [
            {"kind": "choice", "column": name, "op": "==", "value": None,
             "label": label(name, self.locale), "options": self._options(name)}
            for name in CHOICE_COLUMNS
        ]  # fmt: skip
        controls.append(
            {"kind": "flag", "column": "failed_tools", "op": ">=", "value": 1,
             "label": self._t("browser.has_failures"), "options": []}
        )  # fmt: skip
        dates: tuple[tuple[Op, str], ...] = ((">=", "browser.from"), ("<=", "browser.to"))
        for op, phrase in dates:
            controls.append({"kind": "date", "column": "started", "op": op, "value": None,
                             "label": self._t(phrase), "options": []})  # fmt: skip
        columns: list[ColumnChoice] = [
            {"name": c.name, "label": label(c.name, self.locale), "kind": c.kind,
             "ops": [op for op in OPS if c.ranged or op not in (">=", "<=")]}
            for c in self.columns.values()
        ]  # fmt: skip
        op_labels: dict[str, str] = {
            op: self._t(f"browser.op.{op}") if op.isalpha() else op for op in OPS
        }
        return {"rows": self.table.num_rows, "controls": controls, "columns": columns,
                "op_labels": op_labels}  # fmt: skip

    def _options(self, name: str) -> list[Option]:
        import pyarrow.compute as pc

        counts: Any = pc.value_counts(self.table.column(name))
        counted = ((c["values"], c["counts"]) for c in counts.to_pylist())
        return options_of(self.columns[name], counted, self.locale)

    def _t(self, key: str, **params: Any) -> str:
        return translate(key, self.locale, **params)


def _with_derived(table: pa.Table) -> pa.Table:
    """``table`` with the derived columns after its own (``tokens``: :data:`TOKEN_PARTS`
    added, as :func:`~turnfold.corpus.columns.derived` adds them, over whole columns), unless a
    table source named a column so already."""
    import pyarrow.compute as pc

    if "tokens" in table.column_names:
        return table
    parts: list[Any] = [table.column(name) for name in TOKEN_PARTS]  # the stubs: no arithmetic
    given, made = parts
    total = pc.add(pc.fill_null(given, 0), pc.fill_null(made, 0))
    neither = pc.and_(pc.is_null(given), pc.is_null(made))
    return table.append_column("tokens", pc.if_else(neither, None, total))


def _as_read(table: pa.Table) -> tuple[pa.Table, frozenset[str]]:
    """``table`` with a table source's own columns as the browser reads them, and the names of
    those read as text. Text, numbers and moments as they are, a category's values as theirs,
    a decimal as a number; anything else (a list, a struct, a flag, a date) as the text its
    cell shows (:func:`_shown`). Arrow neither sorts nor compares a list or a struct, nor
    lower-cases a flag (sorting or filtering by such a column had raised in the kernel and left
    the view waiting); as their text, what a reader sorts and filters by is what they see. That
    text is made only for what a page shows or a sort or filter reads (:meth:`Paging._column`):
    made here, every row's at once, it held a table of wide rows whole as Python values."""
    import pyarrow as pa
    import pyarrow.compute as pc

    textual: set[str] = set()
    for at, name in enumerate(table.column_names):
        values: Any = table.column(name)
        kind = given = values.type
        if name in COLUMNS:
            continue
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
            if not _as_it_is(kind) and not pa.types.is_decimal(kind):
                textual.add(name)  # its rows convert to their values: read as text as they are
                continue
            values = pc.cast(values, kind)
        if pa.types.is_decimal(kind):
            values = pc.cast(values, pa.float64())
        elif not _as_it_is(kind):
            textual.add(name)
            continue
        elif kind == given:
            continue
        table = table.set_column(at, name, values)
    return table, frozenset(textual)


def _as_it_is(kind: pa.DataType) -> bool:
    """Whether Arrow sorts and compares a column of ``kind`` as its cells read."""
    import pyarrow as pa

    return (pa.types.is_string(kind) or pa.types.is_large_string(kind)
            or pa.types.is_integer(kind) or pa.types.is_floating(kind)
            or pa.types.is_timestamp(kind))  # fmt: skip


def _shown(value: Any) -> str | None:
    """A cell of a column read as text (:func:`_as_read`): what it shows, ``str(value)``."""
    return None if value is None else str(value)


def _kind_of(kind: pa.DataType) -> Kind:
    """How a table source's own column reads, by its Arrow type."""
    import pyarrow as pa

    if pa.types.is_timestamp(kind):
        return "datetime"
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        return "number"
    return "text"


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _moment(value: Any) -> datetime | None:
    """A date or a moment, ISO written (``2026-01-31``, ``…T12:00Z``), in UTC when naive."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _span(value: str) -> tuple[datetime | None, datetime | None]:
    """Where a filter's moment starts and, for a date (``2026-01-31``: that whole day), where
    it ends; a moment ends nowhere (None)."""
    moment = _moment(value)
    if moment is None or len(value.strip()) != len("2026-01-31"):
        return moment, None
    return moment, moment + timedelta(days=1)
