"""A folder of OpenHands session archives scanned (spec C-1, C-2, C-4, C-6, C-7, X-1).

Each archive is one row per session in it, keyed ``path#<session>`` (the names
``load(path, sample=…)`` takes; one session: its path), each row's counts those of its load;
an archive of anything else is skipped, told from its members' names, never read
whole. The archives are the real V0 session tarball and SDK conversations archived as the
agent server archives them (built by the helpers of ``tests/formats/test_openhands_archive.py``);
the hostile ones are made here with :mod:`tarfile`.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.test_openhands_archive import (
    CONVERSATIONS,
    DELEGATING,
    TASKING,
    V0_ID,
    V0_SESSION,
    _agent_server_tar,
    _conversations,
    _member,
    _trajectory_zip,
    _v0_members,
    _write,
)
from turnfold.corpus import runs, scan
from turnfold.corpus.discover import Item
from turnfold.corpus.summarize import summarize as summarize_item
from turnfold.formats.harnesses import archive, openhands
from turnfold.model import UserMessage

#: The columns a row counts, which must be its load's.
COUNTS = (
    "title", "model", "started", "ended", "duration_s", "turns", "tool_calls", "failed_tools",
    "errors", "subagents", "input_tokens", "output_tokens", "cache_read_tokens",
    "cache_write_tokens", "cost_usd", "warnings", "error",
)  # fmt: skip
_INJECTED = json.dumps({"id": 99, "source": "user", "action": "message",
                        "args": {"content": "INJECTED"}}).encode()  # fmt: skip


pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture
def downloads(tmp_path: Path) -> Path:
    """A folder of downloaded sessions: archives of one session and of two, a trajectory zip,
    a hostile archive, an archive of a session every member of which is refused, and two
    archives of no session."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    shutil.copy(V0_SESSION, folder / "a-coin-flip.tar.gz")
    built = tmp_path / "built"
    _agent_server_tar(_conversations(built / "one", DELEGATING), folder / "b-workspace.tar.gz")
    _agent_server_tar(_conversations(built / "two", DELEGATING, TASKING), folder / "c-two.tgz")
    _trajectory_zip(CONVERSATIONS / TASKING, folder / "d-trajectory.zip")
    escaping = _member(f"{V0_ID}/events/../../escaped/events/14.json", _INJECTED)
    _write(folder / "e-hostile.tar.gz", [*_v0_members(), escaping])
    _write(folder / "f-source.tar.gz", [_member(f"project/src/m{n}.py", b"print(1)\n")
                                        for n in range(100)])  # fmt: skip
    with zipfile.ZipFile(folder / "g-notes.zip", "w") as notes:
        notes.writestr("notes/readme.txt", "hello")
    refused = [_member(f"../../{V0_ID}/events/0.json", _INJECTED),
               _member(f"../../{V0_ID}/metadata.json", b"{}")]  # fmt: skip
    with tarfile.open(folder / "h-refused.tar", "w") as tar:  # not compressed
        for info, data in refused:
            tar.addfile(info, io.BytesIO(data))
    return folder


def _keys(folder: Path) -> list[str]:
    return [
        str(folder / "a-coin-flip.tar.gz"),
        str(folder / "b-workspace.tar.gz"),
        f"{folder / 'c-two.tgz'}#{TASKING}",  # 2e6c… before c011…: the order of their names
        f"{folder / 'c-two.tgz'}#{DELEGATING}",
        str(folder / "d-trajectory.zip"),
        str(folder / "e-hostile.tar.gz"),
        str(folder / "h-refused.tar"),
    ]


def _loaded_row(path: str, sample: str | None) -> dict[str, Any]:
    """The row of what ``load(path, sample=…)`` shows."""
    transcript = turnfold.load(path, sample=sample)
    return summarize_item(Item(key="loaded", transcript=transcript))


def _counts(row: dict[str, Any]) -> dict[str, Any]:
    return {name: row[name] for name in COUNTS}


def test_C1_C2_a_folder_of_archives_is_a_row_per_session_each_counted_as_its_load(
    downloads: Path,
) -> None:
    corpus = scan(downloads, workers=1, cache=False)
    assert corpus.keys == _keys(downloads)
    assert (corpus.skipped, corpus.errors) == (2, 1)  # the tarball of code, the zip of notes
    rows = {row["key"]: row for row in corpus}
    for key, row in rows.items():
        if row["error"] is not None:
            continue
        path, _, sample = key.partition("#")
        assert (row["path"], row["sample"], row["format"]) == (path, sample or None, "openhands")
        assert _counts(row) == _counts(_loaded_row(path, sample or None)), key
    coin = rows[str(downloads / "a-coin-flip.tar.gz")]
    assert (coin["title"], coin["turns"], coin["tool_calls"], coin["warnings"]) == (
        "Flip a coin!", 1, 2, 0,
    )  # fmt: skip
    assert coin["cost_usd"] == pytest.approx(0.0347178)
    # Three agents delegated at once, then one more: four, read from the archive's subagents/.
    delegating = rows[f"{downloads / 'c-two.tgz'}#{DELEGATING}"]
    assert (delegating["title"], delegating["subagents"], delegating["warnings"]) == (
        "Count the lines and words of my files with helpers.", 4, 0,
    )  # fmt: skip
    assert _counts(rows[str(downloads / "b-workspace.tar.gz")]) == _counts(delegating)
    tasking = rows[f"{downloads / 'c-two.tgz'}#{TASKING}"]
    assert _counts(rows[str(downloads / "d-trajectory.zip")]) == _counts(tasking)


def test_C1_a_folder_scanned_as_another_format_passes_its_archives_over(downloads: Path) -> None:
    """Only OpenHands reads an archive: scanned as another format, a folder's archives are
    skipped, not rows of errors; scanned as OpenHands, they are the rows they are unasked."""
    other = scan(downloads, format="claude-code", workers=1, cache=False)
    assert (len(other), other.skipped) == (0, 8)
    named = scan(downloads, format="openhands", workers=1, cache=False)
    assert named.to_arrow().equals(scan(downloads, workers=1, cache=False).to_arrow())


def test_C2_an_archive_s_row_counts_as_its_folder_on_disk(downloads: Path, tmp_path: Path) -> None:
    """The same session, in an archive and extracted, is the same row but for its key."""
    extracted = tmp_path / "extracted"
    with tarfile.open(V0_SESSION) as tar:
        tar.extractall(extracted / "v0", filter="data")
    shutil.copytree(CONVERSATIONS / DELEGATING, extracted / "v1" / DELEGATING)
    on_disk = {row["path"]: row for row in scan(extracted, workers=1, cache=False)}
    archived = {row["key"]: row for row in scan(downloads, workers=1, cache=False)}
    v0 = on_disk[str(extracted / "v0" / V0_ID / openhands.SESSION_METADATA)]
    v1 = on_disk[str(extracted / "v1" / DELEGATING / "base_state.json")]
    assert _counts(archived[str(downloads / "a-coin-flip.tar.gz")]) == _counts(v0)
    assert _counts(archived[f"{downloads / 'c-two.tgz'}#{DELEGATING}"]) == _counts(v1)


def test_C1_corpus_key_opens_the_session_load_shows(downloads: Path) -> None:
    corpus = scan(downloads, workers=1, cache=False)
    two = str(downloads / "c-two.tgz")
    for key, path, sample in [
        (f"{two}#{DELEGATING}", two, DELEGATING),
        (f"{two}#{TASKING}", two, TASKING),
        (str(downloads / "a-coin-flip.tar.gz"), str(downloads / "a-coin-flip.tar.gz"), None),
        (str(downloads / "d-trajectory.zip"), str(downloads / "d-trajectory.zip"), None),
    ]:
        opened = corpus[key]
        loaded = turnfold.load(path, sample=sample)
        assert opened.entries == loaded.entries, key
        assert [w.reason for w in opened.warnings] == [w.reason for w in loaded.warnings]
    prompt = corpus[f"{two}#{DELEGATING}"].entries[0]
    assert isinstance(prompt, UserMessage)
    assert prompt.text == "Count the lines and words of my files with helpers."


def test_X1_a_hostile_member_is_a_warning_of_its_row_never_read_never_written(
    downloads: Path, tmp_path: Path
) -> None:
    corpus = scan(downloads, workers=1, cache=False)
    hostile = corpus.rows[_keys(downloads).index(str(downloads / "e-hostile.tar.gz"))]
    coin = corpus.rows[0]
    assert hostile["warnings"] == 1
    assert {**_counts(hostile), "warnings": 0} == _counts(coin)  # the session, as without it
    (warning,) = corpus[hostile["key"]].warnings
    assert warning.reason == (
        f"member {V0_ID}/events/../../escaped/events/14.json: a name outside the archive, not read"
    )
    assert "INJECTED" not in repr(corpus[hostile["key"]].entries)
    assert not (downloads.parent / "escaped").exists()
    assert not (tmp_path.parent / "escaped").exists()


def test_C7_X1_an_archive_whose_session_is_refused_is_an_error_row_saying_why(
    downloads: Path,
) -> None:
    """Its only session's members leave the archive: nothing is read, and the row's error
    names the file and the member refused (not only "no session")."""
    corpus = scan(downloads, workers=1, cache=False)
    refused = str(downloads / "h-refused.tar")
    (error,) = [row["error"] for row in corpus if row["error"] is not None]
    assert error == (
        f"{refused}: not a transcript (an archive with no OpenHands session in it (no events/ of "
        f"event files; member ../../{V0_ID}/events/0.json: a name outside the archive, not "
        "read, …): extract it and load or scan its files); formats tried: openhands"
    )
    with pytest.raises(turnfold.TranscriptFormatError, match="a name outside the archive"):
        turnfold.load(refused)


def test_C7_an_archive_of_no_session_is_skipped_from_its_member_names_never_read_whole(
    downloads: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tarball of code and the zip of notes are counted as skipped, never read by the
    reader of sessions (``read_members``); a tarball looked at only up to the listing's bound
    of bytes is skipped too, and the scan warns naming it and what was not looked at."""
    monkeypatch.setattr(archive, "LIMITS", archive.ArchiveLimits(max_listed_bytes=4 * 1024**2))
    big = tarfile.TarInfo("data/blob.bin")
    big.size = 16 * 1024 * 1024
    with tarfile.open(downloads / "i-data.tar.gz", "w:gz", compresslevel=1) as tar:
        tar.addfile(big, io.BytesIO(bytes(big.size)))
        session, data = _member(f"{V0_ID}/events/0.json", b"{}")  # past the bound: unseen
        tar.addfile(session, io.BytesIO(data))
    read: list[str] = []
    real = archive.read_members  # which openhands imported by name

    def read_members(path: Path, *args: Any, **kwargs: Any) -> Any:
        read.append(path.name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr("turnfold.formats.harnesses.openhands.read_members", read_members)
    with pytest.warns(UserWarning, match="skipped 1 archive") as caught:
        corpus = scan(downloads, workers=1, cache=False)
    assert corpus.skipped == 3
    assert str(downloads / "i-data.tar.gz") not in corpus
    assert sorted(read) == [
        "a-coin-flip.tar.gz", "b-workspace.tar.gz", "c-two.tgz", "d-trajectory.zip",
        "e-hostile.tar.gz", "h-refused.tar",
    ]  # fmt: skip
    (warning,) = [str(w.message) for w in caught]
    assert warning == (
        "skipped 1 archive(s) with no OpenHands session in the part looked at: "
        f"{downloads / 'i-data.tar.gz'} (the tar archive was looked at up to its first 1 "
        f"members ({4 * 1024**2:,} bytes decompressed, ArchiveLimits.max_listed_bytes); the "
        "members after them were not). Extract an archive to scan its files, or read it whole "
        "with turnfold.load(path, format='openhands')"
    )
    whole = turnfold.load(downloads / "i-data.tar.gz", format="openhands")
    assert whole.metadata["source_format"] == "openhands"


def test_C7_an_archive_past_its_limits_is_an_error_row_naming_the_limit(
    downloads: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive, "LIMITS", archive.ArchiveLimits(max_members=10))
    corpus = scan(downloads / "a-coin-flip.tar.gz", workers=1, cache=False)
    (row,) = corpus.rows
    assert row["error"] == (  # as an eval log's limits say it
        f"ArchiveError: {downloads / 'a-coin-flip.tar.gz'}: more than the 10 members a load "
        "reads (ArchiveLimits.max_members)"
    )
    assert row["format"] == "openhands"


def test_C4_an_unchanged_rescan_opens_no_archive(
    downloads: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = scan(downloads, workers=1)
    opened: list[str] = []
    real_open = Path.open

    def spying(self: Path, *args: Any, **kwargs: Any) -> Any:
        if downloads in self.parents:
            opened.append(self.name)
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", spying)
    again = scan(downloads, workers=1)
    assert opened == []
    assert (again.read, again.cached, again.skipped, again.errors) == (0, 8, 2, 1)  # 8 files
    for name in ("to_arrow", "tool_calls", "turns"):
        assert getattr(again, name)().equals(getattr(first, name)()), name
    assert again[f"{downloads / 'c-two.tgz'}#{TASKING}"].entries == (
        turnfold.load(downloads / "c-two.tgz", sample=TASKING).entries
    )
    # A changed archive is read again, the others not.
    monkeypatch.setattr(Path, "open", real_open)
    shutil.copy(downloads / "b-workspace.tar.gz", downloads / "a-coin-flip.tar.gz")
    changed = scan(downloads, workers=1)
    assert (changed.read, changed.cached) == (1, 7)
    assert changed.rows[0]["title"] == changed.rows[1]["title"]


def test_C5_workers_2_give_the_rows_of_one_process(downloads: Path) -> None:
    one = scan(downloads, workers=1, cache=False)
    two = scan(downloads, workers=2, cache=False)
    for name in ("to_arrow", "tool_calls", "turns"):
        assert getattr(two, name)().equals(getattr(one, name)()), name
    assert (two.skipped, two.errors) == (2, 1)


def test_C5_a_large_archive_is_read_whole_by_one_worker(tmp_path: Path) -> None:
    """An archive past the size a file of runs is cut at is no file of runs: one worker reads
    it once, its session a row as a small one's."""
    blob = _member(f"{V0_ID}/blob.bin", os.urandom(runs.SPLIT_BYTES + 1024))  # not compressible
    large = _write(tmp_path / "large.tar.gz", [*_v0_members(), blob])
    assert large.stat().st_size > runs.SPLIT_BYTES
    (row,) = scan([large], workers=2, cache=False).rows
    (small,) = scan(V0_SESSION, workers=1, cache=False).rows
    assert (row["key"], row["error"]) == (str(large), None)
    assert _counts(row) == _counts(small)


def test_C6_search_finds_each_session_of_an_archive_by_its_key(downloads: Path) -> None:
    corpus = scan(downloads, workers=1, cache=False)
    hits = corpus.search("hello.py")  # TASKING's prompt: in c-two.tgz and the trajectory zip
    assert sorted({hit.key for hit in hits}) == [
        f"{downloads / 'c-two.tgz'}#{TASKING}", str(downloads / "d-trajectory.zip"),
    ]  # fmt: skip
    coins = {hit.key for hit in corpus.search("coin")}
    assert coins == {str(downloads / "a-coin-flip.tar.gz"), str(downloads / "e-hostile.tar.gz")}
    assert corpus.search("INJECTED") == []


def test_C1_summarize_names_the_sessions_of_an_archive_and_reads_the_one_named(
    downloads: Path,
) -> None:
    two = str(downloads / "c-two.tgz")
    row = summarize_item(Item(key=two, path=two))
    assert row["error"] == (
        f"an archive of 2 OpenHands sessions: name one as Item(sample=…): "
        f"'{TASKING}', '{DELEGATING}'"
    )
    named = summarize_item(Item(key="k", path=two, sample=DELEGATING))
    assert named["key"] == "k"
    assert _counts(named) == _counts(_loaded_row(two, DELEGATING))
    missing = summarize_item(Item(key="k", path=two, sample="nope"))
    assert missing["error"] == f"ValueError: {two}: no session 'nope'; its sessions: " + (
        f"{TASKING}, {DELEGATING}"
    )
    source = str(downloads / "f-source.tar.gz")
    assert summarize_item(Item(key=source, path=source))["error"] == (
        "no loader recognises this file"
    )


def test_H3_a_session_archived_twice_under_one_name_is_read_once_and_said(
    tmp_path: Path,
) -> None:
    members: list[tuple[tarfile.TarInfo, bytes | None]] = []
    for place in ("first", "second"):
        for info, data in _v0_members():
            info = tarfile.TarInfo(f"{place}/{info.name}") if info.isreg() else info
            if data is not None:
                info.size = len(data)
                members.append((info, data))
    tar = _write(tmp_path / "twice.tar.gz", members)
    transcript = turnfold.load(tar)
    assert [w.reason for w in transcript.warnings] == [
        f"{tar}/second/{V0_ID}: a second session named {V0_ID} (the first is "
        f"{tar}/first/{V0_ID}); not read: extract the archive to read it"
    ]
    (row,) = scan(tar, workers=1, cache=False).rows
    assert (row["key"], row["sample"], row["warnings"]) == (str(tar), None, 1)
    assert transcript.entries == turnfold.load(V0_SESSION).entries
