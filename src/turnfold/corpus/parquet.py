"""Parquet files of trajectories, read by the scan's workers (spec C-1, C-4, C-5).

A dataset of runs on the Hugging Face Hub, or written by a training loop, is most often Parquet:
one row per run, its messages in one column, its other columns (a task id, a reward) beside it.
A scan reads such a file as it reads a file of runs in JSON lines (:mod:`turnfold.corpus.runs`):
each row is a row of the corpus keyed ``<path>#<n>`` (its place among the file's rows, from 0);
the file is an item of the scan's index, so an unchanged rescan reads none of it (C-4); and a
large one is read in parts (:class:`Rows`) by every worker at once, each worker reading its own
rows from the file, so the scanning process neither converts them to Python values nor sends
them across (C-5). The other columns are read by the scanning process, as Arrow, and kept as the
rows' metadata.

A part is a range of rows. Parquet is read by row group, and a row group's column is decoded
whole (C++, a tenth of the conversion of its rows to Python values), so a part holds whole row
groups when they are small, and a large row group is shared by at most as many parts as there
are workers, each decoding the group and converting its own rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

#: A part holds about this many bytes of the column, uncompressed (the scan's chunk of files).
PART_BYTES = 4 * 1024 * 1024
#: ...and at least this many rows.
PART_ROWS = 64
#: Rows converted to Python values at a time.
BATCH_ROWS = 1024


class Rows(NamedTuple):
    """A part of a Parquet file: its rows from ``start`` up to ``end``."""

    start: int
    end: int


def opened(path: str) -> pq.ParquetFile:
    """The Parquet file at ``path``; a ``ValueError`` naming it when it is none."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path}: not a readable Parquet file ({exc})") from exc


def schema_of(path: str) -> pa.Schema:
    """The Arrow schema of the Parquet file at ``path`` (its footer alone is read)."""
    file = opened(path)
    try:
        return file.schema_arrow
    finally:
        file.close()


def parts(path: str, column: str, share: int) -> list[tuple[Rows, int]] | None:
    """The file's rows as parts of about :data:`PART_BYTES` of ``column``, uncompressed: whole
    row groups, or a large row group cut into at most ``share`` parts (the workers), each with
    those bytes (the work of reading it: a file's own size says little, its text compressing
    tenfold); None for one part."""
    file = opened(path)
    meta = file.metadata
    file.close()
    leaves = [i for i in range(meta.num_columns)
              if (meta.schema.column(i).path + ".").startswith(column + ".")]  # fmt: skip
    found: list[tuple[Rows, int]] = []
    start = row = size = 0  # the part being gathered starts at ``start``; ``size`` its bytes
    for group in range(meta.num_row_groups):
        info = meta.row_group(group)
        rows = info.num_rows
        weight = sum(info.column(i).total_uncompressed_size for i in leaves)
        if weight >= 2 * PART_BYTES and rows >= 2 * PART_ROWS:  # a large group: cut, and shared
            if row > start:
                found.append((Rows(start, row), size))  # the small groups before it
            pieces = max(1, min(share, weight // PART_BYTES, rows // PART_ROWS))
            cuts = [row + rows * k // pieces for k in range(pieces + 1)]
            found += [(Rows(a, b), weight // pieces) for a, b in itertools.pairwise(cuts)]
            row += rows
            start, size = row, 0
            continue
        row += rows
        size += weight
        if size >= PART_BYTES and row - start >= PART_ROWS:
            found.append((Rows(start, row), size))
            start, size = row, 0
    if row > start:
        found.append((Rows(start, row), size))
    return found if len(found) > 1 else None


def cells(path: str, column: str, part: Rows | None = None) -> Iterator[Any]:
    """The cells of ``column`` in the file's rows (of its part), as Python values, in order;
    read :data:`BATCH_ROWS` at a time, so a worker holds one batch of a row group, not the
    group (the rows of a part that starts inside a group are decoded from the group's start,
    and only its own converted)."""
    file = opened(path)
    try:
        meta = file.metadata
        start, end = (0, meta.num_rows) if part is None else part
        groups: list[int] = []  # the row groups the rows are in
        row = at = 0  # the first row of the first of them; of each group
        for group in range(meta.num_row_groups):
            rows = meta.row_group(group).num_rows
            if at + rows > start and at < end:
                row = at if not groups else row
                groups.append(group)
            at += rows
        for batch in file.iter_batches(BATCH_ROWS, row_groups=groups, columns=[column]):
            begin, stop = max(start - row, 0), min(end - row, batch.num_rows)
            if begin < stop:
                yield from batch.column(0).slice(begin, stop - begin).to_pylist()
            row += batch.num_rows
            if row >= end:
                break
    finally:
        file.close()


def cell(path: str, column: str, row: int) -> Any:
    """The cell of ``column`` in the file's row ``row`` (from 0): its row group alone is read."""
    return next(cells(path, column, Rows(row, row + 1)))
