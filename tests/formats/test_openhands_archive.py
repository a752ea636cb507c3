"""OpenHands sessions kept as archives, read where they lie (spec H-3, L-4, X-1).

A session is passed on as an archive of its folder: ``tar czf`` of a V0 session (the real
0.48 session folder below is such a tarball) or of V1 conversations, or the agent server's
workspace archive (``GET /api/file/archive?format=tar.gz``), which :func:`_agent_server_tar`
writes as ``file_router._create_tar_gz_archive`` does (OpenHands/software-agent-sdk at
20f7f5f8, ``openhands-agent-server/openhands/agent_server/file_router.py``): a folder's tree under
its name, a member for every folder, regular files only, and an ``archive_manifest.json``.
The agent server's "download trajectory" zip is made as ``_create_zip_from_directory`` makes
it (:func:`_trajectory_zip`). Hostile archives are made here with :mod:`tarfile`.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
import tracemalloc
import zipfile
from pathlib import Path, PurePosixPath

import pytest

import turnfold
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.harnesses import archive, openhands_sdk

FIXTURES = Path(__file__).parents[1] / "fixtures" / "harnesses"
V0_SESSION = FIXTURES / "openhands" / "openhands_v0.48_session-folder_coin-flip.tar.gz"
V0_ID = "63b4315947a049e2b7a51249b3d4fcc3"
CONVERSATIONS = FIXTURES / "openhands-sdk" / "conversations"
#: A real SDK 1.22.1 conversation with three delegated agents in its ``subagents/``.
DELEGATING = "c0116151826b4305addf9630a6efc922"
#: A real SDK conversation with a ``task`` sub-agent.
TASKING = "2e6c222a6c254b28bab45a8281ad9b15"


def _agent_server_tar(root: Path, output: Path) -> Path:
    """``root`` archived as the agent server's ``_create_tar_gz_archive`` archives it."""
    file_count = total_bytes = 0
    with tarfile.open(output, "w:gz") as tar:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            base = PurePosixPath(Path(dirpath).relative_to(root).as_posix())
            dirnames.sort()
            name = root.name if base == PurePosixPath(".") else f"{root.name}/{base}"
            tar.add(dirpath, arcname=name, recursive=False)
            for filename in sorted(filenames):
                path = Path(dirpath) / filename
                with path.open("rb") as stream:
                    info = tar.gettarinfo(arcname=f"{root.name}/{base / filename}", fileobj=stream)
                    tar.addfile(info, stream)
                file_count += 1
                total_bytes += info.size
        manifest = json.dumps(
            {"format": "tar.gz", "source": root.name, "file_count": file_count,
             "total_bytes": total_bytes, "excludes": []},
            indent=2, sort_keys=True,
        ).encode()  # fmt: skip
        info = tarfile.TarInfo(f"{root.name}/archive_manifest.json")
        info.size = len(manifest)
        tar.addfile(info, io.BytesIO(manifest))
    return output


def _trajectory_zip(folder: Path, output: Path) -> Path:
    """A conversation's folder zipped as the agent server's ``download-trajectory`` does:
    the folder under its name, every file under it (its secrets redacted, none here)."""
    with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(folder, folder.name)
        for path in sorted(folder.rglob("*")):
            archive.write(path, str(path.relative_to(folder.parent)))
    return output


def _conversations(tmp_path: Path, *names: str) -> Path:
    """A persistence folder (``conversations/``) holding copies of the fixture's conversations."""
    import shutil

    root = tmp_path / "conversations"
    for name in names:
        shutil.copytree(CONVERSATIONS / name, root / name)
    return root


def _calls(transcript: turnfold.Transcript) -> list[tuple[str, str | None, str, int]]:
    """Each call, and how many calls its sub-agent's transcript holds (its nested steps)."""
    return [
        (
            c.name,
            c.description,
            c.status,
            len(c.subagent.transcript.tool_calls())
            if c.subagent is not None and c.subagent.transcript is not None
            else -1,
        )
        for c in transcript.tool_calls()
    ]


def _shown(entry: object) -> tuple[str, str | None]:
    """What an entry shows, apart from its place (its id is its place in the transcript)."""
    return type(entry).__name__, getattr(entry, "text", None) or getattr(entry, "description", None)


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_H3_a_V1_conversation_in_the_agent_server_s_archive_reads_as_its_folder(
    tmp_path: Path,
) -> None:
    """The archive is read in memory, as the folder it holds: calls, their outcomes, the
    agents nested under their calls from ``subagents/``, the title, the usage."""
    root = _conversations(tmp_path, DELEGATING)
    tar = _agent_server_tar(root, tmp_path / "workspace.tar.gz")
    before = _files(tmp_path)
    transcript = turnfold.load(tar)
    folder = openhands_sdk.read_path(root / DELEGATING)
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert transcript.entries == folder.entries
    assert transcript.metadata == folder.metadata
    assert _calls(transcript) == [
        ("delegate spawn", "lines, words, broken", "success", -1),
        ("delegate", "delegate lines, words, broken", "success", 3),
        ("delegate", "delegate lines", "success", 1),
    ]
    _, together, _ = transcript.tool_calls()
    assert together.subagent is not None
    assert together.subagent.transcript is not None
    lines = together.subagent.transcript.tool_calls()[0]
    assert lines.subagent is not None
    assert lines.subagent.transcript is not None
    assert [(c.name, c.description, c.status) for c in lines.subagent.transcript.tool_calls()] == [
        ("terminal", "wc -l hello.txt", "success")
    ]
    assert transcript.metadata["usage"]["input_tokens"] == 1000 + 1100 + 1200 + 1300
    assert _files(tmp_path) == before  # nothing extracted


def test_H3_the_agent_server_s_trajectory_zip_reads_as_its_folder(tmp_path: Path) -> None:
    folder = CONVERSATIONS / DELEGATING
    download = _trajectory_zip(folder, tmp_path / f"{DELEGATING}.zip")
    transcript = turnfold.load(download)
    whole = openhands_sdk.read_path(folder)
    assert transcript.warnings == []
    assert transcript.entries == whole.entries
    assert transcript.metadata == whole.metadata
    assert _calls(transcript)[1] == ("delegate", "delegate lines, words, broken", "success", 3)
    assert _files(tmp_path) == [f"{DELEGATING}.zip"]


def test_X1_a_trajectory_zip_s_names_outside_it_are_warned_of(tmp_path: Path) -> None:
    download = _trajectory_zip(CONVERSATIONS / DELEGATING, tmp_path / "t.zip")
    with zipfile.ZipFile(download, "a") as archive:
        archive.writestr(f"{DELEGATING}/events/../../../escaped.json", "{}")
    transcript = turnfold.load(download)
    assert [w.reason for w in transcript.warnings] == [
        f"member {DELEGATING}/events/../../../escaped.json: a name outside the archive, not read"
    ]
    assert not (tmp_path.parent / "escaped.json").exists()


def test_H3_an_archive_of_several_conversations_shows_one_and_names_the_others(
    tmp_path: Path,
) -> None:
    tar = _agent_server_tar(_conversations(tmp_path, DELEGATING, TASKING), tmp_path / "c.tgz")
    first = turnfold.load(tar)
    assert first.metadata["session_id"].replace("-", "") == TASKING  # by name: 2e6c… first
    assert [w.reason for w in first.warnings] == [
        f"2 OpenHands sessions in the archive: {TASKING} is shown; "
        f"load(path, sample=NAME) shows another ({DELEGATING})"
    ]
    chosen = turnfold.load(tar, sample=DELEGATING)
    assert chosen.warnings == []
    assert chosen.entries == openhands_sdk.read_path(CONVERSATIONS / DELEGATING).entries
    with pytest.raises(ValueError, match=f"no session 'nope'; its sessions: {TASKING}, "):
        turnfold.load(tar, sample="nope")


def test_H3_H6_a_real_V0_session_tarball_reads_as_its_folder(tmp_path: Path) -> None:
    transcript = turnfold.load(V0_SESSION)
    with tarfile.open(V0_SESSION) as tar:
        tar.extractall(tmp_path, filter="data")
    folder = turnfold.load(tmp_path / V0_ID)
    assert transcript.warnings == []
    assert transcript.entries == folder.entries
    assert transcript.metadata == folder.metadata
    assert transcript.metadata["title"] == "Coin Flip Simulation"
    assert transcript.metadata["cost_usd"] == pytest.approx(0.0347178)
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [
        ("execute_ipython_cell", "success"),
        ("execute_ipython_cell", "success"),
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["session"] == {"mapped": 1}


# --- hostile archives ---------------------------------------------------------------------------


def _v0_members() -> list[tuple[tarfile.TarInfo, bytes | None]]:
    """The real V0 session's members, to build hostile archives around."""
    members = []
    with tarfile.open(V0_SESSION) as tar:
        for info in tar.getmembers():
            stream = tar.extractfile(info) if info.isreg() else None
            members.append((info, stream.read() if stream is not None else None))
    return members


def _write(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _member(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name: str, target: str, kind: bytes) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def test_X1_names_that_leave_the_archive_and_links_are_warned_of_never_followed(
    tmp_path: Path,
) -> None:
    """``../`` and absolute names, symbolic and hard links: each not read, each said; the
    session reads as without them, and nothing is written anywhere."""
    event = json.dumps({"id": 99, "source": "user", "action": "message",
                        "args": {"content": "INJECTED"}}).encode()  # fmt: skip
    hostile = [
        _member(f"{V0_ID}/events/../../escaped/events/14.json", event),
        _member("/tmp/absolute/events/15.json", event),
        _link(f"{V0_ID}/events/16.json", "/etc/passwd", tarfile.SYMTYPE),
        _link(f"{V0_ID}/events/17.json", f"{V0_ID}/events/0.json", tarfile.LNKTYPE),
    ]
    tar = _write(tmp_path / "hostile.tar.gz", [*_v0_members(), *hostile])
    transcript = turnfold.load(tar)
    reasons = [w.reason for w in transcript.warnings]
    assert reasons == [
        f"member {V0_ID}/events/../../escaped/events/14.json: a name outside the archive, not read",
        "member /tmp/absolute/events/15.json: a name outside the archive, not read",
        f"member {V0_ID}/events/16.json: a symbolic link, not followed",
        f"member {V0_ID}/events/17.json: a hard link, not followed",
    ]
    assert all(w.source == str(tar) for w in transcript.warnings)
    assert "INJECTED" not in repr(transcript.entries)
    assert transcript.entries == turnfold.load(V0_SESSION).entries
    assert not (tmp_path.parent / "escaped").exists()
    assert not Path("/tmp/absolute").exists()
    assert _files(tmp_path) == ["hostile.tar.gz"]


def test_X1_a_member_past_the_record_limit_is_never_held_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An event file of 32 MB (past a 1 MB limit) is passed over, not read into memory: the
    load warns of it on its line and reads the rest."""
    monkeypatch.setenv("TURNFOLD_MAX_RECORD_BYTES", str(1024 * 1024))
    huge = 32 * 1024 * 1024
    info = tarfile.TarInfo(f"{V0_ID}/events/14.json")
    info.size = huge
    members = _v0_members()
    with tarfile.open(tmp_path / "huge.tar.gz", "w:gz", compresslevel=1) as tar:
        for member, data in members:
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
        tar.addfile(info, io.BytesIO(b"{" + b" " * (huge - 2) + b"}"))
    tracemalloc.start()
    try:
        transcript = turnfold.load(tmp_path / "huge.tar.gz")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < huge // 2
    (warning,) = transcript.warnings
    assert warning.reason == (
        f"14.json: {huge:,} bytes, over the limit of {1024 * 1024:,} "
        "(TURNFOLD_MAX_RECORD_BYTES); not read"
    )
    assert warning.line == 15
    assert transcript.entries == turnfold.load(V0_SESSION).entries


def test_X1_a_compression_bomb_stops_with_a_warning_after_what_came_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member of zeros that inflates past the bound: the read stops there, says so, and
    shows the session read before it (the members after it are not read)."""
    monkeypatch.setenv("TURNFOLD_MAX_RECORD_BYTES", str(1024 * 1024))
    bomb = 64 * 1024 * 1024
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for member, data in _v0_members():
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
        info = tarfile.TarInfo("zeros.bin")
        info.size = bomb
        tar.addfile(info, io.BytesIO(bytes(bomb)))
        after, data = _member("after.json", b"{}")
        tar.addfile(after, io.BytesIO(data))
    (tmp_path / "bomb.tar.gz").write_bytes(gzip.compress(raw.getvalue(), compresslevel=9))
    transcript = turnfold.load(tmp_path / "bomb.tar.gz")
    reasons = [w.reason for w in transcript.warnings]
    assert len(reasons) == 2
    assert reasons[0].startswith("decompresses to more than 256 times its gzip bytes")
    # The bomb is the 18th member: it is passed over (no .json), and the archive ends in it.
    assert reasons[1].startswith("the tar archive is cut off or damaged after 18 members")
    assert transcript.entries == turnfold.load(V0_SESSION).entries


def test_X1_an_archive_of_too_many_members_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive, "LIMITS", archive.ArchiveLimits(max_members=1000))
    members = _v0_members()
    members += [_member(f"{V0_ID}/junk/{n}.txt", b"x") for n in range(5000)]
    tar = _write(tmp_path / "many.tar.gz", members)
    with pytest.raises(archive.ArchiveError) as caught:
        turnfold.load(tar)
    assert str(caught.value) == (
        f"{tar}: more than the 1,000 members a load reads (ArchiveLimits.max_members)"
    )


#: Where the real V0 tarball is cut (its tar's offsets; members in GNU tar's order: the folders,
#: events 0, 1, 10-13, 2-9, metadata.json), the events still read, and why the rest is not.
CUTS = [
    (41472 + 100, 3, f"member {V0_ID}/events/2.json: cut off or damaged (unexpected end of "
     "data); the members before it are read"),
    (46080, 4, "the tar archive is cut off after 13 members (it has no end-of-archive block): "
     "the members before it are read"),
    (43008 + 100, 3, "the tar archive is cut off after 10 members (it has no end-of-archive "
     "block): the members before it are read"),
]  # fmt: skip


@pytest.mark.parametrize(("cut", "events", "reason"), CUTS, ids=["data", "header", "in-header"])
def test_L4_an_archive_cut_off_reads_the_events_before_the_cut_and_says_so(
    tmp_path: Path, cut: int, events: int, reason: str
) -> None:
    """Cut inside a member's data, at a member's header, or inside one: tarfile ends quietly
    at the last two, which the load must not (its events stop there, its metadata is lost)."""
    raw = gzip.decompress(V0_SESSION.read_bytes())
    path = tmp_path / "cut.tar.gz"
    path.write_bytes(gzip.compress(raw[:cut]))
    transcript = turnfold.load(path)
    assert [(w.reason, w.source) for w in transcript.warnings] == [(reason, str(path))]
    whole = {_shown(entry) for entry in turnfold.load(V0_SESSION).entries}
    assert len(transcript.entries) == events
    assert {_shown(entry) for entry in transcript.entries} <= whole  # the events read, as read
    assert "title" not in transcript.metadata  # metadata.json, the last member, is not read


def test_L2_a_tar_of_no_session_is_refused_saying_to_extract_it(tmp_path: Path) -> None:
    tar = _write(tmp_path / "other.tar.gz", [_member("notes/readme.txt", b"hello")])
    with pytest.raises(TranscriptFormatError, match=r"a tar archive: extract it \(tar -xf\)"):
        turnfold.load(tar)
