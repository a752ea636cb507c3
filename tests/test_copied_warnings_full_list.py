"""A sub-agent's warnings its reader copied into a session's list already full are counted once
(spec L-4: the notice says how many problems the load had, and the corpus row and the command's
stderr say the same number, ``warning_total``).

Some readers join a sub-agent's load warnings to the session's list (``join_warnings``) and
leave them on the sub-agent's transcript too; the view's notice lists and counts a sub-agent's
own after the session's unless it finds them among the session's. Past
``MAX_LISTED_WARNINGS`` the session's list only counts what is joined to it, in one
``UnlistedWarnings``: the copies were not found there, and were counted twice (Cursor: 3 bad
lines of a sub-agent's file made 6 problems). The count now keeps one warning of each list
joined to it (``UnlistedWarnings.joined``), by which the notice knows them.

The sessions are the real tools' (their fixtures' READMEs and test modules say how they were
written), copied, with bad lines added as a crash or a corrupt disk leaves them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import turnfold
import turnfold.corpus
from turnfold.formats.source import (
    MAX_LISTED_WARNINGS,
    UnlistedWarnings,
    join_warnings,
    keep_warning,
    warning_count,
)
from turnfold.i18n import plural
from turnfold.model import LoadWarning, SubAgent, ToolCall, Transcript
from turnfold.nesting import warning_total
from turnfold.render.viewmodel import build_view_model

FIXTURES = Path(__file__).parent / "fixtures"
#: Cursor: a session whose sub-agent's transcript is a file of its own, under ``subagents/``.
CURSOR_TREE = FIXTURES / "cursor" / "3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13"
#: Kimi Code 2.1.0: a session folder whose lead agent's journal spawns ``agent-0``.
KIMI_SESSION = FIXTURES / "kimi" / "work" / "session_60f3c294-da52-4c40-857c-c0696d973df5"
#: Qwen Code 0.24.4: a background sub-agent's records in ``subagents/<sessionId>/``.
QWEN_PROJECT = FIXTURES / "qwen" / "background-agent"

#: The session's own bad lines: more than its list holds, so what is joined after is counted.
SESSION_BAD = MAX_LISTED_WARNINGS + 5
#: The sub-agent's bad lines.
SUBAGENT_BAD = 3


def bad_lines(count: int) -> str:
    """``count`` lines that are not JSON, as a write cut short leaves them."""
    return '{"type": "assistant", "message": {"role"\n' * count


def cursor_session(tmp_path: Path) -> Path:
    """The Cursor session with bad lines at its end (read before the sub-agents' files,
    which the reader reads once the session is read) and at its sub-agent's file's end."""
    folder = tmp_path / CURSOR_TREE.name
    shutil.copytree(CURSOR_TREE, folder)
    session = folder / f"{CURSOR_TREE.name}.jsonl"
    with session.open("a", encoding="utf-8") as file:
        file.write(bad_lines(SESSION_BAD))
    (agent,) = (folder / "subagents").glob("*.jsonl")
    with agent.open("a", encoding="utf-8") as file:
        file.write(bad_lines(SUBAGENT_BAD))
    return session


def kimi_session(tmp_path: Path) -> Path:
    """The Kimi Code session folder, the lead's bad lines after its first record (before the
    ``subagent.spawned`` that reads the sub-agent's journal), the sub-agent's at its end."""
    folder = tmp_path / KIMI_SESSION.name
    shutil.copytree(KIMI_SESSION, folder)
    lead = folder / "agents" / "main" / "wire.jsonl"
    first, rest = lead.read_text(encoding="utf-8").split("\n", 1)
    assert rest.index('"subagentId":"agent-0"') > 0  # the spawn comes after the bad lines
    lead.write_text(f"{first}\n{bad_lines(SESSION_BAD)}{rest}", encoding="utf-8")
    with (folder / "agents" / "agent-0" / "wire.jsonl").open("a", encoding="utf-8") as file:
        file.write(bad_lines(SUBAGENT_BAD))
    return folder


def qwen_session(tmp_path: Path) -> Path:
    """The Qwen Code project, bad lines at the end of the session's chat file (read before the
    sub-agents' files) and of its background sub-agent's."""
    folder = tmp_path / "project"
    shutil.copytree(QWEN_PROJECT, folder)
    (session,) = (folder / "chats").glob("*.jsonl")
    (agent,) = (folder / "subagents").glob("*/agent-*.jsonl")
    for path, count in ((session, SESSION_BAD), (agent, SUBAGENT_BAD)):
        with path.open("a", encoding="utf-8") as file:
            file.write(bad_lines(count))
    return session


def subagent_transcripts(transcript: Transcript) -> list[Transcript]:
    return [
        call.subagent.transcript
        for call in transcript.tool_calls()
        if call.subagent is not None and call.subagent.transcript is not None
    ]


def assert_counted_once(transcript: Transcript) -> None:
    """The view's notice, and ``warning_total`` every other count uses, say the number of bad
    lines: the session's own and its sub-agent's, each once; the notice lists the first
    ``MAX_LISTED_WARNINGS`` and counts the rest."""
    total = SESSION_BAD + SUBAGENT_BAD
    assert warning_count(transcript.warnings) == total  # the sub-agent's joined to the session's
    assert warning_total(transcript) == total
    notice = build_view_model(transcript)["notice"]
    assert notice is not None
    assert notice["text"] == plural(
        "warnings.skipped_listed", total, "en", listed=MAX_LISTED_WARNINGS
    )
    assert len(notice["items"]) == MAX_LISTED_WARNINGS + 1
    counted = UnlistedWarnings(reason="", count=total - MAX_LISTED_WARNINGS)
    assert notice["items"][-1].endswith(f": {counted.reason}")
    assert not [item for item in notice["items"] if item.startswith("Sub-agent ")]


def test_L4_a_cursor_sub_agent_s_warnings_copied_into_a_full_list_are_counted_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = cursor_session(tmp_path)
    transcript = turnfold.load(session)
    # The case: the sub-agent keeps its warnings, and the session's list only counts the copies.
    (child,) = subagent_transcripts(transcript)
    assert len(child.warnings) == SUBAGENT_BAD
    assert len(transcript.warnings) == MAX_LISTED_WARNINGS + 1
    assert not {id(w) for w in child.warnings} & {id(w) for w in transcript.warnings}
    assert_counted_once(transcript)

    # The corpus row and the command's stderr count what the notice does.
    (row,) = turnfold.corpus.scan(tmp_path, workers=1, cache=False).rows
    assert row["warnings"] == SESSION_BAD + SUBAGENT_BAD
    from turnfold.cli import main

    assert main(["render", str(session), "-o", str(tmp_path / "page.html")]) == 0
    said = capsys.readouterr().err
    assert f"{SESSION_BAD + SUBAGENT_BAD} problems while loading" in said


def test_L4_a_kimi_sub_agent_s_warnings_copied_into_a_full_list_are_counted_once(
    tmp_path: Path,
) -> None:
    """Kimi Code's reader joins the sub-agent journal's warnings to the lead's and leaves none
    on the sub-agent's transcript: nothing there to count twice, a full list or not."""
    transcript = turnfold.load(kimi_session(tmp_path))
    (child,) = subagent_transcripts(transcript)
    assert child.warnings == []
    assert_counted_once(transcript)


def test_L4_a_qwen_sub_agent_s_warnings_copied_into_a_full_list_are_counted_once(
    tmp_path: Path,
) -> None:
    """Qwen Code's background sub-agent's records join the session's as sidechains, its file's
    warnings the session's list: its transcript keeps none of its own."""
    transcript = turnfold.load(qwen_session(tmp_path))
    assert [c.warnings for c in subagent_transcripts(transcript)] == [[]]
    assert_counted_once(transcript)


def own_warnings(transcript: Transcript, count: int, source: str) -> None:
    for line in range(1, count + 1):
        keep_warning(transcript.warnings, LoadWarning(reason="bad", line=line, source=source))


def run(caller: Transcript, child: Transcript, call_id: str) -> None:
    caller.append(ToolCall(call_id=call_id, name="Task",
                           subagent=SubAgent(name=call_id, transcript=child)))  # fmt: skip


def test_L4_copies_counted_in_a_full_list_then_in_the_caller_s_count_once() -> None:
    """A grandchild's warnings joined to its parent's list, full, then the parent's to the
    top's, full too: the top's count carries the grandchild's, which is drawn under its parent
    and keeps its warnings, so none is counted twice."""
    top, child, grandchild = Transcript(), Transcript(), Transcript()
    own_warnings(grandchild, 2, "g.jsonl")
    own_warnings(child, MAX_LISTED_WARNINGS, "c.jsonl")
    join_warnings(child.warnings, grandchild.warnings)
    own_warnings(top, MAX_LISTED_WARNINGS, "t.jsonl")
    join_warnings(top.warnings, child.warnings)
    run(child, grandchild, "inner")
    run(top, child, "outer")
    assert warning_count(top.warnings) == 2 * MAX_LISTED_WARNINGS + 2
    assert warning_total(top) == 2 * MAX_LISTED_WARNINGS + 2


def test_L4_a_grandchild_s_listed_in_its_parent_s_counted_in_the_top_s_once() -> None:
    """The parent's list has room for the grandchild's, after its own; the top's has none for
    the parent's: the top's count knows the parent's list by its first warning, the parent's
    own, and the grandchild's as what that list holds."""
    top, child, grandchild = Transcript(), Transcript(), Transcript()
    own_warnings(grandchild, 2, "g.jsonl")
    own_warnings(child, 3, "c.jsonl")
    join_warnings(child.warnings, grandchild.warnings)
    own_warnings(top, MAX_LISTED_WARNINGS, "t.jsonl")
    join_warnings(top.warnings, child.warnings)
    run(child, grandchild, "inner")
    run(top, child, "outer")
    assert warning_total(top) == MAX_LISTED_WARNINGS + 5


def test_L4_a_sub_agent_s_warnings_partly_listed_partly_counted_count_once() -> None:
    """The list has room for one of the copies: the rest are counted, each once."""
    top, child = Transcript(), Transcript()
    own_warnings(child, 3, "c.jsonl")
    own_warnings(top, MAX_LISTED_WARNINGS - 1, "t.jsonl")
    join_warnings(top.warnings, child.warnings)
    run(top, child, "c1")
    assert warning_total(top) == MAX_LISTED_WARNINGS + 2


def test_L4_a_sub_agent_not_drawn_keeps_its_copies_counted_in_the_session_s() -> None:
    """A sub-agent whose warnings were joined to the session's but which no call runs (Cursor's
    file that matches no call's prompt): only the session's count holds them."""
    top, lost = Transcript(), Transcript()
    own_warnings(lost, 3, "lost.jsonl")
    own_warnings(top, MAX_LISTED_WARNINGS + 1, "t.jsonl")
    join_warnings(top.warnings, lost.warnings)
    top.append(ToolCall(call_id="read", name="Read"))
    assert warning_total(top) == MAX_LISTED_WARNINGS + 4


def test_L4_a_count_that_knows_its_copies_dumps_as_its_fields_only() -> None:
    """What the count keeps to know its copies by is not a field: a transcript's dump writes
    the count's fields, as before (objects of the load mean nothing in a file)."""
    from turnfold.formats.native import dumps

    top, child = Transcript(), Transcript()
    own_warnings(child, 2, "c.jsonl")
    own_warnings(top, MAX_LISTED_WARNINGS, "t.jsonl")
    join_warnings(top.warnings, child.warnings)
    tally = top.warnings[-1]
    assert type(tally) is UnlistedWarnings
    assert tally.joined == (child.warnings[0],)
    assert repr(tally) == repr(UnlistedWarnings(reason="", line=1, source="c.jsonl", count=2))
    reason = "2 more problem(s) like those above, not listed one by one"
    assert json.loads(dumps(top).splitlines()[-1]) == {
        "warning": {"reason": reason, "line": 1, "source": "c.jsonl", "count": 2}
    }


def test_L4_a_sub_agent_s_copied_warnings_count_once_in_a_dump_loaded_again(
    tmp_path: Path,
) -> None:
    """A dump writes the copies the session's list holds and the sub-agent's own apart; loaded
    again they are equal warnings, no longer the same objects, and were counted twice (Cursor:
    2 + 3 bad lines made 8 problems). A problem is known by what it says and where."""
    session = cursor_session(tmp_path)
    text = session.read_text(encoding="utf-8").replace(bad_lines(SESSION_BAD), bad_lines(2))
    session.write_text(text, encoding="utf-8")
    loaded = turnfold.load(session)
    again = turnfold.load(loaded.dump())
    assert again == loaded
    assert warning_total(loaded) == warning_total(again) == 2 + SUBAGENT_BAD
    notice = build_view_model(again)["notice"]
    assert notice is not None
    assert len(notice["items"]) == 2 + SUBAGENT_BAD
