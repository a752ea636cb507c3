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

A tar archive (an OpenHands session kept or passed on as a ``.tar.gz``) is read the same way,
as one stream: through :func:`~turnfold.formats.compressed.decompressed` (gzip, bzip2, xz or
Zstandard, its output bounded against a compression bomb), one member header at a time, never
seeking and never writing a byte to disk. The members a reader wants are held in memory as an
:class:`ArchivedPath` tree, within :class:`ArchiveLimits`; a name that would leave the archive
(absolute, or through ``..``), a link, a device or a member past its limit is not read, and a
warning says so. A zip of a session (OpenHands' "download trajectory") becomes the same tree
(:func:`read_members`).

The limits are :data:`LIMITS` (module-wide; assign a new :class:`ArchiveLimits` to change them)
or the ``limits`` argument of each function.
"""

from __future__ import annotations

import contextlib
import os
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from turnfold.formats import compressed
from turnfold.formats.source import Bounded, record_limit
from turnfold.model import printable

if TYPE_CHECKING:
    # Imported where a zip is opened: zipfile brings shutil, bz2 and lzma, and every load
    # imports this module to ask the Inspect format whether its file is a log (issue 19).
    import tarfile
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
    #: Bytes of a tar archive's (or a session zip's) members held in memory in all (a
    #: session's event files).
    max_tar_bytes: int = 1024 * _MiB
    #: Decompressed bytes of a tar archive read to look for a member by its name
    #: (:func:`find_member`: does it hold a session?). A tar has no directory: its member
    #: headers lie between the members' data, which is read past.
    max_listed_bytes: int = 64 * _MiB
    #: Member headers of a tar archive read to look for a member by its name.
    max_listed_members: int = 20_000


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


# --- tar archives ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MemberStat:
    """What :meth:`ArchivedPath.stat` says of a member: its size, as ``os.stat_result`` does."""

    st_size: int


class _Tree:
    """The members of one tar archive as read: each file's size and, when it was read, its
    bytes; each folder's entries."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.files: dict[tuple[str, ...], bytes | None] = {}
        self.sizes: dict[tuple[str, ...], int] = {}
        self.entries: dict[tuple[str, ...], set[str]] = {(): set()}

    def add_folder(self, parts: tuple[str, ...]) -> None:
        for depth in range(len(parts)):
            self.entries.setdefault(parts[: depth + 1], set())
            self.entries[parts[:depth]].add(parts[depth])

    def add_file(self, parts: tuple[str, ...], size: int, data: bytes | None) -> None:
        self.add_folder(parts[:-1])
        self.entries[parts[:-1]].add(parts[-1])
        self.files[parts] = data
        self.sizes[parts] = size


class ArchivedPath:
    """A file or folder of an archive (tar or zip) read into memory by :func:`read_members`.

    It answers what a reader of a session folder asks of a :class:`~pathlib.Path` (``/``,
    ``name``, ``parent``, ``is_file``, ``is_dir``, ``iterdir``, ``read_bytes``, ``stat``) from
    memory. It is no path on disk and has no ``__fspath__``: no OS call can be made with an
    archive's names, which are its author's. ``str()`` is the archive's path and the member's
    name, as warnings show it.
    """

    __slots__ = ("_parts", "_tree")

    def __init__(self, tree: _Tree, parts: tuple[str, ...] = ()) -> None:
        self._tree = tree
        self._parts = parts

    @property
    def name(self) -> str:
        return self._parts[-1] if self._parts else ""

    @property
    def parent(self) -> ArchivedPath:
        return ArchivedPath(self._tree, self._parts[:-1])

    def __truediv__(self, name: str) -> ArchivedPath:
        return ArchivedPath(self._tree, (*self._parts, name))

    def __str__(self) -> str:
        return "/".join((self._tree.name, *(printable(part) for part in self._parts)))

    def __repr__(self) -> str:
        return f"ArchivedPath({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArchivedPath):
            return NotImplemented
        return self._tree is other._tree and self._parts == other._parts

    def __hash__(self) -> int:
        return hash(self._parts)

    def __lt__(self, other: ArchivedPath) -> bool:
        return self._parts < other._parts

    def is_file(self) -> bool:
        return self._parts in self._tree.files

    def is_dir(self) -> bool:
        return self._parts in self._tree.entries

    def iterdir(self) -> Iterator[ArchivedPath]:
        entries = self._tree.entries.get(self._parts)
        if entries is None:
            raise NotADirectoryError(f"{self}: no folder of the archive")
        return (self / entry for entry in sorted(entries))

    def read_bytes(self) -> bytes:
        if self._parts not in self._tree.files:
            raise FileNotFoundError(f"{self}: no file of the archive")
        data = self._tree.files[self._parts]
        if data is None:
            raise OSError(f"{self}: not read from the archive (see its warnings)")
        return data

    def stat(self) -> MemberStat:
        if self._parts not in self._tree.sizes:
            raise FileNotFoundError(f"{self}: no file of the archive")
        return MemberStat(self._tree.sizes[self._parts])


def _member_parts(name: str) -> tuple[str, ...] | None:
    """A member's name as the folders and file it names, None for a name that would leave the
    archive (absolute, or through ``..``); ``./`` (``tar -C dir .``) names nothing."""
    parts = tuple(part for part in name.split("/") if part not in ("", "."))
    if name.startswith("/") or ".." in parts or not parts:
        return None
    return parts


def _tar_stream(stream: IO[bytes], warn: Callable[[str], None]) -> Any:
    """``stream`` decompressed (bounded, :mod:`~turnfold.formats.compressed`) when it is a tar
    archive; None when it is not one."""
    text = compressed.decompressed(stream, record_limit(), warn)
    return text if compressed.is_tar(text) else None


def is_tar(path: Path) -> bool:
    """Whether the file at ``path`` is a tar archive (compressed or not): its first header,
    read through its decompressor."""
    try:
        with path.open("rb") as stream:
            return _tar_stream(stream, lambda reason: None) is not None
    except OSError:
        return False


def _forget(archive: Any) -> None:
    """Drop the members a streamed :class:`tarfile.TarFile` keeps a list of: none is gone
    back to, and an archive of millions of members would keep millions of them."""
    archive.members.clear()


def _opened_tar(stream: IO[bytes], name: str) -> tarfile.TarFile:
    """The tar archive ``stream`` holds, read as a stream (``r|``): one member after another,
    never seeking back."""
    import tarfile

    try:
        return tarfile.open(fileobj=stream, mode="r|")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ArchiveError(name, f"not a readable tar archive ({exc})") from None


def _kind_of(info: Any) -> str:
    if info.issym():
        return "a symbolic link"
    if info.islnk():
        return "a hard link"
    if info.isdev():
        return "a device or pipe"
    return "no regular file"


def read_tar(
    path: Path, wanted: Callable[[str], bool], limits: ArchiveLimits | None = None
) -> tuple[ArchivedPath, list[str]]:
    """The tar archive at ``path`` (compressed or not) as an :class:`ArchivedPath` tree of its
    folders and files, and what a load must be warned of.

    The bytes of the files whose name ``wanted`` accepts are read, up to
    :func:`~turnfold.formats.source.record_limit` (or ``max_member_bytes``) each and
    ``max_tar_bytes`` in all; every other file is listed with its size only. A member that
    cannot or may not be read is warned of, never obeyed: a name that leaves the archive, a
    link (never followed), a device. An archive cut off or damaged is read up to the damage,
    with a warning; one of more than ``max_members`` members raises :class:`ArchiveError`.
    """
    import tarfile

    limits = limits or LIMITS
    name = str(path)
    said: list[str] = []
    tree = _Tree(name)
    member_limit = min(record_limit(), limits.max_member_bytes)
    held = count = 0
    try:
        stream_file = path.open("rb")
    except OSError as exc:
        raise ArchiveError(name, f"cannot be read ({exc.strerror or exc})") from None
    with stream_file as stream:
        text = _tar_stream(stream, said.append)
        if text is None:
            raise ArchiveError(name, "not a tar archive")
        counted = compressed.Counted(text)
        with _opened_tar(cast(IO[bytes], counted), name) as archive:
            while True:
                try:
                    info = archive.next()
                except (tarfile.TarError, EOFError, OSError) as exc:
                    said.append(
                        f"the tar archive is cut off or damaged after {count:,} members ({exc}): "
                        "the members before it are read"
                    )
                    break
                if info is None:
                    # tarfile ends quietly at a header cut off: only the end-of-archive block
                    # (512 zero bytes, which every tar writes) says the archive is whole.
                    if counted.count - archive.offset < tarfile.BLOCKSIZE:
                        said.append(
                            f"the tar archive is cut off after {count:,} members (it has no "
                            "end-of-archive block): the members before it are read"
                        )
                    break
                _forget(archive)
                count += 1
                if count > limits.max_members:
                    raise ArchiveError(
                        name,
                        f"more than the {limits.max_members:,} members a load reads "
                        "(ArchiveLimits.max_members)",
                    )
                parts = _member_parts(info.name)
                shown = printable(info.name)
                if parts is None:
                    said.append(f"member {shown}: a name outside the archive, not read")
                    continue
                if info.isdir():
                    tree.add_folder(parts)
                    continue
                if not info.isreg():
                    said.append(f"member {shown}: {_kind_of(info)}, not followed")
                    continue
                if parts in tree.files:
                    said.append(f"member {shown}: in the archive twice; the last one is read")
                data = None
                if wanted(parts[-1]) and info.size <= member_limit:
                    if held + info.size > limits.max_tar_bytes:
                        raise ArchiveError(
                            name,
                            f"members of more than {limits.max_tar_bytes:,} bytes to read "
                            "(ArchiveLimits.max_tar_bytes)",
                            info.name,
                        )
                    try:
                        member = archive.extractfile(info)
                        data = member.read(info.size) if member is not None else None
                    except (tarfile.TarError, EOFError, OSError) as exc:
                        said.append(
                            f"member {shown}: cut off or damaged ({exc}); the members before "
                            "it are read"
                        )
                        break
                    if data is not None and len(data) < info.size:
                        said.append(f"member {shown}: cut off; the members before it are read")
                        break
                    held += info.size
                tree.add_file(parts, info.size, data)
    return ArchivedPath(tree), said


#: A file or folder a session's reader reads: on disk, or in a tar archive read into memory.
SessionPath = Path | ArchivedPath


def _read_zip(
    path: Path, wanted: Callable[[str], bool], limits: ArchiveLimits
) -> tuple[ArchivedPath, list[str]]:
    """A zip (OpenHands' "download trajectory") as :func:`read_tar` reads a tar archive: within
    the same limits, its members read with :func:`read_member`."""
    name = str(path)
    said: list[str] = []
    tree = _Tree(name)
    member_limit = min(record_limit(), limits.max_member_bytes)
    held = 0
    with open_archive(path, limits) as zipped:
        for info in zipped.infolist():
            parts = _member_parts(info.filename)
            shown = printable(info.filename)
            if parts is None:
                said.append(f"member {shown}: a name outside the archive, not read")
            elif info.is_dir():
                tree.add_folder(parts)
            elif (info.external_attr >> 16) & 0o170000 == 0o120000:  # stat.S_IFLNK
                said.append(f"member {shown}: a symbolic link, not followed")
            else:
                data = None
                if wanted(parts[-1]) and info.file_size <= member_limit:
                    if held + info.file_size > limits.max_tar_bytes:
                        raise ArchiveError(
                            name,
                            f"members of more than {limits.max_tar_bytes:,} bytes to read "
                            "(ArchiveLimits.max_tar_bytes)",
                            info.filename,
                        )
                    try:
                        data = read_member(zipped, info, name=name, limit=member_limit)
                    except ArchiveError as exc:
                        said.append(str(exc))
                    held += len(data or b"")
                tree.add_file(parts, info.file_size, data)
    return ArchivedPath(tree), said


@dataclass(frozen=True)
class Peek:
    """What :func:`find_member` saw of an archive: whether a member it looked for is there,
    and what it did not look at (None when it saw every member's name)."""

    found: bool
    unread: str | None = None


def find_member(
    path: Path, wanted: Callable[[str], bool], limits: ArchiveLimits | None = None
) -> Peek | None:
    """Whether the tar archive or zip at ``path`` has a member whose name ``wanted`` accepts;
    None for any other file (or a zip that cannot be read).

    A zip names all its members in its central directory, read whole (within ``limits``),
    wherever they lie. A tar archive is read as a stream up to such a member, its other
    members' data read past, but no further than ``max_listed_bytes`` decompressed bytes and
    ``max_listed_members`` members: a tarball of code is not read whole to learn that it holds
    no session, and :attr:`Peek.unread` says what was left unread.
    """
    import tarfile

    limits = limits or LIMITS
    if is_zip(path):
        try:
            with open_archive(path, limits) as zipped:
                return Peek(any(map(wanted, zipped.namelist())))
        except ArchiveError:
            return None
    try:
        with path.open("rb") as stream:
            text = _tar_stream(stream, lambda reason: None)
            if text is None:
                return None
            read = compressed.Counted(cast(IO[bytes], Bounded(text, limits.max_listed_bytes)))
            count = 0
            try:
                with tarfile.open(fileobj=cast(IO[bytes], read), mode="r|") as listing:
                    while (info := listing.next()) is not None:
                        _forget(listing)
                        count += 1
                        if wanted(info.name):
                            return Peek(True)
                        if count == limits.max_listed_members:
                            return Peek(False, _unread(count, read.count, "max_listed_members"))
            except (tarfile.TarError, EOFError, OSError, ValueError):
                pass  # the members before the damage (or before the bound, said below)
            if read.count >= limits.max_listed_bytes:
                return Peek(False, _unread(count, read.count, "max_listed_bytes"))
            return Peek(False)
    except OSError:
        return None


def _unread(members: int, read: int, setting: str) -> str:
    return (
        f"the tar archive was looked at up to its first {members:,} members ({read:,} bytes "
        f"decompressed, ArchiveLimits.{setting}); the members after them were not"
    )


def is_archive(path: Path) -> bool:
    """Whether the file at ``path`` is a tar archive or a zip whose directory can be read."""
    if is_zip(path):
        try:
            with open_archive(path):
                return True
        except ArchiveError:
            return False
    return is_tar(path)


def read_members(
    path: Path, wanted: Callable[[str], bool], limits: ArchiveLimits | None = None
) -> tuple[ArchivedPath, list[str]]:
    """The tar archive (:func:`read_tar`) or zip at ``path`` as a tree read into memory."""
    if is_zip(path):
        return _read_zip(path, wanted, limits or LIMITS)
    return read_tar(path, wanted, limits)
