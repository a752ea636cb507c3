"""``turnfold.load()`` of OpenCode's or Kilo Code's data folder holding its database reads it
without ``format=`` (L-1): the folder is told by the database in it, as a scan finds it, and a
load of the folder reads that database's session, as ``format="opencode"`` did.

The databases are the real runs' of tests/fixtures/opencode (OpenCode 1.18.33's
``opencode.db``, Kilo Code 7.7.9's ``kilo.db``); a channel build's, ``kilo-<channel>.db``, is
Kilo's copied under that name (the ``kilo`` binary names it so:
tests/test_scan_kilo_channel_database.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import turnfold

FIXTURES = Path(__file__).parent / "fixtures" / "opencode"
OPENCODE = FIXTURES / "work" / "opencode.db"
KILO = FIXTURES / "kilo" / "work" / "kilo.db"


@pytest.mark.parametrize(
    ("source", "name", "agent"),
    [
        (OPENCODE, "opencode.db", "opencode"),
        (KILO, "kilo.db", "kilo-code"),
        (KILO, "kilo-preview.db", "kilo-code"),
    ],
)
def test_L1_a_data_folder_holding_only_its_database_loads_without_a_format(
    tmp_path: Path, source: Path, name: str, agent: str
) -> None:
    folder = tmp_path / "share" / ("kilo" if "kilo" in name else "opencode")
    folder.mkdir(parents=True)
    shutil.copyfile(source, folder / name)
    told = turnfold.load(folder)
    forced = turnfold.load(folder, format="opencode")
    assert told.entries
    assert told.entries == forced.entries
    assert told.metadata == forced.metadata
    assert (told.metadata.get("agent") == "kilo-code") == (agent == "kilo-code")


def test_L1_a_folder_with_no_database_of_a_session_is_still_refused(tmp_path: Path) -> None:
    """A folder holding a file of that name that is no database of sessions is no run: refused
    as any folder, saying to scan it."""
    folder = tmp_path / "opencode"
    folder.mkdir()
    (folder / "opencode.db").write_bytes(b"not a database")
    with pytest.raises(IsADirectoryError, match="scan the folder"):
        turnfold.load(folder)
