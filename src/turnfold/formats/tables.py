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

A Hugging Face dataset saved with ``Dataset.save_to_disk(folder)`` is a folder of Arrow shards
(``data-00000-of-00001.arrow``, in Arrow's IPC *stream* format) beside its ``state.json``,
which names them, and its ``dataset_info.json``; ``DatasetDict.save_to_disk`` writes one such
folder per split beside a ``dataset_dict.json`` naming them (:func:`saved_dataset`). Such a
shard, and any Arrow IPC file or stream (pyarrow's ``ipc.new_file``/``new_stream``, Feather
v2), is a table of runs as a Parquet file is, read by the same functions: memory-mapped and
read a record batch at a time, as ``datasets`` itself reads its shards (:class:`_Arrow`), so
its rows are views of the mapped file until converted, :data:`BATCH_ROWS` at a time; a batch
needs no decoding from its start, so a part is cut anywhere in it (:func:`_slices`).

A Feather V1 file (``pyarrow.feather.write_feather(table, path, version=1)``, what
``DataFrame.to_feather`` wrote before pandas 1.1) is read the same way: pyarrow reads it as one
record batch of views of the mapped file (``pyarrow.feather.read_table``). V1 holds no nested
type, so its messages are a column of JSON text. Its reader trusts the file's metadata, and
one that points past the file crashes the process: the metadata is checked first
(:func:`_feather_v1`). Arrow's readers check a batch's buffers' sizes, not what its offsets
point at: what is converted to Python values is checked whole first (:func:`_checked`).

``datasets`` 5 types a field whose values differ from row to row (a run's messages, some with
``tool_calls``; a ``content`` that is text or parts) as ``Json``: each value the text of one
JSON value. Such values, and only those (:func:`json_places`), are read as the JSON they
hold, in a ``Dataset``, its Parquet file and its saved shards alike (:class:`JsonText`).
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import stat
import struct
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias, cast

from turnfold import codec
from turnfold.formats import compressed
from turnfold.formats.errors import (
    KEPT_TEXT_CHARS,
    MalformedLine,
    SampleSelectionError,
    TranscriptFormatError,
)
from turnfold.formats.source import (
    join_warnings,
    json_object_file,
    not_listed_error,
    record_limit,
)
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
from turnfold.userwarn import warn_at_caller

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from turnfold.model import Transcript

#: The file name endings of Parquet files.
PARQUET_SUFFIXES = (".parquet", ".pq")
#: What a Parquet file starts (and ends) with.
_MAGIC = b"PAR1"
#: The file name endings of Arrow IPC files: ``datasets``' shards (``save_to_disk``'s
#: ``data-00000-of-00001.arrow``, its cache's ``<builder>-train.arrow``), pyarrow's
#: ``ipc.new_file``/``new_stream`` files, Feather v2 files (the IPC file format).
ARROW_SUFFIXES = (".arrow", ".arrows", ".feather", ".ipc")
#: The file name endings of tables of runs.
TABLE_SUFFIXES = (*PARQUET_SUFFIXES, *ARROW_SUFFIXES)
#: What an Arrow IPC file starts with; an IPC stream starts with its first message's
#: continuation marker (Arrow's format since 0.15).
_ARROW_MAGIC = b"ARROW1"
_STREAM_MARKER = b"\xff\xff\xff\xff"
#: What a Feather V1 file starts and ends with (V2 is the IPC file format, ``ARROW1``).
_FEATHER_V1_MAGIC = b"FEA1"
#: The first bytes of the files of Arrow's formats.
_ARROW_STARTS = (_ARROW_MAGIC, _STREAM_MARKER, _FEATHER_V1_MAGIC)
#: What ``Dataset.save_to_disk`` writes beside its shards: the state naming them, the
#: dataset's info; and what ``DatasetDict.save_to_disk`` writes beside a folder per split
#: (``datasets.config``'s ``DATASET_STATE_JSON_FILENAME``, ``DATASET_INFO_FILENAME``,
#: ``DATASETDICT_JSON_FILENAME``).
DATASET_STATE = "state.json"
DATASET_INFO = "dataset_info.json"
DATASET_DICT = "dataset_dict.json"
#: A ``state.json`` or ``dataset_dict.json`` larger than this is none ``datasets`` wrote (a
#: few hundred bytes): it is not read.
_SAVED_JSON_BYTES = 1024 * 1024

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
#: Rows converted to Python values at a time...
BATCH_ROWS = 1024
#: ...fewer when they hold more than this many bytes of the column (:func:`_batch_rows`).
BATCH_BYTES = 64 * 1024 * 1024
#: What a value of a cell holds once converted to Python values and read, however short it is
#: (each list, struct and field in it: a message of a role and a text is three): 300 bytes at
#: the peak of ``load(path, sample=1)`` of a cell of 200,000 messages ``{"role": "user",
#: "content": "hi"}``, a Parquet file of 1.8 KB.
VALUE_BYTES = 300
#: The values a row group's footer may count (its columns' leaves, nulls too) per byte stored.
#: Real tables hold 0.3 to 0.6 (3,000 runs of 2 to 40 messages, some of them tool calls, some
#: of a few words, by Snappy or Zstandard), the file above 390: past this, and past
#: :data:`VALUE_FLOOR`, a group is a compression bomb, its values never decoded (one row of them
#: is decoded whole, by Arrow, before it can be looked at).
MAX_VALUES_PER_BYTE = 8
#: The values a row group holds whatever its stored bytes: about 75 MB of the smallest values'
#: objects, as :data:`~turnfold.formats.compressed.LINE_FLOOR` is of lines.
VALUE_FLOOR = 250_000
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
    """A part of a table file: its rows from ``start`` up to ``end``."""

    start: int
    end: int


class Unread(NamedTuple):
    """Stands in for a cell of a row group that was not decoded (:func:`_unread_groups`)."""

    reason: str


def opened(path: str) -> pq.ParquetFile:
    """The Parquet file at ``path``; a ``ValueError`` naming it when it is none."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path}: not a readable Parquet file ({exc})") from exc


class _Arrow:
    """The Arrow IPC file or stream at ``path``, memory-mapped (a ``ValueError`` naming it
    when it is neither): its record batches are views of the mapped file, read one at a time,
    as ``datasets`` reads its shards (``datasets/table.py``,
    ``_memory_mapped_record_batch_reader_from_file``), so the file is never held whole; a
    stream's from its start, a file's by its footer's index."""

    def __init__(self, path: str) -> None:
        import pyarrow as pa

        try:
            self.source = pa.memory_map(path)
        except (pa.ArrowException, OSError) as exc:
            raise ValueError(f"{path}: not a readable Arrow file ({exc})") from exc
        self.stream = False
        self.v1: pa.Table | None = None  # a Feather V1 file's one batch
        try:
            if self.source.read(len(_FEATHER_V1_MAGIC)) == _FEATHER_V1_MAGIC:
                self.v1 = _feather_v1(self.source)
                self.schema: pa.Schema = self.v1.schema
                return
            self.source.seek(0)
            try:
                self.reader: Any = pa.ipc.open_file(self.source)
            except pa.ArrowInvalid:  # no file's magic: ``datasets`` writes the stream format
                self.source.seek(0)
                self.reader = pa.ipc.open_stream(self.source)
                self.stream = True
        except (pa.ArrowException, OSError, ValueError) as exc:
            self.source.close()
            raise ValueError(
                f"{path}: not a readable Arrow file, neither Arrow's IPC file nor stream "
                f"format nor Feather V1 ({exc})"
            ) from exc
        self.schema = self.reader.schema

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The file's record batches, in order (once: a stream is read on as they are)."""
        if self.v1 is not None:
            yield from self.v1.combine_chunks().to_batches()
        elif self.stream:
            yield from self.reader
        else:
            for index in range(self.reader.num_record_batches):
                yield self.reader.get_batch(index)

    def close(self) -> None:
        # The batches taken stay readable: each holds the mapping it is a view of.
        self.source.close()


#: Feather V1's metadata (``cpp/src/arrow/ipc/feather.fbs``), as the places of the fields
#: its checks read: a ``CTable``'s ``num_rows``, ``columns`` and ``version``; a ``Column``'s
#: ``values``, the type of its ``metadata`` and that metadata; a ``PrimitiveArray``'s
#: ``type``, ``offset``, ``length``, ``null_count``, ``total_bytes``; a category's ``levels``.
_DESCRIPTION, _NUM_ROWS, _COLUMNS, _VERSION, _TABLE_METADATA = 0, 1, 2, 3, 4
_NAME, _VALUES, _METADATA_TYPE, _METADATA, _USER_METADATA = 0, 1, 2, 3, 4
_TYPE, _OFFSET, _LENGTH, _NULL_COUNT, _TOTAL_BYTES = 0, 2, 3, 4, 5
_CATEGORY, _TIMESTAMP, _LEVELS, _TIMEZONE = 1, 2, 0, 1
#: The bytes of a value of each of Feather V1's types (``Type``: BOOL is bits, UTF8 and
#: BINARY, LARGE_UTF8 and LARGE_BINARY are their offsets').
_V1_WIDTHS = {0: 0, 1: 1, 2: 2, 3: 4, 4: 8, 5: 1, 6: 2, 7: 4, 8: 8, 9: 4, 10: 8, 11: 4, 12: 4,
              14: 8, 15: 4, 16: 8, 17: 8, 18: 8}  # fmt: skip
_V1_BINARY = frozenset({11, 12, 17, 18})


def _feather_v1(source: pa.MemoryMappedFile) -> pa.Table:
    """The Feather V1 file mapped by ``source``, as one record batch of views of the map; a
    ``ValueError`` when its metadata places an array outside the file, or does not fit the
    array's length (pyarrow's reader would read past the map); its columns as pyarrow
    checks them."""
    import pyarrow as pa
    import pyarrow.feather as feather

    size = source.size()
    source.seek(size - 8)
    length = int.from_bytes(source.read(4), "little")
    if source.read(4) != _FEATHER_V1_MAGIC or not 0 < length <= size - 16:
        raise ValueError("no Feather V1 footer")
    end = size - 8 - length  # where the data ends and the metadata starts
    source.seek(end)
    meta = _Flat(source.read(length))
    table = meta.table(meta.u32(0))
    rows, version = meta.field(table, _NUM_ROWS, "<q"), meta.field(table, _VERSION, "<i")
    meta.text(table, _DESCRIPTION)
    meta.text(table, _TABLE_METADATA)
    for column in meta.tables(table, _COLUMNS):
        meta.text(column, _NAME)
        meta.text(column, _USER_METADATA)
        _check_v1_array(meta, meta.child(column, _VALUES), rows, end, version)
        kind = meta.field(column, _METADATA_TYPE, "<B")
        if kind == _CATEGORY:
            levels = meta.child(meta.child(column, _METADATA), _LEVELS)
            _check_v1_array(meta, levels, None, end, version)
        elif kind == _TIMESTAMP:
            meta.text(meta.child(column, _METADATA), _TIMEZONE)
        elif kind:
            meta.child(column, _METADATA)
    with warnings.catch_warnings():  # pyarrow's: V1 is deprecated, for its writers to hear
        warnings.simplefilter("ignore", DeprecationWarning)
        # pyarrow's own file (the map) is read as it is, as a path would be mapped.
        read = feather.read_table(source, memory_map=True, use_threads=False)  # type: ignore[arg-type]
    read.validate()
    if read.num_rows != rows:
        raise pa.ArrowInvalid(f"{read.num_rows} rows, where its metadata says {rows}")
    return read


def _check_v1_array(meta: _Flat, array: int, rows: int | None, end: int, version: int) -> None:
    """That a Feather V1 ``PrimitiveArray`` lies within the file's data (before ``end``) and
    holds its ``length`` values (``rows`` of them, for a column), as its reader cuts its bytes:
    the nulls' bitmap, a text's offsets, the values, each padded to 8 bytes from version 2."""
    kind = meta.field(array, _TYPE, "<b")
    count, nulls = meta.field(array, _LENGTH, "<q"), meta.field(array, _NULL_COUNT, "<q")
    at, held = meta.field(array, _OFFSET, "<q"), meta.field(array, _TOTAL_BYTES, "<q")
    if kind not in _V1_WIDTHS or count < 0 or (rows is not None and count != rows):
        raise ValueError(f"an array of type {kind} and {count} values")
    if not 0 <= nulls <= count or at < 0 or held < 0 or at + held > end:
        raise ValueError(f"an array of {held} bytes at {at}, past the file's {end}")

    def padded(n: int) -> int:
        return -(-n // 8) * 8 if version >= 2 else n

    width = _V1_WIDTHS[kind]
    needed = padded(-(-count // 8)) if nulls else 0
    if kind in _V1_BINARY:
        needed += padded((count + 1) * width)
    else:
        needed += -(-count // 8) if width == 0 else count * width
    if needed > held:
        raise ValueError(f"an array of {count} values in {held} bytes")


class _Flat:
    """A FlatBuffers buffer (Feather V1's metadata), read field by field; a ``ValueError``
    for any place outside it (its fields are the file's, not trusted)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def _at(self, position: int, fmt: str) -> Any:
        if position < 0 or position + struct.calcsize(fmt) > len(self.data):
            raise ValueError("metadata out of bounds")
        return struct.unpack_from(fmt, self.data, position)[0]

    def u32(self, position: int) -> int:
        value: int = self._at(position, "<I")
        return value

    def table(self, position: int) -> int:
        """The table at ``position``: its vtable (its own size, the table's, its fields'
        places) within the buffer, and the table within it."""
        vtable = position - self._at(position, "<i")
        size = self._at(vtable, "<H")
        if size < 4 or size % 2:
            raise ValueError("metadata out of bounds")
        self._at(vtable + size - 2, "<H")
        self._at(position + max(self._at(vtable + 2, "<H"), 4) - 1, "<B")
        return position

    def _slot(self, table: int, field: int) -> int | None:
        vtable = table - self._at(table, "<i")
        slot = 4 + 2 * field
        if slot >= self._at(vtable, "<H"):
            return None
        offset: int = self._at(vtable + slot, "<H")
        return table + offset if offset else None

    def field(self, table: int, field: int, fmt: str) -> int:
        """A scalar field, its default (0) when absent."""
        slot = self._slot(table, field)
        value: int = 0 if slot is None else self._at(slot, fmt)
        return value

    def child(self, table: int, field: int) -> int:
        """The table a field refers to."""
        slot = self._slot(table, field)
        if slot is None:
            raise ValueError(f"field {field} absent")
        return self.table(slot + self.u32(slot))

    def text(self, table: int, field: int) -> None:
        """That a string field, when present, lies within the buffer."""
        slot = self._slot(table, field)
        if slot is not None:
            string = slot + self.u32(slot)
            self._at(string + 4 + self.u32(string), "<B")  # its terminating zero

    def tables(self, table: int, field: int) -> list[int]:
        """The tables of a vector field."""
        slot = self._slot(table, field)
        if slot is None:
            return []
        vector = slot + self.u32(slot)
        count = self.u32(vector)
        if count > len(self.data) // 4:
            raise ValueError("metadata out of bounds")
        places = [vector + 4 + 4 * i for i in range(count)]
        return [self.table(place + self.u32(place)) for place in places]


def is_arrow(path: str) -> bool:
    """Whether the table file at ``path`` is Arrow's (IPC file or stream), not Parquet: by its
    name, or its first bytes."""
    if path.endswith(ARROW_SUFFIXES):
        return True
    if path.endswith(PARQUET_SUFFIXES):
        return False
    return _first_bytes(Path(path)).startswith(_ARROW_STARTS)


def _first_bytes(path: Path) -> bytes:
    """The first bytes of the regular file at ``path`` (none of a pipe's: they are not to be
    taken, nor of what cannot be read)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return b""
        with path.open("rb") as stream:
            return stream.read(len(_ARROW_MAGIC))
    except OSError:
        return b""


def schema_of(path: str) -> pa.Schema:
    """The Arrow schema of the table file at ``path`` (a Parquet file's footer alone is read,
    an Arrow file's first message)."""
    if is_arrow(path):
        arrow = _Arrow(path)
        arrow.close()
        return arrow.schema
    file = opened(path)
    try:
        return file.schema_arrow
    finally:
        file.close()


def _arrow_sizes(path: str, column: str) -> Iterator[tuple[int, int]]:
    """The rows of each record batch of the Arrow file at ``path``, with the bytes of its
    ``column`` (each of a virtual column's): the batches' buffers, which are not read."""
    file = _Arrow(path)
    try:
        read = read_columns(column, file.schema.names)
        for batch in file.batches():
            weight = sum(batch.column(name).get_total_buffer_size() for name in read)
            yield batch.num_rows, weight
    finally:
        file.close()


def _parquet_sizes(path: str, column: str) -> list[tuple[int, int]]:
    """The rows of each row group of the Parquet file at ``path``, with the uncompressed bytes
    of its ``column`` (each of a virtual column's), from its footer."""
    file = opened(path)
    meta, names = file.metadata, file.schema_arrow.names
    file.close()
    leaves = _leaves(meta, read_columns(column, names))
    return [(info.num_rows, _bytes_of(info, leaves))
            for info in map(meta.row_group, range(meta.num_row_groups))]  # fmt: skip


def _leaves(meta: pq.FileMetaData, read: list[str]) -> list[int]:
    """The leaf columns of a Parquet file's columns ``read`` (a struct's fields, a list's
    items), by their place in its footer."""
    prefixes = tuple(name + "." for name in read)
    return [i for i in range(meta.num_columns)
            if (meta.schema.column(i).path + ".").startswith(prefixes)]  # fmt: skip


def _bytes_of(info: pq.RowGroupMetaData, leaves: list[int], stored: bool = False) -> int:
    """The bytes of a row group's ``leaves`` (:func:`_leaves`), decoded, or as stored."""
    if stored:
        return sum(info.column(i).total_compressed_size for i in leaves)
    return sum(info.column(i).total_uncompressed_size for i in leaves)


def _values_of(info: pq.RowGroupMetaData, leaves: list[int]) -> int:
    """The values of a row group's ``leaves`` (:func:`_leaves`), nulls included."""
    return sum(info.column(i).num_values for i in leaves)


def _batch_rows(meta: pq.FileMetaData, groups: list[int], read: list[str]) -> int:
    """:data:`BATCH_ROWS`, or as many of the rows of ``groups`` as hold about
    :data:`BATCH_BYTES`: Arrow joins the rows of one group to the next in a batch, so eight
    rows of 200 MB (a 55 KB file) were decoded and converted at once, 4.5 GB (X-1)."""
    leaves = _leaves(meta, read)
    longest = max(
        (_bytes_of(info, leaves) // max(info.num_rows, 1) for info in map(meta.row_group, groups)),
        default=0,
    )  # fmt: skip
    return max(1, min(BATCH_ROWS, BATCH_BYTES // max(longest, 1)))


def _unread_groups(
    meta: pq.FileMetaData, read: list[str], what: str = "its messages"
) -> dict[int, str]:
    """The row groups of a Parquet file that are not decoded, each with why: Arrow decodes a
    group's column whole before any of it can be looked at, so a group is weighed by its
    footer first. One row over :func:`~turnfold.formats.source.record_limit` is skipped as a
    JSON line is; a group over it that inflates past
    :data:`~turnfold.formats.compressed.MAX_INFLATION` times its stored bytes (text compresses
    5 to 25 times) is a compression bomb, whose one huge cell a few kilobytes of file can hide
    among small ones (X-1). So is a group of more than :data:`MAX_VALUES_PER_BYTE` values a
    stored byte (and :data:`VALUE_FLOOR`): tiny rows, or tiny messages, each some hundreds of
    bytes of objects however few bytes its text, and fewer still stored (a dictionary's index)."""
    leaves, limit, found = _leaves(meta, read), record_limit(), {}
    for group in range(meta.num_row_groups):
        info = meta.row_group(group)
        size, stored = _bytes_of(info, leaves), _bytes_of(info, leaves, stored=True)
        values = _values_of(info, leaves)
        over = f"over the limit of {limit:,} bytes (TURNFOLD_MAX_RECORD_BYTES); not read"
        if values > max(VALUE_FLOOR, MAX_VALUES_PER_BYTE * stored):
            found[group] = (
                f"{what} in row group {group}: {values:,} values stored in {stored:,} bytes, "
                f"more than {MAX_VALUES_PER_BYTE} a byte, as a compression bomb's must not be; "
                "not read (to read them, read the file with pyarrow.parquet.read_table and "
                "scan the table)"
            )
            continue
        if size <= limit:
            continue
        if info.num_rows == 1:
            found[group] = f"{what} in row group {group}: {size:,} bytes, {over}"
        elif size > compressed.MAX_INFLATION * stored:
            found[group] = (
                f"{what} in row group {group}: {size:,} bytes decompressed from {stored:,}, "
                f"more than {compressed.MAX_INFLATION} times as many, and {over}, as a "
                "compression bomb's must not be"
            )
    return found


def _unread_columns(path: str, meta: pq.FileMetaData, names: list[str]) -> list[str]:
    """Those of a run's other columns (C-1) that are not read, each warned of: weighed as its
    messages are (:func:`_unread_groups`), since a 400 MB cell of one letter beside them (a 14
    KB file) was held whole in the table of runs."""
    unread = []
    for name in names:
        refused = _unread_groups(meta, [name], f"the column {name!r}")
        if refused:
            warn_at_caller(f"{path}: {next(iter(refused.values()))}")
            unread.append(name)
    return unread


def parts(path: str, column: str, share: int) -> list[tuple[Rows, int]] | None:
    """The file's rows as parts of about :data:`PART_BYTES` of ``column``, uncompressed, and
    at most :data:`PART_MOST_ROWS` rows: small row groups (record batches) together, a large
    one cut (:func:`_pieces`, :func:`_slices`); each with its work in bytes (a file's own size
    says little, its text compressing tenfold, and a short run's summary costs more than its
    bytes). None for one part."""
    if is_arrow(path):
        found = _gather(_arrow_sizes(path, column), _slices)
    else:
        found = _gather(_parquet_sizes(path, column), lambda r, w: _pieces(r, w, share))
    return found if len(found) > 1 else None


def _gather(
    groups: Iterable[tuple[int, int]], pieces: Callable[[int, int], int]
) -> list[tuple[Rows, int]]:
    """The parts of a file of ``groups`` (each its rows and their bytes), the small ones
    gathered, each cut into as many as ``pieces`` says."""
    found: list[tuple[Rows, int]] = []

    def part(start: int, end: int, weight: int) -> None:
        found.append((Rows(start, end), max(weight, (end - start) * ROW_WORK_BYTES)))

    start = row = size = 0  # the part being gathered starts at ``start``; ``size`` its bytes
    for rows, weight in groups:
        cut = pieces(rows, weight)
        if cut > 1:
            if row > start:
                part(start, row, size)  # the small groups before it
            cuts = [row + rows * k // cut for k in range(cut + 1)]
            for a, b in itertools.pairwise(cuts):
                part(a, b, weight // cut)
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
    return found


def _pieces(rows: int, weight: int, share: int) -> int:
    """How many parts a row group of ``rows`` rows and ``weight`` bytes is cut into: a large
    one into as many as there are workers (``share``; each decodes the group, in C++, and
    converts its own rows), one of many short rows into parts of :data:`PART_MOST_ROWS` rows
    while decoding it again stays cheap; never into parts of fewer than :data:`PART_ROWS`."""
    by_bytes = min(share, weight // PART_BYTES)
    by_rows = min(-(-rows // PART_MOST_ROWS), max(1, DECODED_AGAIN_BYTES // max(weight, 1)))
    return max(1, min(rows // PART_ROWS, max(by_bytes, by_rows)))


def _slices(rows: int, weight: int) -> int:
    """How many parts an Arrow record batch is cut into: parts of about :data:`PART_BYTES`
    and at most :data:`PART_MOST_ROWS` rows, as small batches are gathered (a part of a batch
    is a view of its rows, none decoded again); never of fewer than :data:`PART_ROWS`."""
    return max(1, min(rows // PART_ROWS, max(weight // PART_BYTES, -(-rows // PART_MOST_ROWS))))


def cells(path: str, column: str, part: Rows | None = None) -> Iterator[Any]:
    """The cells of ``column`` in the file's rows (of its part), as Python values, in order;
    read :data:`BATCH_ROWS` at a time, so a worker holds one batch of a row group, not the
    group (the rows of a part that starts inside a group are decoded from the group's start,
    and only its own converted)."""
    if is_arrow(path):
        yield from _arrow_cells(path, column, part)
        return
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
        unread = _unread_groups(meta, read)
        for refused, stretch in itertools.groupby(groups, key=unread.__contains__):
            if refused:  # each of its rows stands for itself, unread (X-2: none is dropped)
                for group in stretch:
                    rows = meta.row_group(group).num_rows
                    begin, stop = max(start - row, 0), min(end - row, rows)
                    yield from itertools.repeat(Unread(unread[group]), max(stop - begin, 0))
                    row += rows
                continue
            kept = list(stretch)
            size = _batch_rows(meta, kept, read)
            for batch in file.iter_batches(size, row_groups=kept, columns=read):
                begin, stop = max(start - row, 0), min(end - row, batch.num_rows)
                if begin < stop:
                    yield from _held_cells(batch.slice(begin, stop - begin))
                row += batch.num_rows
                if row >= end:
                    return
    finally:
        file.close()


def _arrow_cells(path: str, column: str, part: Rows | None) -> Iterator[Any]:
    """:func:`cells` of an Arrow file: the batches before the part are passed over unread (a
    batch is a view of the mapped file), the part's rows converted :data:`BATCH_ROWS` at a
    time."""
    file = _Arrow(path)
    try:
        start, end = (0, None) if part is None else part
        read = read_columns(column, file.schema.names)
        row = 0  # the first row of the batch
        for batch in file.batches():
            begin = max(start - row, 0)
            stop = batch.num_rows if end is None else min(end - row, batch.num_rows)
            if begin < stop:
                rows = batch.select(read)
                for at in range(begin, stop, BATCH_ROWS):
                    yield from _held_cells(
                        _checked(path, rows.slice(at, min(BATCH_ROWS, stop - at)))
                    )
            row += batch.num_rows
            if end is not None and row >= end:
                break
    finally:
        file.close()


def _held_cells(batch: pa.RecordBatch) -> Iterator[Any]:
    """:func:`batch_cells` of ``batch``, converted a few rows at a time so that no more than
    :func:`held_values` values are converted at once; a row of more stands for itself, unread
    (X-2: its error names it), as one over the record limit does. The values ``datasets``
    typed ``Json`` count as what their JSON holds once decoded (:func:`_within`)."""
    most = held_values()
    counts = _values(batch)
    places = json_places(batch.schema)
    for start, stop in _pages(counts, most):
        if counts[start] > most:  # a page of its own
            yield Unread(too_many_values(counts[start], most))
        else:
            yield from _within(batch.slice(start, stop - start), counts[start:stop], places, most)


def _pages(counts: list[int], most: int) -> Iterator[tuple[int, int]]:
    """The rows of ``counts`` values each, from ``start`` up to ``stop`` a page: as many as
    hold no more than ``most`` values together, at least one (a row of more is a page alone)."""
    start = held = 0
    for at, count in enumerate(counts):
        if held + count > most and at > start:
            yield start, at
            start, held = at, 0
        held += count
    if start < len(counts):
        yield start, len(counts)


def held_pages(table: pa.Table) -> Iterator[pa.RecordBatch]:
    """The rows of ``table``, in order, a page at a time, each page of as many rows as hold no
    more than :func:`held_values` values together (at most :data:`BATCH_ROWS`), at least one:
    what a caller that converts every row (``list(corpus)``) converts at once, as
    :func:`_held_cells` converts a table's messages."""
    most = held_values()
    for batch in table.to_batches(max_chunksize=BATCH_ROWS):
        for start, stop in _pages(_values(batch), most):
            yield batch.slice(start, stop - start)


def _within(
    batch: pa.RecordBatch, counts: list[int], places: dict[str, JsonPlaces], most: int
) -> list[Any]:
    """:func:`batch_cells` of ``batch`` (whose rows hold ``counts`` values to Arrow), a cell
    whose texts typed ``Json`` hold more than ``most`` values with its own an :class:`Unread`:
    Arrow counts such a text as one value, and a few kilobytes of them decode to millions."""
    cells = batch_cells(batch)
    if not places:
        return cells
    names = batch.schema.names
    for row, cell in enumerate(cells):
        texts: list[str] = []
        if len(names) == 1:
            _json_texts(cell, places.get(names[0], False), texts)
        else:
            for name, place in places.items():
                _json_texts(cell.get(name), place, texts)
        if texts and counts[row] - len(texts) + sum(map(_most_values, texts)) > most:
            count = counts[row] - len(texts) + sum(map(json_values, texts))
            if count > most:
                cells[row] = Unread(too_many_values(count, most))
    return cells


def _json_texts(value: Any, place: JsonPlaces, found: list[str]) -> None:
    """The :class:`JsonText` values of a cell (:func:`_marked` made them), at ``place``."""
    if value is None or place is False:
        return
    if place is True:
        if type(value) is JsonText:
            found.append(value)
    elif isinstance(place, list):
        for item in value:
            _json_texts(item, place[0], found)
    elif isinstance(place, dict) and isinstance(value, dict):
        for key, inner in place.items():
            _json_texts(value.get(key), inner, found)


def too_many_values(count: int, most: int) -> str:
    """Why a run's cell of ``count`` values (each list, struct and field in them, and in the
    JSON its text holds) is not read: more than ``most`` (:func:`held_values`)."""
    return (
        f"its messages hold {count:,} values (each list, struct and field in them), more than "
        f"the {most:,} a load converts at once ({VALUE_BYTES} bytes of objects each, in the part "
        "of this process's memory one load may take); not read (to read it, read its row with "
        "pyarrow and load its messages)"
    )


#: A JSON text's strings (group 1), and the marks outside them that begin a value: a comma,
#: an array, an object.
_JSON_TOKENS = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*")|[,\[{]')
_JSON_BYTES_TOKENS = re.compile(rb'("[^"\\]*(?:\\.[^"\\]*)*")|[,\[{]')


def _most_values(text: str | bytes) -> int:
    """The most values a JSON text can hold: each takes two characters but the last
    (``[0,0]``), so a text too short to pass a bound is not searched (:func:`json_values`)."""
    return (len(text) + 1) // 2


def json_values(text: str | bytes) -> int:
    """The values a JSON text holds once parsed, counted as :func:`_values` counts Arrow's:
    each object, array and item (a member's value; its key is not counted), found by its
    brackets and commas outside strings. The marks are counted as they are found, none kept:
    a substitution would build a piece per string, 20 MB for a text of 1 MB."""
    tokens = _JSON_BYTES_TOKENS if isinstance(text, bytes) else _JSON_TOKENS
    return sum(found.lastindex is None for found in tokens.finditer(text)) + 1  # type: ignore[arg-type]


def held_values() -> int:
    """The values of cells converted to Python values at once at most: the bytes one load may
    take of a compressed file (:func:`~turnfold.formats.compressed.held_limit`, a part of the
    memory the process may use), a value counted as :data:`VALUE_BYTES`. No real run comes near
    it: a machine of 8 GB converts 7 million at once, where a run of 1,000 messages of tool
    calls holds some 15,000 (a batch of :data:`BATCH_ROWS` such runs, 15 million, is converted
    in parts). Read once (:func:`forget_held_values` reads it again)."""
    return _held_values(compressed.memory_limit)


@functools.lru_cache(maxsize=1)
def _held_values(limit: Callable[[], int]) -> int:
    # Each batch read the cgroup's files again, though the limit does not change while a file
    # is read. Keyed by the function that reads it, so that a limit put in its place (a test's)
    # is read at once.
    return max(limit() // compressed.HELD_SHARE // VALUE_BYTES, 1)


def forget_held_values() -> None:
    """Read the memory limit again at the next :func:`held_values` (a container resized)."""
    _held_values.cache_clear()


def _values(batch: pa.RecordBatch) -> list[int]:
    """The values each row of ``batch`` holds (:func:`_held_cells`), counted by Arrow before any
    is converted."""
    import pyarrow as pa
    import pyarrow.compute as pc

    total: Any = pa.repeat(pa.scalar(0, pa.int64()), batch.num_rows)
    for column in batch.columns:
        total = pc.add(total, _item_values(column))
    counts: list[int] = total.to_pylist()
    return counts


def _item_values(array: Any) -> Any:
    """The values each item of ``array`` holds, as converting it to Python values makes them:
    itself, and each of its items' and fields'. A list view, a dictionary's index and a run of
    a run-end encoded array each convert to all they point at, however often it is pointed at
    (views may overlap: a few stored values, each converted in many rows)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if isinstance(array, pa.ExtensionArray):
        return _item_values(array.storage)
    if pa.types.is_dictionary(kind):
        return pc.fill_null(_item_values(array.dictionary).take(array.indices), 1)
    if pa.types.is_run_end_encoded(kind):
        runs = pa.RunEndEncodedArray.from_arrays(array.run_ends, _item_values(array.values))
        return pc.call_function("run_end_decode", [runs.slice(array.offset, len(array))])
    if pa.types.is_union(kind):
        return _union_values(array)
    if pa.types.is_struct(kind):
        total: Any = pa.repeat(pa.scalar(1, pa.int64()), len(array))
        for field in range(kind.num_fields):
            total = pc.add(total, _item_values(array.field(field)))
        return total
    if pa.types.is_list_view(kind) or pa.types.is_large_list_view(kind):
        items = array.values  # the whole child: a view's offsets point into it
        starts = pc.if_else(array.is_valid(), array.offsets.cast(pa.int64()), 0)
        ends = pc.add(starts, pc.if_else(array.is_valid(), array.sizes.cast(pa.int64()), 0))
    else:
        if pa.types.is_fixed_size_list(kind):
            items = array.flatten()
            offsets = pa.array(range(0, len(items) + 1, kind.list_size), pa.int64())
        elif pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_map(kind):
            offsets = pc.subtract(array.offsets.cast(pa.int64()), array.offsets[0].as_py())
            items = array.values.slice(array.offsets[0].as_py(), offsets[-1].as_py())
        else:
            return pa.repeat(pa.scalar(1, pa.int64()), len(array))
        starts, ends = offsets.slice(0, len(array)), offsets.slice(1)
    # The items' values summed between each list's bounds: a running total, taken at both.
    inner = pc.cumulative_sum(_item_values(items)) if len(items) else pa.array([], pa.int64())
    running = pa.concat_arrays([pa.array([0], pa.int64()), inner])
    return pc.add(pc.subtract(running.take(ends), running.take(starts)), 1)


def _union_values(array: Any) -> Any:
    """:func:`_item_values` of a union: each item converts to the value its child holds for
    it, a sparse union's child at the item's place, a dense union's at the item's offset."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if not len(array):
        return pa.array([], pa.int64())
    # From the buffers: pyarrow's ``type_codes`` and ``offsets`` of a slice start where the
    # buffers start, not where the slice does.
    buffers, at, count = array.buffers(), array.offset, len(array)
    codes = pa.Array.from_buffers(pa.int8(), count, [None, buffers[1]], offset=at)
    children = pc.index_in(codes, value_set=pa.array(kind.type_codes, pa.int8()))
    if kind.mode == "dense":
        places: Any = pa.Array.from_buffers(pa.int32(), count, [None, buffers[2]], offset=at)
    else:  # ``field`` slices a sparse union's children as the union is sliced
        places = pa.array(range(count), pa.int64())
    values = [_item_values(array.field(n)) for n in range(kind.num_fields)]
    starts = pa.array(itertools.accumulate((len(v) for v in values), initial=0), pa.int64())
    # Every child's counts in one array: an item's is at its child's start plus its place.
    every = pa.concat_arrays([v.cast(pa.int64()) for v in values])
    return every.take(pc.add(starts.take(children), places.cast(pa.int64())))


def cell(path: str, column: str, row: int) -> Any:
    """The cell of ``column`` in the file's row ``row`` (from 0): its row group (record batch)
    alone is read."""
    return next(cells(path, column, Rows(row, row + 1)))


def table_columns(path: str, names: list[str]) -> pa.Table:
    """The columns ``names`` of the table file at ``path``, whole (a run's other columns, its
    metadata, C-1): an Arrow file's as views of the mapped file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not is_arrow(path):
        parquet = opened(path)
        try:
            meta, fields = parquet.metadata, parquet.schema_arrow
        finally:
            parquet.close()
        unread = _unread_columns(path, meta, names)
        table = pq.read_table(path, columns=[name for name in names if name not in unread])
        for name in unread:  # a null in each of its rows, in its place
            field = fields.field(name)
            table = table.add_column(names.index(name), field, pa.nulls(meta.num_rows, field.type))
        return capped_columns(table, path)
    file = _Arrow(path)
    try:
        schema = pa.schema([file.schema.field(name) for name in names])
        batches = [_checked(path, batch.select(names)) for batch in file.batches()]
        return capped_columns(pa.Table.from_batches(batches, schema), path)
    finally:
        file.close()


def capped_columns(table: pa.Table, name: str, first: int = 0) -> pa.Table:
    """``table``, a run's other columns (its metadata, C-1) in the table ``name`` (a file, or
    :data:`IN_MEMORY`), with a row's cells left out (null) while they hold more values than a
    load converts at once (:func:`held_values`), the largest first: a scan keeps them in Arrow,
    but its rows, ``corpus[key]`` and ``load(path, sample=n)`` convert them. Each column left
    out of a row is warned of, with the table, the row and the limit; every other cell is kept.
    ``first``: the row of ``name`` that ``table`` starts at."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not table.num_columns or not table.num_rows:
        return table
    most = held_values()
    counts = {column: _column_values(table.column(column)) for column in table.column_names}
    total = functools.reduce(pc.add, counts.values())
    left_out: dict[str, dict[int, int]] = {}  # column → its rows left out, with their values
    over = pc.indices_nonzero(pc.greater(total, pa.scalar(most, pa.int64())))
    for row in cast("list[int]", over.to_pylist()):
        held = {column: values[row].as_py() for column, values in counts.items()}
        kept = sum(held.values())
        for column in sorted(held, key=held.__getitem__, reverse=True):
            if kept <= most:
                break
            left_out.setdefault(column, {})[row] = held[column]
            kept -= held[column]
    for column, rows in left_out.items():
        shown = [f"{first + row}" for row in sorted(rows)[:_SHOWN_ROWS]]
        more = len(rows) - len(shown)
        where = (f"row {shown[0]}" if len(rows) == 1 else
                 f"rows {', '.join(shown)}" + (f" and {more:,} more" if more else ""))  # fmt: skip
        warn_at_caller(
            f"{name}: the column {column!r} in {where} holds {max(rows.values()):,} values "
            "(each list, struct and field in it): with the row's other columns, more than the "
            f"{most:,} a load converts at once ({VALUE_BYTES} bytes of objects each, in the part "
            "of this process's memory one load may take); left out of the run's metadata (null "
            "in the table)"
        )
        # A null index takes a null: the cell left out, whatever the column's type.
        kept_rows = pa.array([None if row in rows else row for row in range(table.num_rows)],
                             pa.int64())  # fmt: skip
        at = table.column_names.index(column)
        table = table.set_column(at, table.field(at), table.column(at).take(kept_rows))
    return table


#: The rows a warning of cells left out names (:func:`capped_columns`).
_SHOWN_ROWS = 5


def _column_values(column: Any) -> Any:
    """:func:`_item_values` of each row of a (chunked) column, as one array."""
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        if not column.num_chunks:
            return pa.array([], pa.int64())
        return pa.concat_arrays([_item_values(chunk) for chunk in column.chunks])
    return _item_values(column)


def _checked(path: str, batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` of the Arrow file at ``path``, its values checked to lie within its buffers
    (Arrow checks a batch's buffers as it reads it, not the offsets in them, and a hostile
    file's would have its values read from past the map); a ``ValueError`` naming the file
    when they do not."""
    import pyarrow as pa

    try:
        batch.validate(full=True)
    except pa.ArrowInvalid as exc:
        raise ValueError(
            f"{path}: not a readable Arrow file, its values are broken ({exc})"
        ) from None
    return batch


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
    virtual column's as the rows of its columns, ``{"prompt": ..., "completion": ...}``; a
    column of messages held as a list per field (:func:`is_columnar`) as its messages; the
    values ``datasets`` typed ``Json`` as :class:`JsonText` (:func:`json_places`)."""
    columnar = [f.name for f in batch.schema if is_columnar(f.type)]
    places = json_places(batch.schema)
    if batch.num_columns == 1:
        cells = batch.column(0).to_pylist()
        place = places.get(batch.schema.names[0])
        if place is not None:
            cells = [_marked(cell, place) for cell in cells]
        return [Columnar.messages(cell) for cell in cells] if columnar else cells
    rows = batch.to_pylist()
    for row in rows if places else ():
        row.update((name, _marked(row[name], place)) for name, place in places.items())
    for row in rows if columnar else ():
        row.update((name, Columnar.messages(row[name])) for name in columnar)
    return rows


def table_cell(table: pa.Table, column: str, row: int) -> Any:
    """The cell of the messages ``column`` in ``table``'s row ``row``, as :func:`batch_cells`
    reads it, unless it holds more values than a load converts at once (:func:`_held_cells`)."""
    one = table.select(read_columns(column, table.schema.names)).slice(row, 1)
    return next(_held_cells(one.combine_chunks().to_batches()[0]))


#: The fields of a message (a chat message's, a ShareGPT turn's, a Responses item's): a
#: struct holding a list of one of them holds its messages a list per field.
_MESSAGE_FIELDS = frozenset({"role", "content", "from", "value", "type"})


def is_columnar(kind: pa.DataType) -> bool:
    """Whether a column of ``kind`` holds messages as a list per field: a struct of lists of
    message fields (``{"role": [...], "content": [...]}``), as ``datasets`` stores a
    ``Sequence`` of a dict feature (``Sequence({"role": Value("string"), ...})``, a dict of
    ``List`` since ``datasets`` 4), in place of a list of structs."""
    import pyarrow as pa

    if not pa.types.is_struct(kind) or not kind.num_fields:
        return False
    fields = [kind.field(i) for i in range(kind.num_fields)]
    lists = all(pa.types.is_list(f.type) or pa.types.is_large_list(f.type) for f in fields)
    return lists and any(f.name in _MESSAGE_FIELDS for f in fields)


class Columnar(list):  # type: ignore[type-arg]
    """The messages of a cell held a list per field (:func:`is_columnar`), zipped; ``said``
    what a warning says of lists of unequal lengths (the messages then as many as the
    longest, each lacking the fields whose lists are shorter), None when they are equal."""

    said: str | None = None

    @classmethod
    def messages(cls, cell: Any) -> Any:
        """The messages of ``cell`` (``{"role": [...], "content": [...]}``); a null one as
        it is (said so when read, as any null cell)."""
        if cell is None:
            return None
        lists = {name: values for name, values in cell.items() if values is not None}
        lengths = {name: len(values) for name, values in lists.items()}
        count = max(lengths.values(), default=0)
        found = cls({name: values[i] for name, values in lists.items() if i < lengths[name]}
                    for i in range(count))  # fmt: skip
        if len(set(lengths.values())) > 1:
            held = ", ".join(f"{n} {name!r}" for name, n in lengths.items())
            found.said = (f"its messages are a list per field of unequal lengths ({held}): "
                          f"read as {count}, each holding the fields it has")  # fmt: skip
        return found


# --- the columns ``datasets`` types ``Json`` ---------------------------------------------------

#: The Arrow type ``datasets`` stores a ``Json`` feature as (``datasets.Json.pa_type``): Arrow's
#: canonical JSON extension type (``pa.json_()``), each value the text of one JSON value. Its
#: ``json`` loader types so a field whose values differ in kind or keys from row to row (a
#: run's messages, one with ``tool_calls`` and one without: ``List(Json())``; a ``content``
#: that is text in one message and parts in another; a call's ``arguments``), and a Parquet
#: file it writes keeps the type (its ``JSON`` logical type, and the schema's metadata).
JSON_EXTENSION = "arrow.json"
#: Where a pyarrow that does not know an extension type names it, its column read as its
#: storage (text).
_EXTENSION_NAME = b"ARROW:extension:name"
#: The schema metadata ``datasets`` keeps a dataset's features in, Arrow shard and Parquet
#: file alike: ``{"info": {"features": {"messages": {"_type": "List", "feature":
#: {"_type": "Json"}}}}}`` (``datasets.features.Features.to_dict``), as ``dataset_info.json``
#: holds them beside a saved dataset's shards.
_HF_METADATA = b"huggingface"
#: The features of a list (``List``, ``LargeList``, and ``Sequence`` before ``datasets`` 4).
_LIST_FEATURES = frozenset({"List", "LargeList", "Sequence"})

#: Where a column's ``Json`` values are: True, the value itself; ``[places]``, in each item of
#: a list; ``{field: places}``, in those fields of a struct.
JsonPlaces: TypeAlias = "bool | list[JsonPlaces] | dict[str, JsonPlaces]"
#: The kind (:func:`column_kinds`) of a column whose every value is typed ``Json``.
JSON_KIND = "json"


class JsonText(str):
    """A value ``datasets`` typed ``Json``: the text of one JSON value, decoded as the run is
    read (:func:`read_messages`, in the worker that reads it), as ``datasets`` decodes it.
    Text of any other column is never guessed to be JSON."""

    __slots__ = ()


def json_places(schema: pa.Schema) -> dict[str, JsonPlaces]:
    """Where the values of each column of ``schema`` are that ``datasets`` typed ``Json``: by
    their Arrow type (:data:`JSON_EXTENSION`), or where their type is text by the features the
    schema's metadata holds (:data:`_HF_METADATA`), as ``datasets`` reads them back; the
    columns that hold none are left out."""
    features = _features(schema.metadata)
    found: dict[str, JsonPlaces] = {}
    for field in schema:
        place = _json_place(field, features.get(field.name))
        if place is not None:
            found[field.name] = place
    return found


def _features(metadata: Mapping[bytes, bytes] | None) -> dict[str, Any]:
    """The features of a ``datasets`` dataset, by column, that a schema's metadata holds; none
    where it holds none, or more than a saved dataset's own JSON would (it is read, not
    trusted)."""
    raw = (metadata or {}).get(_HF_METADATA)
    if raw is None or len(raw) > _SAVED_JSON_BYTES:
        return {}
    try:
        held = codec.loads(raw)
    except ValueError:
        return {}
    info = held.get("info") if isinstance(held, dict) else None
    features = info.get("features") if isinstance(info, dict) else None
    return features if isinstance(features, dict) else {}


def _json_place(field: pa.Field[Any], feature: Any) -> JsonPlaces | None:
    """Where the ``Json`` values of a column (or of a field of one) are, by its Arrow type and
    its ``datasets`` feature (:func:`json_places`); None for none."""
    import pyarrow as pa

    kind = field.type
    if getattr(kind, "extension_name", None) == JSON_EXTENSION:
        return True
    text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    named = (field.metadata or {}).get(_EXTENSION_NAME) == JSON_EXTENSION.encode()
    if text and (named or _feature_type(feature) == "Json"):
        return True
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        inner = _json_place(kind.value_field, _item_feature(feature))
        return None if inner is None else [inner]
    if pa.types.is_struct(kind):
        fields: dict[str, JsonPlaces] = {}
        for child in (kind.field(i) for i in range(kind.num_fields)):
            place = _json_place(child, _field_feature(feature, child.name))
            if place is not None:
                fields[child.name] = place
        return fields or None
    return None


def _feature_type(feature: Any) -> Any:
    """A ``datasets`` feature's ``_type`` (``"Json"``, ``"List"``, ``"Value"``...); None for a
    dict of features (a struct) and for what is no feature."""
    return feature.get("_type") if isinstance(feature, dict) else None


def _item_feature(feature: Any) -> Any:
    """The feature of the items of a list feature (``[feature]`` is its short form)."""
    if isinstance(feature, list) and len(feature) == 1:
        return feature[0]
    return feature.get("feature") if _feature_type(feature) in _LIST_FEATURES else None


def _field_feature(feature: Any, name: str) -> Any:
    """The feature of the field ``name`` of a struct: a dict of features' own, or, for a
    ``Sequence`` of a dict (stored as a struct of lists, :func:`is_columnar`), a list of its
    field's."""
    if isinstance(feature, dict) and "_type" not in feature:
        return feature.get(name)
    inner = _item_feature(feature)
    if _feature_type(feature) == "Sequence" and isinstance(inner, dict) and "_type" not in inner:
        return {"_type": "Sequence", "feature": inner.get(name)}
    return None


def _marked(value: Any, place: JsonPlaces) -> Any:
    """A cell (or a part of one) converted to Python values, each of its texts ``datasets``
    typed ``Json`` (at ``place``) a :class:`JsonText`."""
    if value is None:
        return None
    if place is True:
        return JsonText(value) if isinstance(value, str) else value
    if isinstance(place, list):
        return [_marked(item, place[0]) for item in value]
    if isinstance(place, dict) and isinstance(value, dict):
        return {k: _marked(v, place[k]) if k in place else v for k, v in value.items()}
    return value


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
        if all(_fits(types.get(name), kinds) for name, kinds in needed.items()):
            return JOIN.join([*needed, *(name for name in taken if name in names)])
    return None


def _holds(
    columns: list[str], ways: tuple[tuple[frozenset[str], ...], ...], types: dict[str, Any]
) -> bool:
    """Whether ``columns`` hold cells of the kinds one of ``ways`` takes."""
    return any(all(_fits(types.get(n), k) for n, k in zip(columns, kinds, strict=True))
               for kinds in ways)  # fmt: skip


def _fits(kind: Any, kinds: frozenset[str]) -> bool:
    """Whether a column of ``kind`` holds cells of one of ``kinds``: a column ``datasets``
    typed ``Json`` may hold any (it does so because its values differ in kind: a completion
    that is text in one row and messages in another)."""
    return kind in kinds or kind == JSON_KIND


def column_kinds(schema: pa.Schema) -> dict[str, Any]:
    """The kind of each column of an Arrow schema that holds lists, text or objects, as
    :func:`messages_column` takes them; :data:`JSON_KIND` for a column ``datasets`` typed
    ``Json`` (:func:`json_places`)."""
    import pyarrow as pa

    kinds: dict[str, Any] = {}
    whole = [name for name, place in json_places(schema).items() if place is True]
    for f in schema:
        if f.name in whole:
            kinds[f.name] = JSON_KIND
        elif pa.types.is_list(f.type) or pa.types.is_large_list(f.type):
            kinds[f.name] = "list"
        elif pa.types.is_string(f.type) or pa.types.is_large_string(f.type):
            kinds[f.name] = "text"
        elif is_columnar(f.type):
            kinds[f.name] = "list"
        elif pa.types.is_struct(f.type):
            kinds[f.name] = "object"  # one message (a preference row's reply)
    return kinds


def read_messages(cell: Any, format: str | None = None, agent: Any = None) -> Transcript:
    """The run a table's cell of messages holds, as ``load(messages, format)`` reads it: JSON
    text parsed, as are the values ``datasets`` typed ``Json`` (:class:`JsonText`), each up to
    the record limit; Arrow's null struct fields dropped (Arrow gives every struct in a column
    every field of the column's type, so a message without ``tool_calls`` comes back with
    ``tool_calls: None``, which loaders expect absent). An error names :data:`ROW`, whose file
    and place the caller knows (:func:`row_error`).

    The messages are copied as the nulls are dropped, so a cell of plain values only (Arrow's,
    or parsed text) is read as it is, with neither a second copy nor a search for a
    framework's objects (:func:`~turnfold.formats.read_record`); a cell holding other objects
    (a pandas cell of LangChain messages) is read by ``load``."""
    from turnfold.formats import load, read_record  # the package imports this module
    from turnfold.model import LoadWarning

    if _null(cell):
        raise TranscriptFormatError(ROW, [], None, "its messages are null")
    if isinstance(cell, Unread):
        raise TranscriptFormatError(ROW, [], None, cell.reason)
    if isinstance(cell, (str, bytes)):
        parsed = _parsed(cell)
        return _as_row(lambda: read_record(parsed, format, agent), parsed)
    if hasattr(cell, "tolist") and not isinstance(cell, (list, dict)):
        cell = cell.tolist()  # a numpy array out of pandas
    others: list[Any] = []
    said: list[str] = []
    messages = _drop_nulls(cell, others, said)
    if others:
        read = _as_row(lambda: load(messages, format=format, agent=agent), messages)
    else:
        read = _as_row(lambda: read_record(messages, format, agent), messages)
    held = cell.values() if type(cell) is dict else [cell]  # a virtual column's row: its cells
    said += [text for c in held if (text := getattr(c, "said", None))]
    join_warnings(read.warnings, [LoadWarning(reason=text) for text in said])
    return read


#: What the error of a run held in a table names, where :func:`read_messages` reads it; its
#: reader names its file (or the kind of object) and its row (:func:`row_error`).
ROW = "a table's row"
#: What names a table that is an object, not a file (a ``Dataset``, a ``pyarrow.Table``, a
#: DataFrame), in the error of one of its rows, as ``<object>`` names an object's run.
IN_MEMORY = "<table>"


def row_error(exc: Exception, name: str, row: int) -> Exception:
    """``exc``, the error of reading the run in row ``row`` (from 0, as a scan keys it
    ``#n``) of the table ``name`` (its file, or :data:`IN_MEMORY`), naming both (L-4):
    ``runs.parquet, row 3: not a transcript (...)``. Any other error as it is."""
    if not isinstance(exc, TranscriptFormatError):
        return exc
    return TranscriptFormatError(f"{name}, row {row}", exc.tried, None, exc.reason)


def _as_row(read: Callable[[], Transcript], messages: Any) -> Transcript:
    """``read()``, the run of a table's cell of ``messages``, its error naming :data:`ROW`, not
    the object it was read as (``<object>, line 1``): the line of a list of messages is the
    message's place in it."""
    try:
        return read()
    except TranscriptFormatError as exc:
        if exc.source == ROW:
            raise
        reason = exc.reason
        if isinstance(messages, list) and exc.line is not None:
            reason = f"its message {exc.line}: {reason}"
        raise TranscriptFormatError(ROW, exc.tried, None, reason) from None


def _parsed(cell: str | bytes) -> Any:
    """The value of a cell of JSON text, up to the record limit (as a line of JSON is)."""
    limit = record_limit()
    size = _text_bytes(cell, limit)
    if size > limit:
        raise TranscriptFormatError(
            ROW, [], None, f"its messages are {size:,} bytes of text, {_over(limit)}; not read"
        )
    most = held_values()  # what the parse makes: millions of values in a few megabytes
    if _most_values(cell) > most and (count := json_values(cell)) > most:
        raise TranscriptFormatError(ROW, [], None, too_many_values(count, most))
    try:
        return codec.loads(str(cell) if type(cell) is JsonText else cell)  # msgspec takes a str
    except ValueError:
        text = cell if isinstance(cell, str) else cell.decode(errors="replace")
        shown = text if len(text) <= 60 else text[:59] + "…"
        raise TranscriptFormatError(
            ROW, [], None, f"its messages are text that is no JSON: {shown!r}"
        ) from None


def _text_bytes(text: str | bytes, limit: int) -> int:
    """The bytes of ``text`` in UTF-8, counted exactly only where that can pass ``limit``."""
    if isinstance(text, bytes) or len(text) > limit or len(text) * 4 <= limit:
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def _over(limit: int) -> str:
    return f"over the limit of {limit:,} bytes (TURNFOLD_MAX_RECORD_BYTES)"


#: The values that are plain JSON as they are.
_ATOMS = frozenset({str, int, float, bool})


def _drop_nulls(value: Any, others: list[Any], said: list[str], listed: bool = False) -> Any:
    """``value`` with the null fields of its mappings dropped, copied, its :class:`JsonText`
    decoded (:func:`_decoded`; ``listed``: it is an item of a list); each value that is no
    plain JSON (a framework's object, a date) kept as it is, and listed in ``others``."""
    kind = type(value)
    if kind is dict:
        return {k: _drop_nulls(v, others, said) for k, v in value.items() if not _null(v)}
    if kind is list or kind is tuple:
        return [_drop_nulls(v, others, said, True) for v in value]
    if kind in _ATOMS or value is None:
        return value
    if kind is JsonText:
        return _decoded(value, said, listed)
    if isinstance(value, Mapping):
        return {k: _drop_nulls(v, others, said) for k, v in value.items() if not _null(v)}
    if isinstance(value, (list, tuple)):
        return [_drop_nulls(v, others, said, True) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return _drop_nulls(value.tolist(), others, said)
    others.append(value)
    return value


def _decoded(text: JsonText, said: list[str], listed: bool) -> Any:
    """The value a :class:`JsonText` holds, as ``datasets`` decodes it (its own nulls kept: they
    are the source's, not Arrow's). One over the record limit, or that is no JSON, is not
    decoded: an item of a list (a run's message) is a
    :class:`~turnfold.formats.errors.MalformedLine` its loader warns of, as it does of a line
    that is no JSON; any other is kept as its text, said in a warning (X-2)."""
    limit = record_limit()
    size = _text_bytes(text, limit)
    kept = str(text)  # msgspec decodes a str, not a subclass of one
    if size > limit:
        reason = f"a value typed Json of {size:,} bytes, {_over(limit)}; not decoded"
    else:
        try:
            return codec.loads(kept)
        except ValueError as exc:
            reason = f"a value typed Json that is no JSON ({exc})"
    if listed:
        return MalformedLine(reason[:500], text=kept[:KEPT_TEXT_CHARS])
    shown = kept if len(kept) <= 60 else kept[:59] + "…"
    said.append(f"{reason}: {shown!r}, kept as text")
    return kept


def _null(value: Any) -> bool:
    """Whether a field is null: None, or the NaN pandas puts in a row of a DataFrame made of
    records where the record lacks the column (an alpaca row without ``input``)."""
    return value is None or (type(value) is float and value != value)


# --- load() of a table file, or of a dataset ``datasets`` saved ---------------------------------


class Saved(NamedTuple):
    """What ``datasets`` saved in a folder with ``save_to_disk``."""

    #: A ``Dataset``'s shards, the files of its rows, in order (its state's ``_data_files``).
    shards: list[str]
    #: A ``DatasetDict``'s splits, each a folder of that name holding a ``Dataset``.
    splits: list[str]
    #: The files beside them that are the dataset's own, no runs (its state and info, the
    #: dict's list of splits): a scan neither reads them nor counts them as skipped.
    own: frozenset[str]


def saved_dataset(folder: Path, names: Collection[str]) -> Saved | None:
    """What ``datasets`` saved in ``folder``, told by the names of the files it holds
    (``names``): a ``Dataset`` (``state.json`` and ``dataset_info.json`` beside the shards the
    state names; ``Dataset.save_to_disk``) or a ``DatasetDict`` (``dataset_dict.json`` naming
    the folders of its splits; ``DatasetDict.save_to_disk``); None for any other folder, and
    for one whose state or list of splits is no JSON ``datasets`` writes, or names a file
    outside the folder (what they hold is read, not trusted)."""
    if DATASET_DICT in names:
        splits = _saved_names(folder / DATASET_DICT, "splits", lambda split: split)
        return None if splits is None else Saved([], splits, frozenset({DATASET_DICT}))
    if DATASET_STATE in names and DATASET_INFO in names:
        shards = _saved_names(folder / DATASET_STATE, "_data_files", _filename)
        own = frozenset({DATASET_STATE, DATASET_INFO})
        return None if shards is None else Saved(shards, [], own)
    return None


def _saved_names(path: Path, key: str, name: Callable[[Any], Any]) -> list[str] | None:
    """The names of files in ``path``'s folder its JSON lists under ``key`` (each entry's
    ``name``); None when it lists none such, or any that is no plain name of one."""
    try:
        if path.stat().st_size > _SAVED_JSON_BYTES:
            return None
    except OSError:
        return None
    listed = json_object_file(path).get(key)
    names = [name(entry) for entry in listed] if isinstance(listed, list) else []
    if not names or not all(isinstance(n, str) and _plain_name(n) for n in names):
        return None
    return list(dict.fromkeys(names))


def _filename(entry: Any) -> Any:
    """The file an entry of a state's ``_data_files`` names: ``{"filename": ...}``."""
    return entry.get("filename") if isinstance(entry, dict) else None


def _plain_name(name: str) -> bool:
    """Whether ``name`` names a file in its folder, not one elsewhere (``../x``, ``/x``)."""
    return name not in ("", ".", "..") and os.path.basename(name) == name and "/" not in name


def is_table(path: Path) -> bool:
    """Whether ``path`` is a table of runs: a Parquet or Arrow file (by its name, or its first
    bytes), or a folder ``datasets`` saved a dataset in (:func:`saved_dataset`)."""
    if path.is_dir():
        try:
            return saved_dataset(path, os.listdir(path)) is not None
        except OSError:
            # None here: ``load()`` asks the formats that read folders next, whose probes list
            # it too, and says it could not be read when none can tell (folder_format).
            return False
    if path.name.endswith(TABLE_SUFFIXES):
        return path.is_file()
    return _first_bytes(path).startswith((_MAGIC, *_ARROW_STARTS))


def row_count(path: str) -> int:
    """How many rows the table file at ``path`` holds: a Parquet file's footer says; an Arrow
    file's batches do (each a view of the mapped file, its rows not read)."""
    if is_arrow(path):
        arrow = _Arrow(path)
        try:
            return sum(batch.num_rows for batch in arrow.batches())
        finally:
            arrow.close()
    file = opened(path)
    try:
        count: int = file.metadata.num_rows
        return count
    finally:
        file.close()


def run_of(
    path: Path, format: str | None, sample: Any, epoch: int | None, agent: Any = None
) -> Transcript:
    """The run in row ``sample`` (from 0, as ``scan`` keys it ``path#n``) of a table file of
    trajectories, or of a dataset ``datasets`` saved in a folder (its rows, shard after shard,
    as ``Dataset.load_from_disk(path)[n]`` has them), as ``load(messages)`` reads its
    messages (given ``agent``, as ``load(messages, agent=agent)`` does); a table of one row
    needs no ``sample``, as one in memory does not; one of several names no run, nor does a
    ``DatasetDict``'s folder."""
    name = str(path)
    saved = _saved_in(path) if path.is_dir() else None
    if saved is not None and saved.splits:
        raise TranscriptFormatError(
            name, [], None,
            f"a DatasetDict saved by datasets, a dataset per split ({', '.join(saved.splits)}): "
            "turnfold.scan() reads every split's runs; turnfold.load(path / split, sample=n) "
            "reads the n-th of one, from 0",
        )  # fmt: skip
    files = [str(path / shard) for shard in saved.shards] if saved is not None else [name]
    if sample is None and epoch is None and sum(row_count(file) for file in files) == 1:
        sample = 0  # its one run: load(table) of one row reads it too
    place = run_place(sample)
    if sample is None or place is None or epoch is not None:
        what = "a dataset saved by datasets (each row of its shards holds a run)"
        if saved is None:
            kind = "an Arrow" if is_arrow(name) else "a Parquet"
            what = f"{kind} file of runs (each row holds one)"
        reason = (
            f"{what}: turnfold.scan() reads each as a row; turnfold.load(path, sample=n) reads "
            "the n-th, from 0"
        )
        if sample is not None:
            reason += f"; not sample={sample!r}" + (f", epoch={epoch!r}" if epoch else "")
        raise TranscriptFormatError(name, [], None, reason)
    schema = schema_of(files[0])
    column = messages_column(list(schema.names), None, column_kinds(schema))
    row, count = place, 0
    for file in files:
        rows = row_count(file)
        count += rows
        if row < rows:
            break
        row -= rows
    else:
        raise no_such_run(name, count, place)
    return read_row(
        name, place, format, lambda: cell(file, column, row), lambda: cell(files[0], column, 0),
        lambda: other_cells(file, column, row), agent,
    )  # fmt: skip


def _saved_in(folder: Path) -> Saved | None:
    """:func:`saved_dataset` of a folder ``load()`` found a dataset in, listed again: one that
    cannot be listed now (its permissions changed since) is an error naming it, as a file that
    cannot be read is, never a bare one from the listing."""
    try:
        names = os.listdir(folder)
    except OSError as error:
        raise not_listed_error(
            folder, folder, error, "the dataset saved in it cannot be read"
        ) from None
    return saved_dataset(folder, names)


def read_row(
    name: str,
    place: int,
    format: str | None,
    held: Callable[[], Any],
    first: Callable[[], Any],
    others: Callable[[], Mapping[str, Any]],
    agent: Any = None,
) -> Transcript:
    """The run in row ``place`` (from 0) of the table ``name`` (a file, or :data:`IN_MEMORY`),
    as a scan reads it: its cell (``held()``) read in the dataset's format, its first row's
    (``first()``, read only for a later row), unless ``format`` names one; an error naming
    the table and the row (:func:`row_error`); the row's other columns (``others()``) as its
    metadata (C-1), as ``corpus[key]`` keeps them. ``agent`` is given to the row's format as
    ``load(messages, agent=agent)`` gives it; one whose runs say themselves what ran refuses
    it, naming the table and the row."""
    from turnfold.formats import AgentRefused  # the package imports this module

    guess = format_of_first(first()) if place and format is None else UNKNOWN
    read = OneFormat(lambda cell, format: read_messages(cell, format, agent), format, guess)
    try:
        transcript = read(held())
    except TranscriptFormatError as exc:
        raise row_error(exc, name, place) from None
    except AgentRefused as exc:
        raise exc.of(f"{name}, row {place}") from None
    held_beside = {key: value for key, value in others().items() if value is not None}
    keep_wrapper_keys(transcript, held_beside)
    return transcript


def other_cells(path: str, column: str, row: int) -> dict[str, Any]:
    """The file's row ``row`` (from 0) less its messages ``column``: the run's other columns,
    its metadata (C-1), as ``scan`` keeps them beside its row. Only that row's group (record
    batch) is read."""
    import pyarrow as pa

    if is_arrow(path):
        arrow = _Arrow(path)
        try:
            others = _others(column, arrow.schema.names)
            at = 0
            for batch in arrow.batches() if others else ():
                if row < at + batch.num_rows:
                    one = _checked(path, batch.select(others).slice(row - at, 1))
                    kept = capped_columns(pa.Table.from_batches([one]), path, row)
                    found: dict[str, Any] = kept.to_pylist()[0]
                    return found
                at += batch.num_rows
            return {}
        finally:
            arrow.close()
    file = opened(path)
    try:
        others = _others(column, file.schema_arrow.names)
        unread = _unread_columns(path, file.metadata, others)
        others = [name for name in others if name not in unread]
        at = 0
        for group in range(file.metadata.num_row_groups if others else 0):
            rows = file.metadata.row_group(group).num_rows
            if row < at + rows:
                its = file.read_row_group(group, columns=others).slice(row - at, 1)
                values: dict[str, Any] = capped_columns(its, path, row).to_pylist()[0]
                return values
            at += rows
        return {}
    finally:
        file.close()


def _others(column: str, names: list[str]) -> list[str]:
    """The columns of a table of ``names`` beside its messages ``column``."""
    read = read_columns(column, names)
    return [name for name in names if name not in read]


def first_format(path: str, column: str) -> str | None:
    """The format of the first run of a table file of trajectories, as ``load(messages)``
    reads it: the dataset's format (:class:`~turnfold.formats.wrappers.OneFormat`); None when
    that run cannot be read."""
    return format_of_first(cell(path, column, 0))


def format_of_first(first: Any) -> str | None:
    """The format of the run in a table's first cell, ``first``, as ``load(messages)`` reads
    it: the dataset's format (:class:`~turnfold.formats.wrappers.OneFormat`); None when that
    run cannot be read."""
    read = OneFormat(read_messages)
    read.learn(first)
    return read.found


# --- a table of runs in memory: a DataFrame, a pyarrow Table, a Dataset ------------------------

#: The rows of a DataFrame whose cells tell each column's kind: a column empty in its first
#: row (a dataset's ``images`` where only some rows have any) is told by a later one.
KIND_ROWS = 100
#: Rows of a table in memory converted to Python values at a time.
TABLE_BATCH = 1024


class TableRuns:
    """The runs of a table in memory, a row each (spec C-1), as
    :func:`~turnfold.formats.source.table_of_runs` gives it: a pandas DataFrame, read from
    its cells; a pyarrow Table (or record batch), a Polars DataFrame or a Hugging Face
    ``Dataset`` (formatted as Arrow), read from a slice of its rows in Arrow, as a file's
    record batch is (:func:`batch_cells`). Its messages column is chosen as a file's is
    (:func:`messages_column`), from the columns' kinds. ``scan`` reads every row's cell
    (:meth:`cells`), ``corpus[key]`` and ``load(table, sample=n)`` one (:meth:`cell`): its
    slice alone is converted to Python values, never the table. A DataFrame's columns of
    Arrow's types (pandas' ``ArrowDtype``) are read in Arrow too, whatever its other columns
    hold: their kinds by their types, their cells as a table's are."""

    def __init__(self, table: Any, messages: str | None = None) -> None:
        from turnfold.formats.source import is_arrow_table, is_dataframe

        self.table = table
        self.frame = table if is_dataframe(table) else None
        typed = _arrow_typed(self.frame) if self.frame is not None else {}
        if self.frame is not None and typed and len(typed) == len(self.frame.columns):
            import pyarrow as pa

            # Its columns are all Arrow's: read as a pyarrow Table of the same arrays.
            self.table = pa.Table.from_pandas(self.frame, preserve_index=False)
            self.frame = None
        if self.frame is not None:
            names = [str(c) for c in self.frame.columns]
            first = self.frame.head(KIND_ROWS)
            # An Arrow column's kind is its type's: telling it by its first cells converted
            # them, however many values they hold.
            kinds = {n: _column_kind(first[n]) for n in names if n not in typed}
            if typed:
                import pyarrow as pa

                kinds.update(column_kinds(pa.schema([(n, c.type) for n, c in typed.items()])))
            self.count: int = len(self.frame)
        else:
            if is_arrow_table(table) and not hasattr(table, "to_batches"):  # a record batch
                import pyarrow as pa

                self.table = pa.Table.from_batches([table])
            schema = self.rows(0, 0).schema
            names, kinds = list(schema.names), column_kinds(schema)
            self.count = len(self.table)
        self.column = messages_column(names, messages, kinds)
        self.read = read_columns(self.column, names)
        self.others = [name for name in names if name not in self.read]
        #: The DataFrame's columns of messages of Arrow's types, as Arrow's arrays.
        self.arrow: dict[str, pa.ChunkedArray[Any]] = {n: typed[n] for n in self.read if n in typed}

    def __len__(self) -> int:
        return self.count

    def rows(self, start: int, stop: int) -> pa.Table:
        """The rows from ``start`` up to ``stop`` of a table read in Arrow: a view of a
        pyarrow Table's, a Dataset's as its Arrow formatting takes them (in the order and
        selection of its rows), a Polars frame's converted."""
        table = self.table
        module = type(table).__module__
        if module.startswith("pyarrow"):
            sliced: pa.Table = table.slice(start, stop - start)
            return sliced
        if module.startswith("polars"):
            converted: pa.Table = table.slice(start, stop - start).to_arrow()
            return converted
        taken: pa.Table = table[start:stop]  # a Dataset, with_format("arrow")
        return taken

    def cells(self) -> Iterator[Any]:
        """Every row's cell of messages, in order, as :meth:`cell` reads one."""
        frame = self.frame
        if frame is not None:
            if self.arrow:
                for start in range(0, self.count, TABLE_BATCH):
                    yield from self._frame_cells(start, min(start + TABLE_BATCH, self.count))
            elif len(self.read) == 1:
                yield from frame[self.column].tolist()
            else:
                yield from frame[self.read].to_dict("records")
            return
        for start in range(0, self.count, TABLE_BATCH):
            part = self.rows(start, min(start + TABLE_BATCH, self.count)).select(self.read)
            for batch in part.to_batches():
                yield from _held_cells(batch)

    def cell(self, row: int) -> Any:
        """The cell of messages of row ``row`` (from 0): a DataFrame's as it holds it, a
        virtual column's as the row of its columns; an Arrow table's as :func:`batch_cells`
        reads it."""
        frame = self.frame
        if frame is not None:
            if self.arrow:
                return next(self._frame_cells(row, row + 1))
            if len(self.read) == 1:
                return frame[self.column].iloc[row]
            return {name: frame[name].iloc[row] for name in self.read}
        return table_cell(self.rows(row, row + 1), self.column, 0)

    def _frame_cells(self, start: int, stop: int) -> Iterator[Any]:
        """The cells of the DataFrame's rows from ``start`` up to ``stop`` whose messages are
        (some of them) in columns of Arrow's types (:attr:`arrow`): those read as a table's
        are (:func:`_held_cells`: a row of too many values is an :class:`Unread`), the
        others' values as the frame holds them."""
        import pyarrow as pa

        assert self.frame is not None
        arrow = self.arrow
        columns = [column.slice(start, stop - start) for column in arrow.values()]
        part = pa.Table.from_arrays(columns, names=list(arrow))
        held = itertools.chain.from_iterable(map(_held_cells, part.to_batches()))
        if len(self.read) == 1:
            yield from held
            return
        objects = {name: self.frame[name].iloc[start:stop].tolist() for name in self.read
                   if name not in arrow}  # fmt: skip
        for at, cell in enumerate(held):
            if isinstance(cell, Unread):
                yield cell
                continue
            values = cell if len(arrow) > 1 else {next(iter(arrow)): cell}
            yield {name: values[name] if name in arrow else objects[name][at] for name in self.read}

    def other_columns(self) -> pa.Table:
        """The columns beside the messages, every row's, in Arrow: the runs' metadata (C-1)."""
        import pyarrow as pa

        if self.frame is not None:
            kept = self.frame.drop(columns=self.read)
            return capped_columns(pa.Table.from_pandas(kept, preserve_index=False), IN_MEMORY)
        return capped_columns(self.rows(0, self.count).select(self.others), IN_MEMORY)

    def other_cells(self, row: int) -> dict[str, Any]:
        """Row ``row``'s values of :meth:`other_columns`, that row alone converted."""
        import pyarrow as pa

        if not self.others:
            return {}
        if self.frame is not None:
            kept = self.frame.iloc[[row]].drop(columns=self.read)
            one = pa.Table.from_pandas(kept, preserve_index=False)
        else:
            one = self.rows(row, row + 1).select(self.others)
        values: dict[str, Any] = capped_columns(one, IN_MEMORY, row).to_pylist()[0]
        return values


def _arrow_typed(frame: Any) -> dict[str, pa.ChunkedArray[Any]]:
    """The columns of a pandas DataFrame that hold Arrow's arrays (``ArrowDtype``), by name:
    those arrays (no copy)."""
    typed = [at for at, dtype in enumerate(frame.dtypes) if type(dtype).__name__ == "ArrowDtype"]
    if not typed:
        return {}
    import pyarrow as pa

    return {str(frame.columns[at]): pa.chunked_array(frame.iloc[:, at]) for at in typed}


def _column_kind(column: Any) -> str | None:
    """The kind of a DataFrame's column (:func:`_cell_kind`): its first cell's that has one."""
    return next((kind for value in column if (kind := _cell_kind(value)) is not None), None)


def _cell_kind(value: Any) -> str | None:
    """A DataFrame cell's kind, as ``messages_column`` takes it: ``"list"`` for a list of
    messages (a list, or a numpy array from Arrow), ``"text"`` for a string, ``"object"`` for
    one message (a dict)."""
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "object"
    return "list" if type(value).__name__ == "ndarray" and getattr(value, "ndim", 0) == 1 else None


def run_in_memory(
    table: Any, format: str | None, sample: Any, epoch: int | None, agent: Any = None
) -> Transcript:
    """``load(table, sample=n)``: the run in row ``n`` (from 0, as ``scan(table)`` keys it
    ``#n``) of a table of runs in memory (:class:`TableRuns`), read as ``scan(table)["#n"]``
    reads it (:func:`read_row`); a table of one row needs no ``sample``. A table of several
    rows without ``sample``, or a ``sample`` it does not hold, is a
    :class:`~turnfold.formats.errors.SampleSelectionError` saying how many rows it holds and
    how to pick one."""
    what = f"a {type(table).__module__.split('.')[0]} {type(table).__name__}"
    try:
        runs = TableRuns(table)
    except ValueError as exc:  # no column is named as messages are: the scan is told which
        raise ValueError(
            f"{IN_MEMORY}: {exc}: then turnfold.scan(table, messages=<column>)['#n'] is row n's run"
        ) from None
    count = len(runs)
    place = run_place(sample) if sample is not None else (0 if count == 1 else None)
    if epoch is not None or place is None or not 0 <= place < count:
        raise _unselected(what, count, sample, epoch)
    return read_row(
        IN_MEMORY, place, format, lambda: runs.cell(place), lambda: runs.cell(0),
        lambda: runs.other_cells(place), agent,
    )  # fmt: skip


def _unselected(what: str, count: int, sample: Any, epoch: int | None) -> SampleSelectionError:
    """The error of a load of a table in memory that names none of its rows, or one it does
    not hold: how many it holds, and how to pick one or read them all."""
    if not count:
        return SampleSelectionError(f"{IN_MEMORY}: {what} of no rows holds no runs")
    rows = "0" if count == 1 else f"0 to {count - 1}"
    how = (
        f"pick one with turnfold.load(table, sample=n), n its row ({rows}; the scan's key "
        "'#n'), or read them all with turnfold.scan(table)"
    )
    if epoch is not None:
        asked = f"has no epochs, not epoch={epoch!r}"
    elif sample is not None:
        asked = f"holds no run at sample={sample!r}"
    else:
        return SampleSelectionError(f"{IN_MEMORY}: {what} holds {count} runs, a row each: {how}")
    return SampleSelectionError(f"{IN_MEMORY}: {what} {asked}; it holds {count}, a row each: {how}")
