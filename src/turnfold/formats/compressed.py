"""Compressed session files read as the text they hold: gzip, bzip2, xz and Zstandard.

Datasets of trajectories and archived runs are often kept compressed (``rollouts.jsonl.gz``,
``session.jsonl.zst``). A load knows such a file by its first bytes, not its name, and reads it
through a decompressor as it reads any file: line by line, never whole. A load of the bytes or
of an open file does the same.

A small file can decompress to a huge one (a compression bomb). The text a load takes from a
file is bounded: past :data:`MAX_INFLATION` times the compressed bytes read (and at least
:func:`~turnfold.formats.source.record_limit` bytes, so that no real session is cut), the rest
is not read, and a warning says so. Compressed data that is cut off or corrupt ends the text
there, with a warning: what came before is read (L-4).
"""

from __future__ import annotations

import io
from collections.abc import Callable
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
#: Text JSON transcripts compress 5 to 25 times; this many times the compressed bytes is read at
#: most (gzip itself cannot pass about 1,000).
MAX_INFLATION = 256
_PEEK = max(len(magic) for magic in MAGIC)


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
        self._warn = warn
        self._count = 0
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
        self._count += len(data)
        bound = max(self._floor, MAX_INFLATION * self._compressed.count)
        if self._count > bound:
            return self._stop(
                f"decompresses to more than {MAX_INFLATION} times its {self._kind} bytes "
                f"(past {bound:,} bytes): the rest is not read, as a compression bomb's must "
                "not be; decompress the file yourself to read all of it"
            )
        self._pending = memoryview(data)
        return bool(data)

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
