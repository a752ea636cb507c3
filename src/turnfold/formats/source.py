"""What ``load()`` was given, as JSON records a format can read (spec L-2, L-4).

A :class:`Source` streams a JSONL file line by line (never ``read()`` + ``json.loads`` of the
whole file), keeps the first records in ``head`` so formats can be detected without consuming the
stream, and records reader-level problems (invalid UTF-8) as warnings. A single JSON document or
Python objects become ``document``; its items (or the document itself) are also its records.
"""

from __future__ import annotations

import codecs
import copy
import dataclasses
import fnmatch
import io
import itertools
import json
import os
import re
import stat
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Literal

from turnfold import codec, progress
from turnfold.formats import compressed
from turnfold.formats.errors import KEPT_TEXT_CHARS, MalformedLine, TranscriptFormatError
from turnfold.model import Accounting, Disposition, LoadWarning, Transcript

#: How many records detection may look at.
HEAD_SIZE = 30
#: How many warnings one source lists; past them one more warning counts the rest. A hostile
#: file of ten million bad lines (20 MB of ``x``) held a warning object each, gigabytes of the
#: kernel (X-1); the accounting still counts every record, and the reader sees how many.
MAX_LISTED_WARNINGS = 1_000
#: Files at least this big show a progress bar (after tqdm's delay, so fast loads stay quiet).
PROGRESS_MIN_BYTES = 8 * 1024 * 1024
#: A load that ends sooner shows no bar at all.
PROGRESS_DELAY_S = progress.DELAY_S
_PROGRESS_STEP = 1024 * 1024
NO_DOCUMENT: Any = object()
#: The largest record (one JSON line, or a whole JSON document) a load reads, in bytes; larger
#: ones are skipped with a warning (a line) or refused (a document) so that a hostile or broken
#: file cannot exhaust the kernel's memory. ``TURNFOLD_MAX_RECORD_BYTES`` overrides it.
MAX_RECORD_BYTES = 256 * 1024 * 1024


#: The variable that overrides :data:`MAX_RECORD_BYTES`.
RECORD_LIMIT_ENV = "TURNFOLD_MAX_RECORD_BYTES"
# Bad values of the variable already warned of in this process: the limit is read by every
# load, every table and database read, and one typo must not print a warning for each.
_refused_limits: set[str] = set()


def record_limit() -> int:
    """:data:`MAX_RECORD_BYTES`, or the ``TURNFOLD_MAX_RECORD_BYTES`` environment variable.

    A value that is not a positive whole number warns once (X-2) and leaves the default in
    charge; an empty one counts as unset (the shell's ``VAR= command``).
    """
    value = os.environ.get(RECORD_LIMIT_ENV, "")
    if not value.strip():
        return MAX_RECORD_BYTES
    if value.strip().isdecimal() and int(value) > 0:
        return int(value)
    if value not in _refused_limits:
        _refused_limits.add(value)
        from turnfold.userwarn import warn_at_caller  # only for a bad value: a load never needs it

        warn_at_caller(
            f"{RECORD_LIMIT_ENV}={value!r} is not a positive whole number of bytes; ignoring it: "
            f"records up to the default {MAX_RECORD_BYTES:,} bytes are read"
        )
    return MAX_RECORD_BYTES


@dataclasses.dataclass(frozen=True)
class Oversized:
    """Stands in for a line longer than :func:`record_limit`, which was skipped unread."""

    size: int

    def __len__(self) -> int:
        return self.size


#: How much of a file a load reads at a time. Lines are cut out of the chunk with ``find``
#: (``memchr``) and decoded from a view of it: ``readline`` would scan each line byte by byte and
#: copy it, a tenth of a load of a 50 MB session (issue 19).
CHUNK_BYTES = 1 << 20


class _Lines:
    """The lines of a binary stream, read in chunks of :data:`CHUNK_BYTES`, numbered from 1.

    A line is what ends with ``\n`` (kept) or at the end of the stream. One longer than
    ``limit`` bytes (its ``\n`` not counted) comes out as :class:`Oversized`, its bytes read on
    without being kept: no more than ``limit`` bytes of a line and one chunk are held at once.
    :meth:`lines` hands out the lines as bytes; :meth:`records` parses the rest of the stream,
    from where :meth:`lines` stopped.
    """

    def __init__(self, stream: Any, limit: int, progress: _Progress | None = None) -> None:
        self._read = stream.read
        self._limit = limit
        self._progress = progress
        self._chunk = b""
        self._start = 0  # where the next line starts in the chunk
        self.number = 0  # the number of the last line handed out

    def _fill(self) -> bytes:
        chunk: bytes = self._read(CHUNK_BYTES)
        progress = self._progress
        if progress is not None:
            if chunk:
                progress.add(len(chunk))
            else:
                progress.close()
        return chunk

    def _spanning(self) -> bytes | Oversized | None:
        """The line from the chunk's unread tail on into the chunks that follow (None at the end
        of the stream); the chunk and start are left after it."""
        tail = self._chunk[self._start :]
        pieces, size, limit = [tail], len(tail), self._limit
        while True:
            chunk = self._fill()
            if not chunk:
                self._chunk, self._start = b"", 0
                if not size:
                    return None
                return Oversized(size) if size > limit else b"".join(pieces)
            end = chunk.find(b"\n")
            if end < 0:
                size += len(chunk)
                if size > limit:
                    pieces.clear()  # too long to keep: only its size is counted
                else:
                    pieces.append(chunk)
                continue
            self._chunk, self._start = chunk, end + 1
            if size + end > limit:
                return Oversized(size + end + 1)
            pieces.append(chunk[: end + 1])
            return b"".join(pieces)

    def next_line(self) -> bytes | Oversized | None:
        """The next line, or None at the end of the stream."""
        chunk, start = self._chunk, self._start
        end = chunk.find(b"\n", start)
        line: bytes | Oversized | None
        if end < 0:
            line = self._spanning()
            if line is None:
                return None
        else:
            self._start = end + 1
            line = (
                chunk[start : end + 1] if end - start <= self._limit else Oversized(end + 1 - start)
            )
        self.number += 1
        return line

    def lines(self) -> Iterator[tuple[int, bytes | Oversized]]:
        """``(number, line)`` for each line not yet handed out."""
        while (line := self.next_line()) is not None:
            yield self.number, line

    def records(self, name: str, warnings: list[LoadWarning]) -> Iterator[tuple[int, Any]]:
        """The parsed values of the lines not yet handed out, as :func:`_parse_lines` gives
        them: the hot loop of a load, so the cutting and the decoding are written out here."""
        fast, refused, limit = codec.fast_loads, codec.FastDecodeError, self._limit
        try:
            while True:
                chunk, start, number = self._chunk, self._start, self.number
                view, find = memoryview(chunk), chunk.find
                while (end := find(b"\n", start)) >= 0:
                    number += 1
                    if end - start > limit:
                        yield number, _oversized(Oversized(end + 1 - start))
                    else:
                        try:
                            value = fast(view[start : end + 1])  # no copy of the line
                        except refused:
                            yield from _refused(chunk[start : end + 1], number, name, warnings)
                        else:
                            yield number, value
                    start = end + 1
                self._start, self.number = start, number
                line = self.next_line()
                if line is None:
                    return
                yield from _parse_lines(((self.number, line),), name, warnings)
        finally:
            if self._progress is not None:
                self._progress.close()


class Bounded:
    """At most ``left`` bytes of ``stream``: a part of a file (a zip member's data, a growing
    file up to its last complete line)."""

    def __init__(self, stream: IO[bytes], left: int) -> None:
        self._stream = stream
        self._left = left

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > self._left:
            size = self._left
        data = self._stream.read(size)
        self._left -= len(data)
        return data

    def readline(self) -> bytes:  # what from_binary_stream looks for in a byte stream
        data = self._stream.readline(self._left)
        self._left -= len(data)
        return data

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line


def json_lines(
    stream: IO[bytes] | Bounded,
    name: str,
    *,
    path: Path | None = None,
    first_line: int = 1,
    warnings: list[LoadWarning] | None = None,
    accounting: Accounting | None = None,
) -> Source:
    """The JSON lines of ``stream``, numbered from ``first_line``, never read as one document:
    the rest of a file whose earlier lines were read before (a growing file, read on from its
    last complete line), its warnings and accounting going on in ``warnings`` and
    ``accounting``."""
    warnings = warnings if warnings is not None else []
    lines = _Lines(stream, record_limit())
    lines.number = first_line - 1
    return Source(
        name, lines.records(name, warnings), path=path, warnings=warnings, accounting=accounting
    )


def bounded_lines(stream: Any, limit: int) -> Iterator[bytes | Oversized]:
    """The lines of a binary stream, each with at most ``limit`` bytes in memory (:class:`_Lines`).

    A longer line is read on in chunks without keeping them and comes out as :class:`Oversized`.
    """
    return (line for _, line in _Lines(stream, limit).lines())


class Source:
    """Records of one input, with the name and path to report and look beside."""

    def __init__(
        self,
        name: str,
        records: Iterator[tuple[int, Any]],
        *,
        path: Path | None = None,
        document: Any = NO_DOCUMENT,
        warnings: list[LoadWarning] | None = None,
        accounting: Accounting | None = None,
    ) -> None:
        self.name = name
        self.path = path
        self.document = document
        #: The format the input's own types name (a framework's run object), None: detect it.
        self.format: str | None = None
        self.warnings: list[LoadWarning] = warnings if warnings is not None else []
        #: What the loader did with each record (issue 11); see :meth:`note`.
        self.accounting = accounting if accounting is not None else Accounting()
        self._current: tuple[int, Any] | None = None  # the record records() yielded last
        #: What the loader said of the current record: nothing yet (False), what it did with it
        #: (True), or only a warning on its line (None: pending warned, as ``_pending``; see
        #: :meth:`warn`). Falsy both ways, so a record noted costs records() one test, as before.
        self._noted: bool | None = True
        self._pending = ""  # the generic type of the record pending warned
        self._rest = records
        self.head: list[tuple[int, Any]] = []
        for record in records:
            self.head.append(record)
            if len(self.head) >= HEAD_SIZE:
                break
        self._consumed = False

    @property
    def is_document(self) -> bool:
        """Whether the input was one JSON value (or Python objects) rather than JSON lines."""
        return self.document is not NO_DOCUMENT

    def head_values(self) -> list[Any]:
        """The parsed values of the first records, unreadable lines left out (for detection)."""
        return [value for _, value in self.head if not isinstance(value, MalformedLine)]

    def records(self) -> Iterator[tuple[int, Any]]:
        """Every record as ``(line number, parsed value or MalformedLine)``; one pass only.

        The loader says what it did with each record (:meth:`note`, or :meth:`warn` on its
        line) before it asks for the next one; a record it passed over without a word is
        listed in ``accounting.unaccounted``, one it only warned about is counted warned.
        """
        if self._consumed:
            raise RuntimeError(f"{self.name}: records() can be read only once")
        self._consumed = True
        unaccounted = self.accounting.unaccounted
        try:
            # The head, then the rest, straight from their iterators: a generator between them
            # would be one more frame to resume per record.
            for record in itertools.chain(self.head, self._rest):
                self._current, self._noted = record, False
                yield record
                if not self._noted:
                    if self._noted is None:
                        self.note(self._pending, "warned")
                    else:
                        unaccounted.append((record[0], type_of_record(record[1])))
            self._current, self._noted = None, True
        finally:
            if self._noted is None:  # a record warned about, where the loader stopped reading
                self.note(self._pending, "warned")

    def note(self, record_type: str, disposition: Disposition) -> None:
        """Account for one record: the current one of :meth:`records`, or one a loader walks
        itself (a message of a JSON document)."""
        # Accounting.note, written out: a load notes every record it reads.
        counts = self.accounting.counts
        per_type = counts.get(record_type)
        if per_type is None:
            per_type = counts[record_type] = {}
        per_type[disposition] = per_type.get(disposition, 0) + 1
        self._noted = True

    def warn_not_listed(self, unread: str, line: int | None = None) -> NotListed:
        """A ``not_listed`` for :func:`sibling_files` that warns of each folder of this source's
        it could not list, naming the folder and what in it (``unread``) is not read."""

        def said(folder: Path, error: OSError) -> None:
            self.warn(folder_not_listed(folder, error, unread), line)

        return said

    def mapped(self, record_type: str) -> None:
        """The record became entries, metadata or an update of earlier entries."""
        self.note(record_type, "mapped")

    def ignored(self, record_type: str) -> None:
        """The record is left out by design (listed in the format's ``RECORDS``)."""
        self.note(record_type, "ignored")

    def warn(
        self,
        reason: str,
        line: int | None = None,
        *,
        record_type: str | None = None,
        record: Any = None,
    ) -> LoadWarning:
        """Record a problem with this source and return the warning.

        ``record`` is the record of ``line`` when the warning comes after it was read (its id
        names it, as the current record's does). A warning naming a ``record_type`` accounts
        for a record of it as warned about. A
        warning on the line of the current record, before the loader said what it did with it,
        leaves it pending warned: what the loader then notes of it counts it instead (a time
        that is no time, found while converting a record that is then mapped: counted once,
        mapped), and if the loader notes nothing before the next record (or the end), it is
        counted warned under its generic type (:func:`type_of_record`). Past
        :data:`MAX_LISTED_WARNINGS` the warning returned is the :class:`UnlistedWarnings` that
        counts it.
        """
        at = self._at(line)
        warning: LoadWarning | None = counted_unlisted(self.warnings)
        if warning is None:
            named = at[1] if at is not None else record
            warning = LoadWarning(
                reason=reason, line=line, source=self.name, record=_record_id(named)
            )
            keep_warning(self.warnings, warning)
        self._warned(at, record_type)
        return warning

    def _at(self, line: int | None) -> tuple[int, Any] | None:
        """The record being read, if it is the one on ``line``."""
        current = self._current
        return current if current is not None and line is not None and current[0] == line else None

    def _warned(self, at: tuple[int, Any] | None, record_type: str | None) -> None:
        """Account for a record a warning is about as warned about: as ``record_type`` at
        once, or the one being read, ``at``, pending (:meth:`warn`), unless the loader already
        said what it did with it."""
        if record_type is not None:
            self.note(record_type, "warned")
        elif self._noted is False and at is not None:
            self._noted, self._pending = None, type_of_record(at[1])

    def take_warnings(
        self,
        warnings: list[LoadWarning],
        line: int,
        *,
        start: int = 0,
        record_type: str | None = None,
    ) -> None:
        """Say on ``line``, as this source's, the warnings ``warnings`` holds from ``start`` on
        (a builder's, of the record on that line), taking them out of it; the first accounts
        for the record as ``record_type``, warned about, once.

        An :class:`UnlistedWarnings` among them moves as the count it holds, not as one more
        warning: it joins this source's count (:func:`join_warnings`), however many this
        source lists yet.
        """
        moved = warnings[start:]
        del warnings[start:]
        for index, warning in enumerate(moved):
            if type(warning) is not UnlistedWarnings:
                self.warn(warning.reason, line, record_type=record_type if index == 0 else None)
                continue
            if index == 0:  # the record warned, told by its count alone
                self._warned(self._at(line), record_type)
            join_warnings(self.warnings, [warning])

    def hand_over(self, transcript: Transcript) -> Transcript:
        """``transcript`` as a format that reads its files itself (``read_path``) returns
        what it read from this source: the source's warnings first, and its accounting."""
        join_warnings(transcript.warnings, self.warnings, before=True)
        transcript.accounting = self.accounting
        return transcript


@dataclasses.dataclass(kw_only=True)
class UnlistedWarnings(LoadWarning):
    """Stands for the warnings of a source past :data:`MAX_LISTED_WARNINGS`: how many, and
    the line of the first of them.

    Its reason is written from the count when it is read: a load of millions of bad lines adds
    one for each, and writing the count out each time cost more than reading the line.
    """

    count: int = 0

    # Not a field (a type comment, no annotation): a transcript's dump writes a warning's
    # fields, and these are objects of the load, which only their identity makes useful.
    joined = ()  # type: tuple[LoadWarning, ...]
    """One warning of each other list whose warnings this counts past the listed ones
    (:func:`join_warnings`), the counts those lists held and the count this one replaced
    (each with its own ``joined``: a chain, so a fold costs the same however many came
    before): a reader that joins a sub-agent's warnings to its caller's may leave them on the
    sub-agent too, and the view's notice tells by these that they are counted here already
    (:func:`turnfold.nesting.subagent_warnings`)."""

    # A property in place of the field (mypy allows only a field there): a dataclass still,
    # so ``dataclasses.replace`` (a page's warning naming its file) keeps the count.
    @property  # type: ignore[misc]
    def reason(self) -> str:
        return f"{self.count:,} more problem(s) like those above, not listed one by one"

    @reason.setter
    def reason(self, _: str) -> None:
        """What the dataclass's ``__init__`` gives is not kept: the count says it."""

    def add(self) -> None:
        self.count += 1


def keep_warning(warnings: list[LoadWarning], warning: LoadWarning) -> None:
    """Add ``warning`` to a source's ``warnings``, or once they hold
    :data:`MAX_LISTED_WARNINGS`, count it in the :class:`UnlistedWarnings` that ends them.

    >>> kept: list[LoadWarning] = []
    >>> for line in range(1, MAX_LISTED_WARNINGS + 4):
    ...     keep_warning(kept, LoadWarning(reason="invalid JSON", line=line, source="s"))
    >>> len(kept), str(kept[-2])
    (1001, 's:1000: invalid JSON')
    >>> str(kept[-1])
    's:1001: 3 more problem(s) like those above, not listed one by one'

    A count of warnings (another list's :class:`UnlistedWarnings`) joins as all it counts.
    """
    if type(warning) is UnlistedWarnings:
        join_warnings(warnings, (warning,))
        return
    if len(warnings) < MAX_LISTED_WARNINGS and not (
        warnings and type(warnings[-1]) is UnlistedWarnings
    ):
        warnings.append(warning)
        return
    if counted_unlisted(warnings) is not None:
        return
    join_warnings(warnings, (warning,))


def join_warnings(
    warnings: list[LoadWarning], more: Iterable[LoadWarning], *, before: bool = False
) -> None:
    """Add the warnings ``more`` holds to ``warnings``, in place (after its own, or before them:
    what was read first), keeping the rule of a list of warnings: the listed ones first, at
    most :data:`MAX_LISTED_WARNINGS` of them in their order, then one :class:`UnlistedWarnings`
    counting the rest, the counts of both lists summed in it.

    Lists joined by hand put one list's count before the other's listed warnings, or kept two
    counts, or grew past the bound; a count held before the bound was missed by
    :func:`warning_count`. ``warnings`` is changed in place, never replaced: a source's parser
    goes on adding to its list. No warning given is changed: a count may be another list's too.

    >>> first = [LoadWarning(reason="a", line=1), LoadWarning(reason="b", line=2)]
    >>> rest = [LoadWarning(reason="c", line=3), UnlistedWarnings(reason="", line=4, count=5)]
    >>> join_warnings(first, rest)
    >>> [str(w) for w in first], warning_count(first)
    (['1: a', '2: b', '3: c', '4: 5 more problem(s) like those above, not listed one by one'], 8)
    >>> join_warnings(first, [LoadWarning(reason="d", line=9)], before=True)
    >>> [w.line for w in first], warning_count(first)
    ([9, 1, 2, 3, 4], 9)
    """
    if before:
        more = [*more, *warnings]
        del warnings[:]
    tally = warnings[-1] if warnings and type(warnings[-1]) is UnlistedWarnings else None
    listed = len(warnings) - (tally is not None)
    counted, first = 0, None  # what ``more`` adds to the count, and the first warning it counts
    carried: list[LoadWarning] = []  # the counts ``more`` holds: what they joined, through them
    for warning in more:
        if type(warning) is UnlistedWarnings:
            counted += warning.count
            carried.append(warning)
        elif listed < MAX_LISTED_WARNINGS:
            if tally is None:
                warnings.append(warning)
            else:  # the listed ones come before the count ("like those above")
                warnings.insert(len(warnings) - 1, warning)
            listed += 1
            continue
        else:
            counted += 1
        if first is None:
            first = warning
    if not counted:
        return
    assert first is not None
    # One of ``more`` is enough to know it by: its other warnings are in this list too,
    # listed before the count or counted in it.
    joined = (first, *carried)
    if tally is not None:  # a new count: the one there may be another list's too
        count = dataclasses.replace(tally, count=tally.count + counted)
        count.joined = (tally, *joined)  # what the count it replaces joined, through it
        warnings[-1] = count
    else:
        count = UnlistedWarnings(reason="", line=first.line, source=first.source, count=counted)
        count.joined = joined
        warnings.append(count)


def counted_unlisted(warnings: list[LoadWarning]) -> UnlistedWarnings | None:
    """The :class:`UnlistedWarnings` that ends ``warnings``, one more problem counted in it,
    when they hold :data:`MAX_LISTED_WARNINGS` and it; None while a warning would be listed.

    A file of millions of bad lines warns of each: past the listed ones, a warning only adds
    one to the count, so none is built (its reason, its record's id) to be dropped.
    """
    if len(warnings) > MAX_LISTED_WARNINGS:
        last = warnings[-1]
        if type(last) is UnlistedWarnings:
            last.add()
            return last
    return None


def warning_count(warnings: list[LoadWarning]) -> int:
    """How many warnings ``warnings`` holds, listed or counted past
    :data:`MAX_LISTED_WARNINGS`: a reader that tells whether a record warned by comparing this
    before and after reading it sees a warning the list's length no longer shows.

    >>> kept: list[LoadWarning] = []
    >>> for line in range(1, MAX_LISTED_WARNINGS + 4):
    ...     keep_warning(kept, LoadWarning(reason="invalid JSON", line=line, source="s"))
    >>> len(kept), warning_count(kept)
    (1001, 1003)
    """
    # Past the listed ones the list holds only counts, and what a reader appended itself after
    # one: a few entries, whatever the file. Fewer listed ones (a run's share of its file's)
    # end with their count (join_warnings, keep_warning): the last is all there is to look at.
    past = warnings[MAX_LISTED_WARNINGS:] if len(warnings) > MAX_LISTED_WARNINGS else warnings[-1:]
    return len(warnings) + sum(w.count - 1 for w in past if type(w) is UnlistedWarnings)


#: Keys under which formats keep a record's own id, most specific first.
_ID_KEYS = ("uuid", "id", "call_id", "event_id")


def warned_records(source: Source) -> Iterator[tuple[int, Any, list[LoadWarning]]]:
    """The records of a file of runs (``line, value``), each with what reading the file
    warned of that is its run's own: each record is a run of its own, and these warnings
    are that run's, however many the other runs have.

    A record of JSON lines owns the warnings of its lines, from its own up to the next
    record's (invalid UTF-8, shown as U+FFFD); they are taken out of the source's list as
    they are given, so that the list, which counts what it holds past
    :data:`MAX_LISTED_WARNINGS` with no line, never holds more than a few lines' worth: a
    file of thousands of runs with a bad line each tells each run of its own (the count past
    the bound, told to one run, was every later run's). A warning of no line (the file's data
    cut off) is told to the last run, where the file stopped; when that record is no JSON
    (its line the one cut off), its reason says it, since an unreadable run keeps its error,
    not warnings.

    A JSON document (an array of runs) numbers its records by their place, not by line, and
    was read whole before its first record: which run a line's warning is in is not known, so
    every run is told, in one warning, what reading the file found (:func:`_unplaced`); so are
    the runs of a source whose warnings were already past the bound before its first record.
    """
    records = _each_a_run(source)
    warned = source.warnings
    if source.is_document or any(type(w) is UnlistedWarnings for w in warned):
        told = _unplaced(warned, source.name)
        for line, value in records:
            yield line, value, list(told)
        return
    # One record ahead: a record's lines end where the next record's start.
    ahead = next(records, None)
    while ahead is not None:
        line, value = ahead
        ahead = next(records, None)
        if ahead is not None:
            yield line, value, warnings_before(warned, ahead[0], also=line)
            continue
        own = warnings_before(warned, None)
        lineless = [w for w in own if w.line is None]
        if lineless and isinstance(value, MalformedLine):
            said = "; ".join(w.reason for w in lineless)
            value = dataclasses.replace(value, reason=f"{value.reason}; {said}")
            own = [w for w in own if w.line is not None]
        yield line, value, own


def _each_a_run(source: Source) -> Iterator[tuple[int, Any]]:
    """The records of ``source``, each accounted for as a run, read as a transcript of its own
    that accounts for what it holds: the file's accounting counts them, where a record nobody
    noted would be listed unaccounted, one entry each (millions, for a large dataset)."""
    for record in source.records():
        source.note("run", "mapped")
        yield record


def warnings_before(
    warnings: list[LoadWarning], line: int | None, *, also: int | None = None
) -> list[LoadWarning]:
    """The warnings among ``warnings`` of the lines before ``line`` (and of line ``also``: a
    record's own, which it may share with the next, glued objects), taken out of it: a run's
    or an eval instance's share of its file's warnings, once the line the next one starts on is
    known. With ``line`` None, all of them, those of no line (the file cut off) too; else those
    stay, for the last. Taken as they are told, they never pile up past the listed ones."""
    taken: list[LoadWarning] = []
    kept: list[LoadWarning] = []
    for warning in warnings:
        at = warning.line
        mine = line is None or (at is not None and (at < line or at == also))
        (taken if mine else kept).append(warning)
    warnings[:] = kept
    return taken


def _unplaced(warned: list[LoadWarning], name: str) -> list[LoadWarning]:
    """What every run of a file of runs is told of the file's warnings that no run can be
    told by its lines: one warning, saying how many there were and the first of them (a run
    that was told all of them would count the file's problems as its own, once per run)."""
    if not warned:
        return []
    first, count = warned[0], warning_count(warned)
    reason = (
        f"{first.reason}; the first of {count:,} problem(s) found reading this file of runs "
        "whole: the run each is in is not known, so every run is told of them"
    )
    return [LoadWarning(reason=reason, line=first.line, source=first.source or name)]


def _record_id(value: Any) -> str | None:
    """The record's own id, so a warning names the record, not just its line (issue 21.15)."""
    if not isinstance(value, dict):
        return None
    for key in _ID_KEYS:
        found = value.get(key)
        if isinstance(found, str) and found:
            return found[:80]
    payload = value.get("payload")
    return _record_id(payload) if isinstance(payload, dict) else None


def type_of_record(value: Any) -> str:
    """A record's type for accounting when its loader did not name one: its ``type`` (or
    ``role``) field, else what kind of value it is."""
    if isinstance(value, MalformedLine):
        return value.record_type
    if isinstance(value, dict):
        for key in ("type", "role"):
            name = value.get(key)
            if isinstance(name, str) and name:
                return name
        return "(object)"
    return f"({type(value).__name__})"


#: Values that are their own plain form (immutable: nothing to copy).
_ATOMS = frozenset({str, int, float, bool, type(None)})


def plain_value(value: Any) -> Any:
    """SDK objects (pydantic models, dataclasses, mappings) as plain JSON-like values: a copy
    that shares nothing mutable with ``value``.

    A pydantic model's ``model_dump(mode="json")`` is plain already; a dataclass is read field
    by field (``dataclasses.asdict`` would deep-copy every field first, only for the copy to be
    converted again).
    """
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {k: plain_value(v) for k, v in value.items()}
    if kind is list or kind is tuple:  # asked before the Mapping ABC, whose test is a Python call
        return [plain_value(v) for v in value]
    if isinstance(value, Mapping):
        return {k: plain_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_unset=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: plain_value(getattr(value, name)) for name in field_names(kind)}
    if kind.__module__.startswith(_TABLE_LIBRARIES):
        return plain_value(_table_value(value))
    return copy.copy(value)


def is_arrow_table(value: Any) -> bool:
    """A pyarrow ``Table`` (or record batch), known by its module: pyarrow is not imported."""
    return type(value).__module__.startswith("pyarrow") and hasattr(value, "column_names")


def is_dataframe(value: Any) -> bool:
    """A pandas ``DataFrame``, known by its module: pandas is not imported."""
    return type(value).__module__.startswith("pandas") and hasattr(value, "columns")


def _is_polars_frame(value: Any) -> bool:
    return type(value).__module__.startswith("polars") and hasattr(value, "columns")


def _is_hf_dataset(value: Any) -> bool:
    """A Hugging Face ``datasets.Dataset`` (not a streamed ``IterableDataset``), known by its
    module: ``datasets`` is not imported."""
    kind = type(value)
    return kind.__module__.startswith("datasets.") and kind.__name__ == "Dataset"


def table_of_runs(value: Any) -> Any:
    """A table whose rows are runs, as :func:`turnfold.scan` reads it and
    ``turnfold.load(table, sample=n)`` one of its rows
    (:class:`~turnfold.formats.tables.TableRuns`): a pyarrow Table or record batch, a pandas
    or Polars DataFrame as it is, a Hugging Face ``Dataset`` formatted as Arrow (its rows as
    selected, shuffled or filtered); None for any other value."""
    if is_arrow_table(value) or is_dataframe(value):
        return value
    if _is_polars_frame(value) and callable(getattr(value, "to_arrow", None)):
        return value
    if _is_hf_dataset(value):
        # Its rows are sliced as they are read: a slice of the Arrow table itself
        # (memory-mapped, not copied) unless rows were selected, shuffled or filtered, then
        # those rows, in that order, taken into memory.
        return value.with_format("arrow")
    return None


def holds_runs(value: Any) -> bool:
    """Whether ``value`` is a table of many runs (:func:`table_of_runs`), or a dict of such
    tables by split (a ``datasets.DatasetDict``)."""
    if is_arrow_table(value) or is_dataframe(value) or _is_polars_frame(value):
        return True
    return type(value).__module__.startswith("datasets.") and hasattr(value, "column_names")


#: The libraries whose values a dataset's row holds once read with pandas, pyarrow or Polars.
_TABLE_LIBRARIES = ("numpy", "pyarrow", "pandas", "polars")


def _table_value(value: Any) -> Any:
    """A NumPy array or number, a pyarrow scalar, a pandas row (what ``df.messages[0]`` of a
    Parquet dataset read with pandas is: an array of dicts) or a Polars cell (a Series) as the
    Python values it holds."""
    for method in ("as_py", "to_dict", "tolist", "to_list"):  # pyarrow, pandas, NumPy, Polars
        convert = getattr(value, method, None)
        if callable(convert):
            return convert()
    return copy.copy(value)


def flat_fields(value: Any) -> dict[str, Any] | None:
    """The fields of a dict or a pydantic model whose values are all strings, numbers, bools
    or None, as a new dict (which shares nothing mutable with ``value``); None for anything
    else (then :func:`plain_value` is the way).

    A pydantic model keeps its fields in ``__dict__``: for a flat one (a function call: its
    name, id and arguments string) this is what ``model_dump`` would give at half the cost,
    except that fields never set are there too, as their defaults.
    """
    fields = value if type(value) is dict else flat_model_fields(value)
    if fields is None or (fields is value and not is_flat(value)):
        return None
    return dict(fields)


def is_flat(fields: Mapping[str, Any]) -> bool:
    """Whether every value of ``fields`` is a string, a number, a bool or None."""
    return _ATOMS.issuperset(map(type, fields.values()))


def flat_model_fields(value: Any) -> dict[str, Any] | None:
    """A flat pydantic model's own field dict, read in place (not copied: the caller only
    reads it), as :func:`flat_fields` would copy it; None for a dict, a model with a
    nested value or extra fields, and anything else."""
    fields = model_fields(value)
    return fields if fields is not None and is_flat(fields) else None


#: The types :func:`model_fields` found a ``model_dump`` on (a class attribute, so every
#: instance has it): a load reads one model per call and response of a run, and the type
#: test costs a third of ``hasattr``. At most :data:`_MODEL_TYPES_KEPT` (classes made on the
#: fly, ``pydantic.create_model``, are asked each time past that).
_MODEL_TYPES: set[type] = set()
_MODEL_TYPES_KEPT = 1024


def model_fields(value: Any) -> dict[str, Any] | None:
    """A pydantic model's own field dict, read in place, its values whatever they are: for a
    reader that takes a few fields by name and tests each (a call's name, id and arguments),
    where testing every value (:func:`flat_model_fields`) would cost more than reading them;
    None for a dict, a model with extra fields, and anything else."""
    kind = type(value)
    if kind not in _MODEL_TYPES:  # a model's type is known after its first (issue 22)
        if kind is dict or not hasattr(value, "model_dump"):
            return None
        if hasattr(kind, "model_dump") and len(_MODEL_TYPES) < _MODEL_TYPES_KEPT:
            _MODEL_TYPES.add(kind)  # every instance has it: the class does
    fields = getattr(value, "__dict__", None)
    if getattr(value, "__pydantic_extra__", None):  # extra fields are dumped, not in __dict__
        return None
    return fields if type(fields) is dict else None


#: The accounting type of a framework's object :func:`plain_each` could not turn into a record.
UNREAD_OBJECT = "(object not read)"


def plain_each(values: Iterable[Any], convert: Callable[[Any], Any]) -> list[Any]:
    """Each of a run's objects (its messages, items, events, steps) as the record ``convert``
    makes of it. One that ``convert`` fails on (an object changed after the framework made
    it, a value its serializer does not know, one that holds itself) is a
    :class:`MalformedLine` naming the object and the failure, which the reader warns of: the
    load loses that object, not the run (L-4)."""
    items = values if isinstance(values, (list, tuple)) else list(values)
    try:  # the usual case: every object converts, at the cost of a comprehension
        return [convert(value) for value in items]
    except MemoryError:
        raise
    except Exception:
        pass
    out: list[Any] = []
    for value in items:
        try:
            out.append(convert(value))
        except MemoryError:
            raise
        except Exception as exc:
            reason = f"{type(value).__name__} not read: {type(exc).__name__}: {exc}"
            out.append(MalformedLine(reason[:500], UNREAD_OBJECT))
    return out


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names (``dataclasses.fields`` walks every field again each call)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _document_records(document: Any) -> Iterator[tuple[int, Any]]:
    if isinstance(document, list):
        yield from enumerate(document, start=1)
    else:
        yield 1, document


def from_json_value(value: Any, name: str = "<object>") -> Source:
    """A value decoded from JSON here (a record of a file of runs), read as :func:`from_object`
    reads it: only plain values, and no one else's, so neither searched for a framework's
    objects nor copied (a sixth of the read of a short run)."""
    return Source(name, _document_records(value), document=value)


def from_object(obj: Any, name: str = "<object>") -> Source:
    """Python objects: a dict, a list of messages or records, SDK objects. Copied, never shared.

    An agent framework's run object is turned into records by the turnfold module that reads
    that framework (:mod:`turnfold.formats.frameworks`), which also names the format: the
    object's type says what it is (spec A-3), so no guess is made from its fields.
    """
    from turnfold.formats.frameworks import adapter_of

    adapter = adapter_of(obj)
    if adapter is not None:
        try:
            document = adapter.plain(obj)
        except MemoryError:
            raise
        except Exception as exc:  # its parts are read one by one: this is the whole object
            reason = f"the {type(obj).__name__} could not be read: {type(exc).__name__}: {exc}"
            raise TranscriptFormatError(name, [adapter.NAME], None, reason[:500]) from exc
        source = Source(name, _document_records(document), document=document)
        source.format = adapter.NAME
        return source
    if holds_runs(obj):  # load() reads a row of a table itself; these hold no one table
        if isinstance(obj, Mapping):  # a DatasetDict
            how = ("a table per split: turnfold.load(dataset['train'], sample=n) reads the "
                   "n-th run of one, turnfold.scan(dataset['train']) every run")  # fmt: skip
        elif table_of_runs(obj) is not None:
            how = ("a row each: turnfold.load(table, sample=n) reads the n-th, "
                   "turnfold.scan(table) every one")  # fmt: skip
        else:  # a streamed IterableDataset
            how = ("read one example at a time: load it without streaming=True, then "
                   "turnfold.load(dataset, sample=n) reads its n-th run")  # fmt: skip
        raise TypeError(f"this {type(obj).__name__} holds many runs, {how}")
    if isinstance(obj, (Iterator, AsyncIterator)):
        # Reading it would use it up, and a framework's live stream is the follower's to read.
        raise TypeError(
            f"a {type(obj).__name__} is a stream: load() reads a finished run, a file or a list "
            "of records; follow a framework's stream with turnfold.follow(...), or load "
            "list(...) of the records it gives"
        )
    try:
        document = plain_value(obj)
    except RecursionError:
        document = _plain_parts(obj, name)
    return Source(name, _document_records(document), document=document)


#: What stands in for a value :func:`plain_value` cannot copy.
_UNCOPIED = "holds itself, or nests deeper than Python's recursion limit: not read"


def _plain_parts(obj: Any, name: str) -> list[Any]:
    """A list of records copied one by one, each that holds itself (a message that refers to
    itself, or to the list) or nests too deeply a :class:`MalformedLine` the loader warns of;
    anything else that cannot be copied is refused with a clear error."""
    if not isinstance(obj, (list, tuple)):
        raise TranscriptFormatError(name, (), None, f"the object {_UNCOPIED}")
    parts: list[Any] = []
    for value in obj:
        try:
            parts.append(plain_value(value))
        except RecursionError:
            parts.append(MalformedLine(f"a record that {_UNCOPIED}"))
    return parts


def _text_of(raw: bytes, number: int, name: str, warnings: list[LoadWarning]) -> str:
    """A line's text; invalid UTF-8 is shown as U+FFFD and said in a warning."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if counted_unlisted(warnings) is None:
            reason = f"invalid UTF-8 at byte {exc.start}; undecodable bytes shown as U+FFFD"
            keep_warning(warnings, LoadWarning(reason=reason, line=number, source=name))
        return raw.decode("utf-8", errors="replace")


_DECODER = json.JSONDecoder()
#: The scanner ``raw_decode`` calls: the decoder's own (its ``__init__`` sets it; typeshed
#: leaves it out). It raises ``StopIteration`` where no value starts.
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
#: Tools glue a few records on a line; a line of more values is no such line, and decoding it
#: value by value in Python cost minutes and gigabytes (a 64 MB line of ``0`` or ``{}``: X-1).
MAX_GLUED_VALUES = 1000


def _glued_values(line: str) -> list[Any]:
    """``{...}{...}`` on one line (seen in Qwen Code files) as its values.

    Only objects and arrays are glued records: a log line's leading ``2026-01-01`` is no
    record of 2026, 0 and 1 but one line that is not JSON. A tail that does not parse (a
    truncated last object) ends the list as a ``MalformedLine``, so the complete objects before
    it are still read. A line with no complete object, or with more than
    :data:`MAX_GLUED_VALUES`, gives [].
    """
    values: list[Any] = []
    index, end = 0, len(line.rstrip())
    # The scanner ``raw_decode`` calls, called here: raw_decode's frame for each value, and the
    # error it builds for the text after them, were most of the read of a file of bad lines.
    scan = _SCAN
    while index < end:
        try:
            value, index = scan(line, index)
        except StopIteration:  # no value starts there: raw_decode's "Expecting value"
            reason = "Expecting value"
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, or a value too deep or long
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        else:
            if isinstance(value, dict | list):
                values.append(value)
                if len(values) > MAX_GLUED_VALUES:
                    return []
                while index < end and line[index].isspace():
                    index += 1
                continue
            reason = "a value that is no object"
        if values:
            values.append(
                MalformedLine(f"invalid JSON after {len(values)} glued objects: {reason}")
            )
        return values
    return values


def _oversized(line: Oversized) -> MalformedLine:
    limit = record_limit()
    return MalformedLine(
        f"a record of {line.size:,} bytes, over the limit of {limit:,} "
        "(TURNFOLD_MAX_RECORD_BYTES); skipped unread"
    )


#: The characters a JSON value can start with, as the stdlib reads it (``NaN``, ``Infinity``
#: and ``-Infinity`` too): at any other the scanner stops with "Expecting value".
_VALUE_STARTS = frozenset('{["-0123456789tfnNI')
#: The whitespace JSON passes over between values (``str.lstrip`` passes over more).
_JSON_SPACE = " \t\n\r"


def _refused(
    raw: bytes, number: int, name: str, warnings: list[LoadWarning]
) -> list[tuple[int, Any]]:
    """The values of a line whose bytes the fast decoder refused (:func:`_careful`); when they
    are UTF-8, their text is what msgspec refused, and only the stdlib is asked again."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:  # shown with U+FFFD, which msgspec may read
        return _careful(_text_of(raw, number, name, warnings), number)
    return _careful(text, number, codec.loads_refused)


def _careful(
    text: str, number: int, loads: Callable[[str], Any] = codec.loads
) -> list[tuple[int, Any]]:
    """The values of a line the fast decoder refused: ``NaN``, glued objects, or none; read
    with ``loads``. A list, not a generator: a file of millions of bad lines makes one each."""
    if not text or text.isspace():  # no copy of a long line just to test it
        return []
    start = len(text) - len(text.lstrip(_JSON_SPACE))
    first = text[start]
    if first not in _VALUE_STARTS and not first.isspace() and first != "\ufeff":
        # No value starts here, so no decoder is asked (nor are glued values looked for): a log
        # line or binary bytes. The stdlib's message and column, without raising its error
        # twice a line, which made a file of millions of such lines take minutes.
        column = start - text.rfind("\n", 0, start)
        reason = f"invalid JSON: Expecting value (column {column})"
        return [(number, MalformedLine(reason, text=_kept(text)))]
    try:
        return [(number, loads(text))]
    except codec.UnreadableJSON as exc:
        return [(number, MalformedLine(exc.msg, text=_kept(text)))]
    except json.JSONDecodeError as exc:
        # Glued values need a complete first value, where the stdlib started too: any error
        # but "Extra data" says there is none, unless lstrip passes over more than JSON's
        # whitespace (a vertical tab, a no-break space) and the glued values start later.
        glued = _glued_values(text.lstrip()) if exc.msg == "Extra data" or first.isspace() else ()
        if len(glued) < 2:
            return [(number, MalformedLine(_json_mistake(exc, text), text=_kept(text)))]
        return [(number, value) for value in glued]


def _json_mistake(exc: json.JSONDecodeError, text: str) -> str:
    """Why a line is no JSON, at the column where the decoder stopped: the standard library's
    words; but where it stopped past the line's ending (a record cut off, its value still
    open), the line's end, not the first column of the next line, where it counts it."""
    if exc.lineno == 1:
        return f"invalid JSON: {exc.msg} (column {exc.colno})"
    return f"invalid JSON: {exc.msg} (column {len(text.rstrip()) + 1}, where the line ends)"


def _kept(text: str) -> str:
    """What a bad line's :class:`MalformedLine` keeps of it: its start, no line ending."""
    return text[:KEPT_TEXT_CHARS].rstrip("\r\n")


def _parse_lines(
    lines: Iterable[tuple[int, bytes | Oversized]], name: str, warnings: list[LoadWarning]
) -> Iterator[tuple[int, Any]]:
    fast, refused = codec.fast_loads, codec.FastDecodeError
    for number, raw in lines:
        if isinstance(raw, Oversized):
            yield number, _oversized(raw)
            continue
        try:
            value = fast(raw)  # the bytes as read: no decoded copy of the line
        except refused:
            yield from _refused(raw, number, name, warnings)
        else:
            yield number, value


def _tar_refused(path: Path | None) -> str:
    """Why a tar archive is read as no transcript, and what reads it. ``load()`` looks for an
    OpenHands session among its members only up to the listing's bounds
    (:func:`~turnfold.formats.harnesses.archive.find_member`): one that lies past them is read
    whole when its format is named."""
    extract = "extract it (tar -xf) and load or scan its files"
    if path is not None:
        # Only a refusal needs it: the formats' modules are not imported to read a file.
        from turnfold.formats.harnesses.openhands import holds_sessions

        peek = holds_sessions(path)
        if peek is not None and peek.unread is not None:
            return (
                f"a tar archive with no OpenHands session in the part looked at: {peek.unread}. "
                f"turnfold.load(path, format='openhands') reads it whole, or {extract}"
            )
    return f"a tar archive: {extract}"


def from_binary_stream(
    stream: Iterable[bytes], name: str, *, path: Path | None = None, size: int | None = None
) -> Source:
    """A byte stream of JSON lines or of one JSON document (pretty-printed JSON included)."""
    warnings: list[LoadWarning] = []
    limit = record_limit()

    def stopped(reason: str) -> None:
        warnings.append(LoadWarning(reason=reason, source=name))

    text = compressed.decompressed(stream, limit, stopped)
    if text is not stream:
        size = None  # the bar would count the text against the compressed size
    if compressed.is_tar(text):  # an archive of files, each read on its own once extracted
        raise TranscriptFormatError(name, [], None, _tar_refused(path))
    stream = _utf8_of(text)
    counter = None
    if size is not None and size >= PROGRESS_MIN_BYTES and not progress.is_muted():
        counter = _Progress(size, name)
    chunked = _Lines(stream, limit, counter) if hasattr(stream, "readline") else None
    lines: Iterator[tuple[int, bytes | Oversized]]
    if chunked is not None:
        lines = chunked.lines()
    else:
        lines = enumerate(stream if counter is None else counter.counted(stream), start=1)

    def rest() -> Iterator[tuple[int, Any]]:
        """The parsed values of the lines after those taken from ``lines``."""
        if chunked is not None:
            return chunked.records(name, warnings)
        return _parse_lines(lines, name, warnings)

    first = next(lines, None)
    while first is not None and isinstance(first[1], bytes) and first[1].isspace():
        first = next(lines, None)
    if first is None:
        return Source(name, iter(()), path=path, warnings=warnings)
    number, raw = first
    if isinstance(raw, Oversized):
        return Source(
            name, itertools.chain(((number, _oversized(raw)),), rest()), path=path,
            warnings=warnings,
        )  # fmt: skip
    text = _text_of(raw, number, name, warnings)
    try:
        value = codec.loads(text)
    except json.JSONDecodeError as error:
        if text.lstrip().startswith(("{", "[")):
            ahead: list[tuple[int, bytes | Oversized]] = []

            def after() -> str:
                taken, seen = looked_ahead(lines)
                ahead.extend(taken)
                return seen

            if how_it_opens(text, error, after) == "cut":
                # JSON lines whose writer died mid-record, then went on: the cut line
                # costs its record alone, not the file read whole as one document.
                parsed = _parse_lines(ahead, name, warnings)
                each = itertools.chain(_careful(text, number), parsed, rest())
                return Source(name, each, path=path, warnings=warnings)
            # Maybe one multi-line JSON document (Gemini's legacy chat files are pretty-printed).
            whole = _whole_document(text, itertools.chain(ahead, lines), limit, name, warnings)
            try:
                document = codec.loads(whole)
            except codec.UnreadableJSON as exc:
                # One document no reader can hold (nested too deep): said so, not as its
                # first line's "invalid JSON".
                said = iter([(number, MalformedLine(exc.msg))])
                return Source(name, said, path=path, warnings=warnings)
            except json.JSONDecodeError:
                glued = _pretty_values(whole, number)
                records = iter(glued) if glued is not None else _split(whole, number)
                return Source(name, records, path=path, warnings=warnings)
            return Source(
                name, _document_records(document), path=path, document=document, warnings=warnings
            )
        # A first line with a NUL byte, or no UTF-8 (a U+FFFD its decoding put in), is no
        # text: a binary file (an image, a program, a table in a format no reader takes), said
        # as such, not as broken JSON.
        binary = b"\0" in raw or ("\ufffd" in text and "\ufffd".encode() not in raw)
        value = MalformedLine("binary data, not JSON text" if binary else "invalid JSON")
    others = rest()
    second = next(others, None)
    if second is None and isinstance(value, (dict, list)):
        # The whole input was one JSON value on one line: a document (a single JSONL record is
        # still found among its records).
        return Source(name, _document_records(value), path=path, document=value, warnings=warnings)
    # A chain, not a generator: no frame of ours to resume for each record.
    head = ((number, value),) if second is None else ((number, value), second)
    return Source(name, itertools.chain(head, others), path=path, warnings=warnings)


#: The byte order marks of the encodings other than UTF-8 a JSON file may come in: Windows
#: PowerShell 5 writes UTF-16 with ``>`` and ``Out-File``.
_BYTE_ORDER_MARKS = {
    b"\xff\xfe\x00\x00": "utf-32",
    b"\x00\x00\xfe\xff": "utf-32",
    b"\xff\xfe": "utf-16",
    b"\xfe\xff": "utf-16",
}


def marked_encoding(stream: Any) -> str | None:
    """The encoding other than UTF-8 a file's byte order mark names (None: UTF-8, or a stream
    that cannot be peeked at)."""
    peek = getattr(stream, "peek", None)
    start = peek(4)[:4] if peek is not None else b""
    return next((code for mark, code in _BYTE_ORDER_MARKS.items() if start.startswith(mark)), None)


def _utf8_of(stream: Any) -> Any:
    """``stream`` as UTF-8 bytes: a file that starts with a UTF-16 or UTF-32 byte order mark is
    decoded as it is read (a UTF-8 mark is passed over by the parse itself)."""
    encoding = marked_encoding(stream)
    return stream if encoding is None else _Transcoded(stream, encoding)


def _kept_undecodable(error: UnicodeError) -> tuple[str, int]:
    """What does not decode in a UTF-16 or UTF-32 file (a lone surrogate, a cut-off last
    character) as the one byte 0xFF (written by ``surrogateescape``), which UTF-8 never holds:
    the line it is on is then an invalid UTF-8 line, shown with U+FFFD and warned of like any
    other (:func:`_text_of`)."""
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return "\udcff", error.end


codecs.register_error("turnfold-kept", _kept_undecodable)


class _Transcoded:
    """A binary stream in another encoding, read as UTF-8; what does not decode is kept as
    bytes UTF-8 cannot hold, so its line is warned of (:func:`_kept_undecodable`)."""

    def __init__(self, stream: IO[bytes], encoding: str) -> None:
        self._text = io.TextIOWrapper(stream, encoding=encoding, errors="turnfold-kept", newline="")

    def read(self, size: int = -1) -> bytes:
        text = self._text.read(size if size < 0 else max(1, size // 2))
        return text.encode("utf-8", "surrogateescape")

    def readline(self) -> bytes:  # what from_binary_stream looks for in a byte stream
        return self._text.readline().encode("utf-8", "surrogateescape")


def _whole_document(
    first: str,
    lines: Iterator[tuple[int, bytes | Oversized]],
    limit: int,
    name: str,
    warnings: list[LoadWarning],
) -> str:
    """The rest of a multi-line JSON document, refused past ``limit`` bytes (a document cannot
    be read in parts, so a larger one would have to be held whole)."""
    parts, size = [first], len(first)
    for number, line in lines:
        size += len(line)
        if isinstance(line, Oversized) or size > limit:
            reason = (
                f"a JSON document over the limit of {limit:,} bytes "
                "(TURNFOLD_MAX_RECORD_BYTES); not read"
            )
            raise TranscriptFormatError(name, (), number, reason)
        parts.append(_text_of(line, number, name, warnings))
    return "".join(parts)


#: How much of the lines after a first line that opens a JSON value without closing it is read
#: to tell a pretty-printed value from a record cut off at its line's end (:func:`cut_off_record`).
LOOK_AHEAD_BYTES = 1 << 20


#: How a stream opens whose first line is no JSON value (:func:`how_it_opens`): with a value
#: pretty-printed past it, with a record of JSON lines cut off at its end, or with a mistake
#: within the line.
Opening = Literal["value", "cut", "mistake"]


def how_it_opens(first: str, error: json.JSONDecodeError, after: Callable[[], str]) -> Opening:
    """How a byte stream opens whose first line that is not blank, ``first``, is no JSON value
    (reading it stopped at ``error``): the one test of pretty-printed JSON against JSON lines,
    which a load makes (:func:`from_binary_stream`) and a scan that cuts a file of runs at its
    lines' ends (:mod:`turnfold.corpus.runs`).

    ``"value"``: its JSON runs out at the line's end and on through ``after()`` (the complete
    lines after it within :data:`LOOK_AHEAD_BYTES`, read only then), the opening of a value
    pretty-printed past it; ``"cut"``: a record of JSON lines cut off at its end, the lines
    after it breaking the value it opened (:func:`cut_off_record`); ``"mistake"``: its JSON
    runs into a mistake within the line (a bad record, glued objects), which tells neither.
    """
    if error.pos < len(first.removeprefix("\ufeff").rstrip()):
        return "mistake"
    return "cut" if cut_off_record(first, after()) else "value"


def cut_off_record(first: str, after: str) -> bool:
    """Whether ``first``, a line whose JSON value runs out at its end, is a record cut off there
    (its writer died mid-record, then went on writing JSON lines), not the opening of a value
    pretty-printed over the lines ``after`` it (complete lines, up to :data:`LOOK_AHEAD_BYTES`):
    the record after a cut one breaks the value it opened where a comma or a closing bracket
    must come, while a pretty-printed value ends, or runs out as far as ``after`` goes.

    A value that runs out of ``after`` too is taken for pretty-printed and read whole, as it
    was before: a file that turns out to be JSON lines is then still read line by line
    (:func:`_split`), but only within :func:`record_limit`, and held whole meanwhile.
    """
    text = first.removeprefix("\ufeff").lstrip() + after
    try:
        _DECODER.raw_decode(text)
    except json.JSONDecodeError as exc:
        return exc.pos < len(text.rstrip())
    except (ValueError, RecursionError):  # a value too deep or too long: no mistake seen
        return False
    return False


def looked_ahead(
    lines: Iterator[tuple[int, bytes | Oversized]],
) -> tuple[list[tuple[int, bytes | Oversized]], str]:
    """The lines taken from ``lines`` to look past a first line (:func:`how_it_opens`), and
    the text of those of them within :data:`LOOK_AHEAD_BYTES`."""
    taken: list[tuple[int, bytes | Oversized]] = []
    seen: list[bytes] = []
    size = 0
    for number, line in lines:
        taken.append((number, line))
        size += len(line)
        if isinstance(line, Oversized) or size > LOOK_AHEAD_BYTES:
            break
        seen.append(line)
    return taken, b"".join(seen).decode("utf-8", "replace")


def _pretty_values(text: str, first_number: int) -> list[tuple[int, Any]] | None:
    """The values of a text of several pretty-printed JSON values one after another (what
    OpenTelemetry's ``ConsoleSpanExporter`` prints by default: each span's ``to_json()``,
    indented), each numbered by the line it starts on; a last one cut off ends them as a
    :class:`MalformedLine`. None when the text opens with no complete value, or holds one
    alone, or each on a line of its own (JSON lines, read line by line, where a bad line
    costs that line only)."""
    values: list[tuple[int, Any]] = []
    index, end, line = 0, len(text.rstrip()), first_number
    pretty = False
    while index < end:
        start = index
        while start < end and text[start].isspace():
            start += 1
        line += text.count("\n", index, start)
        try:
            value, index = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, or a value too deep
            if not values:
                return None
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            values.append(
                (line, MalformedLine(f"invalid JSON after {len(values)} values: {reason}"))
            )
            break
        values.append((line, value))
        spanned = text.count("\n", start, index)
        line, pretty = line + spanned, pretty or spanned > 0
    return values if len(values) > 1 and pretty else None


def _split(text: str, first_number: int) -> Iterator[tuple[int, Any]]:
    """The lines of a text that was no JSON document after all, each read on its own."""
    for offset, line in enumerate(io.StringIO(text)):
        yield from _careful(line, first_number + offset)


class _Progress:
    """A progress bar over the bytes of a file, shown once reading it has taken
    :data:`PROGRESS_DELAY_S`; the clock is read once a :data:`_PROGRESS_STEP`, not once a line.

    tqdm is imported only then (:mod:`turnfold.progress`): as much as loading a few megabytes.
    """

    def __init__(self, size: int, name: str) -> None:
        self.size, self.name = size, name
        self.started = time.monotonic()
        self.pending = self.done = 0
        self.bar: Any = None

    def add(self, count: int) -> None:
        """``count`` more bytes were read."""
        self.pending += count
        if self.pending < _PROGRESS_STEP:
            return
        if self.bar is not None:
            self.bar.update(self.pending)  # tqdm.update per line would cost more than the parse
        else:
            self.done += self.pending
            if time.monotonic() - self.started >= PROGRESS_DELAY_S:
                self.bar = _progress_bar(self.size, self.name, self.done)
        self.pending = 0

    def close(self) -> None:
        """The reading ended (or stopped): the bar, if one is shown, goes."""
        if self.bar is not None:
            self.bar.update(self.pending)
            self.bar.close()
            self.bar = None

    def counted(self, stream: Iterable[bytes | Oversized]) -> Iterator[bytes | Oversized]:
        """The lines of a stream that is no file, each counted as it is read."""
        try:
            for raw in stream:
                self.add(len(raw))
                yield raw
        finally:
            self.close()


def _progress_bar(size: int, name: str, done: int) -> Any:
    return progress.bar(size, f"Loading {Path(name).name}", "B", initial=done, unit_scale=True,
                        leave=False)  # fmt: skip


def expanded(path: str) -> str:
    """``~`` (or ``~user``) at the start of a path typed in a notebook, read as a shell reads
    it (none is there to do it), unless a file of that very name exists."""
    return os.path.expanduser(path) if path.startswith("~") and not os.path.exists(path) else path


#: What a loader is told of a folder it could not list: the folder, and why.
NotListed = Callable[[Path, OSError], None]


def sibling_files(folder: Path, pattern: str, not_listed: NotListed | None = None) -> list[Path]:
    """The regular files in ``folder`` that match ``pattern``, in name order: a session's
    sibling files (its sub-agents' sessions and their metadata), which a loader opens unasked,
    so a named pipe or a device among them is passed over, never waited on forever.

    ``pattern`` is matched a name a level, as :meth:`Path.glob` matches it (``*/*.json``: the
    files of each folder in ``folder``; no ``**``). A ``folder`` that is not there holds
    nothing. A folder that is there but cannot be listed (permission denied, gone since it was
    found, an I/O error) holds files the corpus counts as the session's, so it is never passed
    over in silence, as ``glob`` passes it (:func:`folder_not_listed`): it is handed to
    ``not_listed`` with its error, the other folders still listed; without it, the error is
    raised.
    """
    try:
        if not folder.is_dir():
            return []
    except OSError as error:  # a folder above it cannot be searched
        _not_listed(folder, error, not_listed)
        return []
    level = [folder]
    parts = pattern.split("/")
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        found: list[Path] = []
        for parent in level:
            try:
                with os.scandir(parent) as listing:
                    entries = [entry for entry in listing if fnmatch.fnmatch(entry.name, part)]
            except OSError as error:
                _not_listed(parent, error, not_listed)
                continue
            for entry in entries:
                try:  # told by the folder's listing, but a link's target is looked at
                    kept = entry.is_file() if last else entry.is_dir()
                except OSError as error:
                    _not_listed(parent, error, not_listed)
                    continue
                if kept:
                    found.append(parent / entry.name)
        level = found
    return sorted(level)


def found_file(path: Path, not_listed: NotListed) -> bool:
    """Whether ``path``, a session's file looked up by its name, is a regular file. A folder
    above it that cannot be searched (permission denied: the look raises, where
    :meth:`Path.is_file` says False only of a file not there) holds none, and is told to
    ``not_listed``, as a folder that cannot be listed is."""
    try:
        return path.is_file()
    except OSError as error:
        not_listed(path.parent, error)
        return False


def _not_listed(folder: Path, error: OSError, told: NotListed | None) -> None:
    if told is None:
        raise error
    told(folder, error)


def folder_not_listed(folder: Path | str, error: OSError, unread: str) -> str:
    """What a warning says of a folder of a session that could not be listed: the folder, why,
    and what of the session is not read for it (``unread``, which names the files looked for).

    >>> denied = PermissionError(13, "Permission denied", "s/subagents")
    >>> folder_not_listed(Path("s/subagents"), denied, "sub-agent files")
    's/subagents could not be listed (Permission denied): its sub-agent files are not read'
    """
    return f"{_could_not_list(folder, error)}: its {unread} are not read"


def _could_not_list(folder: Path | str, error: OSError) -> str:
    why = error.strerror or str(error)
    if error.filename is not None and str(error.filename) != str(folder):
        why = f"{why}: {error.filename}"  # an entry of it (a link's target), not the folder
    return f"{folder} could not be listed ({why})"


#: What a load of a folder cannot do when a folder that tells its kind cannot be listed.
KIND_NOT_TOLD = "which kind of run it is cannot be told"


def not_listed_error(
    path: Path | str, folder: Path | str, error: OSError, then: str = KIND_NOT_TOLD
) -> OSError:
    """The error of a load of ``path`` that cannot go on, ``folder`` (``path`` itself, or a
    folder in it) not listed: ``then`` says what it cannot do without it. Of the listing's
    error's class and number, and naming ``path`` as the error of a file that cannot be read
    names the file: ``load()`` raises it where it raises that one (spec L-4).

    >>> denied = PermissionError(13, "Permission denied", "run/events")
    >>> error = not_listed_error(Path("run"), Path("run/events"), denied)
    >>> type(error).__name__, error.errno, error.filename
    ('PermissionError', 13, 'run')
    >>> error.strerror.removesuffix(KIND_NOT_TOLD)
    'run/events could not be listed (Permission denied): '
    """
    reason = f"{_could_not_list(folder, error)}: {then}"
    if error.errno is None:  # no number to keep: no ``[Errno None]`` either
        return OSError(f"{path}: {reason}")
    return OSError(error.errno, reason, str(path))  # PermissionError for EACCES: OSError's own


def once_a_folder(say: NotListed, said: set[Path] | None = None) -> NotListed:
    """``say`` for each folder the first time it is told (``said``: the folders told already,
    shared by the lookups of one session): a folder several lookups list is said once.

    >>> told = []
    >>> tell = once_a_folder(lambda folder, error: told.append(folder))
    >>> for _ in range(2):
    ...     tell(Path("s/subagents"), PermissionError(13, "Permission denied"))
    >>> told
    [PosixPath('s/subagents')]
    """
    said = set() if said is None else said

    def once(folder: Path, error: OSError) -> None:
        if folder not in said:
            said.add(folder)
            say(folder, error)

    return once


class Unlisted:
    """The folders a probe of a path's kind could not list, each with its error: a
    :data:`NotListed` that keeps them, for :meth:`not_mine`."""

    def __init__(self) -> None:
        self.folders: list[tuple[Path, OSError]] = []

    def __call__(self, folder: Path, error: OSError) -> None:
        if all(folder != kept for kept, _ in self.folders):  # met by several looks: once
            self.folders.append((folder, error))

    def not_mine(self, path: Path) -> None:
        """What a format that reads folders says of ``path`` when its probe did not find it of
        its kind: None; but raised, a :func:`not_listed_error` naming the first folder it
        could not list, when there is one, for that is no sign ``path`` is not of its kind:
        ``load()`` then says the path could not be read, not that it is of no kind it knows."""
        if self.folders:
            raise not_listed_error(path, *self.folders[0])


class TooLarge(Exception):
    """A file holding more than :func:`record_limit` bytes, not read."""

    def __init__(self, path: Path, size: int) -> None:
        self.path = path
        self.size = size
        super().__init__(self.reason)

    @property
    def reason(self) -> str:
        """What a warning of the file says (as a skipped record's does)."""
        return (f"{self.path}: {self.size:,} bytes, over the limit of {record_limit():,} "
                f"({RECORD_LIMIT_ENV}); not read")  # fmt: skip


def read_bounded(path: Path) -> bytes:
    """The bytes of the file at ``path``, read no further than
    :func:`record_limit`: :class:`TooLarge` when it holds more (told
    by its size before a byte is read, or by what it held when it grew since)."""
    limit = record_limit()
    with path.open("rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        if size > limit:
            raise TooLarge(path, size)
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(path, len(data))
    return data


def json_object_file(path: Path) -> dict[str, Any]:
    """The JSON object in a sibling file (a sub-agent's ``.meta.json``); empty when there is
    none: no such regular file, unreadable, or not an object (it only adds a link or a name).
    It is read no further than :func:`record_limit`, as a document is: one larger (a hostile
    or broken file) is not read, and a warning names it, as what it would add is missing."""
    try:
        if not path.is_file():  # its folder not searchable: raised, as by the read below
            return {}
        data = read_bounded(path)
    except OSError:
        return {}
    except TooLarge:
        from turnfold.userwarn import warn_at_caller  # only for a file too large: rare

        warn_at_caller(f"{path}: not read, over the limit of {record_limit():,} bytes "
                       f"({RECORD_LIMIT_ENV})")  # fmt: skip
        return {}
    try:
        value = codec.loads(data)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def open_source(source: Any) -> tuple[Source, IO[bytes] | None]:
    """The :class:`Source` of anything ``load()`` accepts, and the file it opened (to close).

    A ``str`` is text when it holds a newline or starts like JSON (unless it names an existing
    file), otherwise a path.
    """
    if isinstance(source, Transcript):
        raise TypeError("already a Transcript")
    if isinstance(source, (bytes, bytearray, memoryview)):
        return from_binary_stream(io.BytesIO(bytes(source)), "<bytes>"), None
    if isinstance(source, str) and looks_like_text(source):
        return from_binary_stream(io.BytesIO(source.encode("utf-8")), "<text>"), None
    if isinstance(source, (str, os.PathLike)):
        path = Path(expanded(os.fspath(source)))
        if isinstance(source, str) and _URL.match(source) and not path.exists():
            raise ValueError(
                f"{source}: load() reads files, not addresses; download it first (for instance "
                "urllib.request.urlretrieve(url, 'session.jsonl')) and load the file"
            )
        if path.is_dir():
            raise IsADirectoryError(
                f"{path} is a folder: load() reads one session file; pass one of its files, "
                "or scan the folder for all of them"
            )
        stream = path.open("rb")
        try:
            info = os.fstat(stream.fileno())
            if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
                # /dev/zero or /dev/urandom would be read for ever (a pipe ends; a device need
                # not)
                raise ValueError(f"{path} is a device, not a file: load() reads session files")
            return from_binary_stream(stream, str(path), path=path, size=info.st_size), stream
        except BaseException:
            # Refused before it is handed over (a document over the record limit, a tar
            # archive): the caller never gets the stream to close.
            stream.close()
            raise
    if hasattr(source, "read"):
        name = str(getattr(source, "name", "<stream>"))
        named = Path(name) if isinstance(getattr(source, "name", None), str) else None
        binary = getattr(source, "buffer", None) if isinstance(source, io.TextIOBase) else source
        if binary is None or isinstance(binary, io.TextIOBase):
            text = source.read()
            data = text.encode("utf-8") if isinstance(text, str) else text
            return from_binary_stream(io.BytesIO(data), name, path=named), None
        if compressed.compression_of(binary) is not None:  # read through its decompressor
            return from_binary_stream(binary, name, path=named), None
        return from_binary_stream(_BinaryLines(binary), name, path=named), None
    return from_object(source), None


def read_file(path: Path, read: Callable[[Source], Transcript]) -> Transcript:
    """What ``read`` reads of the file at ``path`` opened as JSON records, the file closed and
    its source handed over (:meth:`Source.hand_over`): a ``read_path`` given a file of its
    format that it does not read itself."""
    source, stream = open_source(path)
    try:
        transcript = read(source)
    finally:
        if stream is not None:
            stream.close()
    return source.hand_over(transcript)


class _BinaryLines:
    """Line iteration over any object with ``read`` that returns bytes."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        if hasattr(self._stream, "readline"):
            yield from iter(self._stream.readline, b"")
        else:
            yield from io.BytesIO(self._stream.read())


#: An address (``https://…``, ``s3://…``), not a path.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def looks_like_text(source: str) -> bool:
    """Whether a ``str`` given to ``load()`` is the transcript's text rather than a path."""
    stripped = source.lstrip()
    if not stripped or "\n" in source:
        return True
    return stripped.startswith(("{", "[")) and not os.path.exists(source)
