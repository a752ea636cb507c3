"""The GitHub Copilot CLI's location permissions, as the real 1.0.102 writes them (spec C-1, C-7,
L-4).

A user who answers a permission prompt of ``copilot`` 1.0.102 with "Yes, and don't ask again
for `touch` in this repo" or "... for file operations when in this repo" makes the CLI write
``~/.copilot/permissions-config.json``: ``locations``, keyed by the path of each repository or
folder of the machine, each with its ``tool_approvals`` (the shell commands, and the file writes,
allowed there without asking). "Remember this folder for future sessions" adds the folder to
``trustedFolders`` of ``~/.copilot/config.json``. Both are the user's private settings: a scan
of the home must open neither, and the permissions file, named to a scan or a load, is said or
refused unopened.

``home/`` of tests/fixtures/copilot/approvals is what the real CLI left (its
``approvals_recipe.py``: the terminal UI in a pty, offline against the scripted model of
tests/agents, each prompt answered with its remembering choice; tests/fixtures/SOURCES.md). The
tests of the same file hand-made in 0.0.420's shape are tests/test_credentials_copilot_cline.py's;
these hold the name to the file the pinned version really writes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.credential_homes import Maker, scan_here, touched
from tests.credentials_cases import each_one_named

pytestmark = pytest.mark.usefixtures("cache_dir")

APPROVALS = Path(__file__).parent / "fixtures" / "copilot" / "approvals" / "home" / ".copilot"
SESSION = "163ee608-2cc9-4493-82ae-3db66368b8bf"
#: The work folder of the run: the location the approvals are kept for, and the trusted folder.
LOCATION = "/tmp/tf-approvals/work"
#: The user's private files the CLI wrote, by their place under the home.
PRIVATE = (".copilot/permissions-config.json", ".copilot/config.json")


def copied(name: str) -> Maker:
    """A maker copying the real file ``name`` of the CLI's folder."""

    def copy(path: Path) -> None:
        shutil.copyfile(APPROVALS / name, path)

    return copy


@pytest.fixture(autouse=True)
def own_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Copilot CLI's folder is the test's: a developer's own variables would name another."""
    for variable in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "COPILOT_HOME"):
        monkeypatch.delenv(variable, raising=False)


def _home(root: Path, monkeypatch: pytest.MonkeyPatch, private: bool = True) -> Path:
    """``root/me``, holding the CLI's session and (unless not ``private``) its private files."""
    home = root / "me"
    shutil.copytree(APPROVALS / "session-state", home / ".copilot" / "session-state")
    if private:
        for place in PRIVATE:
            copied(Path(place).name)(home / place)
    monkeypatch.setenv("HOME", str(home))
    return home


def test_C1_the_fixture_is_the_location_store_of_copilot_1_0_102() -> None:
    """What the tests below hold the scan to: the file keeps the approvals by the path."""
    store = json.loads((APPROVALS / "permissions-config.json").read_text("utf-8"))
    approvals = store["locations"][LOCATION]["tool_approvals"]
    assert approvals == [{"kind": "commands", "commandIdentifiers": ["touch"]}, {"kind": "write"}]
    config = (APPROVALS / "config.json").read_text("utf-8")
    assert f'"trustedFolders": [\n    "{LOCATION}"\n  ]' in config


def test_C1_a_home_scan_opens_none_of_the_location_permissions_copilot_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    plain = scan_here(_home(tmp_path / "plain", monkeypatch, private=False))
    home = _home(tmp_path / "full", monkeypatch)
    opened.clear()
    full = scan_here(home)
    assert touched(opened, PRIVATE) == []
    assert full.skipped == plain.skipped
    session = home / ".copilot" / "session-state" / SESSION / "events.jsonl"
    assert [(row["format"], row["key"]) for row in full] == [("copilot", str(session))]
    scan_here(home / ".copilot")
    assert touched(opened, PRIVATE) == []


(
    test_C7_the_permissions_config_copilot_wrote_named_to_scan_is_said_and_never_opened,
    test_L4_the_permissions_config_copilot_wrote_named_to_load_is_refused_unopened,
) = each_one_named({PRIVATE[0]: (copied("permissions-config.json"), "copilot")}, LOCATION, _home)
