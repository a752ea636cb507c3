"""``turnfold.load``: read a transcript from a path, text, bytes, a file object or Python objects.

Every source format lives in a module of this package; this module only turns the many shapes of
input into JSON records and hands them to the format that recognises them (spec L-2).
"""

from __future__ import annotations

import copy
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from turnfold.formats import native
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.model import Transcript

__all__ = ["FORMATS", "TranscriptFormatError", "load"]

#: Format names ``load(format=...)`` accepts.
FORMATS = (native.FORMAT_NAME,)


def _looks_like_text(source: str) -> bool:
    """Tell text from a path: text has a newline or starts like JSON, unless it names a file."""
    stripped = source.lstrip()
    if not stripped or "\n" in source:
        return True
    return stripped.startswith(("{", "[")) and not os.path.exists(source)


def _records(lines: Iterator[str], start: int = 1) -> Iterator[tuple[int, Any]]:
    """Parsed JSON lines with their 1-based numbers (from ``start``); blank lines are skipped.

    A line that is not JSON is yielded as a :class:`MalformedLine` for the format to judge.
    """
    for number, line in enumerate(lines, start=start):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, MalformedLine(f"invalid JSON: {exc.msg} (column {exc.colno})")


def _load_text_stream(stream: IO[str], name: str, format: str | None) -> Transcript:
    tried = [format or native.FORMAT_NAME]
    first = stream.readline()
    start = 1  # the line number of ``first``
    while first and not first.strip():
        first = stream.readline()
        start += 1
    if not first:
        raise TranscriptFormatError(name, tried, None, "the source is empty")
    try:
        document = json.loads(first)
    except ValueError:
        document = None
    if document is None or not native.is_native_header(document):
        # Not one JSON value per line: maybe a single (pretty-printed) JSON document.
        rest = first + stream.read()
        try:
            whole = json.loads(rest)
        except ValueError:
            raise TranscriptFormatError(name, tried, start, "neither JSON nor JSON lines") from None
        return _load_object(whole, name, format)
    if "entries" in document:  # a one-line JSON layout
        return native.transcript_from_dict(document, source=name)

    def lines() -> Iterator[str]:
        yield first
        yield from stream

    return native.load_records(_records(lines(), start), source=name)


def _load_object(obj: Any, name: str, format: str | None) -> Transcript:
    if isinstance(obj, Transcript):
        return obj
    if native.is_native_header(obj) and "entries" in obj:
        return native.transcript_from_dict(obj, source=name)
    if isinstance(obj, list) and obj and native.is_native_header(obj[0]):
        return native.load_records(enumerate(obj, start=1), source=name)
    raise TranscriptFormatError(
        name, [format or native.FORMAT_NAME], 1, "no known transcript structure"
    )


def load(source: Any, format: str | None = None) -> Transcript:
    """Read a transcript.

    ``source`` is a path (``str`` or ``os.PathLike``), JSON/JSONL text, bytes, an open file, or
    Python objects (a dict or a list of records). ``format`` forces one of :data:`FORMATS`;
    by default it is detected. Input that is not a transcript raises
    :class:`TranscriptFormatError`; nothing the caller passed is modified.
    """
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; known formats: {', '.join(FORMATS)}")
    if isinstance(source, (bytes, bytearray, memoryview)):
        text = bytes(source).decode("utf-8", errors="replace")
        return _load_text_stream(io.StringIO(text), "<bytes>", format)
    if isinstance(source, str) and _looks_like_text(source):
        return _load_text_stream(io.StringIO(source), "<text>", format)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        with path.open(encoding="utf-8", errors="replace") as stream:
            return _load_text_stream(stream, str(path), format)
    if hasattr(source, "read"):
        name = str(getattr(source, "name", "<stream>"))
        data = source.read()
        text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
        return _load_text_stream(io.StringIO(text), name, format)
    if isinstance(source, Transcript):
        return source
    # A deep copy, so the loaded transcript never shares mutable objects with the caller's input.
    return _load_object(copy.deepcopy(source), "<object>", format)
