"""Kilo Code's build of another channel than ``latest``, ``beta`` or ``prod`` (a local or
preview build) names its database after the channel, ``kilo-<channel>.db``, or keeps an
``opencode-<channel>.db`` there where only that one is (the ``kilo`` binary of
``@kilocode/cli-linux-x64`` 7.7.9: ``kilo-${channel.replace(/[^a-zA-Z0-9._-]/g, "-")}.db``
under ``Global.Path.data``); OpenCode 1.18.33's does the same with ``opencode-<channel>.db``.
Each is recognised wherever ``kilo.db`` is (spec C-1): its sessions are Kilo Code's, a data
folder holding it walks no ``storage/`` (its files are in the database since 1.2), a folder
holding it under any name keeps its ``auth.json`` unopened, and a load of the folder reads it.

The databases are real: Kilo Code 7.7.9's and OpenCode 1.18.33's of tests/fixtures/opencode,
and OpenCode 1.1's ``storage/`` beside them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import turnfold
from tests.credential_homes import scan_here, touched
from turnfold.formats.agents import opencode

FIXTURES = Path(__file__).parent / "fixtures" / "opencode"
KILO = FIXTURES / "kilo" / "work" / "kilo.db"
KILO_SESSION = "ses_db980b084ffeEu44zoVrKvGbJz"
OPENCODE = FIXTURES / "work" / "opencode.db"
OPENCODE_SESSION = "ses_db99c7f12ffeyED9d42Z0bD2ZW"
#: OpenCode 1.1's files of sessions, which 1.2 and later copy into the database.
STORAGE = FIXTURES / "v1.1" / "work" / "storage"

pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture(autouse=True)
def own_agent_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """The data folder is the test's: a developer's variable would move it."""
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)


def test_C1_a_channel_build_s_database_is_named_as_kilo_s_or_opencode_s() -> None:
    for name in ("kilo.db", "kilo-local.db", "kilo-dev-1.2.db", "kilo-feature-x.db"):
        assert opencode.is_database_name(name), name
        assert opencode.is_kilo_database_name(name), name
    for name in ("opencode.db", "opencode-local.db"):
        assert opencode.is_database_name(name), name
        assert not opencode.is_kilo_database_name(name), name
    refused = ("kilo-.db", "kilo-local.db-wal", "session-export.db", "kilo-a b.db", "kilo.sqlite")
    for name in refused:
        assert not opencode.is_database_name(name), name


def test_C1_a_home_scan_reads_the_channel_database_and_not_the_storage_it_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beside the database, ``storage/`` holds the same sessions again (copied in once):
    walked, they would be rows of their own."""
    home = tmp_path / "me"
    kilo = home / ".local" / "share" / "kilo"
    shutil.copytree(STORAGE, kilo / "storage")
    database = kilo / "kilo-local.db"
    shutil.copyfile(KILO, database)
    monkeypatch.setenv("HOME", str(home))
    corpus = scan_here(home)
    assert corpus.keys == [f"{database}#{KILO_SESSION}"]
    assert (corpus.skipped, corpus.rows[0]["error"]) == (0, None)


@pytest.mark.parametrize(
    ("name", "agent"), [("kilo-local.db", opencode.KILO_AGENT), ("opencode-local.db", None)]
)
def test_C1_a_database_named_kilo_s_is_kilo_s_session(
    tmp_path: Path, name: str, agent: str | None
) -> None:
    """Told by its name alone: OpenCode's database (no table of Kilo's own) copied under a Kilo
    channel's name is Kilo Code's; under OpenCode's channel name, OpenCode's."""
    database = tmp_path / name
    shutil.copyfile(OPENCODE, database)
    transcript = turnfold.load(database, sample=OPENCODE_SESSION)
    assert transcript.metadata.get("agent") == agent


def test_C1_a_folder_holding_a_channel_database_is_read_as_it_and_keeps_its_keys_unopened(
    tmp_path: Path, opened: list[str]
) -> None:
    """A data folder under another name (a copy, ``cp -r ~/.local/share/kilo backup``) is
    OpenCode's by the database it holds: a load of it as OpenCode's reads the database, and its
    ``auth.json`` (the providers' keys) is never opened."""
    folder = tmp_path / "backup"
    folder.mkdir()
    shutil.copyfile(KILO, folder / "kilo-preview.db")
    auth = folder / "auth.json"
    auth.write_text(json.dumps({"kilo": {"type": "api", "key": "not-a-real-key"}}), "utf-8")
    assert opencode.databases_in(folder) == [folder / "kilo-preview.db"]
    loaded = turnfold.load(folder, format=opencode.NAME, sample=KILO_SESSION)
    assert loaded.metadata["agent"] == opencode.KILO_AGENT
    opened.clear()
    corpus = scan_here(folder)
    assert (corpus.keys, corpus.skipped) == ([f"{folder / 'kilo-preview.db'}#{KILO_SESSION}"], 0)
    assert touched(opened, ["backup/auth.json"]) == []


def test_C1_the_released_names_come_first(tmp_path: Path) -> None:
    """Of a folder holding several, ``opencode.db`` and ``kilo.db`` first (the released
    builds'), then the channels' by name; a folder of none holds none."""
    for name in ("opencode-local.db", "kilo-local.db", "kilo.db", "notes.db"):
        shutil.copyfile(KILO, tmp_path / name)
    found = [path.name for path in opencode.databases_in(tmp_path)]
    assert found == ["kilo.db", "kilo-local.db", "opencode-local.db"]
    assert opencode.databases_in(tmp_path / "missing") == []
