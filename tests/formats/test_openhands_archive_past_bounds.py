"""``load()`` of a tar archive whose session lies past what it looks at says so (spec L-4, H-3).

``load()`` looks for an OpenHands session among a tar's members only up to
:class:`~turnfold.formats.harnesses.archive.ArchiveLimits`' ``max_listed_members`` and
``max_listed_bytes`` (a tarball of code is not read whole to learn it holds no session). A
session past them was refused as "a tar archive: extract it", which hid both what was not
looked at and that naming the format reads the archive whole. The session is the real V0
session tarball's (``tests/formats/test_openhands_archive.py``); the other members are made here.
"""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest

import turnfold
from tests.formats.test_openhands_archive import V0_SESSION, _member, _v0_members, _write
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.harnesses import archive


def _code(count: int) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    return [_member(f"project/src/m{n:03d}.py", b"print(1)\n" * 20) for n in range(count)]


def test_L4_a_tar_whose_session_lies_past_the_listing_says_what_was_not_looked_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive, "LIMITS", archive.ArchiveLimits(max_listed_members=100))
    tar = _write(tmp_path / "late.tar.gz", [*_code(200), *_v0_members()])
    with pytest.raises(TranscriptFormatError) as refused:
        turnfold.load(tar)
    assert refused.value.reason == (
        "a tar archive with no OpenHands session in the part looked at: the tar archive was "
        "looked at up to its first 100 members (102,400 bytes decompressed, "
        "ArchiveLimits.max_listed_members); the members after them were not. "
        "turnfold.load(path, format='openhands') reads it whole, or extract it (tar -xf) and "
        "load or scan its files"
    )
    assert str(tar) in str(refused.value)
    # What the message says reads it does.
    assert turnfold.load(tar, format="openhands").entries == turnfold.load(V0_SESSION).entries


def test_L4_a_tar_looked_at_whole_with_no_session_still_just_says_to_extract_it(
    tmp_path: Path,
) -> None:
    tar = _write(tmp_path / "code.tar.gz", _code(3))
    with pytest.raises(TranscriptFormatError, match=re.escape(
        "(a tar archive: extract it (tar -xf) and load or scan its files)"
    )):  # fmt: skip
        turnfold.load(tar)
