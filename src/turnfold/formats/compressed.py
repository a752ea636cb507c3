"""Compressed session files read as the text they hold: gzip, bzip2, xz and Zstandard.

Datasets of trajectories and archived runs are often kept compressed (``rollouts.jsonl.gz``,
``session.jsonl.zst``). A load knows such a file by its first bytes, not its name, and reads it
through a decompressor as it reads any file: line by line, never whole. A load of the bytes or
of an open file does the same.

A small file can decompress to a huge one (a compression bomb), and what a load holds grows
with both the text it reads and its lines: each line is a record, some hundreds of bytes of
Python objects however short it is (``{"role":"user","content":"hi"}`` takes about 450). So
the text a load takes from a compressed file is bounded twice over, against the compressed
bytes read so far, by what no real file comes near (the numbers at :data:`MAX_INFLATION` and
:data:`MAX_LINES_PER_BYTE`):

- its bytes: past :data:`MAX_INFLATION` times the compressed bytes (and at least
  :func:`~turnfold.formats.source.record_limit` bytes, so that no real record is cut);
- its lines: past :data:`MAX_LINES_PER_BYTE` lines a compressed byte (and at least
  :data:`LINE_FLOOR` lines), so that a file of tiny records, which stays under the first
  bound, holds a bounded number of them (36 MB of lines of 36 bytes at 256 times would be
  over 100 GB of objects);
- both at once, whatever the compressed bytes: past :func:`held_limit`, a quarter of the memory
  the process may use, its text and its lines counted at what each holds (:data:`LINE_BYTES`),
  since a file large enough stays under both bounds above and still holds more than the
  machine has (100 MB of gzip at 2 lines a byte would be 120 GB of objects).

A file of runs (a dataset's ``rollouts.jsonl.gz``, each line a run) read a run at a time,
each dropped once read (a scan's rows, ``load(path, sample=n)``: :func:`streamed`), holds one
run at once, not its text: the last bound does not stop it (the first two still do, and each
line stays under the record limit).

Past any bound the rest is not read, and a warning says which bound, the lines read and how
to read all of it; every line before it is read whole (the line the bound falls in is
finished). Compressed data that is cut off or corrupt ends the text there, with a warning: what
came before is read (L-4).
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any

#: Each compression by the bytes its files start with (RFC 1952, bzip2, the xz format, RFC 8878).
MAGIC: dict[bytes, str] = {
    b"\x1f\x8b": "gzip",
    b"BZh": "bzip2",
    b"\xfd7zXZ\x00": "xz",
    b"\x28\xb5\x2f\xfd": "zstd",
}
#: The file name endings of compressed files, which a scan opens (the rest of a name is what a
#: scan looks for in any file: ``.jsonl.gz``).
SUFFIXES = (".gz", ".bz2", ".xz", ".zst")
#: The text read at most per compressed byte. Transcripts and pretty-printed JSON documents
#: compress 5 to 36 times (the bundled fixtures, by gzip, xz or Zstandard); a dataset whose every
#: row repeats a 60 KB system prompt about 150 times, a log of API calls each repeating a 48 KB
#: one and the conversation so far nearly 600 (xz or ``zstd -19``; gzip's 32 KB window sees no
#: earlier copy): such a file is read whole up to the floor, a record's limit. gzip itself
#: cannot pass about 1,000.
MAX_INFLATION = 256
#: The lines read at most per compressed byte. JSON lines hold at most about 0.06 (streamed
#: deltas of a few words: 17 compressed bytes a line), a pretty-printed document about 0.8 (a
#: LangGraph stream dump by xz; a 15 MB Inspect log 0.65); 256 times as much text in lines of
#: 36 bytes is 7 a byte.
MAX_LINES_PER_BYTE = 2
#: The lines read whatever their compressed bytes (the start of a file, where few are read):
#: about 110 MB of the smallest records' objects.
LINE_FLOOR = 250_000
#: What a line holds in a load beside its text, however short it is: its record's objects and
#: its entry's (a load of lines of ``{"role":"user","content":"hi"}`` holds 570 bytes a line,
#: 590 at its peak).
LINE_BYTES = 600
#: The part of the memory the process may use that one load may hold of a compressed file's
#: text and lines (:func:`held_limit`): a quarter, which leaves the rest to what the load
#: builds of them and to the kernel's other work.
HELD_SHARE = 4
#: The memory assumed where the machine's cannot be asked for (no ``sysconf``: Windows).
ASSUMED_MEMORY = 8 << 30
#: The cgroup files that limit a container's memory (cgroup v2, v1): a notebook's pod may have
#: far less than the machine it runs on.
_CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
#: How to decompress a file of each compression by hand, keeping it (said when a bound stops a
#: load: a plain file is read whole).
DECOMPRESS = {"gzip": "gunzip -k", "bzip2": "bunzip2 -k", "xz": "unxz -k", "zstd": "zstd -d"}
_PEEK = max(len(magic) for magic in MAGIC)


def memory_limit() -> int:
    """The bytes of memory this process may use: the machine's, or less where its container
    (cgroup) or its own limits (``RLIMIT_AS``, ``RLIMIT_DATA``) say so."""
    try:
        found = [os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")]
    except (AttributeError, ValueError, OSError):
        found = [ASSUMED_MEMORY]
    for name in _CGROUP_LIMITS:
        with contextlib.suppress(OSError, ValueError):  # absent, or "max": no limit
            found.append(int(Path(name).read_text().strip()))
    try:
        import resource
    except ImportError:  # Windows
        return min(found)
    for kind in (resource.RLIMIT_AS, resource.RLIMIT_DATA):
        soft = resource.getrlimit(kind)[0]
        if soft != resource.RLIM_INFINITY:
            found.append(soft)
    return max(min(found), 1)


def held_limit() -> int:
    """The bytes of text and lines (each line's objects counted as :data:`LINE_BYTES`) that
    one load takes from a compressed file at most: :data:`HELD_SHARE` of
    :func:`memory_limit`. No real session comes near it: a machine of 8 GB holds 2 GB, 3.5
    million of the shortest records or 2 GB of text, where the largest sessions the bounds
    above were judged on are tens of megabytes (a 15 MB Inspect log). A dataset of runs that
    large (each line a run) is read whole by a scan and by ``load(path, sample=n)``, which
    hold one run at a time (:func:`streamed`)."""
    return memory_limit() // HELD_SHARE


#: Whether the compressed text read now is read a run at a time (:func:`streamed`).
_STREAMED: ContextVar[bool] = ContextVar("turnfold_streamed", default=False)


@contextlib.contextmanager
def streamed() -> Iterator[None]:
    """Within it, a compressed file opened, or read on, is not stopped at :func:`held_limit`:
    its reader holds one record at a time, not the file (a file of runs, each run dropped once
    read). A file opened within it keeps this as it is read on (a scan reads its runs between
    other work)."""
    token = _STREAMED.set(True)
    try:
        yield
    finally:
        _STREAMED.reset(token)


def compression_of(stream: Any) -> str | None:
    """The compression a binary stream's first bytes name, None for any other stream (or one
    that cannot be peeked at without reading it)."""
    start = _first_bytes(stream, _PEEK)
    return next((kind for magic, kind in MAGIC.items() if start.startswith(magic)), None)


def is_tar(stream: Any) -> bool:
    """Whether a binary stream (decompressed, if it was) is a tar archive: its first header's
    ``ustar`` magic (POSIX.1-1988 and GNU tar write it at offset 257)."""
    return _first_bytes(stream, _TAR_MAGIC_END)[257:_TAR_MAGIC_END] == b"ustar"


_TAR_MAGIC_END = 262


def _first_bytes(stream: Any, count: int) -> bytes:
    """Up to ``count`` of a stream's next bytes, left to be read (b"" when it cannot be peeked
    at without reading it)."""
    if isinstance(stream, io.BytesIO):  # load(bytes): its buffer, read nowhere
        at = stream.tell()
        return stream.getbuffer()[at : at + count].tobytes()
    peek = getattr(stream, "peek", None)
    return bytes(peek(count)[:count]) if peek is not None else b""


#: The decompressed bytes one step of a decompressor gives at most (gzip, bzip2, xz).
_STEP = 1 << 20
#: The compressed bytes one step of Zstandard is fed: its output is not bounded otherwise, and
#: this much input gives at most about 128 MB (a run of one byte repeated).
_ZSTD_STEP = 4096


def _steps(kind: str, stream: IO[bytes]) -> Callable[[], bytes]:
    """The decompressed bytes of ``stream``, a step at a time (``b""`` at the end); a step
    raises when the data is corrupt or ends early."""
    if kind == "zstd":
        return _ZstdFrames(stream).step
    if kind == "gzip":
        import gzip

        inner: Any = gzip.GzipFile(fileobj=stream, mode="rb")
    elif kind == "bzip2":
        import bz2

        inner = bz2.BZ2File(stream, mode="rb")
    else:
        import lzma

        inner = lzma.LZMAFile(stream, mode="rb")  # noqa: SIM115 (closed with its stream)
    # One step of the decompressor at a time (``read1``): a ``read`` that fills its buffer over
    # several steps loses what it holds when a later step raises (a file cut off).
    return lambda: inner.read1(_STEP)


class _ZstdFrames:
    """Zstandard frames one after another (``zstd`` of parts concatenated), fed in small steps.
    A file that ends inside a frame is an error here: the ``zstandard`` package's readers end
    it quietly, as if it were whole."""

    def __init__(self, stream: IO[bytes]) -> None:
        import zstandard  # a dependency (Inspect's .eval members are Zstandard too)

        self._stream = stream
        self._new = zstandard.ZstdDecompressor().decompressobj
        self._frame: Any = None

    def step(self) -> bytes:
        while True:
            data = self._stream.read(_ZSTD_STEP)
            if not data:
                if self._frame is not None and not self._frame.eof:
                    raise EOFError("the file ends inside a Zstandard frame")
                return b""
            out = []
            while data:
                if self._frame is None or self._frame.eof:
                    self._frame = self._new()
                out.append(self._frame.decompress(data))
                data = self._frame.unused_data if self._frame.eof else b""
            text = b"".join(out)
            if text:
                return text


class Counted(io.RawIOBase):
    """A stream's bytes as they are read, counted (the compressed bytes a decompressor reads;
    the bytes of a tar archive, :mod:`~turnfold.formats.harnesses.archive`)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        self.count += len(data)
        return len(data)


class _Inflated(io.RawIOBase):
    """The decompressed bytes of a compressed stream, up to the bound of this module's
    docstring; where they stop early, ``warn`` is told why (once)."""

    def __init__(
        self, kind: str, stream: IO[bytes], floor: int, warn: Callable[[str], None]
    ) -> None:
        self._compressed = Counted(stream)
        self._kind = kind
        self._step = _steps(kind, io.BufferedReader(self._compressed))
        self._floor = floor
        self._memory = memory_limit()
        self._held = self._memory // HELD_SHARE
        self._streamed = _STREAMED.get()  # opened to be read a run at a time
        self._warn = warn
        self._count = 0  # the bytes of text handed out, and their lines (newlines)
        self._lines = 0
        self._open = False  # whether the text handed out ends inside a line
        self._pending = memoryview(b"")
        self._ended = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self._pending and (self._ended or not self._next()):
            return 0
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size

    def _next(self) -> bool:
        """The next step's bytes pending; False at their end."""
        try:
            data = self._step()
        except MemoryError:
            raise
        except Exception as exc:  # gzip's BadGzipFile, EOFError, lzma.LZMAError, ZstdError…
            return self._stop(
                f"the {self._kind} data is cut off or corrupt after {self._count:,} bytes "
                f"({type(exc).__name__}: {exc}); the text before it is read"
            )
        count, lines = self._count + len(data), self._lines + data.count(b"\n")
        read, kind = self._compressed.count, self._kind
        if count > max(self._floor, MAX_INFLATION * read):
            return self._bound(
                data, f"decompresses to more than {MAX_INFLATION} times its {kind} bytes"
            )
        if lines > max(LINE_FLOOR, MAX_LINES_PER_BYTE * read):
            return self._bound(
                data, f"holds more than {MAX_LINES_PER_BYTE} lines per byte of its {kind} data"
            )
        streamed = self._streamed or _STREAMED.get()
        if not streamed and count + LINE_BYTES * lines > self._held:
            return self._bound(
                data,
                f"holds more than {self._held:,} bytes of text and lines (a line's objects "
                f"counted as {LINE_BYTES} bytes), the part of this process's {self._memory:,} "
                "bytes of memory one load may take",
            )
        self._count, self._lines = count, lines
        self._open = data[-1:] not in (b"", b"\n")
        self._pending = memoryview(data)
        return bool(data)

    def _bound(self, data: bytes, passed: str) -> bool:
        """Stop at a bound; the line the text read so far ends in is finished first, when it
        ends within a step's bytes, so that every line read is whole."""
        end = data.find(b"\n", 0, _STEP) if self._open else -1
        if end >= 0:
            self._pending = memoryview(data)[: end + 1]
            self._count += end + 1
            self._lines += 1
        self._stop(
            f"{passed}, more than real transcripts do: read no further, as a compression bomb "
            f"must not be. Its first {self._lines:,} lines are read ({self._count:,} bytes of "
            f"text from {self._compressed.count:,} {self._kind} bytes); to read the rest, "
            f"decompress the file yourself ({DECOMPRESS[self._kind]}) and load the file it "
            "writes"
        )
        return end >= 0

    def _stop(self, reason: str) -> bool:
        self._ended = True
        self._warn(reason)
        return False


def decompressed(stream: Any, floor: int, warn: Callable[[str], None]) -> Any:
    """``stream`` itself, or the text of a compressed one (:func:`compression_of`) as a
    buffered binary stream, bounded as this module's docstring says; ``warn`` is told why the
    text stopped early, if it did."""
    kind = compression_of(stream)
    if kind is None:
        return stream
    return io.BufferedReader(_Inflated(kind, stream, floor, warn), buffer_size=1 << 20)


def candidate_names(suffixes: tuple[str, ...]) -> tuple[str, ...]:
    """Each of ``suffixes`` and each followed by a compression's (:data:`SUFFIXES`)."""
    return suffixes + tuple(s + c for s in suffixes for c in SUFFIXES)
