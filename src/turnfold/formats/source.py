"""What ``load()`` was given, as JSON records a format can read (spec L-2, L-4).

A :class:`Source` streams a JSONL file line by line (never ``read()`` + ``json.loads`` of the
whole file), keeps the first records in ``head`` so formats can be detected without consuming the
stream, and records reader-level problems (invalid UTF-8) as warnings. A single JSON document or
Python objects become ``document``; its items (or the document itself) are also its records.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from turnfold import codec
from turnfold.formats.errors import MalformedLine
from turnfold.model import Accounting, Disposition, LoadWarning, Transcript

#: How many records detection may look at.
HEAD_SIZE = 30
#: Files at least this big show a progress bar (after tqdm's delay, so fast loads stay quiet).
PROGRESS_MIN_BYTES = 8 * 1024 * 1024
#: A load that ends sooner shows no bar at all.
PROGRESS_DELAY_S = 1.0
_PROGRESS_STEP = 1024 * 1024
NO_DOCUMENT: Any = object()
#: The largest record (one JSON line, or a whole JSON document) a load reads, in bytes; larger
#: ones are skipped with a warning (a line) or refused (a document) so that a hostile or broken
#: file cannot exhaust the kernel's memory. ``TURNFOLD_MAX_RECORD_BYTES`` overrides it.
MAX_RECORD_BYTES = 256 * 1024 * 1024


def record_limit() -> int:
    """:data:`MAX_RECORD_BYTES`, or the ``TURNFOLD_MAX_RECORD_BYTES`` environment variable."""
    value = os.environ.get("TURNFOLD_MAX_RECORD_BYTES", "")
    return int(value) if value.isdigit() and int(value) > 0 else MAX_RECORD_BYTES


@dataclasses.dataclass(frozen=True)
class Oversized:
    """Stands in for a line longer than :func:`record_limit`, which was skipped unread."""

    size: int

    def __len__(self) -> int:
        return self.size


def bounded_lines(stream: Any, limit: int) -> Iterator[bytes | Oversized]:
    """The lines of a binary stream, each read with at most ``limit + 1`` bytes in memory.

    A longer line is read on in chunks without keeping them and comes out as :class:`Oversized`.
    """
    readline = stream.readline
    while True:
        raw = readline(limit + 1)
        if not raw:
            return
        if len(raw) <= limit or raw.endswith(b"\n"):
            yield raw
            continue
        size = len(raw)
        while raw and not raw.endswith(b"\n"):
            raw = readline(1 << 20)
            size += len(raw)
        yield Oversized(size)


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
    ) -> None:
        self.name = name
        self.path = path
        self.document = document
        #: The format the input's own types name (a framework's run object), None: detect it.
        self.format: str | None = None
        self.warnings: list[LoadWarning] = warnings if warnings is not None else []
        #: What the loader did with each record (issue 11); see :meth:`note`.
        self.accounting = Accounting()
        self._current: tuple[int, Any] | None = None  # the record records() yielded last
        self._noted = True
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
        listed in ``accounting.unaccounted``.
        """
        if self._consumed:
            raise RuntimeError(f"{self.name}: records() can be read only once")
        self._consumed = True
        unaccounted = self.accounting.unaccounted
        for record in self._all():
            self._current, self._noted = record, False
            yield record
            if not self._noted:
                unaccounted.append((record[0], type_of_record(record[1])))
        self._current, self._noted = None, True

    def _all(self) -> Iterator[tuple[int, Any]]:
        yield from self.head
        yield from self._rest

    def note(self, record_type: str, disposition: Disposition) -> None:
        """Account for one record: the current one of :meth:`records`, or one a loader walks
        itself (a message of a JSON document)."""
        self.accounting.note(record_type, disposition)
        self._noted = True

    def mapped(self, record_type: str) -> None:
        """The record became entries, metadata or an update of earlier entries."""
        self.note(record_type, "mapped")

    def ignored(self, record_type: str) -> None:
        """The record is left out by design (listed in the format's ``RECORDS``)."""
        self.note(record_type, "ignored")

    def warn(
        self, reason: str, line: int | None = None, *, record_type: str | None = None
    ) -> LoadWarning:
        """Record a problem with this source and return the warning.

        A warning on the line of the current record (or naming a ``record_type``) accounts for
        that record as warned about, unless the loader already said what it did with it.
        """
        current = self._current
        at = current if current is not None and line is not None and current[0] == line else None
        record = _record_id(at[1]) if at is not None else None
        warning = LoadWarning(reason=reason, line=line, source=self.name, record=record)
        self.warnings.append(warning)
        if record_type is not None:
            self.note(record_type, "warned")
        elif not self._noted and at is not None:
            self.note(type_of_record(at[1]), "warned")
        return warning


#: Keys under which formats keep a record's own id, most specific first.
_ID_KEYS = ("uuid", "id", "call_id", "event_id")


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
        return "(invalid JSON)"
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
    if kind is dict or isinstance(value, Mapping):
        return {k: plain_value(v) for k, v in value.items()}
    if kind is list or isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_unset=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return copy.copy(value)


def _document_records(document: Any) -> Iterator[tuple[int, Any]]:
    if isinstance(document, list):
        yield from enumerate(document, start=1)
    else:
        yield 1, document


def from_object(obj: Any, name: str = "<object>") -> Source:
    """Python objects: a dict, a list of messages or records, SDK objects. Copied, never shared.

    An agent framework's run object is turned into records by the turnfold module that reads
    that framework (:mod:`turnfold.formats.frameworks`), which also names the format: the
    object's type says what it is (spec A-3), so no guess is made from its fields.
    """
    from turnfold.formats.frameworks import adapter_of

    adapter = adapter_of(obj)
    if adapter is not None:
        document = adapter.plain(obj)
        source = Source(name, _document_records(document), document=document)
        source.format = adapter.NAME
        return source
    document = plain_value(obj)
    return Source(name, _document_records(document), document=document)


def _text_of(raw: bytes, number: int, name: str, warnings: list[LoadWarning]) -> str:
    """A line's text; invalid UTF-8 is shown as U+FFFD and said in a warning."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"invalid UTF-8 at byte {exc.start}; undecodable bytes shown as U+FFFD"
        warnings.append(LoadWarning(reason=reason, line=number, source=name))
        return raw.decode("utf-8", errors="replace")


_DECODER = json.JSONDecoder()


def _glued_values(line: str) -> list[Any]:
    """``{...}{...}`` on one line (seen in Qwen Code files) as its values.

    A tail that does not parse (a truncated last object) ends the list as a ``MalformedLine``,
    so the complete objects before it are still read. A line with no complete value gives [].
    """
    values: list[Any] = []
    index, end = 0, len(line.rstrip())
    while index < end:
        try:
            value, index = _DECODER.raw_decode(line, index)
        except json.JSONDecodeError as exc:
            if values:
                values.append(
                    MalformedLine(f"invalid JSON after {len(values)} glued objects: {exc.msg}")
                )
            return values
        values.append(value)
        while index < end and line[index].isspace():
            index += 1
    return values


def _oversized(line: Oversized) -> MalformedLine:
    limit = record_limit()
    return MalformedLine(
        f"a record of {line.size:,} bytes, over the limit of {limit:,} "
        "(TURNFOLD_MAX_RECORD_BYTES); skipped unread"
    )


def _careful(text: str, number: int) -> Iterator[tuple[int, Any]]:
    """The values of a line the fast decoder refused: ``NaN``, glued objects, or none."""
    if not text or text.isspace():  # no copy of a long line just to test it
        return
    try:
        yield number, codec.loads(text)
    except json.JSONDecodeError as exc:
        glued = _glued_values(text.lstrip())
        if len(glued) < 2:
            yield number, MalformedLine(f"invalid JSON: {exc.msg} (column {exc.colno})")
        else:
            for value in glued:
                yield number, value


def _parse_lines(
    lines: Iterator[tuple[int, bytes | Oversized]], name: str, warnings: list[LoadWarning]
) -> Iterator[tuple[int, Any]]:
    fast, refused = codec.fast_loads, codec.FastDecodeError
    for number, raw in lines:
        if isinstance(raw, Oversized):
            yield number, _oversized(raw)
            continue
        try:
            value = fast(raw)  # the bytes as read: no decoded copy of the line
        except refused:
            yield from _careful(_text_of(raw, number, name, warnings), number)
        else:
            yield number, value


def from_binary_stream(
    stream: Iterable[bytes], name: str, *, path: Path | None = None, size: int | None = None
) -> Source:
    """A byte stream of JSON lines or of one JSON document (pretty-printed JSON included)."""
    warnings: list[LoadWarning] = []
    limit = record_limit()
    raw_lines: Iterable[bytes | Oversized] = (
        bounded_lines(stream, limit) if hasattr(stream, "readline") else stream
    )
    if size is not None and size >= PROGRESS_MIN_BYTES:
        raw_lines = _with_progress(raw_lines, size, name)
    lines = enumerate(raw_lines, start=1)
    first = next(lines, None)
    while first is not None and isinstance(first[1], bytes) and first[1].isspace():
        first = next(lines, None)
    if first is None:
        return Source(name, iter(()), path=path, warnings=warnings)
    number, raw = first
    if isinstance(raw, Oversized):
        rest_of_lines = _parse_lines(lines, name, warnings)

        def after_oversized() -> Iterator[tuple[int, Any]]:
            yield number, _oversized(raw)
            yield from rest_of_lines

        return Source(name, after_oversized(), path=path, warnings=warnings)
    text = _text_of(raw, number, name, warnings)
    try:
        value = codec.loads(text)
    except json.JSONDecodeError:
        if text.lstrip().startswith(("{", "[")):
            # Maybe one multi-line JSON document (Gemini's legacy chat files are pretty-printed).
            whole = _whole_document(text, lines, limit, name, warnings)
            try:
                document = codec.loads(whole)
            except json.JSONDecodeError:
                return Source(name, _split(whole, number), path=path, warnings=warnings)
            return Source(
                name, _document_records(document), path=path, document=document, warnings=warnings
            )
        value = MalformedLine("invalid JSON")
    rest = _parse_lines(lines, name, warnings)
    second = next(rest, None)
    if second is None and isinstance(value, (dict, list)):
        # The whole input was one JSON value on one line: a document (a single JSONL record is
        # still found among its records).
        return Source(name, _document_records(value), path=path, document=value, warnings=warnings)

    def records() -> Iterator[tuple[int, Any]]:
        yield number, value
        if second is not None:
            yield second
            yield from rest

    return Source(name, records(), path=path, warnings=warnings)


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
            from turnfold.formats.errors import TranscriptFormatError

            reason = (
                f"a JSON document over the limit of {limit:,} bytes "
                "(TURNFOLD_MAX_RECORD_BYTES); not read"
            )
            raise TranscriptFormatError(name, (), number, reason)
        parts.append(_text_of(line, number, name, warnings))
    return "".join(parts)


def _split(text: str, first_number: int) -> Iterator[tuple[int, Any]]:
    """The lines of a text that was no JSON document after all, each read on its own."""
    for offset, line in enumerate(io.StringIO(text)):
        yield from _careful(line, first_number + offset)


def _with_progress(
    stream: Iterable[bytes | Oversized], size: int, name: str
) -> Iterator[bytes | Oversized]:
    """The stream, with a progress bar once reading it has taken :data:`PROGRESS_DELAY_S`.

    tqdm is imported only then: with its notebook support it costs about a tenth of a second,
    as much as loading a few megabytes, and most loads end before any bar would show.
    """
    started = time.monotonic()
    pending = done = 0
    iterator = iter(stream)
    for raw in iterator:
        pending += len(raw)
        yield raw
        if pending >= _PROGRESS_STEP:  # the clock is read once a megabyte, not once a line
            done, pending = done + pending, 0
            if time.monotonic() - started >= PROGRESS_DELAY_S:
                break
    else:
        return
    with _progress_bar(size, name, done) as bar:
        for raw in iterator:
            pending += len(raw)
            if pending >= _PROGRESS_STEP:  # tqdm.update per line would cost more than the parse
                bar.update(pending)
                pending = 0
            yield raw
        bar.update(pending)


def _progress_bar(size: int, name: str, done: int) -> Any:
    from tqdm.auto import tqdm

    class Progress(tqdm):  # type: ignore[type-arg]
        # No monitor thread: it only tunes the refresh rate of stalled bars, and a second
        # thread would keep `turnfold render` from sharing work with a forked child.
        monitor_interval = 0

    return Progress(
        total=size, initial=done, unit="B", unit_scale=True, desc=f"Loading {Path(name).name}",
        leave=False,
    )  # fmt: skip


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
        path = Path(source)
        if path.is_dir():
            raise IsADirectoryError(
                f"{path} is a folder: load() reads one session file; pass one of its files, "
                "or scan the folder for all of them"
            )
        stream = path.open("rb")
        size = os.fstat(stream.fileno()).st_size
        return from_binary_stream(stream, str(path), path=path, size=size), stream
    if hasattr(source, "read"):
        name = str(getattr(source, "name", "<stream>"))
        named = Path(name) if isinstance(getattr(source, "name", None), str) else None
        binary = getattr(source, "buffer", None) if isinstance(source, io.TextIOBase) else source
        if binary is None or isinstance(binary, io.TextIOBase):
            text = source.read()
            data = text.encode("utf-8") if isinstance(text, str) else text
            return from_binary_stream(io.BytesIO(data), name, path=named), None
        return from_binary_stream(_BinaryLines(binary), name, path=named), None
    return from_object(source), None


class _BinaryLines:
    """Line iteration over any object with ``read`` that returns bytes."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        if hasattr(self._stream, "readline"):
            yield from iter(self._stream.readline, b"")
        else:
            yield from io.BytesIO(self._stream.read())


def looks_like_text(source: str) -> bool:
    """Whether a ``str`` given to ``load()`` is the transcript's text rather than a path."""
    stripped = source.lstrip()
    if not stripped or "\n" in source:
        return True
    return stripped.startswith(("{", "[")) and not os.path.exists(source)
