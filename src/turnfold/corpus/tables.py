"""The corpus's three tables as Arrow (spec C-2, C-3), built in batches as rows stream in.

Rows arrive one item at a time from the workers; keeping them as Python dicts would cost far
more memory than the columns they become, so every :data:`BATCH_ROWS` rows are turned into one
``pyarrow.RecordBatch`` and the dicts are dropped. A file's rows come as record batches of their
own (:func:`file_batches`: the index stores them as they are, and a rescan appends them without
building a row). ``to_arrow()`` then only joins the batches. pyarrow is imported here, never by
``import turnfold``.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from turnfold.corpus.summarize import COLUMNS, TOOL_CALL_COLUMNS, TURN_COLUMNS

if TYPE_CHECKING:
    import pyarrow as pa

    from turnfold.corpus.summarize import Summary

BATCH_ROWS = 2048
#: Tables of many small batches (one per file) are joined into one chunk when they average
#: fewer rows per batch than this: later filters and conversions then cost one call, not one
#: per file.
SMALL_BATCH = 256


def _types() -> dict[str, pa.DataType]:
    import pyarrow as pa

    stamp = pa.timestamp("us", tz="UTC")
    text, count, real = pa.string(), pa.int64(), pa.float64()
    return {
        "key": text, "path": text, "sample": text, "format": text, "agent": text,
        "title": text, "model": text, "started": stamp, "ended": stamp, "duration_s": real,
        "turns": count, "tool_calls": count, "failed_tools": count, "errors": count,
        "subagents": count, "input_tokens": count, "output_tokens": count,
        "cache_read_tokens": count, "cache_write_tokens": count, "cost_usd": real,
        "no_cost": text, "outcome": text, "score": real, "warnings": count, "error": text,
        # tool calls and turns
        "turn": count, "call_id": text, "name": text, "category": text, "status": text,
        "duration_ms": real, "description": text,
    }  # fmt: skip


@functools.cache
def schema(columns: tuple[str, ...]) -> pa.Schema:
    """The Arrow schema of a table with ``columns`` (names shared by the three tables)."""
    import pyarrow as pa

    types = _types()
    return pa.schema([pa.field(name, types[name]) for name in columns])


def row_schema() -> pa.Schema:
    return schema(COLUMNS)


def tool_call_schema() -> pa.Schema:
    return schema(TOOL_CALL_COLUMNS)


def turn_schema() -> pa.Schema:
    return schema(TURN_COLUMNS)


def file_batches(
    rows: list[dict[str, Any]], tool_calls: list[dict[str, Any]], turns: list[dict[str, Any]]
) -> tuple[pa.RecordBatch, pa.RecordBatch, pa.RecordBatch]:
    """One file's rows, tool-call rows and turn rows as three record batches."""
    return (batch_of(rows, row_schema()), batch_of(tool_calls, tool_call_schema()),
            batch_of(turns, turn_schema()))  # fmt: skip


def batch_of(rows: list[dict[str, Any]], columns: pa.Schema) -> pa.RecordBatch:
    """``rows`` as a record batch of ``columns``; an integer an ``int64`` column cannot hold
    (a broken record's count past 64 bits) is null there, said in a warning naming its row."""
    import pyarrow as pa

    try:
        return pa.RecordBatch.from_pylist(rows, columns)
    except OverflowError:
        return pa.RecordBatch.from_pylist(_within_64_bits(rows), columns)


def summaries_batches(
    summaries: list[Summary],
) -> list[tuple[pa.RecordBatch, pa.RecordBatch, pa.RecordBatch]]:
    """:func:`summary_batches` of each of ``summaries`` (files whose kind is ``rows``), built
    together: one conversion per table for all of them, each file's rows a slice of it.

    Converting rows costs a fixed part per batch and column besides its part per row: a
    session's one row cost as much as a few hundred tool-call rows, and building every file's
    three batches apart was a sixth of the scanning process's time, on a machine whose
    workers use every core. A file with a packed part (an eval log's) is built on its own."""
    columns = (row_schema(), tool_call_schema(), turn_schema())
    flat = [summary for summary in summaries if not summary.packed]
    tables = [
        _sliced([getattr(summary, name) for summary in flat], schema)
        for name, schema in zip(("rows", "tool_calls", "turns"), columns, strict=True)
    ]
    made = iter(zip(*tables, strict=True))
    return [summary_batches(summary) if summary.packed else next(made) for summary in summaries]


def _sliced(parts: list[list[dict[str, Any]]], columns: pa.Schema) -> list[pa.RecordBatch]:
    """The batch of every row of ``parts``, cut back into one slice per part."""
    whole = batch_of([row for part in parts for row in part], columns)
    empty = batch_of([], columns)
    slices, at = [], 0
    for part in parts:
        # A slice of no rows is serialised with its whole batch's buffers (Arrow's IPC writer
        # truncates them only for slices of some rows): a batch of its own instead.
        slices.append(whole.slice(at, len(part)) if part else empty)
        at += len(part)
    return slices


def summary_batches(summary: Summary) -> tuple[pa.RecordBatch, pa.RecordBatch, pa.RecordBatch]:
    """A file's rows, tool-call rows and turn rows as three record batches: those it packed
    already (an eval log's) joined with the rest."""
    last = file_batches(summary.rows, summary.tool_calls, summary.turns)
    if not summary.packed:
        return last
    parts = [*summary.packed, last]
    joined = (_joined([part[n] for part in parts], last[n].schema) for n in range(3))
    rows, tool_calls, turns = joined
    return rows, tool_calls, turns


def _joined(batches: list[pa.RecordBatch], columns: pa.Schema) -> pa.RecordBatch:
    import pyarrow as pa

    # One chunk per column, so one batch; none when no batch has a row.
    joined = pa.Table.from_batches(batches, columns).combine_chunks().to_batches()
    return joined[0] if joined else batches[-1]


class TableBuilder:
    """Rows in, record batches out; :meth:`table` is the whole table so far.

    Batches in IPC form (:meth:`add_part`) are decoded by :meth:`table`, so a table nobody asks
    for (the tool calls and turns of an unchanged rescan, until ``corpus.tool_calls()``) costs
    only its bytes."""

    def __init__(self, columns: tuple[str, ...]) -> None:
        self.columns = columns
        self._schema: pa.Schema | None = None
        self._pending: list[dict[str, Any]] = []
        self._batches: list[pa.RecordBatch | bytes] = []
        self.count = 0

    @property
    def arrow_schema(self) -> pa.Schema:
        if self._schema is None:
            self._schema = schema(self.columns)
        return self._schema

    def add(self, row: dict[str, Any]) -> None:
        self._pending.append(row)
        self.count += 1
        if len(self._pending) >= BATCH_ROWS:
            self._flush()

    def extend(self, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            self.add(row)

    def add_batch(self, batch: pa.RecordBatch) -> None:
        """Rows already in Arrow form (a file's), after those added so far."""
        if batch.num_rows:
            self._flush()
            self._batches.append(batch)
            self.count += batch.num_rows

    def add_part(self, part: pa.RecordBatch | bytes) -> None:
        """A file's rows as a batch or in IPC form (from the index: decoded when needed).
        :attr:`count` leaves out rows in IPC form."""
        if isinstance(part, bytes):
            self._flush()
            self._batches.append(part)
        else:
            self.add_batch(part)

    def _flush(self) -> None:
        if self._pending:
            self._batches.append(batch_of(self._pending, self.arrow_schema))
            self._pending = []

    def table(self) -> pa.Table:
        import pyarrow as pa

        self._flush()
        batches = [decode(b, self.arrow_schema) if isinstance(b, bytes) else b
                   for b in self._batches]  # fmt: skip
        table = pa.Table.from_batches(batches, self.arrow_schema)
        if len(batches) > 1 and table.num_rows < SMALL_BATCH * len(batches):
            table = table.combine_chunks()
        return table


#: The integers an Arrow ``int64`` column holds.
_INT64 = range(-(2**63), 2**63)


def _within_64_bits(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with every integer an ``int64`` column cannot hold made null, each said in a
    warning (the transcript keeps the value; the table cannot)."""
    from turnfold.userwarn import warn_at_caller

    kept = []
    for row in rows:
        wide = [k for k, v in row.items() if type(v) is int and v not in _INT64]
        if wide:
            warn_at_caller(f"{row.get('key')}: {', '.join(wide)} past 64 bits, null in the table")
            row = {**row, **dict.fromkeys(wide)}
        kept.append(row)
    return kept


def encode(batch: pa.RecordBatch) -> bytes:
    """A record batch in IPC form (no schema: the reader knows it), as the index stores it."""
    return batch.serialize().to_pybytes()


def decode(data: bytes, batch_schema: pa.Schema) -> pa.RecordBatch:
    """The record batch :func:`encode` made (zero-copy: it refers to ``data``)."""
    import pyarrow as pa

    return pa.ipc.read_record_batch(pa.py_buffer(data), batch_schema)
