"""A folder that cannot be listed, the rest (spec L-4 bad input, C-7 a scan never aborts, X-2
nothing lost): met by a scan of a glob, by a load of a dataset ``datasets`` saved in a folder,
and by the probes that tell which kind of run a folder is. Never passed over in silence, never
a bare error of the listing: a glob's is counted skipped and said as a walk's is; a load that
cannot tell a folder's kind, or read the dataset in it, raises an error naming the folder and
why, of the listing's error's class (``PermissionError``), as the load of a file that cannot be
read does.

The tests run as root: the listing calls are refused for the folders denied (``deny`` and
``seal`` of tests/test_unreadable_folders.py, which say how). Each case is a real fixture of
its format (named beside it), copied.
"""

from __future__ import annotations

import errno
import glob
import os
import re
import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests import test_unreadable_folders as unreadable
from tests.test_unreadable_folders import Deny
from turnfold.corpus.discover import _matched
from turnfold.formats import folder_format, tables

# The fixtures that refuse the listing of a folder (``deny``), and a look at a name in it too
# (``seal``), shared: a test asks for them by these names.
deny = unreadable.deny
seal = unreadable.seal

FIXTURES = Path(__file__).parent / "fixtures"
#: A Claude Code session of one file (no folder of sub-agents beside it).
SESSION = FIXTURES / "claude-code" / "v2.1.332_request-and-cost-records.jsonl"
#: OpenHands V0.48's session folder (tests/formats/test_openhands.py).
V0_SESSION = (
    FIXTURES / "harnesses" / "openhands" / "openhands_v0.48_session-folder_coin-flip.tar.gz"
)
V0_ID = "63b4315947a049e2b7a51249b3d4fcc3"
#: The OpenHands SDK's conversations (tests/formats/test_openhands_sdk.py).
SDK_CONVERSATIONS = FIXTURES / "harnesses" / "openhands-sdk" / "conversations"
#: OpenCode 1.2's database (tests/formats/test_opencode.py).
OPENCODE_DB = FIXTURES / "opencode" / "work" / "opencode.db"
#: A Dataset of two runs saved by ``datasets``' ``save_to_disk`` (test_corpus_arrow_tables.py).
SAVED = FIXTURES / "datasets" / "verifiers_math-python_two-rows_save-to-disk"

KIND = "which kind of run it is cannot be told"


def not_listed(folder: Path) -> str:
    """The start of what an error or warning says of ``folder`` not listed, as a pattern."""
    return f"{re.escape(str(folder))} could not be listed \\(Permission denied\\)"


# --- a scan of a glob -----------------------------------------------------------------------------


def runs(tmp_path: Path) -> Path:
    """``runs/a``, ``runs/b`` and ``runs/c``, each holding a copy of one session."""
    for name in ("a", "b", "c"):
        (tmp_path / "runs" / name).mkdir(parents=True)
        shutil.copyfile(SESSION, tmp_path / "runs" / name / "session.jsonl")
    return tmp_path / "runs"


def test_C7_a_glob_counts_a_folder_it_cannot_list_as_skipped_and_says_it(
    tmp_path: Path, deny: Deny
) -> None:
    folder = runs(tmp_path)
    pattern = str(folder / "*" / "*.jsonl")
    whole = turnfold.scan(pattern, workers=1, cache=False)
    assert (len(whole), whole.skipped) == (3, 0)
    deny(folder / "b")
    said = rf"skipped a folder that could not be listed \({re.escape(str(folder / 'b'))} "
    with pytest.warns(UserWarning, match=said + r"\(Permission denied\)\); no session in it"):
        corpus = turnfold.scan(pattern, workers=1, cache=False)
    assert [Path(row["path"]).parent.name for row in corpus] == ["a", "c"]
    assert corpus.skipped == 1
    assert all(row["error"] is None for row in corpus)


@pytest.fixture
def seal_links(seal: Deny, monkeypatch: pytest.MonkeyPatch) -> Deny:
    """:func:`seal`, the look at a name itself (``os.lstat``, as glob's ``lexists`` asks)
    refused too, as the system refuses it in a folder of mode 000."""
    sealed: set[str] = set()
    lstat = os.lstat

    def sealed_lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if not isinstance(path, int) and os.path.dirname(os.path.abspath(path)) in sealed:
            raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))
        return lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", sealed_lstat)

    def sealing(folder: Path) -> None:
        seal(folder)
        sealed.add(os.path.abspath(folder))

    return sealing


def test_C7_a_glob_says_a_folder_it_may_not_search_for_a_name_in_it(
    tmp_path: Path, seal_links: Deny
) -> None:
    """``runs/*/session.jsonl``: the name is looked up, not listed, in each folder; one that
    may not be searched (mode 000) is said, not taken for a folder without it."""
    folder = runs(tmp_path)
    seal_links(folder / "b")
    with pytest.warns(UserWarning, match=re.escape(str(folder / "b")) + r" \(Permission"):
        corpus = turnfold.scan(str(folder / "*" / "session.jsonl"), workers=1, cache=False)
    assert [Path(row["path"]).parent.name for row in corpus] == ["a", "c"]
    assert corpus.skipped == 1


def test_C1_a_glob_matches_what_glob_glob_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The glob that says the folders it cannot list matches as :func:`glob.glob` did: hidden
    names, a trailing separator, a character class, a literal part after a wildcard, links (one
    to a folder, one that loops, one to nothing), relative and absolute."""
    for name in ("runs/a/x.jsonl", "runs/a/.h.jsonl", "runs/.hid/y.jsonl", "runs/b/y.jsonl",
                 "runs/b/sub/z.jsonl", "runs/c[1]/w.jsonl", "runs/f.jsonl"):  # fmt: skip
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}\n")
    (tmp_path / "runs" / "link").symlink_to(tmp_path / "runs" / "a")
    (tmp_path / "runs" / "loop").symlink_to(tmp_path / "runs" / "loop")
    (tmp_path / "runs" / "gone").symlink_to(tmp_path / "nowhere")
    monkeypatch.chdir(tmp_path)
    patterns = ["runs/*/*.jsonl", "runs/*/", "runs/*", "runs/.*/*", "runs/?/x.jsonl",
                "runs/[ab]/*.jsonl", "runs/*/sub/*.jsonl", "*/*/*", "runs/c[[]1]/*",
                "r*s/f.jsonl", "runs/*/.h.jsonl", "*", "runs//*/x.jsonl", "./runs/*/x.jsonl",
                "runs/*/none/*", "runs/f.jsonl/*"]  # fmt: skip
    for pattern in patterns + [str(tmp_path / pattern) for pattern in patterns]:
        told: list[OSError] = []
        assert sorted(_matched(pattern, False, told.append)) == sorted(glob.glob(pattern))
        assert told == []
    assert sorted(_matched("runs/*/*.jsonl", False, lambda _: None)) == [
        "runs/a/x.jsonl", "runs/b/y.jsonl", "runs/c[1]/w.jsonl", "runs/link/x.jsonl",
    ]  # fmt: skip


# --- a dataset saved in a folder ------------------------------------------------------------------


def test_L4_a_saved_dataset_s_folder_not_listed_is_an_error_naming_it(
    tmp_path: Path, deny: Deny
) -> None:
    saved = tmp_path / "saved"
    shutil.copytree(SAVED, saved)
    assert turnfold.load(saved, sample=1).entries
    deny(saved)
    with pytest.raises(PermissionError, match=f"^\\[Errno 13\\] {not_listed(saved)}: {KIND}"):
        turnfold.load(saved, sample=1)
    # Asked of the folder alone (its permissions changed since a load found the dataset).
    with pytest.raises(PermissionError) as raised:
        tables.run_of(saved, None, 1, None)
    assert raised.value.filename == str(saved)
    assert raised.value.strerror == (
        f"{saved} could not be listed (Permission denied): the dataset saved in it cannot be read"
    )
    assert raised.value.__cause__ is None
    assert raised.value.__suppress_context__  # no bare listing error shown under it


# --- the probes that tell a folder's kind -------------------------------------------------------


def v0_session(tmp_path: Path) -> Path:
    with tarfile.open(V0_SESSION) as archive:
        archive.extractall(tmp_path, filter="data")
    return tmp_path / V0_ID


def test_L4_a_v0_session_whose_events_cannot_be_listed_is_read_by_its_place_and_said(
    tmp_path: Path, deny: Deny
) -> None:
    """Told by a listing of its ``events/``: that not listed, the folder beside its
    ``metadata.json`` is still the session (its folder, its ``events/`` or its
    ``metadata.json`` loaded), what the metadata says read and the events said not read,
    where the load said the folder was none it knew ("is a folder: load() reads one session
    file") and the file no transcript."""
    session = v0_session(tmp_path)
    assert turnfold.load(session).entries
    deny(session / "events")
    for given in (session, session / "events", session / "metadata.json"):
        transcript = turnfold.load(given)
        assert transcript.warnings[0].reason == (
            f"{session / 'events'} could not be listed (Permission denied): its event files "
            "(<n>.json) are not read"
        )
        assert transcript.metadata["title"] == "Coin Flip Simulation"


def test_C7_a_scan_of_a_v0_session_whose_events_cannot_be_listed_keeps_its_row(
    tmp_path: Path, deny: Deny
) -> None:
    """One row, its metadata.json's, carrying the load's warning: not the metadata file alone
    as a row of no kind, nor the events folder passed over."""
    session = v0_session(tmp_path)
    deny(session / "events")
    [row] = list(turnfold.scan(tmp_path, workers=1, cache=False))
    assert Path(row["path"]) == session / "metadata.json"
    assert row["error"] is None
    assert row["warnings"] >= 1


def test_L4_a_folder_of_no_kind_not_listed_is_said_and_a_listed_one_is_still_a_folder(
    tmp_path: Path, deny: Deny
) -> None:
    folder = tmp_path / "notes"
    (folder / "drafts").mkdir(parents=True)
    (folder / "drafts" / "a.txt").write_text("a")
    deny(folder / "drafts")  # a folder in it no probe tells a kind by: none is looked for
    with pytest.raises(IsADirectoryError, match="is a folder: load\\(\\) reads one session"):
        turnfold.load(folder)
    deny(folder)
    with pytest.raises(PermissionError, match=f"{not_listed(folder)}: {KIND}") as raised:
        turnfold.load(folder)
    assert raised.value.filename == str(folder)
    # The command line asks first whether a folder is a run at all: no error there, the
    # probes' kept for whoever asked.
    kept: list[OSError] = []
    assert folder_format(folder, kept) is None
    assert kept
    assert all(isinstance(error, PermissionError) for error in kept)
    assert folder_format(folder) is None


def test_L4_an_sdk_conversation_whose_events_cannot_be_listed_is_still_told_by_its_state(
    tmp_path: Path, deny: Deny
) -> None:
    """``base_state.json``, looked up by its name, tells it: read, its events said."""
    conversation = next(p for p in sorted(SDK_CONVERSATIONS.iterdir()) if p.is_dir())
    copy = tmp_path / conversation.name
    shutil.copytree(conversation, copy)
    deny(copy / "events")
    transcript = turnfold.load(copy)
    assert any(w.reason.startswith(f"{copy / 'events'} could not be listed (Permission denied)")
               for w in transcript.warnings)  # fmt: skip


def data_folder(tmp_path: Path, name: str) -> Path:
    """A data folder holding OpenCode 1.2's database under ``name``: ``opencode.db``, or a
    channel build's ``opencode-<channel>.db`` (``opencode-ai`` 1.18.33 names it so)."""
    folder = tmp_path / "opencode"
    folder.mkdir()
    shutil.copyfile(OPENCODE_DB, folder / name)
    return folder


def test_L4_opencode_s_database_in_a_folder_not_listed_is_found_by_its_name(
    tmp_path: Path, deny: Deny
) -> None:
    """A folder one may search but not list (mode ``-wx``) still holds ``opencode.db`` by its
    name: read as before, though another format's probe could not list it."""
    folder = data_folder(tmp_path, "opencode.db")
    before = turnfold.load(folder)
    deny(folder)
    transcript = turnfold.load(folder)
    assert [e.kind for e in transcript.entries] == [e.kind for e in before.entries]


def test_L4_opencode_s_channel_database_in_a_folder_not_listed_is_said(
    tmp_path: Path, deny: Deny
) -> None:
    """A channel build's database is found by a listing alone: not listed, not "no kind"."""
    folder = data_folder(tmp_path, "opencode-local.db")
    assert turnfold.load(folder).entries
    deny(folder)
    with pytest.raises(PermissionError, match=f"{not_listed(folder)}: {KIND}"):
        turnfold.load(folder)
    with pytest.raises(PermissionError, match=f"{not_listed(folder)}: {KIND}"):
        turnfold.load(folder, format="opencode")


def test_L4_opencode_storage_beside_a_channel_database_not_listed_is_read_and_said(
    tmp_path: Path, deny: Deny
) -> None:
    """The data folder's ``storage/`` (before 1.2) is found by its name; the databases a
    listing would find are said not read."""
    folder = tmp_path / "opencode"
    shutil.copytree(FIXTURES / "opencode" / "v1.1" / "work" / "storage", folder / "storage")
    before = turnfold.load(folder, sample="ses_db984376cffe4173dEEMgi271X")
    deny(folder)
    transcript = turnfold.load(folder, sample="ses_db984376cffe4173dEEMgi271X")
    assert [w.reason for w in transcript.warnings] == [
        f"{folder} could not be listed (Permission denied): its databases of sessions (*.db) "
        "are not read"
    ]
    assert [e.kind for e in transcript.entries] == [e.kind for e in before.entries]


def test_L4_the_command_line_says_a_folder_of_no_kind_not_listed_as_not_told(
    tmp_path: Path, deny: Deny, capsys: pytest.CaptureFixture[str]
) -> None:
    from turnfold.cli import main

    folder = tmp_path / "notes"
    folder.mkdir()
    deny(folder)
    assert main(["show", str(folder)]) != 0
    said = capsys.readouterr().err
    start = f"turnfold: {re.escape(str(folder))}: cannot read: "
    assert re.search(f"{start}{not_listed(folder)}: {KIND}", said)
    assert "is a folder, not a transcript file" not in said


def test_X1_a_keeper_s_file_in_a_folder_that_cannot_be_listed_is_taken_for_its_secrets(
    tmp_path: Path, deny: Deny
) -> None:
    """OpenCode's ``auth.json`` is its keys where its channel build's database (``kilo-*.db``)
    marks the folder: found by a listing. One that can be searched but not listed (mode 711)
    may hold the mark unseen: the file is never opened (fails closed), where it was read."""
    from turnfold.formats.credentials import keeper_of

    data = tmp_path / "data"
    data.mkdir()
    (data / "auth.json").write_text('{"anthropic": {"type": "api", "key": "sk-1"}}')
    assert keeper_of(data / "auth.json") is None  # listed, no mark: a file like any other
    (data / "kilo-dev.db").write_bytes(b"")
    assert keeper_of(data / "auth.json") == "opencode"
    (data / "kilo-dev.db").unlink()
    deny(data)
    assert keeper_of(data / "auth.json") == "opencode"
