"""Files whose records are runs (spec C-1): a dataset kept as JSON lines or a JSON array.

Datasets of trajectories are published as Parquet, but as often as ``train.jsonl`` (one
trajectory per line) or one JSON array of rows (LLaMA-Factory's demo data): each record is a
row, its run's messages under one key (``messages``, ``conversations``…) and its other fields
(a task id, a reward) beside them. No session format reads such a file: its records are not
the messages of one session but many runs. A scan makes each record a row of its own, keyed
``<path>#<n>`` (its place among the file's records, from 0, as a Parquet file's rows are), and
reads it as ``load(record)`` reads it: its messages, its other fields as the transcript's
metadata. Such a file is told by :func:`~turnfold.formats.wrappers.runs_key`.

A file of JSON lines is read one record at a time, and a large one in parts (:class:`Span`,
cut at the ends of lines) that the scan's workers read at once: a training run's rollouts are
one file of a gigabyte as often as a thousand small ones. A part cannot know how many records
the parts before it hold (a line may hold none, or several glued objects), so it numbers its
own from 0 and the scan renumbers them once the parts before it are read (:func:`joined`).

A training run appends its rollouts as it goes. Reading such a file also says where it can be
read on from (:class:`Mark`: the end of its last complete line, and the records before it), so
a scan that finds it grown reads the new lines alone and keeps the rows of the old ones (C-4),
as it reads on a session file that grew.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import pickle
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from turnfold.formats import TranscriptFormatError, malformed_run, read_record, run_error
from turnfold.formats.compressed import compression_of, streamed
from turnfold.formats.errors import MalformedLine
from turnfold.formats.resume import CountedLines, complete_lines, fingerprint
from turnfold.formats.source import (
    LOOK_AHEAD_BYTES,
    Bounded,
    how_it_opens,
    join_warnings,
    json_lines,
    looked_ahead,
    marked_encoding,
    open_source,
    warned_records,
)
from turnfold.formats.wrappers import UNKNOWN, OneFormat, run_name, run_samples
from turnfold.model import LoadWarning

if TYPE_CHECKING:
    import pyarrow as pa

    from turnfold.corpus.index import Stored
    from turnfold.corpus.summarize import Summary
    from turnfold.formats.source import Source
    from turnfold.model import Transcript

#: What a search names a file of runs by (``Item.format``), its rows read in one pass: a row
#: opened alone is read to its place, so each read alone would read the file once per row.
FILE = "(a file of runs)"
#: A part of a large file of runs holds about this many bytes of its lines (the scan's chunk of
#: files: one worker round trip worth its cost).
SPAN_BYTES = 4 * 1024 * 1024
#: A file of runs at least this large is read in parts.
SPLIT_BYTES = 2 * SPAN_BYTES
#: The file is read this much at a time to find where its parts start.
_BLOCK = 1 << 20
#: A first line at least this long holds a record of its own, never the opening of a
#: pretty-printed one (:func:`_opens_a_pretty_value`).
_FIRST_LINE_BYTES = 64 * 1024


class Span(NamedTuple):
    """A part of a file of JSON lines: the bytes from ``start`` up to ``end``, which begin a
    line (numbered ``line`` in the file) and end one (or the file)."""

    start: int
    end: int
    line: int


@dataclass(frozen=True)
class Mark:
    """Where a file of runs in JSON lines can be read on from: past its last complete line
    (``offset``, the number of that line ``lines``), after ``places`` records; and what tells
    that the file was appended to, not rewritten (its inode, a digest of the bytes before
    ``offset``), as a session's checkpoint does (:mod:`turnfold.formats.resume`)."""

    offset: int
    lines: int
    places: int
    inode: tuple[int, int]
    digest: bytes
    #: The dataset's format, its first run's (:class:`OneFormat`), given to the new lines.
    guess: str | None = None

    def after(self, before: int) -> Mark:
        """This mark of a part, with the records of the parts before it counted."""
        return replace(self, places=self.places + before)

    def fits(self, path: str, size: int) -> bool:
        """Whether the file at ``path``, now ``size`` bytes, is the one marked, appended to."""
        try:
            with open(path, "rb") as stream:
                info = os.fstat(stream.fileno())
                return (
                    (info.st_dev, info.st_ino) == self.inode
                    and self.offset <= size
                    and fingerprint(stream, self.offset) == self.digest
                )
        except OSError:
            return False


def mark_of(blob: bytes | None) -> Mark | None:
    """The mark a scan's index kept for a file (its checkpoint), when it is a file of runs'."""
    if blob is None:
        return None
    with contextlib.suppress(Exception):  # another make's, or a session's checkpoint
        mark = pickle.loads(blob)
        return mark if isinstance(mark, Mark) else None
    return None


def _is_json_lines(stream: IO[bytes]) -> bool:
    """Whether a file of runs is JSON lines as written (each record an object on its line), not
    compressed, in UTF-16 or UTF-32, one JSON array, or pretty-printed objects one after
    another: only such a file can be cut at its lines' ends, and read on from one."""
    if compression_of(stream) is not None or marked_encoding(stream) is not None:
        return False
    start: bytes = stream.peek(64)[:64]  # type: ignore[attr-defined]
    if not start.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"{"):
        return False
    return not _opens_a_pretty_value(stream)


def _opens_a_pretty_value(stream: IO[bytes]) -> bool:
    """Whether the first line of ``stream`` (that is not blank) opens a JSON value that goes on
    past it: the first of pretty-printed runs (``json.dump(run, f, indent=2)`` written again
    and again), as ``load`` tells it (:func:`~turnfold.formats.source.how_it_opens`). A line
    that is no JSON for another reason (a bad first record, glued objects, a record cut off at
    its end) is JSON lines still, where it costs its line alone. The stream is left where it
    was."""
    at = stream.tell()
    try:
        line = b""
        while not line.strip():
            line = stream.readline(_FIRST_LINE_BYTES)
            if not line or not line.endswith(b"\n"):
                # The end of the file, or a line longer than any opening of a pretty-printed
                # value (its bracket, a key): a record on a line of its own.
                return False
        text = line.decode("utf-8", "replace").removeprefix("\ufeff").strip()
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            # The lines after it as load reads them, none read past where it looks.
            lines = iter(lambda: stream.readline(LOOK_AHEAD_BYTES + 1), b"")
            return how_it_opens(text, exc, lambda: looked_ahead(enumerate(lines))[1]) == "value"
        return False
    finally:
        stream.seek(at)


def part_source(path: str, span: Span) -> tuple[Source, IO[bytes]]:
    """The JSON lines of a part of the file at ``path``, and the file opened (to close)."""
    stream = open(path, "rb")  # noqa: SIM115 (the caller closes it, as open_source's)
    stream.seek(span.start)
    lines = json_lines(Bounded(stream, span.end - span.start), path, path=Path(path),
                       first_line=span.line)  # fmt: skip
    return lines, stream


class Records:
    """The records of the file at ``path`` (of its part ``span``), iterated once: for each, its
    place among the records (from 0, in the part), its line, its value (a
    :class:`MalformedLine` for a line that is no JSON) and what reading its line warned of
    (invalid UTF-8, shown as U+FFFD). Once they are read, :attr:`mark` says where the file
    can be read on from (None for a file of runs that is not JSON lines: it is read whole)."""

    def __init__(self, path: str, span: Span | None = None) -> None:
        self.path = path
        self.span = span
        self.mark: Mark | None = None

    def __iter__(self) -> Iterator[tuple[int, int, Any, list[LoadWarning]]]:
        with open(self.path, "rb") as stream:
            span = self.span
            if span is None and _is_json_lines(stream):
                span = Span(0, os.fstat(stream.fileno()).st_size, 1)
            if span is None:
                with streamed():  # a run at a time: a compressed file is read whole
                    source, opened = open_source(self.path)
                try:
                    for place, (line, value, warned) in enumerate(warned_records(source)):
                        yield place, line, value, warned
                finally:
                    if opened is not None:
                        opened.close()
                return
            yield from self._lines(stream, span)

    def _lines(
        self, stream: IO[bytes], span: Span
    ) -> Iterator[tuple[int, int, Any, list[LoadWarning]]]:
        """The records of ``span``: those of its complete lines, then of the line after them
        (one still being written), as a growing session file is read (``read_growing``)."""
        complete = max(span.start, complete_lines(stream, span.end))
        stream.seek(span.start)
        whole = CountedLines(stream, complete - span.start)
        source = json_lines(whole, self.path, path=Path(self.path), first_line=span.line)
        place = -1
        for place, (line, value, warned) in enumerate(warned_records(source)):
            yield place, line, value, warned
        lines = span.line - 1 + whole.newlines
        info = os.fstat(stream.fileno())
        self.mark = Mark(complete, lines, place + 1, (info.st_dev, info.st_ino),
                         fingerprint(stream, complete))  # fmt: skip
        if complete < span.end:
            stream.seek(complete)
            rest = json_lines(Bounded(stream, span.end - complete), self.path,
                              path=Path(self.path), first_line=lines + 1)  # fmt: skip
            for more, (line, value, warned) in enumerate(warned_records(rest), start=place + 1):
                yield more, line, value, warned


class Runs:
    """:class:`Records`, each read as ``load(record)`` reads it, with the warnings of its line:
    ``(place, name, line, transcript)``, or the exception its load raises (a line that is no
    JSON: :func:`~turnfold.formats.malformed_run`); :attr:`mark` once read. ``name``: the name
    the record gives its run (a Batch API line's ``custom_id``:
    :func:`~turnfold.formats.wrappers.run_name`), else None. A run is keyed by its place while
    its file is read, and by :func:`~turnfold.formats.wrappers.run_samples` once every name of
    the file is known (:func:`keyed_by_name`).

    The records of one dataset are read in one format where they can be
    (:class:`~turnfold.formats.wrappers.OneFormat`): a part of the file is given ``guess``,
    the format of the file's first run (:func:`first_format`).
    """

    def __init__(self, path: str, span: Span | None = None, guess: str | None = UNKNOWN) -> None:
        self._path = path
        self._records = Records(path, span)
        self._read = OneFormat(read_record, guess=guess)
        self._named = False

    @property
    def mark(self) -> Mark | None:
        """Where the file can be read on from, with the dataset's format; None for a file of
        named runs, which is read whole: a part read on from a mark numbers its rows on,
        and names cannot be."""
        mark = self._records.mark
        if mark is None or self._named:
            return None
        return replace(mark, guess=self._read.found)

    def __iter__(self) -> Iterator[tuple[int, str | None, int, Any]]:
        read = self._read
        for place, line, record, warned in self._records:
            name = run_name(record)
            self._named = self._named or name is not None
            result: Transcript | Exception
            if isinstance(record, MalformedLine):  # as load(path, sample=n) raises it
                result = malformed_run(self._path, line, record)
            else:
                try:
                    result = read(record)
                except TranscriptFormatError as exc:  # named as the file's, not "<object>"
                    result = run_error(exc, self._path, line)
                except Exception as exc:
                    result = exc
                else:
                    join_warnings(result.warnings, warned, before=True)
            yield place, name, line, result


def first_format(path: str) -> str | None:
    """The format of the first run of the file of runs at ``path`` (its first record that is
    JSON) as ``load(record)`` reads it: the dataset's format (:class:`OneFormat`); None when
    that run cannot be read."""
    read = OneFormat(read_record)
    for _, _, record, _ in Records(path):
        if not isinstance(record, MalformedLine):
            read.learn(record)
            break
    return read.found


def spans(path: str, size: int, mark: Mark | None = None) -> list[Span] | None:
    """The file's bytes up to ``size`` (from ``mark`` on, when given) as parts of about
    :data:`SPAN_BYTES`, each cut after a line's end; None when it cannot be cut so (it is not
    JSON lines: :func:`_is_json_lines`). The part is read once, to count its lines."""
    found: list[Span] = []
    with open(path, "rb") as stream:
        if mark is None and not _is_json_lines(stream):
            return None
        start, line = (0, 1) if mark is None else (mark.offset, mark.lines + 1)
        stream.seek(start)
        cut = start + SPAN_BYTES  # the part being measured ends at the first line end past it
        offset, newlines = start, line - 1  # where the block starts; the lines ended before it
        while offset < size and (block := stream.read(min(_BLOCK, size - offset))):
            at = 0  # the lines ended before ``offset + at`` are counted in ``newlines``
            while (want := max(at, cut - offset)) < len(block):
                end = block.find(b"\n", want)
                if end < 0:
                    break
                newlines += block.count(b"\n", at, end + 1)
                at = end + 1
                found.append(Span(start, offset + at, line))
                start, line = offset + at, newlines + 1
                cut = start + SPAN_BYTES
            newlines += block.count(b"\n", at)
            offset += len(block)
    if start < offset:
        found.append(Span(start, offset, line))
    return found


def joined(parts: list[Summary], key: str, grew: bool, numbered: bool = True) -> Summary:
    """The summary of a file from the summaries of its parts, in order: each part's records
    renumbered after those of the parts before it (keys ``key#n``, samples ``n``) when they
    are ``numbered`` (an eval log's are named), then keyed by the names their records give
    them (:func:`keyed_by_name`); with the file's mark as its checkpoint when it ``grew``
    (C-4) and none of its runs is named (a name is no place to read on from)."""
    from turnfold.corpus.summarize import Summary
    from turnfold.corpus.tables import summary_batches

    whole = Summary("rows")
    before = 0
    mark: Mark | None = None
    names: dict[int, str] = {}
    for part in parts:
        rows, tool_calls, turns = summary_batches(part)
        on = before if numbered else 0
        whole.packed.append((
            _renumbered(rows, key, on, sample=True),
            _renumbered(tool_calls, key, on),
            _renumbered(turns, key, on),
        ))  # fmt: skip
        names.update((on + place, name) for place, name in part.names.items())
        last = mark_of(part.checkpoint)
        mark = last.after(before) if last is not None else None
        before += rows.num_rows
    if names:
        keyed_by_name(whole, key, before, names)
    elif grew and mark is not None:
        whole.checkpoint = pickle.dumps(mark, pickle.HIGHEST_PROTOCOL)
    return whole


def keyed_by_name(summary: Summary, key: str, count: int, names: Mapping[int, str]) -> None:
    """The runs of a file of ``count`` runs (``summary``, its rows keyed ``key#n`` by their
    places, one a record) keyed as :func:`~turnfold.formats.wrappers.run_samples` keys them,
    the records at the places ``names`` naming theirs: its rows, tool-call rows and turn rows,
    in place (a row still a dict is the one a site's ``visit`` was given, which names the
    run's page by its key). Places are unique in the file, so each run's rows are told apart
    however its names clash."""
    import pyarrow as pa
    import pyarrow.compute as pc

    samples = run_samples(count, names)
    if not samples:
        return
    renamed = {f"{key}#{place}": (f"{key}#{sample}", sample) for place, sample in samples.items()}
    for row in summary.rows:
        if (new := renamed.get(row["key"])) is not None:
            row["key"], row["sample"] = new
    for row in itertools.chain(summary.tool_calls, summary.turns):
        if (new := renamed.get(row["key"])) is not None:
            row["key"] = new[0]
    old = pa.array(list(renamed), pa.string())
    keys = pa.array([new for new, _ in renamed.values()], pa.string())
    said = pa.array([sample for _, sample in renamed.values()], pa.string())

    def renaming(batch: pa.RecordBatch, sample: bool = False) -> pa.RecordBatch:
        if not batch.num_rows:
            return batch
        at = pc.index_in(batch.column("key"), value_set=old)
        batch = batch.set_column(0, "key", pc.coalesce(keys.take(at), batch.column("key")))
        if sample:
            where = batch.schema.get_field_index("sample")
            batch = batch.set_column(where, "sample",
                                     pc.coalesce(said.take(at), batch.column(where)))  # fmt: skip
        return batch

    summary.packed = [(renaming(rows, sample=True), renaming(tool_calls), renaming(turns))
                      for rows, tool_calls, turns in summary.packed]  # fmt: skip


def kept(stored: Stored, places: int) -> Summary | None:
    """The rows of a file's first ``places`` records, from what a scan's index kept of it (its
    rows in order, one per record, decoded), as a part that the new lines' parts follow; None
    when it holds fewer."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from turnfold.corpus.summarize import Summary

    rows, tool_calls, turns = stored.rows, stored.tool_calls, stored.turns
    if rows is None or rows.num_rows < places:
        return None
    assert isinstance(tool_calls, pa.RecordBatch)
    assert isinstance(turns, pa.RecordBatch)

    def first(batch: pa.RecordBatch) -> pa.RecordBatch:
        if not batch.num_rows:
            return batch
        return batch.filter(pc.less(_numbers(batch), pa.scalar(places, pa.int64())))

    return Summary("rows", packed=[(rows.slice(0, places), first(tool_calls), first(turns))])


def _numbers(batch: pa.RecordBatch) -> Any:  # an Int64Array
    """The record each row of ``batch`` is of: its key is ``<path>#n``, ``n`` what follows the
    last ``#``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    tails = pc.split_pattern(batch.column("key"), "#", max_splits=1, reverse=True)
    return pc.cast(pc.list_element(tails, 1), pa.int64())


def _renumbered(
    batch: pa.RecordBatch, key: str, before: int, sample: bool = False
) -> pa.RecordBatch:
    """``batch`` with its keys (``key#n``, and ``sample`` ``n`` when asked) ``before`` places on."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not batch.num_rows or not before:
        return batch
    places = pc.add(_numbers(batch), pa.scalar(before, pa.int64()))
    text = pc.cast(places, pa.string())
    keys = pc.utf8_replace_slice(text, start=0, stop=0, replacement=f"{key}#")  # a prefix
    batch = batch.set_column(0, "key", keys)
    if sample:
        batch = batch.set_column(batch.schema.get_field_index("sample"), "sample", text)
    return batch
