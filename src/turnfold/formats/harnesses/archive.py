"""Zip members read in bounded memory (issue 13.4): eval logs are archives, some hostile.

An archive is opened only after its end-of-central-directory record says how many members it
has and how big its directory is, so a zip of millions of members is refused before
:mod:`zipfile` builds an object per member. A member is decompressed in chunks and its real
decompressed bytes counted as they arrive: a member that decompresses past its limit (a zip bomb,
whatever size its header declares) is refused with an :class:`ArchiveError` naming the file and
the member, never read on into memory.

Members may be stored, deflated (older Inspect logs) or Zstandard-compressed (zip method 93,
what current Inspect writes). :mod:`zipfile` reads Zstandard only from Python 3.14, so those
members are decoded here with the ``zstandard`` package, and their CRC-32 checked as zipfile
checks its own.

The limits are :data:`LIMITS` (module-wide; assign a new :class:`ArchiveLimits` to change them)
or the ``limits`` argument of each function.
"""

from __future__ import annotations

import contextlib
import os
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from turnfold.formats.source import Bounded
from turnfold.model import printable

if TYPE_CHECKING:
    # Imported where a zip is opened: zipfile brings shutil, bz2 and lzma, and every load
    # imports this module to ask the Inspect format whether its file is a log (issue 19).
    import zipfile

#: Zip compression method of Zstandard (APPNOTE 4.4.5).
ZSTANDARD = 93
_CHUNK = 1024 * 1024
_MiB = 1024 * 1024


@dataclass(frozen=True)
class ArchiveLimits:
    """How much of an archive a load may read (each a count of bytes or members)."""

    #: Decompressed size of one member, JSON parsed whole (one Inspect sample).
    max_member_bytes: int = 512 * _MiB
    #: Decompressed size of a small bookkeeping member (Inspect's ``header.json``).
    max_header_bytes: int = 64 * _MiB
    #: Members in one archive (an eval of 50,000 samples × epochs has that many).
    max_members: int = 200_000
    #: Size of the central directory, read whole by :mod:`zipfile`.
    max_directory_bytes: int = 128 * _MiB


#: The limits every function of this module applies unless given others.
LIMITS = ArchiveLimits()


class ArchiveError(ValueError):
    """An archive (or one of its members) that cannot or may not be read."""

    def __init__(self, path: str, reason: str, member: str | None = None) -> None:
        self.path = path
        self.member = member
        self.reason = reason
        # A member's name is the archive author's: shown, never obeyed by the terminal.
        where = f"{path}, member {printable(member)}" if member is not None else path
        super().__init__(f"{where}: {reason}")


def is_zip(path: Path) -> bool:
    """Whether the file starts like a zip (a local file header or an empty archive)."""
    try:
        with path.open("rb") as stream:
            magic = stream.read(4)
    except OSError:
        return False
    return magic in (b"PK\x03\x04", b"PK\x05\x06")


def _directory_size(stream: IO[bytes], path: str) -> tuple[int, int]:
    """``(members, directory bytes)`` from the end-of-central-directory record (and its zip64
    form), read before :mod:`zipfile` parses the directory."""
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    tail_size = min(size, 22 + 65535)  # the record, then a comment of at most 64 KiB
    stream.seek(size - tail_size)
    tail = stream.read(tail_size)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise ArchiveError(path, "not a readable zip archive (no end of central directory)")
    _, _, _, _, members, directory, _, _ = struct.unpack("<4s4H2LH", tail[at : at + 22])
    locator = tail.rfind(b"PK\x06\x07", 0, at)
    if locator >= 0 and (members == 0xFFFF or directory == 0xFFFFFFFF):
        (record_at,) = struct.unpack("<Q", tail[locator + 8 : locator + 16])
        stream.seek(record_at)
        record = stream.read(56)
        if record[:4] == b"PK\x06\x06" and len(record) == 56:
            members, directory = struct.unpack("<QQ", record[32:48])
    return members, directory


@contextlib.contextmanager
def open_archive(path: Path, limits: ArchiveLimits | None = None) -> Iterator[zipfile.ZipFile]:
    """The zip at ``path``, once its directory is known to be within ``limits``."""
    limits = limits or LIMITS
    name = str(path)
    with path.open("rb") as stream:
        members, directory = _directory_size(stream, name)
        if members > limits.max_members:
            raise ArchiveError(
                name,
                f"{members:,} members, more than the {limits.max_members:,} a load reads "
                "(ArchiveLimits.max_members)",
            )
        if directory > limits.max_directory_bytes:
            raise ArchiveError(
                name,
                f"a central directory of {directory:,} bytes, more than "
                f"{limits.max_directory_bytes:,} (ArchiveLimits.max_directory_bytes)",
            )
        stream.seek(0)
        import zipfile

        try:
            archive = zipfile.ZipFile(stream)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
            raise ArchiveError(name, f"not a readable zip archive ({exc})") from None
        with archive:
            yield archive


class _Zstandard:
    """A Zstandard member's decompressed bytes, read from its raw data (zip method 93)."""

    def __init__(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> None:
        try:
            import zstandard
        except ImportError:  # pragma: no cover - a dependency; only a broken install lacks it
            raise ArchiveError(
                name, "Zstandard-compressed; install the 'zstandard' package", info.filename
            ) from None
        stream = archive.fp
        if stream is None:
            raise ArchiveError(name, "the archive is closed", info.filename)
        if info.flag_bits & 0x1:
            raise ArchiveError(name, "encrypted members are not read", info.filename)
        stream.seek(info.header_offset)
        header = stream.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise ArchiveError(name, "bad local file header", info.filename)
        name_length, extra_length = struct.unpack("<2H", header[26:30])
        stream.seek(info.header_offset + 30 + name_length + extra_length)
        self._raw = Bounded(stream, info.compress_size)
        self._reader = zstandard.ZstdDecompressor().stream_reader(
            cast(IO[bytes], self._raw), read_across_frames=True
        )
        self._crc = 0
        self._expected = info.CRC
        self._name = name
        self._member = info.filename

    def read(self, size: int) -> bytes:
        try:
            data: bytes = self._reader.read(size)
        except Exception as exc:  # zstandard.ZstdError: corrupt data
            reason = f"corrupt Zstandard data ({exc})"
            raise ArchiveError(self._name, reason, self._member) from None
        if data:
            self._crc = zlib.crc32(data, self._crc)
        elif self._crc != self._expected:
            raise ArchiveError(self._name, "bad CRC-32 (a damaged member)", self._member)
        return data

    def close(self) -> None:
        self._reader.close()  # type: ignore[no-untyped-call]


@contextlib.contextmanager
def open_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, *, name: str) -> Iterator[Any]:
    """A stream of one member's decompressed bytes (``read(size)``), any supported method."""
    import zipfile

    if info.compress_type == ZSTANDARD:
        member: Any = _Zstandard(archive, info, name)
    else:
        try:
            member = archive.open(info)
        except (NotImplementedError, RuntimeError, zipfile.BadZipFile) as exc:
            raise ArchiveError(name, f"cannot be read ({exc})", info.filename) from None
    try:
        yield member
    finally:
        member.close()


def read_member(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    *,
    name: str,
    limit: int,
    setting: str = "max_member_bytes",
) -> bytes:
    """One member's decompressed bytes, refused once they pass ``limit``.

    The header's declared size is checked first (an honest large member is refused without
    reading it), then the bytes actually decompressed, chunk by chunk (a lying header is
    caught before more than ``limit`` bytes are held). ``setting`` names the limit in the error.
    """
    import zipfile

    too_big = f"decompresses to more than {limit:,} bytes (ArchiveLimits.{setting})"
    if info.file_size > limit:
        raise ArchiveError(name, too_big, info.filename)
    data = bytearray()
    try:
        with open_member(archive, info, name=name) as member:
            while True:
                chunk = member.read(min(_CHUNK, limit + 1 - len(data)))
                if not chunk:
                    break
                data += chunk
                if len(data) > limit:
                    raise ArchiveError(name, too_big, info.filename)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise ArchiveError(name, f"damaged ({exc})", info.filename) from None
    return bytes(data)
