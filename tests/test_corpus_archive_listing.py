"""An archive's sessions found wherever they lie among its members (spec C-1, C-7, H-3, X-1).

A zip names every member in its central directory, so a session after hundreds of other files
is found from it; a tar archive is read as a stream up to a session's member, past the other
members' data, no further than :class:`~turnfold.formats.harnesses.archive.ArchiveLimits`'
``max_listed_bytes`` and ``max_listed_members``, and a scan warns of what it did not look at.
The session is the real V0 session tarball's (``tests/formats/test_openhands_archive.py``);
the other members are made here.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.test_openhands_archive import V0_SESSION, _member, _v0_members, _write
from turnfold.corpus import scan
from turnfold.formats.harnesses import archive

#: What a row counts of its session, the same wherever the session lay in its archive.
COUNTS = ("title", "model", "turns", "tool_calls", "failed_tools", "input_tokens",
          "output_tokens", "cost_usd", "warnings", "error")  # fmt: skip


pytestmark = pytest.mark.usefixtures("cache_dir")


def _code(count: int) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    return [_member(f"project/src/m{n:03d}.py", b"print(1)\n" * 20) for n in range(count)]


def _counts(row: dict[str, Any]) -> dict[str, Any]:
    return {name: row[name] for name in COUNTS}


def _alone() -> dict[str, Any]:
    (row,) = scan(V0_SESSION, workers=1, cache=False).rows
    return _counts(row)


def test_C1_H3_a_tarball_s_session_after_200_other_files_is_a_row(tmp_path: Path) -> None:
    tar = _write(tmp_path / "backup.tar.gz", [*_code(200), *_v0_members()])
    corpus = scan(tmp_path / "backup.tar.gz", workers=1, cache=False)
    (row,) = corpus.rows
    assert (row["key"], row["format"], corpus.skipped) == (str(tar), "openhands", 0)
    assert _counts(row) == _alone()
    assert turnfold.load(tar).entries == turnfold.load(V0_SESSION).entries


def test_C1_H3_a_zip_s_session_after_200_other_files_is_a_row(tmp_path: Path) -> None:
    """Its names are read from the central directory, all of them, never its members' data."""
    path = tmp_path / "download.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zipped:
        for info, data in _code(200):
            zipped.writestr(info.name, data or b"")
        for info, data in _v0_members():
            if data is not None:
                zipped.writestr(info.name, data)
    (row,) = scan(path, workers=1, cache=False).rows
    assert (row["key"], row["format"]) == (str(path), "openhands")
    assert _counts(row) == _alone()
    assert archive.find_member(path, lambda name: name.endswith("metadata.json")) == (
        archive.Peek(True)
    )


def test_C7_a_tarball_of_no_session_is_listed_whole_when_small_and_skipped_silently(
    tmp_path: Path, recwarn: pytest.WarningsRecorder
) -> None:
    tar = _write(tmp_path / "code.tar.gz", _code(300))
    assert archive.find_member(tar, lambda name: name.endswith(".json")) == archive.Peek(False)
    corpus = scan(tmp_path, workers=1, cache=False)
    assert (len(corpus), corpus.skipped) == (0, 1)
    assert [str(w.message) for w in recwarn] == []


def test_C7_a_tar_listing_stops_at_its_member_bound_and_the_scan_says_what_it_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``max_listed_members`` the archive is not looked at: skipped, and said by name;
    ``load(path, format="openhands")`` still reads it whole (within the reading limits)."""
    monkeypatch.setattr(archive, "LIMITS", archive.ArchiveLimits(max_listed_members=100))
    tar = _write(tmp_path / "late.tar.gz", [*_code(200), *_v0_members()])
    peek = archive.find_member(tar, lambda name: name.endswith("metadata.json"))
    assert peek is not None
    assert not peek.found
    assert peek.unread is not None
    assert peek.unread.startswith("the tar archive was looked at up to its first 100 members (")
    assert peek.unread.endswith(
        "ArchiveLimits.max_listed_members); the members after them were not"
    )
    with pytest.warns(UserWarning, match=r"skipped 1 archive\(s\) with no OpenHands session"):
        corpus = scan(tmp_path, workers=1, cache=False)
    assert (len(corpus), corpus.skipped) == (0, 1)
    assert turnfold.load(tar, format="openhands").entries == turnfold.load(V0_SESSION).entries


def test_X1_a_bomb_before_the_session_is_read_past_within_the_byte_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member of 512 MiB of zeros (half a MiB compressed) ahead of a session: the listing
    stops at its bound of bytes, in memory of a few chunks, and names the bound."""
    import tracemalloc

    monkeypatch.setattr(archive, "LIMITS", archive.ArchiveLimits(max_listed_bytes=32 * 1024**2))
    path = tmp_path / "bomb.tar.gz"
    zeros = tarfile.TarInfo("zeros.bin")
    zeros.size = 512 * 1024**2
    with tarfile.open(path, "w:gz", compresslevel=9) as tar:
        tar.addfile(zeros, _Zeros(zeros.size))
        for info, data in _v0_members():
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    tracemalloc.start()
    try:
        peek = archive.find_member(path, lambda name: name.endswith("metadata.json"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peek is not None
    assert (peek.found, peek.unread) == (False, (
        f"the tar archive was looked at up to its first 1 members ({32 * 1024**2:,} bytes "
        "decompressed, ArchiveLimits.max_listed_bytes); the members after them were not"
    ))  # fmt: skip
    assert peak < 16 * 1024**2


class _Zeros(io.RawIOBase):
    """``size`` zero bytes, made as they are read (a bomb's member, never held whole)."""

    def __init__(self, size: int) -> None:
        self._left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = min(len(buffer), self._left)
        buffer[:count] = bytes(count)
        self._left -= count
        return count
