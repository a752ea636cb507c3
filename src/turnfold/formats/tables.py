"""A run held in a table (spec C-1): a row of a Parquet file, a DataFrame or a Dataset whose
messages are in one column, its other columns beside them. Some tables hold each run in
several columns (:data:`SPLIT_RUNS`): a conversational prompt-completion table (TRL's;
verifiers' and prime-rl's rollouts) in two, ``prompt``, its system and user messages, and
``completion``, the model's messages and its tools' results (or its text); a conversational
preference table (TRL's DPO, ORPO and KTO datasets: UltraFeedback binarized, Anthropic HH) in
``prompt``, ``chosen`` and ``rejected``, or in ``chosen`` and ``rejected`` alone, each then the
whole conversation; LLaMA-Factory's ``sharegpt`` preference table in ``conversations`` and a
message each in ``chosen`` and ``rejected``. Such columns are read as one virtual column named
by them, joined by ``+`` (``prompt+completion``, ``prompt+chosen+rejected``): each of its
cells is the row of those columns, ``{"prompt": ..., "completion": ...}``, which ``load`` reads
as one run, as it reads that row as JSON (:func:`~turnfold.formats.wrappers.find_messages`).
A column whose own name holds ``+`` is that column, never a run split over others.

Datasets of runs on the Hugging Face Hub, or written by a training loop, are most often
Parquet. This module says which column holds a table's messages (:func:`messages_column`),
reads a cell of it as ``load(messages)`` reads them (:func:`read_messages`), and reads a Parquet
file's rows (:func:`cells`), a part of them at a time: a scan's workers each read their own
part of a large file (:func:`parts`), and ``load(path, sample=n)`` its ``n``-th row alone.

A part is a range of rows. Parquet is read by row group, and a row group's column is decoded
from its start (C++, a tenth of the conversion of its rows to Python values), so a part holds
whole row groups when they are small, and a large row group is cut: into as many parts as
there are workers when its bytes are many, into parts of a bounded number of rows when its runs
are many and short (:func:`_pieces`), each part converting its own rows.
"""

from __future__ import annotations

import itertools
import stat
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from turnfold import codec
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.wrappers import (
    ANSWERS,
    CHOSEN,
    COMPLETION,
    HISTORY,
    INPUT,
    INSTRUCTION,
    MESSAGE_KEYS,
    OUTPUT,
    PROMPT,
    QUERY,
    REJECTED,
    REJECTED_RESPONSE,
    RESPONSE,
    UNKNOWN,
    OneFormat,
    keep_wrapper_keys,
    no_such_run,
    run_place,
)

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from turnfold.model import Transcript

#: The file name endings of Parquet files.
PARQUET_SUFFIXES = (".parquet", ".pq")
#: What a Parquet file starts (and ends) with.
_MAGIC = b"PAR1"

#: A part holds about this many bytes of the column, uncompressed (the scan's chunk of files)...
PART_BYTES = 4 * 1024 * 1024
#: ...at most this many rows (a short run costs more than its bytes say: its summary)...
PART_MOST_ROWS = 2048
#: ...and at least this many.
PART_ROWS = 64
#: A row's work, in bytes of its column, is at least this: what a part weighs in the engine.
ROW_WORK_BYTES = 2048
#: A row group cut into parts is decoded by each from its start: cut for its many rows alone,
#: it is cut into no more parts than would decode this many bytes more than once.
DECODED_AGAIN_BYTES = 64 * 1024 * 1024
#: Rows converted to Python values at a time.
BATCH_ROWS = 1024
#: What joins the columns of a virtual messages column: ``prompt+completion`` is read from
#: ``prompt`` and ``completion`` (:func:`read_columns`).
JOIN = "+"
#: The messages "column" of a prompt-completion table: its ``prompt`` and ``completion``
#: columns, named as ``find_messages`` names the run of such a row.
PROMPT_COMPLETION = JOIN.join((PROMPT, COMPLETION))
_LIST, _TEXT = frozenset({"list"}), frozenset({"text"})
_LIST_OR_TEXT = _LIST | _TEXT
_OBJECT = frozenset({"object"})
#: The runs a table holds over several columns, as a virtual messages column and the kinds of
#: cell its columns must hold (:func:`column_kinds`; each tuple one way to hold the run) for it
#: to be picked when no column is named as messages are; looked for in this order, a
#: preference table's prompt before its implicit prompt. A completion may be text (a sampled
#: reply, as GRPO logs keep it); TRL's standard rows are text in every column (a prompt and
#: its completion, or its two replies). LLaMA-Factory's v1 ranking rows hold their pair as
#: ``chosen_messages`` and ``rejected_messages``; its ``sharegpt`` ranking rows as
#: ``conversations`` and two replies of one message each, ``chosen`` and ``rejected``: a run
#: that starts with a column named as messages are is picked before that column alone.
SPLIT_RUNS: dict[str, tuple[tuple[frozenset[str], ...], ...]] = {
    PROMPT_COMPLETION: ((_LIST, _LIST_OR_TEXT), (_TEXT, _TEXT)),
    JOIN.join((PROMPT, CHOSEN, REJECTED)): ((_LIST, _LIST, _LIST), (_TEXT, _TEXT, _TEXT)),
    JOIN.join((CHOSEN, REJECTED)): ((_LIST, _LIST),),
    JOIN.join(("chosen_messages", "rejected_messages")): ((_LIST, _LIST),),
    JOIN.join(("conversations", CHOSEN, REJECTED)): ((_LIST, _OBJECT, _OBJECT),),
}

#: The runs a table holds in a row of text, as a dataset's JSON lines hold them
#: (:func:`~turnfold.formats.wrappers.find_messages`): alpaca rows and LLaMA-Factory's alpaca
#: ranking rows, ms-swift's query-response rows, xLAM's function-calling rows. Each is the
#: columns a run needs, with the kinds of cell they hold, then the columns of the row it also
#: takes when the table has them (a system prompt, the earlier pairs); picked, in this order,
#: before a column named as messages are that is one of them (an alpaca row's ``history``).
ROW_RUNS: tuple[tuple[dict[str, frozenset[str]], tuple[str, ...]], ...] = (
    ({INSTRUCTION: _TEXT, CHOSEN: _TEXT, REJECTED: _TEXT}, (INPUT, "system", HISTORY)),
    ({INSTRUCTION: _TEXT, OUTPUT: _LIST_OR_TEXT}, (INPUT, "system", HISTORY)),
    (
        {QUERY: _TEXT, RESPONSE: _LIST_OR_TEXT},
        ("system", "system_prompt", HISTORY, REJECTED_RESPONSE),
    ),
    ({QUERY: _TEXT, ANSWERS: _TEXT}, ("tools",)),
)
#: The columns of text beside a column named as messages are that its row's reader takes:
#: a ShareGPT row's ``system`` prompt (which declares ToolACE's tools, whose calls are known by
#: them) and its ``tools``, glaive's ``system`` beside its ``chat``.
ROW_COMPANIONS = ("system", "tools")
#: The columns of media files beside a column of messages (ms-swift's and LLaMA-Factory's
#: ``images``, ``videos``, ``audios``: paths, or lists of them), whose files the messages'
#: ``<image>`` tags stand for (``openai_chat.MediaFiles``): read with the messages too.
MEDIA_COMPANIONS = ("images", "videos", "audios")


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
    """The file's rows as parts of about :data:`PART_BYTES` of ``column``, uncompressed, and
    at most :data:`PART_MOST_ROWS` rows: small row groups together, a large one cut
    (:func:`_pieces`); each with its work in bytes (a file's own size says little, its text
    compressing tenfold, and a short run's summary costs more than its bytes). None for one
    part."""
    file = opened(path)
    meta, names = file.metadata, file.schema_arrow.names
    file.close()
    prefixes = tuple(name + "." for name in read_columns(column, names))
    leaves = [i for i in range(meta.num_columns)
              if (meta.schema.column(i).path + ".").startswith(prefixes)]  # fmt: skip
    found: list[tuple[Rows, int]] = []

    def part(start: int, end: int, weight: int) -> None:
        found.append((Rows(start, end), max(weight, (end - start) * ROW_WORK_BYTES)))

    start = row = size = 0  # the part being gathered starts at ``start``; ``size`` its bytes
    for group in range(meta.num_row_groups):
        info = meta.row_group(group)
        rows = info.num_rows
        weight = sum(info.column(i).total_uncompressed_size for i in leaves)
        pieces = _pieces(rows, weight, share)
        if pieces > 1:
            if row > start:
                part(start, row, size)  # the small groups before it
            cuts = [row + rows * k // pieces for k in range(pieces + 1)]
            for a, b in itertools.pairwise(cuts):
                part(a, b, weight // pieces)
            row += rows
            start, size = row, 0
            continue
        row += rows
        size += weight
        if (size >= PART_BYTES or row - start >= PART_MOST_ROWS) and row - start >= PART_ROWS:
            part(start, row, size)
            start, size = row, 0
    if row > start:
        part(start, row, size)
    return found if len(found) > 1 else None


def _pieces(rows: int, weight: int, share: int) -> int:
    """How many parts a row group of ``rows`` rows and ``weight`` bytes is cut into: a large
    one into as many as there are workers (``share``; each decodes the group, in C++, and
    converts its own rows), one of many short rows into parts of :data:`PART_MOST_ROWS` rows
    while decoding it again stays cheap; never into parts of fewer than :data:`PART_ROWS`."""
    by_bytes = min(share, weight // PART_BYTES)
    by_rows = min(-(-rows // PART_MOST_ROWS), max(1, DECODED_AGAIN_BYTES // max(weight, 1)))
    return max(1, min(rows // PART_ROWS, max(by_bytes, by_rows)))


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
        read = read_columns(column, file.schema_arrow.names)
        for batch in file.iter_batches(BATCH_ROWS, row_groups=groups, columns=read):
            begin, stop = max(start - row, 0), min(end - row, batch.num_rows)
            if begin < stop:
                yield from batch_cells(batch.slice(begin, stop - begin))
            row += batch.num_rows
            if row >= end:
                break
    finally:
        file.close()


def cell(path: str, column: str, row: int) -> Any:
    """The cell of ``column`` in the file's row ``row`` (from 0): its row group alone is read."""
    return next(cells(path, column, Rows(row, row + 1)))


# --- the messages of a run held in a table ------------------------------------------------------


def read_columns(column: str, names: Collection[str] = ()) -> list[str]:
    """The table's columns a messages column is read from: those its name joins by
    :data:`JOIN` (``prompt`` and ``completion`` for :data:`PROMPT_COMPLETION`), each once, else
    the column itself. A column of the table (``names``) whose own name holds the join is
    itself: the name says which column, and a real one is no run split over others."""
    if JOIN not in column or column in names:
        return [column]
    return list(dict.fromkeys(column.split(JOIN)))


def batch_cells(batch: pa.RecordBatch) -> list[Any]:
    """The cells of a batch of a messages column (:func:`read_columns`) as Python values: a
    virtual column's as the rows of its columns, ``{"prompt": ..., "completion": ...}``."""
    return batch.column(0).to_pylist() if batch.num_columns == 1 else batch.to_pylist()


def messages_column(names: list[str], messages: str | None, types: dict[str, Any]) -> str:
    """The column of a table of trajectories that holds their messages: ``messages`` when the
    user named it (a virtual column, ``prompt+completion``, when each of its columns is the
    table's), else one named as messages are (``messages``, ``conversations``…) with the
    :data:`ROW_COMPANIONS` of text the table has (``conversations+system``), else the first
    run of :data:`SPLIT_RUNS` whose columns hold the kinds it takes, else the first of
    :data:`ROW_RUNS`, else the one column of lists (``types``: ``"list"``, ``"text"`` or
    ``"object"`` for each such column). A run of :data:`SPLIT_RUNS` that starts with the
    column named as messages are is that column's whole run (``conversations+chosen+rejected``);
    a column named as messages are that a run of :data:`ROW_RUNS` takes (an alpaca row's
    ``history``) is that run's."""
    if messages is not None:
        read = read_columns(messages, names)
        missing = [name for name in read if name not in names]
        if missing:
            raise ValueError(f"no column {missing[0]!r}; the columns are {', '.join(names)}")
        return JOIN.join(read)  # a column named twice is read once
    held = [run for run, ways in SPLIT_RUNS.items() if _holds(read_columns(run), ways, types)]
    row = _row_run(names, types)
    taken = read_columns(row) if row is not None else []
    for name in MESSAGE_KEYS:  # the names that say "these are the messages"
        if name in names and name not in taken:
            run = next((run for run in held if run.startswith(name + JOIN)), name)
            companions = [n for n in ROW_COMPANIONS if types.get(n) == "text"]
            companions += [n for n in MEDIA_COMPANIONS if types.get(n) in ("list", "text")]
            return JOIN.join(dict.fromkeys([*read_columns(run), *companions]))
    if held:
        return held[0]
    if row is not None:
        return row
    lists = [n for n in names if types.get(n) == "list"]
    if len(lists) == 1:
        return lists[0]
    raise ValueError(
        "which column holds the messages? pass scan(..., messages=<column>); "
        f"the columns are {', '.join(names)}"
    )


def _row_run(names: list[str], types: dict[str, Any]) -> str | None:
    """The first run of :data:`ROW_RUNS` the table's columns hold, as a virtual column of the
    columns it needs and those it also takes that the table has; None for none."""
    for needed, taken in ROW_RUNS:
        if all(types.get(name) in kinds for name, kinds in needed.items()):
            return JOIN.join([*needed, *(name for name in taken if name in names)])
    return None


def _holds(
    columns: list[str], ways: tuple[tuple[frozenset[str], ...], ...], types: dict[str, Any]
) -> bool:
    """Whether ``columns`` hold cells of the kinds one of ``ways`` takes."""
    return any(all(types.get(n) in k for n, k in zip(columns, kinds, strict=True))
               for kinds in ways)  # fmt: skip


def column_kinds(schema: pa.Schema) -> dict[str, Any]:
    """The kind of each column of an Arrow schema that holds lists, text or objects, as
    :func:`messages_column` takes them."""
    import pyarrow as pa

    kinds: dict[str, Any] = {}
    for f in schema:
        if pa.types.is_list(f.type) or pa.types.is_large_list(f.type):
            kinds[f.name] = "list"
        elif pa.types.is_string(f.type) or pa.types.is_large_string(f.type):
            kinds[f.name] = "text"
        elif pa.types.is_struct(f.type):
            kinds[f.name] = "object"  # one message (a preference row's reply)
    return kinds


def read_messages(cell: Any, format: str | None = None) -> Transcript:
    """The run a table's cell of messages holds, as ``load(messages, format)`` reads it: JSON
    text parsed; Arrow's null struct fields dropped (Arrow gives every struct in a column every
    field of the column's type, so a message without ``tool_calls`` comes back with
    ``tool_calls: None``, which loaders expect absent).

    The messages are copied as the nulls are dropped, so a cell of plain values only (Arrow's,
    or parsed text) is read as it is, with neither a second copy nor a search for a
    framework's objects (:func:`~turnfold.formats.read_record`); a cell holding other objects
    (a pandas cell of LangChain messages) is read by ``load``."""
    from turnfold.formats import load, read_record  # the package imports this module

    if _null(cell):
        raise TranscriptFormatError("a table's row", [], None, "its messages are null")
    if isinstance(cell, (str, bytes)):
        try:
            parsed = codec.loads(cell)
        except ValueError:
            text = cell if isinstance(cell, str) else cell.decode(errors="replace")
            shown = text if len(text) <= 60 else text[:59] + "…"
            raise TranscriptFormatError(
                "a table's row", [], None, f"its messages are text that is no JSON: {shown!r}"
            ) from None
        return read_record(parsed, format)
    if hasattr(cell, "tolist") and not isinstance(cell, (list, dict)):
        cell = cell.tolist()  # a numpy array out of pandas
    others: list[Any] = []
    messages = _drop_nulls(cell, others)
    return load(messages, format=format) if others else read_record(messages, format)


#: The values that are plain JSON as they are.
_ATOMS = frozenset({str, int, float, bool})


def _drop_nulls(value: Any, others: list[Any]) -> Any:
    """``value`` with the null fields of its mappings dropped, copied; each value that is no
    plain JSON (a framework's object, a date) kept as it is, and listed in ``others``."""
    kind = type(value)
    if kind is dict:
        return {k: _drop_nulls(v, others) for k, v in value.items() if not _null(v)}
    if kind is list or kind is tuple:
        return [_drop_nulls(v, others) for v in value]
    if kind in _ATOMS or value is None:
        return value
    if isinstance(value, Mapping):
        return {k: _drop_nulls(v, others) for k, v in value.items() if not _null(v)}
    if isinstance(value, (list, tuple)):
        return [_drop_nulls(v, others) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return _drop_nulls(value.tolist(), others)
    others.append(value)
    return value


def _null(value: Any) -> bool:
    """Whether a field is null: None, or the NaN pandas puts in a row of a DataFrame made of
    records where the record lacks the column (an alpaca row without ``input``)."""
    return value is None or (type(value) is float and value != value)


# --- load() of a Parquet file -------------------------------------------------------------------


def is_parquet(path: Path) -> bool:
    """Whether the file at ``path`` is Parquet: by its name, or its first bytes."""
    if path.name.endswith(PARQUET_SUFFIXES):
        return True
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a pipe's first bytes are not to be taken
            return False
        with path.open("rb") as stream:
            return stream.read(len(_MAGIC)) == _MAGIC
    except OSError:
        return False


def run_of(path: Path, format: str | None, sample: Any, epoch: int | None) -> Transcript:
    """The run in row ``sample`` (from 0, as ``scan`` keys it ``path#n``) of a Parquet file
    of trajectories, as ``load(messages)`` reads its messages; the file alone names no run."""
    name = str(path)
    place = run_place(sample)
    if sample is None or place is None or epoch is not None:
        reason = (
            "a Parquet file of runs (each row holds one): turnfold.scan() reads each as a row; "
            "turnfold.load(path, sample=n) reads the n-th, from 0"
        )
        if sample is not None:
            reason += f"; not sample={sample!r}" + (f", epoch={epoch!r}" if epoch else "")
        raise TranscriptFormatError(name, [], None, reason)
    file = opened(name)
    try:
        count, schema = file.metadata.num_rows, file.schema_arrow
    finally:
        file.close()
    column = messages_column(list(schema.names), None, column_kinds(schema))
    if not 0 <= place < count:
        raise no_such_run(name, count, place)
    if format is not None:
        transcript = read_messages(cell(name, column, place), format)
    else:  # the dataset's format, its first row's, as a scan reads it
        guess = first_format(name, column) if place else UNKNOWN
        transcript = OneFormat(read_messages, guess=guess)(cell(name, column, place))
    others = other_cells(name, column, place)
    keep_wrapper_keys(
        transcript, {key: value for key, value in others.items() if value is not None}
    )
    return transcript


def other_cells(path: str, column: str, row: int) -> dict[str, Any]:
    """The file's row ``row`` (from 0) less its messages ``column`` and its null cells: the
    run's other columns, its metadata (C-1), as ``scan`` keeps them beside its row. Only that
    row's group is read."""
    file = opened(path)
    try:
        names = file.schema_arrow.names
        read = read_columns(column, names)
        others = [name for name in names if name not in read]
        at = 0
        for group in range(file.metadata.num_row_groups if others else 0):
            rows = file.metadata.row_group(group).num_rows
            if row < at + rows:
                values: dict[str, Any] = (
                    file.read_row_group(group, columns=others).slice(row - at, 1).to_pylist()[0]
                )
                return values
            at += rows
        return {}
    finally:
        file.close()


def first_format(path: str, column: str) -> str | None:
    """The format of the first run of a Parquet file of trajectories, as ``load(messages)``
    reads it: the dataset's format (:class:`~turnfold.formats.wrappers.OneFormat`); None when
    that run cannot be read."""
    read = OneFormat(read_messages)
    read.learn(cell(path, column, 0))
    return read.found
