"""Reading a growing file on from its last complete line (spec C-4).

A live agent appends to its session file while a user scans the folder again and again. A
format whose reader takes records one at a time (its module's ``reader(source)``, with ``feed``
and ``finish``: Claude Code and Codex, the agents people scan while they run) can stop after
the file's last complete line and be kept as it stands: its state, pickled without its source,
is a :class:`Checkpoint`. Read again after the file grew, the state is restored and only the
lines after it are fed; the transcript is the one a whole load gives (tests hold the two equal
at every line of the sample sessions).

A line the agent is still writing (no newline yet) is read as the last line, as a whole load
reads it, but after the checkpoint: the next reading starts before it. A file that was rewritten
rather than appended to (another inode, or other bytes before the checkpoint) is read whole.

Restoring a pickled reader costs a third of reading its lines again (measured on the 50 MB
benchmark session); the checkpoint is as large as the transcript, so the scan keeps one only for
a file it saw grow (:mod:`turnfold.corpus.index`), in the user's own cache directory: a pickle
runs code when it is read, so the cache must stay as private as the rest of the user's files.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from turnfold.formats import _module, settle_load
from turnfold.formats.compressed import compression_of
from turnfold.formats.protocol import RecordReader, feed_each
from turnfold.formats.source import (
    Bounded,
    Source,
    from_binary_stream,
    json_lines,
    marked_encoding,
)
from turnfold.gcpause import collector_paused
from turnfold.model import Transcript

#: Bytes before a checkpoint's offset compared when the file is read again: an appended file
#: still ends its old part with them.
MARK_BYTES = 4096
#: How far back from the end the last newline is looked for at a time.
_BACK = 64 * 1024


@dataclass(frozen=True)
class Checkpoint:
    """A reader's state after a file's last complete line, and what identifies that file."""

    format: str
    offset: int  # bytes up to and including the last complete line read
    lines: int  # the number of that line
    inode: tuple[int, int]  # (device, inode) of the file then
    mark: bytes  # digest of the MARK_BYTES before ``offset``
    state: bytes  # (reader without its source, the source's warnings, its accounting), pickled


def resumable(format: str) -> bool:
    """Whether ``format``'s reader can be paused and resumed."""
    return callable(getattr(_module(format), "reader", None))


def read_growing(
    path: Path, format: str, checkpoint: Checkpoint | None = None
) -> tuple[Transcript, Checkpoint | None]:
    """The transcript of the JSON-lines file ``path`` read as ``format`` (equal to
    ``turnfold.load(path, format=format)``), read on from ``checkpoint`` when it still fits the
    file; and the checkpoint of the file as it is now (None when it holds no complete line or
    is one JSON document)."""
    module = _module(format)
    name = str(path)
    with path.open("rb") as stream, collector_paused():
        if marked_encoding(stream) is not None or compression_of(stream) is not None:
            # UTF-16 or compressed: decoded whole, no offset in the file names a line
            return _whole(stream, name, path, module), None
        info = os.fstat(stream.fileno())
        complete = complete_lines(stream, info.st_size)
        inode = (info.st_dev, info.st_ino)
        restored = _restore(stream, name, path, checkpoint, format, inode, complete)
        if restored is not None:
            reader, source, part, lines = restored
        else:
            if complete == 0:  # no complete line yet: nothing to keep
                return _whole(stream, name, path, module), None
            stream.seek(0)
            part = CountedLines(stream, complete)
            source = from_binary_stream(part, name, path=path)
            if source.is_document or not source.head:
                return _whole(stream, name, path, module), None
            reader, lines = module.reader(source), 0
        feed_each(reader, source.records())
        lines += part.newlines
        kept = _checkpoint(reader, source, format, complete, lines, inode, stream)
        if info.st_size > complete:  # the line the agent is still writing, read as load reads it
            stream.seek(complete)
            tail = json_lines(Bounded(stream, info.st_size - complete), name, path=path,
                              first_line=lines + 1, warnings=source.warnings,
                              accounting=source.accounting)  # fmt: skip
            reader.source = tail
            feed_each(reader, tail.records())
        transcript = reader.finish()
    return settle_load(transcript, source, module), kept


def _whole(stream: IO[bytes], name: str, path: Path, module: Any) -> Transcript:
    """The file read from its start as ``load`` reads it."""
    stream.seek(0)
    source = from_binary_stream(stream, name, path=path)
    return settle_load(module.read(source), source, module)


def _restore(
    stream: IO[bytes], name: str, path: Path, checkpoint: Checkpoint | None, format: str,
    inode: tuple[int, int], complete: int,
) -> tuple[RecordReader, Source, CountedLines, int] | None:  # fmt: skip
    """The checkpoint's reader on a source of the lines after it, when it fits the file."""
    if checkpoint is None or checkpoint.format != format or checkpoint.inode != inode:
        return None
    if checkpoint.offset > complete or fingerprint(stream, checkpoint.offset) != checkpoint.mark:
        return None
    reader, warnings, accounting = pickle.loads(checkpoint.state)
    stream.seek(checkpoint.offset)
    part = CountedLines(stream, complete - checkpoint.offset)
    source = json_lines(part, name, path=path, first_line=checkpoint.lines + 1,
                        warnings=warnings, accounting=accounting)  # fmt: skip
    reader.source = source
    return reader, source, part, checkpoint.lines


class CountedLines(Bounded):
    """:class:`Bounded`, counting the newlines it hands out: the lines of a part of complete
    lines (blank lines have a number and no record, so the records cannot count them)."""

    newlines = 0

    def read(self, size: int = -1) -> bytes:
        data = super().read(size)
        self.newlines += data.count(b"\n")
        return data


def _checkpoint(
    reader: RecordReader, source: Source, format: str, offset: int, lines: int,
    inode: tuple[int, int], stream: IO[bytes],
) -> Checkpoint:  # fmt: skip
    held: Any = reader  # without its source for a moment: an open file is no state
    held.source = None
    try:
        state = pickle.dumps((reader, source.warnings, source.accounting), pickle.HIGHEST_PROTOCOL)
    finally:
        reader.source = source
    return Checkpoint(format, offset, lines, inode, fingerprint(stream, offset), state)


def complete_lines(stream: IO[bytes], size: int) -> int:
    """The offset just past the file's last newline (0 when it has none)."""
    end = size
    while end > 0:
        start = max(0, end - _BACK)
        stream.seek(start)
        found = stream.read(end - start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        end = start
    return 0


def fingerprint(stream: IO[bytes], offset: int) -> bytes:
    start = max(0, offset - MARK_BYTES)
    stream.seek(start)
    return hashlib.blake2b(stream.read(offset - start), digest_size=16).digest()


__all__ = [
    "Checkpoint", "CountedLines", "complete_lines", "fingerprint", "read_growing", "resumable",
]  # fmt: skip
