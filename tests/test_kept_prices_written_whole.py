"""The kept prices' file is written as a page is (spec U-2, W-6): by :mod:`turnfold.atomic`,
so it keeps its mode and leaves no part file behind when it could not be moved into place."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from turnfold.kept_prices import FILE_NAME, PriceBook


def _keep(kept: Path) -> None:
    """Keep one price in ``kept``: gpt-4o's, priced by the table's one line, every day."""
    line = (0.0, 1.0, 1.0, 0.0, 0.0, 0.0)
    PriceBook(kept, "a table").keep("gpt-4o", None, (None, None), False, (None, [], [line]), "0")


def _new_file_mode(folder: Path) -> int:
    """The mode a new file gets in this process (read off one, not by setting the umask)."""
    probe = folder / "probe"
    probe.write_text("")
    mode = probe.stat().st_mode & 0o777
    probe.unlink()
    return mode


def test_U2_kept_prices_keep_the_mode_of_the_file_they_replace(tmp_path: Path) -> None:
    kept = tmp_path / FILE_NAME
    kept.write_text("{}")
    # A mode a new file would not get here: kept, it is the old file's, not the umask's.
    private = 0o600 if _new_file_mode(tmp_path) != 0o600 else 0o640
    kept.chmod(private)
    _keep(kept)
    assert kept.stat().st_mode & 0o777 == private
    assert json.loads(kept.read_text())["stamp"] == "a table"
    assert sorted(p.name for p in tmp_path.iterdir()) == [FILE_NAME]


def test_U2_kept_prices_not_moved_into_place_leave_the_old_file_and_no_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = tmp_path / FILE_NAME
    kept.write_text("old")

    def refused(source: object, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refused)
    _keep(kept)  # a cache that cannot be written is no error: the table prices
    assert kept.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == [FILE_NAME]
