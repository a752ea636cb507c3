"""Gemini CLI's copy of a session file it could not read is a session file: read, and a row of
a scan (C-1, C-7, L-4).

When Gemini CLI 0.61.0 resumes a session whose file it cannot read (no line of its metadata
parses, nor does the file as a legacy JSON document), it writes the session anew from memory and
keeps the old file beside it, renamed ``<session>.jsonl.unreadable-<Date.now()>``
(``rewriteConversationFile``, ``chatRecordingService.ts`` in the ``@google/gemini-cli`` bundle of
tests/agents): its bytes untouched, never listed, read nor cleared by Gemini CLI again, as its
session files are the names ending ``.json`` or ``.jsonl``.

No offline run makes Gemini CLI find its own file unreadable, so the copy here is written as the
bundle leaves it: a session file the real Gemini CLI 0.61 wrote (tests/fixtures/gemini/subagent,
an ``invoke_agent`` call with its sub-agent's session in ``chats/<sessionId>/``), renamed, its
metadata line damaged as Gemini CLI cannot read it: zeroed, as a crash leaves a block of a file
being appended to, or cut off mid-line.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import turnfold
from tests.credential_homes import scan_here
from turnfold.corpus.discover import discover
from turnfold.formats.gemini import is_unreadable_copy
from turnfold.model import ToolCall

FIXTURES = Path(__file__).parent / "fixtures" / "gemini" / "subagent"
SESSION = FIXTURES / "session-2026-12-01T21-33-66666666.jsonl"
SESSION_ID = "66666666-7777-4888-9999-000000000000"
#: ``Date.now()`` when Gemini CLI set the file aside.
SET_ASIDE_AT = 1796643301736

pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture(autouse=True)
def own_agent_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini CLI's folder is the test's: a developer's variable would move it."""
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)


def _damaged(how: str) -> bytes:
    """The session file's bytes with its metadata line damaged as ``how`` says."""
    first, rest = SESSION.read_bytes().split(b"\n", 1)
    # Zeroed, or cut off mid-line with the rest of the file written after it.
    first = b"\x00" * len(first) if how == "zeroed" else first[: len(first) // 2]
    return first + b"\n" + rest


def _chats(home: Path, how: str = "zeroed") -> tuple[Path, Path, Path]:
    """A home's ``chats/`` as Gemini CLI leaves it after such a resume: the session written
    anew, its sub-agent's folder, and the unreadable copy; the three paths."""
    chats = home / ".gemini" / "tmp" / "work" / "chats"
    chats.mkdir(parents=True)
    session = chats / SESSION.name
    shutil.copyfile(SESSION, session)
    shutil.copytree(FIXTURES / SESSION_ID, chats / SESSION_ID)
    copy = chats / f"{SESSION.name}.unreadable-{SET_ASIDE_AT}"
    copy.write_bytes(_damaged(how))
    child = next((chats / SESSION_ID).glob("*.jsonl"))
    return session, copy, child


@pytest.mark.parametrize("how", ["zeroed", "cut"])
def test_L4_the_copy_loads_as_the_session_with_its_bad_line_warned_of(
    tmp_path: Path, how: str
) -> None:
    session, copy, _ = _chats(tmp_path / "me", how)
    read = turnfold.load(copy)
    whole = turnfold.load(session)
    assert read.metadata["source_format"] == "gemini"
    assert read.metadata["session_id"] == SESSION_ID  # from a later line of the file
    assert read.entries == whole.entries  # every readable line shown, the sub-agent too
    agents = [c for c in read.entries if isinstance(c, ToolCall) and c.subagent is not None]
    assert agents
    assert agents[0].subagent is not None
    assert agents[0].subagent.transcript
    assert [(w.source, w.line) for w in read.warnings] == [(str(copy), 1)]
    assert whole.warnings == []
    assert turnfold.load(copy, format="gemini").entries == whole.entries


def test_C1_a_home_scan_lists_the_copy_as_a_gemini_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "me"
    session, copy, child = _chats(home)
    monkeypatch.setenv("HOME", str(home))
    corpus = scan_here(home)
    assert (sorted(corpus.keys), corpus.skipped) == (sorted([str(session), str(copy)]), 0)
    rows = {row["key"]: row for row in corpus.rows}
    made, kept = rows[str(session)], rows[str(copy)]
    assert (kept["format"], kept["error"], kept["warnings"]) == ("gemini", None, 1)
    same = ("title", "turns", "tool_calls", "failed_tools", "subagents", "output_tokens")
    assert [kept[c] for c in same] == [made[c] for c in same]
    assert kept["subagents"] == 1  # its sub-agent's session, read with it, is no row
    assert str(child) not in corpus.keys
    assert corpus[str(copy)].entries == turnfold.load(copy).entries


def test_C1_the_copy_is_read_when_the_scan_asks_for_gemini_and_counted_otherwise(
    tmp_path: Path,
) -> None:
    _, copy, _ = _chats(tmp_path / "me")
    chats = copy.parent
    assert str(copy) in [item.path for item in discover(chats, "gemini").items]
    assert str(copy) in [item.path for item in discover(chats, None).items]
    other = discover(chats, "codex")  # no other format reads it: a file passed over, counted
    assert str(copy) not in [item.path for item in other.items]
    assert other.skipped >= 1


@pytest.mark.parametrize(
    ("name", "copy"),
    [
        (f"session-2026-12-01T21-33-66666666.jsonl.unreadable-{SET_ASIDE_AT}", True),
        ("4a1c2b3d-9e8f-4a7b-8c6d-5e4f3a2b1c0d.jsonl.unreadable-1", True),
        ("session-2026-12-01T21-33-66666666.jsonl.unreadable-", False),
        ("session-2026-12-01T21-33-66666666.jsonl.unreadable-17966x", False),
        ("session-2026-12-01T21-33-66666666.json.unreadable-1796643301736", False),
        ("session-2026-12-01T21-33-66666666.jsonl.tmp-4242", False),
        ("notes.unreadable-1796643301736", False),
    ],
)
def test_C1_the_copy_is_told_by_the_name_gemini_cli_gives_it(name: str, copy: bool) -> None:
    """``${conversationFile}.unreadable-${Date.now()}``, where the file's name always ends in
    ``.jsonl`` by then (a legacy ``.json`` becomes ``.jsonl`` first); ``.tmp-<pid>`` is the
    atomic write's copy, Gemini CLI's own."""
    assert is_unreadable_copy(name) is copy


def test_C7_a_copy_with_nothing_readable_is_an_error_row_naming_it(tmp_path: Path) -> None:
    """Gemini CLI sets aside whatever the file held; one with no JSON left in it is a row whose
    error names the file and its first line (C-7), never a file passed over unsaid."""
    chats = tmp_path / "chats"
    chats.mkdir()
    copy = chats / f"{SESSION.name}.unreadable-{SET_ASIDE_AT}"
    copy.write_bytes(b"\x00" * 512)
    corpus = scan_here(chats)
    assert (corpus.keys, corpus.skipped) == ([str(copy)], 0)
    assert corpus.rows[0]["error"].startswith(f"{copy}, line 1: not a transcript")
